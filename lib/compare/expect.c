// SPDX-License-Identifier: MIT
/*
 * compare/expect.c - the expected tree: what the image should hold once
 * the tar is replayed. Dentries are hashed by (parent, name); a replaced
 * entry stays in memory, marked dead, so that pointers to it stay valid.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compare/internal.h"
#include "util/vec.h"

/* A dentry's hash: its name, seeded with its parent's address. */
static uint64_t dhash(const struct exp_dentry *parent, const char *name,
		      size_t len)
{
	return hash_bytes((uint64_t)(uintptr_t)parent, name, len);
}

struct dkey {
	const struct exp_dentry *parent;
	const char *name;
	size_t len;
};

/* Replaced dentries stay in the table, dead: only a live one matches. */
static bool dentry_eq(const struct imgfs_hnode *n, const void *key)
{
	const struct exp_dentry *d =
		imgfs_container_of(n, struct exp_dentry, hnode);
	const struct dkey *k = key;

	return d->parent == k->parent && !d->dead &&
	       strlen(d->name) == k->len && !memcmp(d->name, k->name, k->len);
}

struct exp_dentry *cmp_dlookup(struct imgfs_compare *c, struct exp_dentry *dir,
			       const char *name, size_t len)
{
	struct dkey k = { dir, name, len };
	struct imgfs_hnode *n;

	n = hashtab_find(&c->dentries, dhash(dir, name, len), dentry_eq, &k);
	return n ? imgfs_container_of(n, struct exp_dentry, hnode) : NULL;
}

struct exp_dentry *cmp_dadd(struct imgfs_compare *c, struct exp_dentry *dir,
			    const char *name, size_t len,
			    struct exp_inode *inode)
{
	struct exp_dentry *d;

	d = calloc(1, sizeof(*d));
	if (!d || !(d->name = strndup(name, len))) {
		free(d);
		return NULL;
	}
	d->parent = dir;
	d->inode = inode;
	d->next_all = c->all_dentries;
	c->all_dentries = d;
	if (IMGFS_VEC_RESERVE(dir->children, dir->cap_children,
			      dir->nr_children + 1, 8))
		return NULL;
	dir->children[dir->nr_children++] = d;
	if (hashtab_insert(&c->dentries, &d->hnode, dhash(dir, name, len)))
		return NULL;
	return d;
}

struct exp_inode *cmp_inode_new(struct imgfs_compare *c)
{
	struct exp_inode *i = calloc(1, sizeof(*i));

	if (!i)
		return NULL;
	i->next_all = c->all_inodes;
	c->all_inodes = i;
	return i;
}

bool cmp_is_dir(const struct exp_dentry *d)
{
	return d->inode && (d->inode->mode & 0170000) == 0040000;
}

int cmp_kv_set(struct exp_inode *in, const char *name, const void *v,
	       size_t len)
{
	struct cmp_kv *x = NULL;
	size_t i;

	for (i = 0; i < in->nr_xattrs; i++)
		if (!strcmp(in->xattrs[i].name, name))
			x = &in->xattrs[i];
	if (!x) {
		if (IMGFS_VEC_RESERVE(in->xattrs, in->cap_xattrs,
				      in->nr_xattrs + 1, 4))
			return -ENOMEM;
		x = &in->xattrs[in->nr_xattrs++];
		x->name = strdup(name);
		x->value = NULL;
		if (!x->name)
			return -ENOMEM;
	}
	free(x->value);
	x->value = malloc(len ? len : 1);
	if (!x->value)
		return -ENOMEM;
	memcpy(x->value, v, len);
	x->len = len;
	return 0;
}

void cmp_kv_clear(struct exp_inode *in)
{
	size_t i;

	for (i = 0; i < in->nr_xattrs; i++) {
		free(in->xattrs[i].name);
		free(in->xattrs[i].value);
	}
	free(in->xattrs);
	in->xattrs = NULL;
	in->nr_xattrs = 0;
	in->cap_xattrs = 0;
}

int cmp_kv_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cmp_kv *)a)->name,
		      ((const struct cmp_kv *)b)->name);
}

