// SPDX-License-Identifier: MIT
/* vec.c - growable arrays. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/vec.h"

size_t vec_next_cap(size_t cap, size_t need, size_t first)
{
	size_t n = cap ? cap : (first ? first : 1);

	while (n < need) {
		if (n > SIZE_MAX / 2)
			return 0;
		n *= 2;
	}
	return n;
}

int vec_reserve(void **p, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t n = vec_next_cap(*cap, need, first);
	void *q;

	if (need <= *cap)
		return 0;
	if (!n || (size && n > SIZE_MAX / size))
		return -ENOMEM;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}
