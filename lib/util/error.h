/* SPDX-License-Identifier: MIT */
/*
 * error.h - the library's own error helpers (not installed), beside the
 * public imgfs_error_set().
 */
#ifndef IMGFS_UTIL_ERROR_H
#define IMGFS_UTIL_ERROR_H

#include "imgfs/error.h"

/*
 * Put context before the message @err holds ("<context>: <message>") and
 * make @code its code: a caller names what the callee could not know (the
 * layer, the file) without losing the cause. Returns @code.
 */
int imgfs_error_prefix(struct imgfs_error *err, int code, const char *fmt,
		       ...) __attribute__((format(printf, 3, 4)));

#endif /* IMGFS_UTIL_ERROR_H */
