// SPDX-License-Identifier: MIT
/*
 * escape.c - printable forms of names and messages (see frontend/escape.h).
 */
#include <string.h>

#include "frontend/escape.h"

/*
 * Length of the valid, printable UTF-8 sequence at @p (at most @left
 * bytes), or 0 if the byte at @p must be escaped. Overlong forms,
 * surrogates, code points past U+10FFFF and C1 controls are refused.
 */
static size_t utf8_ok(const unsigned char *p, size_t left)
{
	unsigned int cp, n, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 1;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 2;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 3;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	if (n >= left)
		return 0;
	for (i = 1; i <= n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < 0xa0 || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n + 1;
}

/*
 * The escape for the byte(s) at @p into @esc (at least 5 bytes), or how
 * many bytes pass as they are (*@esc set to "").
 */
static size_t next_piece(const unsigned char *p, size_t left,
			 unsigned int flags, char *esc)
{
	static const char hex[] = "0123456789abcdef";
	size_t n;

	esc[0] = '\0';
	if (*p == '\\') {
		strcpy(esc, "\\\\");
		return 1;
	}
	if ((flags & FE_ESC_NL) && (*p == '\n' || *p == '\r')) {
		strcpy(esc, *p == '\n' ? "\\n" : "\\r");
		return 1;
	}
	if (*p >= 0x20 && *p < 0x7f)
		return 1;
	if (*p >= 0x80 && !(flags & FE_ESC_ASCII)) {
		n = utf8_ok(p, left);
		if (n)
			return n;
	}
	esc[0] = '\\';
	esc[1] = 'x';
	esc[2] = hex[*p >> 4];
	esc[3] = hex[*p & 15];
	esc[4] = '\0';
	return 1;
}

size_t fe_escape(char *buf, size_t size, const void *s, size_t len,
		    unsigned int flags)
{
	const unsigned char *p = s;
	size_t i = 0, out = 0, n, m;
	bool full = false;
	char esc[8];

	while (i < len) {
		n = next_piece(p + i, len - i, flags, esc);
		m = esc[0] ? strlen(esc) : n;
		if (!full && out + m < size) {
			memcpy(buf + out, esc[0] ? esc : (const char *)p + i,
			       m);
		} else if (!full) {
			full = true;
			if (size)
				buf[out] = '\0';
		}
		out += m;
		i += n;
	}
	if (size && !full)
		buf[out] = '\0';
	return out;
}

int fe_escape_fwrite(FILE *f, const void *s, size_t len, unsigned int flags)
{
	const unsigned char *p = s;
	size_t i = 0, n, run = 0;
	char esc[8];

	/* Plain runs are written in one go. */
	while (i + run < len) {
		n = next_piece(p + i + run, len - i - run, flags, esc);
		if (!esc[0]) {
			run += n;
			continue;
		}
		if ((run && fwrite(p + i, 1, run, f) != run) ||
		    fputs(esc, f) == EOF)
			return EOF;
		i += run + n;
		run = 0;
	}
	if (run && fwrite(p + i, 1, run, f) != run)
		return EOF;
	return 0;
}

int fe_escape_fputs(FILE *f, const char *s, unsigned int flags)
{
	return s ? fe_escape_fwrite(f, s, strlen(s), flags) : 0;
}

bool fe_escape_needed(const void *s, size_t len, unsigned int flags)
{
	const unsigned char *p = s;
	size_t i = 0;
	char esc[8];

	while (i < len) {
		i += next_piece(p + i, len - i, flags, esc);
		if (esc[0])
			return true;
	}
	return false;
}
