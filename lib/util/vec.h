/* SPDX-License-Identifier: MIT */
/*
 * vec.h - growable arrays (not installed): one reserve function instead of
 * a grow function per array.
 */
#ifndef IMGFS_VEC_H
#define IMGFS_VEC_H

#include <stddef.h>

/*
 * Make room for @need elements of @size bytes in the array *@p of *@cap
 * elements: the capacity doubles, starting from @first (at least 1),
 * until it holds @need. Returns 0 (the array untouched when it was large
 * enough), or -ENOMEM with *@p and *@cap unchanged.
 */
int vec_reserve(void **p, size_t *cap, size_t need, size_t size, size_t first);
/*
 * The capacity vec_reserve() grows @cap to for @need: doubled from @cap
 * (from @first, at least 1, when @cap is 0) until it holds @need; 0 when
 * that would overflow. @cap itself when it already holds @need.
 */
size_t vec_next_cap(size_t cap, size_t need, size_t first);

/* vec_reserve() for an array @arr with size_t capacity @cap. */
#define IMGFS_VEC_RESERVE(arr, cap, need, first) \
	vec_reserve((void **)&(arr), &(cap), (need), sizeof(*(arr)), (first))

#endif /* IMGFS_VEC_H */
