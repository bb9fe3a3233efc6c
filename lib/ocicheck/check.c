// SPDX-License-Identifier: MIT
/*
 * ocicheck/check.c - checking an OCI image layout (imgfs/oci.h, fsck.img
 * --oci): every blob that index.json leads to, through nested indexes,
 * manifests and configs, is verified against the descriptors naming it,
 * once per role it is named in. Here: the layout's own files, the run and
 * the blobs met (each checked once); the walk over the documents and what
 * they must agree on is docs.c, EROFS layers go through the image checker
 * (layer.c) and, with a source layout, the comparison with their source
 * layer. Blobs are read with the blob reader of lib/oci/blob.c, which
 * checks size and digest as it streams.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf */
#endif
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "ocicheck/check.h"
#include "util/error.h"
#include "util/sized.h"

const char *imgfs_oci_blob_role_name(enum imgfs_oci_blob_role r)
{
	switch (r) {
	case IMGFS_OCI_BLOB_INDEX:
		return "index";
	case IMGFS_OCI_BLOB_MANIFEST:
		return "manifest";
	case IMGFS_OCI_BLOB_CONFIG:
		return "config";
	case IMGFS_OCI_BLOB_LAYER:
		return "layer";
	case IMGFS_OCI_BLOB_OTHER:
		return "blob";
	}
	return "blob";
}

void imgfs_oci_check_options_init(struct imgfs_oci_check_options *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
	o->max_differences = 20;
}

/*
 * Blobs are met per (digest, role, media type): what is checked depends
 * on all three, so a layer first named as a config or as an unknown type
 * is still checked as the layer it also is.
 */
struct blob_key {
	const struct oci_digest *digest;
	enum imgfs_oci_blob_role role;
	const char *media_type;
	/* documents paired with different sources are checked for each */
	const struct oci_digest *pair;
};

static bool blob_eq(const struct imgfs_hnode *n, const void *key)
{
	const struct chk_blob *b = imgfs_container_of(n, struct chk_blob, node);
	const struct blob_key *k = key;

	if (b->role != k->role || strcmp(b->digest.str, k->digest->str) ||
	    b->paired != !!k->pair ||
	    (k->pair && strcmp(b->pair.str, k->pair->str)))
		return false;
	if (!b->media_type || !k->media_type)
		return b->media_type == k->media_type;
	return !strcmp(b->media_type, k->media_type);
}

static uint64_t digest_hash(const struct oci_digest *d)
{
	uint64_t h;

	memcpy(&h, d->raw, sizeof(h));
	return h;
}

static struct chk_blob *blob_find(struct oci_chk *c, const struct blob_key *k)
{
	struct imgfs_hnode *n = imgfs_hashtab_find(
		&c->blobs, digest_hash(k->digest), blob_eq, k);

	return n ? imgfs_container_of(n, struct chk_blob, node) : NULL;
}

static struct chk_blob *blob_new(struct oci_chk *c, const struct blob_key *k,
				 uint64_t size, const char *where)
{
	const struct oci_digest *d = k->digest;
	const char *mt = k->media_type;
	struct chk_blob *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->digest = *d;
	b->size = size;
	b->role = k->role;
	b->paired = k->pair;
	if (k->pair)
		b->pair = *k->pair;
	b->media_type = mt ? strdup(mt) : NULL;
	b->where = strdup(where);
	b->path = oci_blob_path(c->root, d);
	if ((mt && !b->media_type) || !b->where || !b->path ||
	    imgfs_hashtab_insert(&c->blobs, &b->node, digest_hash(d))) {
		free(b->media_type);
		free(b->where);
		free(b->path);
		free(b);
		return NULL;
	}
	*c->tail = b;
	c->tail = &b->next;
	c->res->blobs++;
	return b;
}

