/* SPDX-License-Identifier: MIT */
/*
 * The one rule for the public structs that start with struct_size
 * (docs/architecture.md, "Sized structs"): what a caller built against
 * another version of the headers hands in is copied into the library's
 * own, full-size struct, which holds the defaults beforehand.
 */
#ifndef IMGFS_UTIL_SIZED_H
#define IMGFS_UTIL_SIZED_H

#include <stddef.h>

#include "imgfs/error.h"

/* Bytes of @type up to and including @field: the minimum of a struct
 * whose first published version ended with @field. */
#define SIZED_UP_TO(type, field) \
	(offsetof(type, field) + sizeof(((type *)0)->field))

/*
 * Copy the caller's struct @src into @dst (@dst_size bytes, already
 * holding the defaults): a smaller one (built against older headers, at
 * least @min_size bytes) leaves the rest at the defaults; a larger one
 * (newer headers) is accepted when every byte this library does not know
 * is zero, i.e. the caller asked for nothing it cannot do. @dst's
 * struct_size becomes @dst_size. 0, or -EINVAL (too small) or -E2BIG
 * (unknown fields set) with a message naming @what.
 */
int sized_struct_in(void *dst, size_t dst_size, const void *src,
		    size_t min_size, const char *what, struct imgfs_error *err);

#define SIZED_IN(dst, src, min_size, what, err) \
	sized_struct_in((dst), sizeof(*(dst)), (src), (min_size), (what), (err))

#endif
