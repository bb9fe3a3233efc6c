// SPDX-License-Identifier: MIT
/*
 * ocicheck/source.c - with a source layout (fsck.img --oci --compare),
 * which document of the source each one of the layout checked was
 * converted from. mkfs.img --oci keeps index.json's entries with their
 * ref names and an index's children with their platforms, and passes
 * untouched documents through with their digest: an entry is paired with
 * the source entry of the same digest, else of the same ref name (in
 * index.json) or platform (in an index). A manifest is then compared
 * with its source manifest layer by layer (check.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>

#include "ocicheck/check.h"
#include "util/error.h"

#define REF_NAME "org.opencontainers.image.ref.name"

static bool same_str(struct json_object *a, struct json_object *b,
		     const char *key)
{
	const char *x = oci_json_str(a, key), *y = oci_json_str(b, key);

	return x == y || (x && y && !strcmp(x, y));
}

/* The same platform, "erofs" in os.features apart (the conversion adds it). */
static bool same_platform(struct json_object *a, struct json_object *b)
{
	return a && b && same_str(a, b, "os") &&
	       same_str(a, b, "architecture") && same_str(a, b, "variant") &&
	       same_str(a, b, "os.version");
}

static bool pairs_with(struct json_object *d, struct json_object *s, bool top,
		       int pass)
{
	if (pass == 0)
		return same_str(d, s, "digest");
	if (top)
		return oci_json_str(oci_json_get(d, "annotations"), REF_NAME) &&
		       same_str(oci_json_get(d, "annotations"),
				oci_json_get(s, "annotations"), REF_NAME);
	return same_platform(oci_json_get(d, "platform"),
			     oci_json_get(s, "platform"));
}

struct json_object *chk_source_entry(struct oci_chk *c, struct chk_blob *b,
				     struct json_object *sindex,
				     struct json_object *d, bool top,
				     const char *where)
{
	struct json_object *list = oci_json_get(sindex, "manifests");
	size_t n = json_object_is_type(list, json_type_array)
			   ? json_object_array_length(list)
			   : 0;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			struct json_object *s =
				json_object_array_get_idx(list, i);

			if (pairs_with(d, s, top, pass))
				return s;
		}
	chk_report(
		c, b, IMGFS_CHECK_ERROR, where,
		"%s: no entry of the source layout's %s has its digest or its %s: nothing to compare it with",
		where, top ? "index.json" : "index",
		top ? "ref name" : "platform");
	return NULL;
}

struct json_object *chk_source_load(struct oci_chk *c, struct chk_blob *b,
				    struct json_object *sdesc,
				    const char *where)
{
	struct json_object *doc = NULL;
	struct imgfs_error e = { 0 };
	struct oci_digest d;
	uint64_t size;
	int ret;

	ret = oci_desc_get(sdesc, &d, &size, NULL, "the source layout", &e);
	if (!ret)
		ret = oci_json_load(c->o->compare_src, &d, size, &doc, &e);
	if (ret == -ENOMEM) {
		c->failed = true;
		error_set(c->err, ret, "out of memory");
	} else if (ret) {
		chk_report(c, b, IMGFS_CHECK_ERROR, where,
			   "the source of %s in %s: %s", where,
			   c->o->compare_src, e.msg);
	}
	return doc;
}
