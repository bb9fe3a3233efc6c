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

#define DIGEST_CHUNK 65536

static uint64_t fnv(const void *p, size_t len, uint64_t h)
{
	const uint8_t *b = p;

	while (len--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

static size_t ihash(const struct img_entry *parent, const char *name,
		    size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uintptr_t)parent;

	return (size_t)fnv(name, len, h * 0x100000001b3ull);
}

struct img_entry *cmp_image_lookup(struct imgfs_compare *c,
				   const struct img_entry *parent,
				   const char *name)
{
	size_t len = strlen(name);
	struct img_entry *e;

	if (!c->nr_ibuckets)
		return NULL;
	for (e = c->ibuckets[ihash(parent, name, len) & (c->nr_ibuckets - 1)];
	     e; e = e->hash_next)
		if (e->parent == parent && !strcmp(e->name, name))
			return e;
	return NULL;
}

static int igrow(struct imgfs_compare *c)
{
	size_t n = c->nr_ibuckets ? c->nr_ibuckets * 2 : 1024, i;
	struct img_entry **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (i = 0; i < c->nr_ibuckets; i++) {
		struct img_entry *e = c->ibuckets[i], *next;

		for (; e; e = next) {
			size_t h = ihash(e->parent, e->name, strlen(e->name)) &
				   (n - 1);

			next = e->hash_next;
			e->hash_next = b[h];
			b[h] = e;
		}
	}
	free(c->ibuckets);
	c->ibuckets = b;
	c->nr_ibuckets = n;
	return 0;
}

static size_t nid_slot(uint64_t nid, size_t cap)
{
	return (size_t)((nid * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static int tab_grow(struct nid_tab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024, i, j;
	struct img_entry **v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		if (!t->v[i])
			continue;
		for (j = nid_slot(t->v[i]->inode.nid, cap); v[j];
		     j = (j + 1) & (cap - 1))
			;
		v[j] = t->v[i];
	}
	free(t->v);
	t->v = v;
	t->cap = cap;
	return 0;
}

/* The entry with @nid in @t, or NULL. */
static struct img_entry *tab_find(const struct nid_tab *t, uint64_t nid)
{
	size_t i;

	if (!t->cap)
		return NULL;
	for (i = nid_slot(nid, t->cap); t->v[i]; i = (i + 1) & (t->cap - 1))
		if (t->v[i]->inode.nid == nid)
			return t->v[i];
	return NULL;
}

/* The entry of @ie's nid already in @t, or NULL after adding @ie. */
static struct img_entry *tab_bind(struct nid_tab *t, struct img_entry *ie,
				  int *oom)
{
	struct img_entry *old = tab_find(t, ie->inode.nid);
	size_t i;

	if (old)
		return old;
	if ((t->nr + 1) * 2 > t->cap && tab_grow(t)) {
		*oom = -ENOMEM;
		return NULL;
	}
	for (i = nid_slot(ie->inode.nid, t->cap); t->v[i];
	     i = (i + 1) & (t->cap - 1))
		;
	t->v[i] = ie;
	t->nr++;
	return NULL;
}

struct img_entry *cmp_image_bind_nid(struct imgfs_compare *c,
				     struct img_entry *ie)
{
	return tab_bind(&c->by_nid, ie, &c->oom);
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
	size_t h;

	if (name) {
		parent = tab_find(&c->dirs, parent_nid);
		if (!parent) /* both walks hand out parents first */
			return -EUCLEAN;
	}
	if (c->nr_ientries * 4 >= c->nr_ibuckets * 3 && igrow(c))
		return -ENOMEM;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->name = strndup(name ? name : "", name_len))) {
		free(e);
		return -ENOMEM;
	}
	e->parent = parent;
	e->inode = *inode;
	e->digest = digest;
	if (digest == IMG_DIGEST_SET)
		memcpy(e->sha256, sha256, sizeof(e->sha256));
	h = ihash(parent, e->name, strlen(e->name)) & (c->nr_ibuckets - 1);
	e->hash_next = c->ibuckets[h];
	c->ibuckets[h] = e;
	c->nr_ientries++;
	if (!parent)
		c->iroot = e;
	*c->itail = e;
	c->itail = &e->next_all;
	if (imgfs_inode_is_dir(inode) && first &&
	    !tab_find(&c->dirs, inode->nid)) {
		tab_bind(&c->dirs, e, &c->oom);
		if (c->oom)
			return c->oom;
	}
	return 0;
}

int imgfs_compare_check_entry(void *compare, const struct imgfs_check_entry *e)
{
	struct imgfs_compare *c = compare;
	const char *name = NULL;

	if (strcmp(e->path, "/"))
		name = strrchr(e->path, '/') + 1;
	return cmp_image_add(c, e->parent_nid, name, name ? strlen(name) : 0,
			     e->inode, !e->link_to,
			     e->sha256 ? IMG_DIGEST_SET : IMG_DIGEST_NONE,
			     e->sha256);
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
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	if (ret > 0 || ret == -EUCLEAN)
		return imgfs_error_set(err, -EUCLEAN,
				       "the image tree cannot be walked");
	return ret;
}

/* SHA-256 of @ie's content, read through the reader. */
static int digest_file(struct imgfs_compare *c, struct img_entry *ie,
		       struct imgfs_error *err)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	uint8_t *buf = malloc(DIGEST_CHUNK);
	uint64_t pos = 0;
	unsigned int n = 0;
	ssize_t r = 0;

	if (!md || !buf || !EVP_DigestInit_ex(md, EVP_sha256(), NULL))
		r = imgfs_error_set(err, -ENOMEM, "out of memory");
	while (!r && pos < ie->inode.size) {
		r = imgfs_read(c->img, &ie->inode, pos, buf, DIGEST_CHUNK, err);
		if (r == 0)
			r = imgfs_error_set(err, -EUCLEAN,
					    "file data ends early");
		if (r > 0) {
			EVP_DigestUpdate(md, buf, (size_t)r);
			pos += (uint64_t)r;
			r = 0;
		}
	}
	if (!r)
		EVP_DigestFinal_ex(md, ie->sha256, &n);
	EVP_MD_CTX_free(md);
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
	first = tab_find(&c->by_nid, ie->inode.nid);
	if (first && first->digest == IMG_DIGEST_SET) {
		memcpy(ie->sha256, first->sha256, sizeof(ie->sha256));
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
	free(c->ibuckets);
	free(c->by_nid.v);
	free(c->dirs.v);
}
