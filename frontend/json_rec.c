// SPDX-License-Identifier: MIT
/*
 * json_rec.c - JSON records of the programs' documents (json_rec.h).
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json_object.h>

#include "frontend/json_rec.h"
#include "frontend/json_str.h"

/* Set once by main() before any document is built: not shared state. */
static const char *oom_prog = "imgfs";
static int oom_code = 1;

void fe_json_on_oom(const char *prog, int code)
{
	oom_prog = prog;
	oom_code = code;
}

void fe_json_oom(void)
{
	fprintf(stderr, "%s: out of memory\n", oom_prog);
	exit(oom_code);
}

struct json_object *fe_json_checked(struct json_object *v)
{
	if (!v)
		fe_json_oom();
	return v;
}

struct json_object *fe_rec_new(void)
{
	return fe_json_checked(json_object_new_object());
}

struct json_object *fe_rec_array(void)
{
	return fe_json_checked(json_object_new_array());
}

void fe_rec_set(struct json_object *o, const char *key, struct json_object *v)
{
	if (json_object_object_add(o, key, fe_json_checked(v)))
		fe_json_oom();
}

void fe_rec_null(struct json_object *o, const char *key)
{
	if (json_object_object_add(o, key, NULL))
		fe_json_oom();
}

void fe_rec_u64(struct json_object *o, const char *key, uint64_t v)
{
	fe_rec_set(o, key, json_object_new_uint64(v));
}

void fe_rec_i64(struct json_object *o, const char *key, int64_t v)
{
	fe_rec_set(o, key, json_object_new_int64(v));
}

void fe_rec_int(struct json_object *o, const char *key, int v)
{
	fe_rec_set(o, key, json_object_new_int(v));
}

void fe_rec_bool(struct json_object *o, const char *key, bool v)
{
	fe_rec_set(o, key, json_object_new_boolean(v));
}

void fe_rec_double(struct json_object *o, const char *key, double v)
{
	fe_rec_set(o, key, json_object_new_double(v));
}

void fe_rec_bytes(struct json_object *o, const char *key, const void *s,
		  size_t len)
{
	if (fe_json_add_bytes(o, key, s, len))
		fe_json_oom();
}

void fe_rec_str(struct json_object *o, const char *key, const char *s)
{
	if (fe_json_add_str(o, key, s))
		fe_json_oom();
}

void fe_rec_append(struct json_object *a, struct json_object *v)
{
	if (json_object_array_add(a, fe_json_checked(v)))
		fe_json_oom();
}

void fe_rec_append_str(struct json_object *a, const char *s)
{
	fe_rec_append(a, fe_json_bytes(s, strlen(s)));
}

void fe_json_print(FILE *f, struct json_object *o, int flags)
{
	const char *s = json_object_to_json_string_ext(o, flags);

	if (!s)
		fe_json_oom();
	fputs(s, f);
	fputc('\n', f);
}
