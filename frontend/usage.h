/* SPDX-License-Identifier: MIT */
/*
 * frontend/usage.h - usage errors: what was wrong with the command line,
 * the synopsis, and where to read more, the same way in every program.
 */
#ifndef FRONTEND_USAGE_H
#define FRONTEND_USAGE_H

#include <stdarg.h>

/* "@prog: MESSAGE" and a newline on stderr; the message is escaped, as
 * it quotes arguments (any bytes). */
void fe_usage_msg(const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void fe_usage_vmsg(const char *prog, const char *fmt, va_list ap);

/* @synopsis (its own lines, "usage: ...\n"; NULL: none), then
 * "Try '@prog --help' for more information." on stderr. */
void fe_usage_hint(const char *prog, const char *synopsis);

#endif /* FRONTEND_USAGE_H */
