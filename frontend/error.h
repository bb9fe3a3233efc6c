/* SPDX-License-Identifier: MIT */
/*
 * frontend/error.h - the programs' own failures in a struct imgfs_error.
 *
 * The library records its failures itself; a program adds its own (a
 * file it reads, a count it judges) to the same struct, so that main()
 * prints every error the same way, once.
 */
#ifndef FRONTEND_ERROR_H
#define FRONTEND_ERROR_H

#include "imgfs/error.h"

/*
 * Record a failure: @code is a negative errno. The message is kept only if
 * @err holds no earlier failure (the first cause is the useful one).
 * @err may be NULL. Returns @code so callers can "return fe_error_set()".
 */
int fe_error_set(struct imgfs_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* FRONTEND_ERROR_H */