bool chk_present(struct oci_chk *c, struct chk_blob *b)
{
	struct stat st;
	char rel[96];
	int fd;

	/* as the reader opens it: no link followed, no FIFO waited on */
	snprintf(rel, sizeof(rel), "blobs/sha256/%s",
		 oci_digest_hex(&b->digest));
	fd = oci_open(c->root, rel, O_PATH, 0);
	if (fd < 0 || fstat(fd, &st)) {
		errno = fd < 0 ? -fd : errno;
		if (fd >= 0)
			close(fd);
		/* often absent: mkfs.img --oci keeps them so (docs/oci.md) */
		if (errno == ENOENT && b->role == IMGFS_OCI_BLOB_LAYER &&
		    oci_layer_kind(b->media_type) == OCI_LAYER_NONDIST) {
			chk_report(
				c, b, IMGFS_CHECK_NOTE, b->where,
				"non-distributable layer %s is not in the layout: not checked",
				b->digest.str);
			return false;
		}
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "blob %s (%s) is missing: %s", b->digest.str,
			   imgfs_oci_blob_role_name(b->role), strerror(errno));
		return false;
	}
	close(fd);
	if (!S_ISREG(st.st_mode)) {
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "blob %s is not a regular file", b->digest.str);
		return false;
	}
	b->present = true;
	b->actual_size = (uint64_t)st.st_size;
	if (b->actual_size != b->size) {
		chk_report(
			c, b, IMGFS_CHECK_ERROR, b->where,
			"blob %s has %llu bytes, its descriptor in %s gives %llu",
			b->digest.str, (unsigned long long)b->actual_size,
			b->where, (unsigned long long)b->size);
		return false;
	}
	return true;
}

struct json_object *chk_load_json(struct oci_chk *c, struct chk_blob *b)
{
	struct json_object *doc = NULL;
	struct imgfs_error e = { 0 };
	int ret;

	if (!chk_present(c, b))
		return NULL;
	ret = oci_json_load(c->root, &b->digest, b->size, &doc, &e);
	if (ret == -ENOMEM) {
		imgfs_error_set(c->err, ret, "out of memory");
		c->failed = true;
		return NULL;
	}
	c->res->bytes += b->size;
	if (ret) {
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where, "%s", e.msg);
		return NULL;
	}
	b->verified = true;
	return doc;
}

/* A descriptor met again: it must agree with the blob. */
static void check_again(struct oci_chk *c, struct chk_blob *b, uint64_t size,
			const char *where)
{
	if (size == b->size || !b->present)
		return;
	chk_report(c, b, IMGFS_CHECK_ERROR, where,
		   "blob %s has %llu bytes, its descriptor in %s gives %llu",
		   b->digest.str, (unsigned long long)b->actual_size, where,
		   (unsigned long long)size);
}

struct chk_blob *chk_meet(struct oci_chk *c, struct json_object *desc,
			  enum imgfs_oci_blob_role role,
			  struct json_object *src, const char *where,
			  bool *fresh)
{
	struct imgfs_error e = { 0 };
	struct blob_key k = { .role = role };
	struct oci_digest d, sd;
	struct chk_blob *b;
	uint64_t size, ssize;

	*fresh = false;
	if (oci_desc_get(desc, &d, &size, &k.media_type, where, &e)) {
		chk_report(c, NULL, IMGFS_CHECK_ERROR, where, "%s", e.msg);
		return NULL;
	}
	k.digest = &d;
	if (src && role != IMGFS_OCI_BLOB_LAYER &&
	    !oci_desc_get(src, &sd, &ssize, NULL, where, &e))
		k.pair = &sd;
	b = blob_find(c, &k);
	if (b) {
		check_again(c, b, size, where);
		if (role == IMGFS_OCI_BLOB_LAYER &&
		    chk_layer_again(c, b, desc, src, where) < 0)
			c->failed = true;
		return b;
	}
	b = blob_new(c, &k, size, where);
	if (!b) {
		c->failed = true;
		imgfs_error_set(c->err, -ENOMEM, "out of memory");
		return NULL;
	}
	if (!k.media_type)
		chk_report(c, b, IMGFS_CHECK_ERROR, where,
			   "the descriptor of %s in %s has no mediaType",
			   b->digest.str, where);
	*fresh = true;
	return b;
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
		imgfs_error_set(c->err, ret, "out of memory");
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
		return imgfs_error_set(err, -EINVAL, "no OCI check options");
	ret = SIZED_IN(&full, in, sizeof(full), "OCI check options", err);
	if (ret)
		return ret;
	c.tail = &c.first;
	if (stat(dir, &st))
		return imgfs_error_set(err, -errno, "%s: %s", dir,
				       strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return imgfs_error_set(
			err, -ENOTDIR,
			"%s: not a directory (an OCI image layout is one)",
			dir);
	if (o->compare_src &&
	    (stat(o->compare_src, &st) || !S_ISDIR(st.st_mode)))
		return imgfs_error_set(
			err, -ENOTDIR,
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
	imgfs_hashtab_free(&c.blobs);
	return ret;
}
