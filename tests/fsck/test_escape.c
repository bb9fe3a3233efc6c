// SPDX-License-Identifier: MIT
/*
 * test_escape.c - fe_escape() and friends: every byte class, the
 * sha256sum flavour, truncation, and that distinct names never print the
 * same.
 */
#include <stdlib.h>
#include <string.h>

#include "frontend/escape.h"
#include "../unit/unit.h"

static void expect(const char *in, size_t len, unsigned int flags,
		   const char *want)
{
	char buf[256];
	size_t n = fe_escape(buf, sizeof(buf), in, len, flags);
	char *mem = NULL;
	size_t memlen = 0;
	FILE *f = open_memstream(&mem, &memlen);

	CHECK(n == strlen(want));
	CHECK(!strcmp(buf, want));
	if (strcmp(buf, want))
		fprintf(stderr, "  got \"%s\", want \"%s\"\n", buf, want);
	CHECK(fe_escape_fwrite(f, in, len, flags) == 0);
	fclose(f);
	CHECK(memlen == n && !memcmp(mem, want, n));
	free(mem);
	CHECK(fe_escape_needed(in, len, flags) == (strlen(want) != len ||
						      memcmp(in, want, len)));
}

static void test_classes(void)
{
	expect("plain name.txt", 14, 0, "plain name.txt");
	expect("a\\b", 3, 0, "a\\\\b");
	expect("a\nb\rc", 5, 0, "a\\x0ab\\x0dc");
	expect("a\nb\rc", 5, FE_ESC_NL, "a\\nb\\rc");
	expect("\x1b[2J\x7f", 5, FE_ESC_NL, "\\x1b[2J\\x7f");
	expect("nul\0x", 5, 0, "nul\\x00x");
	/* UTF-8: 2, 3 and 4 bytes pass; C1 controls, overlong forms,
	 * surrogates, lone and truncated sequences do not */
	expect("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, 0,
	       "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	expect("\xc2\x9b", 2, 0, "\\xc2\\x9b");
	expect("\xc0\xaf", 2, 0, "\\xc0\\xaf");
	expect("\xe0\x80\xaf", 3, 0, "\\xe0\\x80\\xaf");
	expect("\xed\xa0\x80", 3, 0, "\\xed\\xa0\\x80");
	expect("\xf4\x90\x80\x80", 4, 0, "\\xf4\\x90\\x80\\x80");
	expect("\xe9t\xe9", 3, 0, "\\xe9t\\xe9");
	expect("\xe2\x82", 2, 0, "\\xe2\\x82");
	expect("\xc3\xa9", 2, FE_ESC_ASCII, "\\xc3\\xa9");
}

static void test_truncation(void)
{
	char buf[8];
	size_t n;

	/* never cut inside an escape; the full length is returned */
	n = fe_escape(buf, sizeof(buf), "abcde\x1b", 6, 0);
	CHECK(n == 9);
	CHECK(!strcmp(buf, "abcde"));
	n = fe_escape(NULL, 0, "\x1b\x1b", 2, 0);
	CHECK(n == 8);
	n = fe_escape(buf, 1, "x", 1, 0);
	CHECK(n == 1 && buf[0] == '\0');
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* All 2-byte names: distinct inputs give distinct outputs. */
static void test_injective(void)
{
	static char seen[65536][12];
	unsigned int a, b, dups = 0;

	for (a = 0; a < 65536; a++) {
		char in[2] = { (char)(a >> 8), (char)a };

		fe_escape(seen[a], sizeof(seen[a]), in, 2, 0);
	}
	qsort(seen, 65536, sizeof(seen[0]), cmp_str);
	for (b = 1; b < 65536; b++)
		dups += !strcmp(seen[b - 1], seen[b]);
	CHECK(dups == 0);
}

int main(void)
{
	test_classes();
	test_truncation();
	test_injective();
	return unit_done("test_escape");
}