int cmp_split_path(const char *path, struct cmp_comps *cp)
{
	char *p, *save = NULL;

	memset(cp, 0, sizeof(*cp));
	cp->buf = strdup(path);
	cp->v = calloc(strlen(path) / 2 + 2, sizeof(*cp->v));
	if (!cp->buf || !cp->v)
		return -ENOMEM;
	for (p = strtok_r(cp->buf, "/", &save); p;
	     p = strtok_r(NULL, "/", &save)) {
		if (!strcmp(p, "."))
			continue;
		if (!strcmp(p, "..")) {
			if (cp->n)
				cp->n--;
			continue;
		}
		cp->v[cp->n++] = p;
	}
	return 0;
}

void cmp_comps_free(struct cmp_comps *cp)
{
	free(cp->buf);
	free(cp->v);
}

/* An implied parent: 0755, owner 0:0, the image build time. */
static struct exp_dentry *implied_dir(struct imgfs_compare *c,
				      struct exp_dentry *dir, const char *name)
{
	struct exp_inode *in = cmp_inode_new(c);
	struct exp_dentry *d;

	if (!in) {
		c->oom = -ENOMEM;
		return NULL;
	}
	in->mode = 0040755;
	in->mtime = c->build_time;
	in->at_build_time = true;
	d = cmp_dadd(c, dir, name, strlen(name), in);
	if (!d)
		c->oom = -ENOMEM;
	return d;
}

struct exp_dentry *cmp_walk_parent(struct imgfs_compare *c,
				   const struct cmp_comps *cp, bool create,
				   const char *path)
{
	struct exp_dentry *dir = c->root, *d;
	size_t i;

	for (i = 0; i + 1 < cp->n; i++) {
		d = cmp_dlookup(c, dir, cp->v[i], strlen(cp->v[i]));
		if (d && d->whiteout && create) {
			/* ".wh.d" then "d/b": a new opaque d */
			d->dead = true;
			d = implied_dir(c, dir, cp->v[i]);
			if (!d)
				return NULL;
			d->opaque = true;
		}
		if (d && !cmp_is_dir(d)) {
			if (create)
				cmp_unrepresentable(
					c, path,
					"a parent is not a directory (mkfs.img refuses the archive)");
			return NULL;
		}
		if (!d && !create)
			return NULL;
		if (!d) {
			d = implied_dir(c, dir, cp->v[i]);
			if (!d)
				return NULL;
		}
		dir = d;
	}
	return dir;
}

struct exp_dentry *cmp_find_path(struct imgfs_compare *c, const char *path)
{
	struct exp_dentry *dir, *d = NULL;
	struct cmp_comps cp;

	if (cmp_split_path(path, &cp)) {
		cmp_comps_free(&cp);
		c->oom = -ENOMEM;
		return NULL;
	}
	if (!cp.n) {
		d = c->root;
	} else {
		dir = cmp_walk_parent(c, &cp, false, path);
		if (dir)
			d = cmp_dlookup(c, dir, cp.v[cp.n - 1],
					strlen(cp.v[cp.n - 1]));
	}
	cmp_comps_free(&cp);
	return d;
}

/* The root: 0755, owner 0:0, the build time, until the tar says more. */
int cmp_expect_init(struct imgfs_compare *c)
{
	struct exp_inode *ri = cmp_inode_new(c);

	c->root = calloc(1, sizeof(*c->root));
	if (!c->root || !ri || !(c->root->name = strdup("")))
		return -ENOMEM;
	ri->mode = 0040755;
	ri->mtime = c->build_time;
	ri->at_build_time = true;
	c->root->inode = ri;
	return 0;
}

/*
 * The image's build time, known once there is an image (the tar may have
 * been read before): the inodes that take it get it now.
 */
void cmp_expect_build_time(struct imgfs_compare *c, int64_t t)
{
	struct exp_inode *in;

	c->build_time = t;
	for (in = c->all_inodes; in; in = in->next_all)
		if (in->at_build_time)
			in->mtime = t;
}

void cmp_expect_free(struct imgfs_compare *c)
{
	struct exp_inode *in, *ni;
	struct exp_dentry *d, *nd;

	for (in = c->all_inodes; in; in = ni) {
		ni = in->next_all;
		cmp_kv_clear(in);
		free(in->symlink);
		free(in);
	}
	for (d = c->all_dentries; d; d = nd) {
		nd = d->next_all;
		free(d->name);
		free(d->children);
		free(d->link_target);
		free(d->entry_path);
		free(d);
	}
	if (c->root) {
		free(c->root->name);
		free(c->root->children);
		free(c->root);
	}
	hashtab_free(&c->dentries);
}
