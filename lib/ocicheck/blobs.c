// SPDX-License-Identifier: MIT
/*
 * ocicheck/blobs.c - the blobs the layout check meets, each checked once
 * per (digest, role, media type, source document paired with): met
 * again, only the descriptor naming it is checked against it. Whether a
 * blob is there with its size, and a JSON blob read.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "ocicheck/check.h"
#include "util/error.h"

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
	struct imgfs_hnode *n =
		hashtab_find(&c->blobs, digest_hash(k->digest), blob_eq, k);

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
	    hashtab_insert(&c->blobs, &b->node, digest_hash(d))) {
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
		error_set(c->err, ret, "out of memory");
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
		error_set(c->err, -ENOMEM, "out of memory");
		return NULL;
	}
	if (!k.media_type)
		chk_report(c, b, IMGFS_CHECK_ERROR, where,
			   "the descriptor of %s in %s has no mediaType",
			   b->digest.str, where);
	*fresh = true;
	return b;
}
