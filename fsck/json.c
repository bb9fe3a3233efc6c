/* SPDX-License-Identifier: MIT */
/*
 * json.c - what fsck.img's two JSON documents (image and layout reports)
 * share; records are built with frontend/json_rec.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json_object.h>

#include "fsck.h"
#include "frontend/json_rec.h"

/* The counts of a check, under the names both reports use. */
struct json_object *fsck_json_check_stats(const struct imgfs_check_result *res)
{
	struct json_object *st = fe_json_checked(json_object_new_object());

	fe_rec_u64(st, "inodes", res->inodes);
	fe_rec_u64(st, "directories", res->dirs);
	fe_rec_u64(st, "regular", res->regular);
	fe_rec_u64(st, "symlinks", res->symlinks);
	fe_rec_u64(st, "specials", res->specials);
	fe_rec_u64(st, "hardlinks", res->hardlinks);
	fe_rec_u64(st, "xattrs", res->xattrs);
	fe_rec_u64(st, "data_bytes", res->data_bytes);
	fe_rec_u64(st, "image_bytes", res->image_bytes);
	fe_rec_u64(st, "logical_bytes", res->logical_bytes);
	fe_rec_u64(st, "physical_bytes", res->physical_bytes);
	return st;
}
