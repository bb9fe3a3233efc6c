// SPDX-License-Identifier: MIT
/*
 * Fixed-output compression for libraries that only compress whole
 * buffers (zlib, libzstd): find the longest input prefix whose stream
 * fits, by trying prefix lengths. A fit grows the guess by the ratio just
 * seen; a miss bisects between the best fit and the miss. The search is
 * capped, so a pcluster may end a little short of full.
 */
#include <errno.h>
#include <string.h>

#include "codec/codec.h"

#define SEARCH_MAX_TRIES 8
#define SEARCH_FIRST_RATIO 4

static size_t clamp_guess(size_t n, size_t lo, size_t hi)
{
	if (n <= lo)
		n = lo + 1;
	if (n >= hi)
		n = hi - 1;
	return n;
}

ssize_t zsearch_destsize(void *ctx, imgfs_zoneshot_fn compress,
			 const uint8_t *src, size_t *srclen, uint8_t *dst,
			 size_t dstcap, uint8_t *scratch, size_t scratch_cap,
			 const char **why)
{
	size_t avail = *srclen;
	size_t lo = 0, hi = avail + 1; /* lo fits, hi does not */
	size_t slack = dstcap / 64 > 16 ? dstcap / 64 : 16;
	size_t n = dstcap * SEARCH_FIRST_RATIO;
	ssize_t best = 0;

	if (scratch_cap < dstcap)
		dstcap = scratch_cap;
	for (int tries = 0; tries < SEARCH_MAX_TRIES && hi > lo + 1; tries++) {
		ssize_t r;

		n = clamp_guess(n, lo, hi);
		r = compress(ctx, src, n, scratch, dstcap, why);
		if (r == -ENOSPC || (r >= 0 && (size_t)r > dstcap)) {
			hi = n;
			n = lo ? lo + (hi - lo) / 2 : n / 2;
			continue;
		}
		if (r < 0)
			return r;
		lo = n;
		best = r;
		memcpy(dst, scratch, (size_t)r);
		if ((size_t)r + slack >= dstcap)
			break;
		/* aim a little below full: overshooting costs a retry */
		n = (size_t)((double)n * (double)(dstcap - slack / 2) /
			     (double)(r ? r : 1));
	}
	*srclen = lo;
	return best;
}
