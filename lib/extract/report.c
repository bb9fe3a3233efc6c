// SPDX-License-Identifier: MIT
/*
 * report.c - how the parts of an extraction tell the caller what failed
 * or was left out: one notice callback, and the failure count.
 */
#include "extract/internal.h"

void extract_notice(struct imgfs_extract *x,
		    const struct imgfs_extract_notice *n)
{
	if (x->o.notice)
		x->o.notice(x->o.notice_arg, n);
}

void extract_fail(struct imgfs_extract *x, const char *path, const char *what,
		  int errnum)
{
	struct imgfs_extract_notice n = {
		.kind = IMGFS_EXTRACT_FAILED,
		.path = path,
		.what = what,
		.errnum = errnum,
	};

	x->res.failures++;
	extract_notice(x, &n);
}
