/* SPDX-License-Identifier: MIT */
/*
 * json.c - building fsck.img's JSON documents (image and layout reports).
 *
 * json-c fails only when out of memory; the report could not be written
 * then, so every helper exits with the operational error code.
 */
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json_object.h>

#include "fsck.h"
#include "frontend/json_str.h"

void fsck_json_oom(void)
{
	fputs("fsck.img: out of memory\n", stderr);
	exit(FSCK_EXIT_OPERATIONAL);
}

struct json_object *fsck_json_checked(struct json_object *v)
{
	if (!v)
		fsck_json_oom();
	return v;
}

void fsck_json_set(struct json_object *o, const char *key,
		   struct json_object *v)
{
	if (json_object_object_add(o, key, fsck_json_checked(v)))
		fsck_json_oom();
}

void fsck_json_set_null(struct json_object *o, const char *key)
{
	if (json_object_object_add(o, key, NULL))
		fsck_json_oom();
}

void fsck_json_set_u64(struct json_object *o, const char *key, uint64_t v)
{
	fsck_json_set(o, key, json_object_new_uint64(v));
}

void fsck_json_set_bytes(struct json_object *o, const char *key,
			 const char *s)
{
	if (!s)
		fsck_json_set_null(o, key);
	else if (fe_json_add_str(o, key, s))
		fsck_json_oom();
}

/* The counts of a check, under the names both reports use. */
struct json_object *fsck_json_check_stats(const struct imgfs_check_result *res)
{
	struct json_object *st = fsck_json_checked(json_object_new_object());

	fsck_json_set_u64(st, "inodes", res->inodes);
	fsck_json_set_u64(st, "directories", res->dirs);
	fsck_json_set_u64(st, "regular", res->regular);
	fsck_json_set_u64(st, "symlinks", res->symlinks);
	fsck_json_set_u64(st, "specials", res->specials);
	fsck_json_set_u64(st, "hardlinks", res->hardlinks);
	fsck_json_set_u64(st, "xattrs", res->xattrs);
	fsck_json_set_u64(st, "data_bytes", res->data_bytes);
	fsck_json_set_u64(st, "image_bytes", res->image_bytes);
	fsck_json_set_u64(st, "logical_bytes", res->logical_bytes);
	fsck_json_set_u64(st, "physical_bytes", res->physical_bytes);
	return st;
}
