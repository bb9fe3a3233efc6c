// SPDX-License-Identifier: MIT
/* Scratch buffers that may grow to megabytes (bigbuf.h). */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "util/bigbuf.h"
#include "util/vec.h"

#define BIGBUF_FIRST (64u << 10)
#define BIGBUF_HUGE (2u << 20) /* a huge page on x86-64 and arm64 (4K) */

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BIGBUF_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define BIGBUF_ASAN 1
#endif

/* The capacity @cap says how the buffer was made: one rule both ways. */
static int mapped(size_t cap)
{
#ifdef BIGBUF_ASAN
	/* malloc's redzones catch overruns a mapping would not */
	(void)cap;
	return 0;
#else
	return cap >= BIGBUF_HUGE;
#endif
}

void bigbuf_free(uint8_t *buf, size_t cap)
{
	if (!buf)
		return;
	if (mapped(cap))
		munmap(buf, cap);
	else
		free(buf);
}

int bigbuf_reserve(uint8_t **buf, size_t *cap, size_t need)
{
	size_t want = vec_next_cap(*cap, need, BIGBUF_FIRST);
	uint8_t *p;

	if (need <= *cap)
		return 0;
	if (!want)
		return -ENOMEM;
	if (mapped(want)) {
		/* whole huge pages */
		want = (want + BIGBUF_HUGE - 1) & ~(size_t)(BIGBUF_HUGE - 1);
		p = mmap(NULL, want, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -ENOMEM;
		/* advice only: where huge pages are off, small ones serve */
		(void)madvise(p, want, MADV_HUGEPAGE);
	} else {
		p = malloc(want);
		if (!p)
			return -ENOMEM;
	}
	bigbuf_free(*buf, *cap);
	*buf = p;
	*cap = want;
	return 0;
}
