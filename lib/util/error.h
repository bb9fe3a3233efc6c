/* SPDX-License-Identifier: MIT */
/*
 * util/error.h - recording a failure in a struct imgfs_error, and adding
 * context to one.
 *
 * The library's own setter: callers see only the message it leaves
 * (imgfs/error.h), so it is not part of the ABI. The programs have theirs
 * in frontend/error.h.
 */
#ifndef IMGFS_UTIL_ERROR_H
#define IMGFS_UTIL_ERROR_H

#include "imgfs/error.h"

/*
 * Put context before the message @err holds ("<context>: <message>") and
 * make @code its code: a caller names what the callee could not know (the
 * layer, the file) without losing the cause. Returns @code.
 */
int error_prefix(struct imgfs_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Record a failure: @code is a negative errno. The message is kept only if
 * @err holds no earlier failure (the first cause is the useful one).
 * @err may be NULL. Returns @code so callers can "return error_set()".
 */
int error_set(struct imgfs_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* IMGFS_UTIL_ERROR_H */
