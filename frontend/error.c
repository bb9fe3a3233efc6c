// SPDX-License-Identifier: MIT
/*
 * error.c - the programs' failures in a struct imgfs_error (error.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "frontend/error.h"

int fe_error_set(struct imgfs_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}
