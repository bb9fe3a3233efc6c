// SPDX-License-Identifier: MIT
/*
 * error.c - recording the first failure, and putting context before it.
 */
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

int error_set(struct imgfs_error *err, int code, const char *fmt, ...)
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

int error_prefix(struct imgfs_error *err, int code, const char *fmt, ...)
{
	char msg[IMGFS_ERROR_MSG_MAX], ctx[IMGFS_ERROR_MSG_MAX];
	va_list ap;

	if (!err)
		return code;
	memcpy(msg, err->msg, sizeof(msg));
	msg[sizeof(msg) - 1] = '\0';
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	imgfs_error_clear(err);
	return error_set(err, code, "%s: %s", ctx, msg);
}
