// SPDX-License-Identifier: MIT
/*
 * compare/image.c - the image side of the comparison: every path of the
 * image, hashed by (parent entry, name), from the checker's walk
 * (imgfs_compare_check_entry()) or from a walk of our own over the
 * reader; directories and hard-link groups are found by nid.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "compare/internal.h"
#include "imgfs/stats.h"
#include "util/error.h"

#define DIGEST_CHUNK 65536

/*
 * An entry's hash: its name, seeded with its parent's address (the same
 * shape as the expected tree's dentries, in expect.c).
 */
static uint64_t ihash(const struct img_entry *parent, const char *name,
		      size_t len)
{
	return hash_bytes((uint64_t)(uintptr_t)parent, name, len);
}

struct ikey {
	const struct img_entry *parent;
	const char *name;
};

static bool ientry_eq(const struct imgfs_hnode *n, const void *key)
{
	const struct img_entry *e =
		imgfs_container_of(n, struct img_entry, hnode);
	const struct ikey *k = key;

	return e->parent == k->parent && !strcmp(e->name, k->name);
}

struct img_entry *cmp_image_lookup(struct imgfs_compare *c,
				   const struct img_entry *parent,
				   const char *name)
{
	struct ikey k = { parent, name };
	struct imgfs_hnode *n;

	n = hashtab_find(&c->ientries, ihash(parent, name, strlen(name)),
			 ientry_eq, &k);
	return n ? imgfs_container_of(n, struct img_entry, hnode) : NULL;
}

/* The entry recorded for @nid in @m, or NULL. */
static struct img_entry *nid_find(const struct imgfs_u64map *m, uint64_t nid)
{
	uint64_t v;

	if (!u64map_get(m, nid, &v))
		return NULL;
	return (struct img_entry *)(uintptr_t)v;
}

/* The entry of @ie's nid already in @m, or NULL after adding @ie. */
static struct img_entry *nid_bind(struct imgfs_u64map *m, struct img_entry *ie,
				  int *oom)
{
	bool added;
	uint64_t *v = u64map_find_or_add(m, ie->inode.nid,
					 (uint64_t)(uintptr_t)ie, &added);

	if (!v) {
		*oom = -ENOMEM;
		return NULL;
	}
	return added ? NULL : (struct img_entry *)(uintptr_t)*v;
}

struct img_entry *cmp_image_bind_nid(struct imgfs_compare *c,
				     struct img_entry *ie)
{
	return nid_bind(&c->by_nid, ie, &c->oom);
}

const char *cmp_image_path(struct imgfs_compare *c, const struct img_entry *e,
			   char **buf, size_t *cap)
{
	const struct img_entry *p;
	size_t len = 0, pos, l;
	char *b;

	for (p = e; p->parent; p = p->parent)
		len += 1 + strlen(p->name);
	if (len + 2 > *cap) {
		b = realloc(*buf, len + 2);
		if (!b) {
			c->oom = -ENOMEM;
			return "?";
		}
		*buf = b;
		*cap = len + 2;
	}
	if (!len)
		return strcpy(*buf, "/");
	(*buf)[len] = '\0';
	for (p = e, pos = len; p->parent; p = p->parent) {
		l = strlen(p->name);
		pos -= l;
		memcpy(*buf + pos, p->name, l);
		(*buf)[--pos] = '/';
	}
	return *buf;
}

/*
 * Record one image path: @name (@name_len bytes; NULL for the root) in
 * the directory @parent_nid, which must have been recorded before.
 * @first: the first path met for the inode.
 */
int cmp_image_add(struct imgfs_compare *c, uint64_t parent_nid,
		  const char *name, size_t name_len,
		  const struct imgfs_inode *inode, bool first,
		  enum img_digest digest, const uint8_t *sha256)
{
	struct img_entry *e, *parent = NULL;

	if (name) {
		parent = nid_find(&c->dirs, parent_nid);
		if (!parent) /* both walks hand out parents first */
			return -EUCLEAN;
	}
	e = calloc(1, sizeof(*e));
	if (!e || !(e->name = strndup(name ? name : "", name_len))) {
		free(e);
		return -ENOMEM;
	}
	e->parent = parent;
	e->inode = *inode;
	e->digest = digest;
	if (digest == IMG_DIGEST_SET)
		memcpy(e->sum, sha256, IMGFS_SHA256_SIZE);
	/* on the list first, so that cmp_image_free() frees it in any case */
	if (!parent)
		c->iroot = e;
	*c->itail = e;
	c->itail = &e->next_all;
	if (hashtab_insert(&c->ientries, &e->hnode,
			   ihash(parent, e->name, strlen(e->name))))
		return -ENOMEM;
	if (imgfs_inode_is_dir(inode) && first) {
		nid_bind(&c->dirs, e, &c->oom);
		if (c->oom)
			return c->oom;
	}
	return 0;
}

