// SPDX-License-Identifier: MIT
/*
 * A cheap look at a pcluster's worth of input before the encoder runs:
 * data that is already compressed (archives, images, packed files) costs
 * an LZMA or LZ4HC encoder as much time as text does, only to come out
 * no smaller and be stored raw anyway. Two things make data compress:
 * repeats (matches) and skewed byte frequencies (entropy coding). The
 * probe measures both, in one pass, and calls the data incompressible
 * when together they could save less than 1/128 of it.
 *
 * The verdict depends on the bytes looked at alone (the table is cleared
 * on every call), so images stay the same whichever worker probed what.
 */
#include <string.h>

#include "codec/codec.h"

/* Below this, compressing is cheap and the statistics say little. */
#define PROBE_MIN 2048
/* Matches shorter than this save next to nothing in any of our codecs. */
#define PROBE_MATCH_MIN 8
#define PROBE_MATCH_MAX 256
/* Incompressible: the possible saving is under 1/2^PROBE_SAVE_SHIFT. */
#define PROBE_SAVE_SHIFT 7

static uint32_t read32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t probe_hash(uint32_t v, unsigned int bits)
{
	return (v * 2654435761u) >> (32 - bits);
}

/*
 * Bytes of @src that repeat earlier bytes in matches of useful length.
 * Every position goes into the table but only every fourth is looked up:
 * a repeat of PROBE_MATCH_MIN + 3 bytes or more is still found, less its
 * first bytes at most, and where nothing repeats (the data this probe is
 * for) a byte costs a hash and a store, not also a load and a compare.
 */
static size_t match_bytes(struct imgfs_zprobe *pr, const uint8_t *src,
			  size_t len)
{
	unsigned int bits = IMGFS_ZPROBE_BITS;
	size_t i = 0, covered = 0;

	/* a table about the size of the input: cheaper to clear */
	while (bits > 10 && (1ul << (bits + 1)) > len)
		bits--;
	memset(pr->pos, 0, sizeof(pr->pos[0]) << bits);
	while (i + PROBE_MATCH_MIN <= len) {
		uint32_t v = read32(src + i);
		uint32_t h = probe_hash(v, bits);
		uint32_t cand = pr->pos[h]; /* position + 1, 0: none */
		size_t n = 0, max = len - i;

		pr->pos[h] = (uint32_t)i + 1;
		if (max > PROBE_MATCH_MAX)
			max = PROBE_MATCH_MAX;
		if (cand && read32(src + cand - 1) == v)
			while (n < max && src[cand - 1 + n] == src[i + n])
				n++;
		if (n >= PROBE_MATCH_MIN) {
			covered += n;
			i += n;
			continue;
		}
		/* i + 3 + 4 <= len: the next three are whole words */
		for (unsigned int k = 1; k < 4; k++)
			pr->pos[probe_hash(read32(src + i + k), bits)] =
				(uint32_t)(i + k) + 1;
		i += 4;
	}
	return covered;
}

/*
 * Bytes an ideal order-0 coder could save on @src. For byte counts near
 * uniform, n * (8 - H) bits is chi2 / (2 ln 2), chi2 being the chi-square
 * statistic against the uniform distribution; uniform random data has a
 * chi2 of about 255 (the degrees of freedom), which is noise, not saving.
 * Far from uniform the formula overestimates, which only means
 * "compressible" sooner.
 */
static size_t order0_bytes(const uint8_t *src, size_t len)
{
	/* four tables: consecutive equal bytes do not wait on each other */
	uint32_t hist[4][256] = { { 0 } };
	uint64_t sq = 0, chi2;
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		hist[0][src[i]]++;
		hist[1][src[i + 1]]++;
		hist[2][src[i + 2]]++;
		hist[3][src[i + 3]]++;
	}
	for (; i < len; i++)
		hist[0][src[i]]++;
	for (int b = 0; b < 256; b++) {
		uint64_t c = (uint64_t)hist[0][b] + hist[1][b] + hist[2][b] +
			     hist[3][b];

		sq += c * c;
	}
	/* chi2 = 256 * sum(c^2) / n - n */
	chi2 = sq * 256 / len - len;
	if (chi2 <= 255)
		return 0;
	/* bits: (chi2 - 255) / (2 ln 2) ~ 0.72 (chi2 - 255); bytes: / 8 */
	return (size_t)((chi2 - 255) * 9 / 100);
}

bool zprobe_incompressible(struct imgfs_zprobe *pr, const uint8_t *src,
			   size_t len)
{
	size_t need, save;

	if (len < PROBE_MIN)
		return false;
	if (len > IMGFS_ZPROBE_MAX)
		len = IMGFS_ZPROBE_MAX;
	need = len >> PROBE_SAVE_SHIFT;
	/* the histogram is cheaper: most compressible data stops here */
	save = order0_bytes(src, len);
	if (save >= need)
		return false;
	return save + match_bytes(pr, src, len) < need;
}

bool zprobe_raw(struct imgfs_zprobe *pr, const uint8_t *src, size_t *srclen,
		size_t dstcap)
{
	size_t len = *srclen < dstcap ? *srclen : dstcap;

	if (!zprobe_incompressible(pr, src, len))
		return false;
	/*
	 * Half of it only: an encoder would have gone on past the window
	 * into data that compresses right after it, filling the last bytes
	 * of its output with a lot of input. With half steps, the window
	 * where such data starts is compressed, and the encoder takes the
	 * incompressible bytes before it along as it would have.
	 */
	*srclen = len > 2 * PROBE_MIN ? len / 2 : len;
	return true;
}
