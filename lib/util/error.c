// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

void imgfs_error_clear(struct imgfs_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}

int imgfs_error_set(struct imgfs_error *err, int code, const char *fmt, ...)
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
