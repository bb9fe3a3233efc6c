// SPDX-License-Identifier: MIT
/*
 * ocicheck/check.c - checking an OCI image layout (imgfs/oci.h, fsck.img
 * --oci): every blob that index.json leads to, through nested indexes,
 * manifests and configs, is verified against the descriptors naming it,
 * once per role it is named in. Here: the layout's own files and the
 * run; the blobs met are blobs.c, the walk over the documents and what
 * they must agree on docs.c, EROFS layers go through the image checker
 * (layer.c) and, with a source layout, the comparison with their source
 * layer. Blobs are read with the blob reader of lib/oci/blob.c, which
 * checks size and digest as it streams.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ocicheck/check.h"
#include "util/error.h"
#include "util/sized.h"

void imgfs_oci_check_options_init(struct imgfs_oci_check_options *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
	o->max_differences = 20;
}

/*
 * A small JSON file of the layout @root itself (not a blob); NULL if bad.
 * Findings name it @name in the layout checked, by its path in another.
 */
static struct json_object *load_file(struct oci_chk *c, const char *root,
				     const char *name)
{
	struct json_object *doc;
	struct imgfs_error e = { 0 };
	int ret = oci_read_json_file(root, name, &doc, &e);
	char where[PATH_MAX];

	/* findings name it by its path when it is another layout's */
	if (root != c->root) {
		snprintf(where, sizeof(where), "%s/%s", root, name);
		name = where;
	}
	if (ret == -ENOMEM) {
		c->failed = true;
		error_set(c->err, ret, "out of memory");
	} else if (ret == -ENOENT) {
		chk_report(c, NULL, IMGFS_CHECK_ERROR, name,
			   "%s is missing: %s", name, strerror(-ret));
	} else if (ret == -EBADMSG) {
		chk_report(c, NULL, IMGFS_CHECK_ERROR, name,
			   "%s is not a JSON object", name);
	} else if (ret) {
		chk_report(c, NULL, IMGFS_CHECK_ERROR, name, "%s", e.msg);
	}
	return doc;
}

static void leftover(const char *msg, void *arg)
{
	chk_report(arg, NULL, IMGFS_CHECK_WARNING, "layout", "%s", msg);
}

static void report_blobs(struct oci_chk *c)
{
	for (struct chk_blob *b = c->first; b; b = b->next) {
		struct imgfs_oci_blob_result r = {
			.digest = b->digest.str,
			.media_type = b->media_type,
			.role = b->role,
			.size = b->size,
			.where = b->where,
			.present = b->present,
			.verified = b->verified,
			.diff_id = b->have_diff_id ? b->diff_id.str : NULL,
			.erofs = b->erofs,
			.check = b->check,
			.dm_verity = b->dm_verity,
			.dm_verity_ok = b->dm_verity_ok,
			.source = b->source,
			.compared = b->compared,
			.compare = b->compare,
			.errors = b->errors,
			.warnings = b->warnings,
		};

		c->o->blob(c->o->blob_arg, &r);
	}
}

int imgfs_oci_check(const char *dir, const struct imgfs_oci_check_options *in,
		    struct imgfs_oci_check_result *res, struct imgfs_error *err)
{
	struct imgfs_oci_check_options full, *o = &full;
	struct oci_chk c = { .root = dir, .o = o, .res = res, .err = err };
	struct json_object *doc, *sdoc = NULL;
	struct stat st;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	res->struct_size = sizeof(*res);
	imgfs_oci_check_options_init(&full);
	if (!in)
		return error_set(err, -EINVAL, "no OCI check options");
	ret = SIZED_IN(&full, in, sizeof(full), "OCI check options", err);
	if (ret)
		return ret;
	c.tail = &c.first;
	if (stat(dir, &st))
		return error_set(err, -errno, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return error_set(
			err, -ENOTDIR,
			"%s: not a directory (an OCI image layout is one)",
			dir);
	if (o->compare_src &&
	    (stat(o->compare_src, &st) || !S_ISDIR(st.st_mode)))
		return error_set(err, -ENOTDIR,
				 "%s: the source layout is not a directory",
				 o->compare_src);
	doc = load_file(&c, dir, "oci-layout");
	if (doc && (!oci_json_str(doc, "imageLayoutVersion") ||
		    strcmp(oci_json_str(doc, "imageLayoutVersion"), "1.0.0")))
		chk_report(&c, NULL, IMGFS_CHECK_ERROR, "oci-layout",
			   "oci-layout: imageLayoutVersion is not \"1.0.0\"");
	json_object_put(doc);
	doc = c.failed ? NULL : load_file(&c, dir, "index.json");
	if (doc && o->compare_src)
		sdoc = load_file(&c, o->compare_src, "index.json");
	if (doc)
		chk_walk(&c, doc, sdoc);
	json_object_put(sdoc);
	json_object_put(doc);
	/* what writers without O_TMPFILE left (the rule of blob.c) */
	oci_tmpname_scan(dir, "blobs/sha256", false, leftover, &c);
	oci_tmpname_scan(dir, ".", false, leftover, &c);
	if (c.failed)
		ret = err->code ? err->code : -ENOMEM;
	else if (o->blob)
		report_blobs(&c);
	while (c.first) {
		struct chk_blob *b = c.first;

		c.first = b->next;
		free(b->media_type);
		free(b->where);
		free(b->path);
		free(b->source);
		free(b->sources);
		free(b);
	}
	hashtab_free(&c.blobs);
	return ret;
}
