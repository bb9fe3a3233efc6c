// SPDX-License-Identifier: MIT
/*
 * usage.c - usage errors of the programs (usage.h).
 */
#include <stdio.h>

#include "frontend/escape.h"
#include "frontend/usage.h"

void fe_usage_vmsg(const char *prog, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "%s: ", prog);
	fe_escape_fputs(stderr, msg, 0);
	fputc('\n', stderr);
}

void fe_usage_msg(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fe_usage_vmsg(prog, fmt, ap);
	va_end(ap);
}

void fe_usage_hint(const char *prog, const char *synopsis)
{
	if (synopsis)
		fputs(synopsis, stderr);
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
}
