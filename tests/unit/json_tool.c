// SPDX-License-Identifier: MIT
/*
 * json_tool - a command-line face of imgfs/json.h for tests/unit/json.sh,
 * which checks it against Python's own UTF-8 decoder.
 *
 *   json_tool [--slash-escape] < HEX-LINES
 *
 * For each input line (a byte string in hex, possibly empty) it prints one
 * line: the object {"s": fe_json_bytes(bytes)} as json-c serializes it
 * (with surrogate_escaped when the bytes are not UTF-8); '/' is escaped
 * only with --slash-escape, as json-c's default flags do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json_object.h>

#include "frontend/json_str.h"

static int unhex(const char *s, size_t n, unsigned char *out)
{
	unsigned int b;
	size_t i;

	if (n % 2)
		return -1;
	for (i = 0; i < n / 2; i++) {
		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = (unsigned char)b;
	}
	return (int)(n / 2);
}

int main(int argc, char **argv)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE;
	unsigned char bytes[4096];
	char line[8200];
	const char *text;
	struct json_object *o;
	size_t n;
	int len;

	if (argc == 2 && !strcmp(argv[1], "--slash-escape"))
		flags = JSON_C_TO_STRING_PLAIN;
	else if (argc != 1) {
		fprintf(stderr,
			"usage: json_tool [--slash-escape] < HEX-LINES\n");
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		n = strcspn(line, "\n");
		len = unhex(line, n, bytes);
		o = json_object_new_object();
		if (len < 0 || !o ||
		    fe_json_add_bytes(o, "s", bytes, (size_t)len)) {
			fprintf(stderr,
				"json_tool: bad line or out of memory\n");
			return 1;
		}
		text = json_object_to_json_string_ext(o, flags);
		if (!text)
			return 1;
		puts(text);
		json_object_put(o);
	}
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