int imgfs_compare_check_entry(void *compare, const struct imgfs_check_entry *e)
{
	struct imgfs_compare *c = compare;
	enum img_digest d = e->sha256 ? IMG_DIGEST_SET : IMG_DIGEST_NONE;
	const char *name = NULL;

	if (strcmp(e->path, "/"))
		name = strrchr(e->path, '/') + 1;
	/* the checker's digests are SHA-256: with another digest the
	 * comparison reads the data itself */
	if (c->fast)
		d = IMG_DIGEST_LATER;
	return cmp_image_add(c, e->parent_nid, name, name ? strlen(name) : 0,
			     e->inode, !e->link_to, d,
			     d == IMG_DIGEST_SET ? e->sha256 : NULL);
}

static int walk_entry(void *arg, const struct imgfs_walk_entry *e)
{
	return cmp_image_add(arg, e->parent_nid, e->name, e->name_len, e->inode,
			     e->first, IMG_DIGEST_LATER, NULL);
}

/* Our own walk, when the checker's was not handed in. */
int cmp_image_walk(struct imgfs_compare *c, struct imgfs_error *err)
{
	struct imgfs_walk_options wo = {
		.struct_size = sizeof(wo),
		.entry = walk_entry,
		.arg = c,
	};
	struct imgfs_inode root;
	int ret;

	ret = imgfs_inode_read_root(c->img, &root, err);
	if (!ret)
		ret = cmp_image_add(c, 0, NULL, 0, &root, true,
				    IMG_DIGEST_LATER, NULL);
	if (!ret)
		ret = imgfs_walk(c->img, root.nid, "/", &wo, err);
	if (ret == -ENOMEM || (!ret && c->oom))
		return error_set(err, -ENOMEM, "out of memory");
	if (ret > 0 || ret == -EUCLEAN)
		return error_set(err, -EUCLEAN,
				 "the image tree cannot be walked");
	return ret;
}

/* The digest of @ie's content, read through the reader. */
static int digest_file(struct imgfs_compare *c, struct img_entry *ie,
		       struct imgfs_error *err)
{
	struct cmp_digest md;
	uint8_t *buf = malloc(DIGEST_CHUNK);
	uint64_t pos = 0;
	ssize_t r = 0;

	if (!buf || cmp_digest_begin(c, &md)) {
		free(buf);
		return error_set(err, -ENOMEM, "out of memory");
	}
	while (!r && pos < ie->inode.size) {
		r = imgfs_read(c->img, &ie->inode, pos, buf, DIGEST_CHUNK, err);
		if (r == 0)
			r = error_set(err, -EUCLEAN, "file data ends early");
		if (r > 0) {
			cmp_digest_update(&md, buf, (size_t)r);
			pos += (uint64_t)r;
			r = 0;
		}
	}
	if (!r)
		cmp_digest_final(&md, ie->sum);
	else
		cmp_digest_abort(&md);
	free(buf);
	return (int)r;
}

int cmp_image_digest(struct imgfs_compare *c, struct img_entry *ie,
		     struct imgfs_error *err)
{
	struct img_entry *first;
	int ret;

	if (ie->digest != IMG_DIGEST_LATER)
		return ie->digest == IMG_DIGEST_SET ? 0 : -EIO;
	/* a later path of a hard-linked file: its first one was read */
	first = nid_find(&c->by_nid, ie->inode.nid);
	if (first && first->digest == IMG_DIGEST_SET) {
		memcpy(ie->sum, first->sum, sizeof(ie->sum));
		ie->digest = IMG_DIGEST_SET;
		return 0;
	}
	ret = digest_file(c, ie, err);
	ie->digest = ret ? IMG_DIGEST_NONE : IMG_DIGEST_SET;
	return ret;
}

void cmp_image_free(struct imgfs_compare *c)
{
	struct img_entry *e, *ne;

	for (e = c->iall; e; e = ne) {
		ne = e->next_all;
		free(e->name);
		free(e);
	}
	hashtab_free(&c->ientries);
	u64map_free(&c->by_nid);
	u64map_free(&c->dirs);
}
