// SPDX-License-Identifier: MIT
/*
 * json.c - dump.img's JSON document: json-c values, written as a stream.
 *
 * Every value (number, string, record) is a json-c object, and the text
 * of every number and string, escapes included, is json-c's; byte
 * strings follow imgfs/json.h. json-c holds a whole document in memory
 * before writing it, which a listing of a large or deep tree (paths of
 * 40 KB, 20,000 levels) or a file's contents must not do. So the levels
 * that can grow without bound (the document, a listing, a directory's
 * entries, an inode's extents) are opened and closed here as they are
 * written, and records put inside them get the same layout: one member
 * per line, two spaces of indentation per level. Nesting beyond
 * JSON_MAX_DEPTH is a bug in the caller, not something an image can
 * cause: the views nest a fixed number of levels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "frontend/json_rec.h"
#include "frontend/json_str.h"
#include "dump.h"

/* '/' is not escaped: paths stay readable */
#define JSON_FLAGS JSON_C_TO_STRING_NOSLASHESCAPE

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

/* json-c's text of @v (null for NULL). */
static void put_value_text(struct json *j, struct json_object *v)
{
	const char *s = json_object_to_json_string_ext(v, JSON_FLAGS);

	if (!s)
		fe_json_oom();
	fputs(s, j->f);
}

/* Comma, newline, indentation and "key": before a value. */
static void item(struct json *j, const char *key)
{
	struct json_object *k;

	if (j->depth > 0) {
		if (j->has_items[j->depth])
			fputc(',', j->f);
		fputc('\n', j->f);
		j->has_items[j->depth] = true;
	}
	indent(j);
	if (key) {
		k = fe_json_checked(json_object_new_string(key));
		put_value_text(j, k);
		json_object_put(k);
		fputs(": ", j->f);
	}
}

static void open_level(struct json *j, const char *key, char c)
{
	item(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->depth++;
	j->has_items[j->depth] = false;
	j->escaped[j->depth] = NULL;
}

static void put_nested(struct json *j, const char *key, struct json_object *v);

static void close_level(struct json *j, char c)
{
	bool had;

	/* the list of escaped members comes last, as in records */
	if (j->escaped[j->depth]) {
		put_nested(j, FE_JSON_ESCAPED_KEY, j->escaped[j->depth]);
		json_object_put(j->escaped[j->depth]);
		j->escaped[j->depth] = NULL;
	}
	had = j->has_items[j->depth];

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

/* Note member @key of the open object as holding "\udcXX" escapes. */
static void mark_escaped(struct json *j, const char *key)
{
	struct json_object **list = &j->escaped[j->depth];

	if (!*list)
		*list = fe_rec_array();
	fe_rec_append_str(*list, key);
}

/* Write @v laid out like the open levels; does not drop it. */
static void put_nested(struct json *j, const char *key, struct json_object *v)
{
	struct json_object *escaped = NULL;
	size_t i, n;

	switch (json_object_get_type(v)) {
	case json_type_object:
		json_obj_open(j, key);
		json_object_object_foreach(v, k, member) {
			if (!strcmp(k, FE_JSON_ESCAPED_KEY))
				escaped = member;
			else
				put_nested(j, k, member);
		}
		if (escaped)
			put_nested(j, FE_JSON_ESCAPED_KEY, escaped);
		json_obj_close(j);
		return;
	case json_type_array:
		json_arr_open(j, key);
		n = json_object_array_length(v);
		for (i = 0; i < n; i++)
			put_nested(j, NULL, json_object_array_get_idx(v, i));
		json_arr_close(j);
		return;
	default:
		item(j, key);
		put_value_text(j, v);
	}
}

void json_put(struct json *j, const char *key, struct json_object *v)
{
	if (key && fe_json_is_escaped(v))
		mark_escaped(j, key);
	put_nested(j, key, v);
	json_object_put(v);
}

void json_put_members(struct json *j, struct json_object *o)
{
	struct json_object *name;
	size_t i, n;

	json_object_object_foreach(o, k, member) {
		if (strcmp(k, FE_JSON_ESCAPED_KEY)) {
			put_nested(j, k, member);
			continue;
		}
		n = json_object_array_length(member);
		for (i = 0; i < n; i++) {
			name = json_object_array_get_idx(member, i);
			mark_escaped(j, json_object_get_string(name));
		}
	}
	json_object_put(o);
}

/*
 * A string written in pieces, for file contents in base64: its alphabet
 * needs no escape, and the contents never have to be in memory at once.
 */
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

/* --- records: frontend/json_rec.h, and this program's own --- */

void rec_ratio(struct json_object *o, const char *key, uint64_t num,
	       uint64_t den)
{
	double r;
	char buf[64];

	if (!den) {
		fe_rec_null(o, key);
		return;
	}
	r = (double)num / (double)den;
	snprintf(buf, sizeof(buf), "%.6f", r);
	fe_rec_set(o, key, fe_json_checked(json_object_new_double_s(r, buf)));
}
