// SPDX-License-Identifier: MIT
/*
 * json.c - a small streaming JSON writer for dump.img.
 *
 * Output is written as it is produced (listings of large images need no
 * document in memory). Nesting beyond JSON_MAX_DEPTH is a bug in the
 * caller, not something an image can cause: the views nest a fixed number
 * of levels.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dump.h"

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

static void indent(struct json *j)
{
	int i;

	for (i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

static void put_escaped(FILE *f, const unsigned char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

/* Comma, newline, indentation and "key": before a value. */
static void item(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (j->has_items[j->depth])
			fputc(',', j->f);
		fputc('\n', j->f);
		j->has_items[j->depth] = true;
	}
	indent(j);
	if (key) {
		fputc('"', j->f);
		put_escaped(j->f, (const unsigned char *)key, strlen(key));
		fputs("\": ", j->f);
	}
}

static void open_level(struct json *j, const char *key, char c)
{
	item(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->depth++;
	j->has_items[j->depth] = false;
}

static void close_level(struct json *j, char c)
{
	bool had = j->has_items[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had) {
		fputc('\n', j->f);
		indent(j);
	}
	fputc(c, j->f);
}

void json_obj_open(struct json *j, const char *key)
{
	open_level(j, key, '{');
}

void json_obj_close(struct json *j)
{
	close_level(j, '}');
}

void json_arr_open(struct json *j, const char *key)
{
	open_level(j, key, '[');
}

void json_arr_close(struct json *j)
{
	close_level(j, ']');
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	item(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	item(j, key);
	fprintf(j->f, "%" PRId64, v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	item(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	item(j, key);
	fputs("null", j->f);
}

void json_ratio(struct json *j, const char *key, uint64_t num, uint64_t den)
{
	if (!den) {
		json_null(j, key);
		return;
	}
	item(j, key);
	fprintf(j->f, "%.6f", (double)num / (double)den);
}

void json_bytes(struct json *j, const char *key, const void *s, size_t len)
{
	item(j, key);
	fputc('"', j->f);
	put_escaped(j->f, s, len);
	fputc('"', j->f);
}

void json_str(struct json *j, const char *key, const char *s)
{
	if (!s)
		json_null(j, key);
	else
		json_bytes(j, key, s, strlen(s));
}

void json_str_begin(struct json *j, const char *key)
{
	item(j, key);
	fputc('"', j->f);
}

void json_str_raw(struct json *j, const char *s, size_t len)
{
	fwrite(s, 1, len, j->f);
}

void json_str_end(struct json *j)
{
	fputc('"', j->f);
}

void json_finish(struct json *j)
{
	fputc('\n', j->f);
}
