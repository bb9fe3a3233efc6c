/* SPDX-License-Identifier: MIT */
/*
 * frontend/escape.h - making names and messages safe to print.
 *
 * Names in an image are arbitrary bytes (anything but '/' and NUL): a
 * newline forges an output line, an escape sequence reaches the terminal.
 * Every human-readable output of the tools goes through these functions;
 * JSON output follows frontend/json_str.h instead.
 *
 * The scheme: '\' becomes "\\"; control characters (bytes 0x00-0x1f and
 * 0x7f, and the C1 controls U+0080-U+009F), and bytes that are not part of
 * valid UTF-8 become "\xNN" (two lower-case hex digits); valid UTF-8
 * otherwise passes as it is. Distinct byte strings never print the same.
 */
#ifndef FRONTEND_ESCAPE_H
#define FRONTEND_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Flags of the escaping functions. */
enum {
	/* Every byte >= 0x80 as "\xNN" too (binary values, not names). */
	FE_ESC_ASCII = 1u << 0,
	/* Newline as "\n" and carriage return as "\r", as sha256sum(1)
	 * writes names in its check lines; other controls stay "\xNN". */
	FE_ESC_NL = 1u << 1,
};

/*
 * Escape @len bytes at @s into @buf of @size bytes, NUL-terminated and
 * truncated (never inside an escape) when too small. Returns the length
 * of the whole escaped string (without the NUL), like snprintf(), so a
 * caller can size a buffer with a first call (@buf NULL, @size 0).
 */
size_t fe_escape(char *buf, size_t size, const void *s, size_t len,
		    unsigned int flags);

/* Write @len bytes at @s escaped to @f. Returns 0, or EOF on error. */
int fe_escape_fwrite(FILE *f, const void *s, size_t len, unsigned int flags);

/* fe_escape_fwrite() of a NUL-terminated string (NULL prints nothing). */
int fe_escape_fputs(FILE *f, const char *s, unsigned int flags);

/* Whether any byte of @s would be escaped with @flags. */
bool fe_escape_needed(const void *s, size_t len, unsigned int flags);

#endif /* FRONTEND_ESCAPE_H */
