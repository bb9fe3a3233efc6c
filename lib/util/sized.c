// SPDX-License-Identifier: MIT
/*
 * The struct_size rule (util/sized.h): the kernel's rule for extensible
 * structs (copy_struct_from_user()), so that a program keeps working with
 * a newer library, and a newer program with an older library as long as
 * it asks for nothing the older one lacks.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "util/error.h"
#include "util/sized.h"

#define SIZED_MAX_GROWTH 4096

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

int sized_struct_in(void *dst, size_t dst_size, const void *src,
		    size_t min_size, const char *what, struct imgfs_error *err)
{
	size_t n;

	/* struct_size is the first member of each sized struct */
	memcpy(&n, src, sizeof(n));
	if (n < min_size)
		return error_set(
			err, -EINVAL,
			"%s: struct_size %zu is below the smallest known size %zu",
			what, n, min_size);
	/* no later version grows a struct by pages: n is garbage */
	if (n > dst_size + SIZED_MAX_GROWTH)
		return error_set(
			err, -EINVAL,
			"%s: struct_size %zu is not the size of any version",
			what, n);
	if (n > dst_size &&
	    !all_zero((const unsigned char *)src + dst_size, n - dst_size))
		return error_set(
			err, -E2BIG,
			"%s: fields this library does not know are set (struct_size %zu, known %zu)",
			what, n, dst_size);
	memcpy(dst, src, n < dst_size ? n : dst_size);
	memcpy(dst, &dst_size, sizeof(dst_size));
	return 0;
}
