// SPDX-License-Identifier: MIT
/*
 * The writer's in-memory tree: dentries in an arena, a (parent, name) hash
 * table (util/hashtab.h), and per-directory child vectors sorted only once
 * at layout time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "writer/tree.h"
#include "writer/xattr.h"
#include "util/vec.h"
#include "util/error.h"

#define ARENA_CHUNK (256u * 1024u)

struct imgfs_arena_chunk {
	struct imgfs_arena_chunk *next;
	size_t size;
	uint8_t data[];
};

void *arena_alloc(struct imgfs_arena *a, size_t size)
{
	struct imgfs_arena_chunk *c = a->head;
	void *p;

	size = (size + 7) & ~(size_t)7;
	if (!c || a->used + size > c->size) {
		size_t csize = size > ARENA_CHUNK ? size : ARENA_CHUNK;

		c = malloc(sizeof(*c) + csize);
		if (!c)
			return NULL;
		c->next = a->head;
		c->size = csize;
		a->head = c;
		a->used = 0;
	}
	p = c->data + a->used;
	a->used += size;
	a->bytes += size;
	memset(p, 0, size);
	return p;
}

void arena_free(struct imgfs_arena *a)
{
	while (a->head) {
		struct imgfs_arena_chunk *next = a->head->next;

		free(a->head);
		a->head = next;
	}
	a->used = 0;
	a->bytes = 0;
}

/* FNV-1a over the parent pointer and the name. */
static uint64_t dentry_hash(const struct imgfs_dentry *parent, const char *name,
			    size_t len)
{
	return hash_bytes((uint64_t)(uintptr_t)parent, name, len);
}

struct imgfs_node *tree_node_new(struct imgfs_tree *t)
{
	struct imgfs_node *inode = calloc(1, sizeof(*inode));

	if (!inode)
		return NULL;
	inode->next_all = t->all_inodes;
	t->all_inodes = inode;
	t->nr_inodes++;
	return inode;
}

static void inode_free(struct imgfs_node *inode)
{
	free(inode->tail);
	free(inode->extra);
	free(inode->symlink);
	free(inode->xattrs.items);
	free(inode);
}

int tree_init(struct imgfs_tree *t, struct imgfs_error *err)
{
	struct imgfs_node *inode;

	memset(t, 0, sizeof(*t));
	inode = tree_node_new(t);
	if (!inode)
		goto nomem;
	inode->mode = 0040755;
	t->root = arena_alloc(&t->arena, sizeof(*t->root));
	if (!t->root)
		goto nomem;
	t->root->inode = inode;
	t->root->implied = true;
	t->root->name = "";
	inode->dir = t->root;
	return 0;
nomem:
	tree_free(t);
	return error_set(err, -ENOMEM, "out of memory");
}

void tree_free(struct imgfs_tree *t)
{
	struct imgfs_node *inode = t->all_inodes;

	while (inode) {
		struct imgfs_node *next = inode->next_all;

		if (inode->dir)
			free(inode->dir->children);
		inode_free(inode);
		inode = next;
	}
	hashtab_free(&t->dentries);
	arena_free(&t->arena);
	memset(t, 0, sizeof(*t));
}

struct imgfs_dentry *tree_lookup(struct imgfs_tree *t, struct imgfs_dentry *dir,
				 const char *name, size_t len)
{
	struct imgfs_hnode *n =
		hashtab_first(&t->dentries, dentry_hash(dir, name, len));

	for (; n; n = hashtab_next(n)) {
		struct imgfs_dentry *d =
			imgfs_container_of(n, struct imgfs_dentry, hnode);

		if (d->parent == dir && d->name_len == len && !d->dead &&
		    !memcmp(d->name, name, len))
			return d;
	}
	return NULL;
}

struct imgfs_dentry *tree_add(struct imgfs_tree *t, struct imgfs_dentry *dir,
			      const char *name, size_t len,
			      struct imgfs_node *inode)
{
	struct imgfs_dentry *d;

	d = arena_alloc(&t->arena, sizeof(*d) + len + 1);
	if (!d)
		return NULL;
	d->name = (char *)(d + 1);
	memcpy(d->name, name, len);
	d->name_len = (uint16_t)len;
	d->parent = dir;
	d->inode = inode;
	if (IMGFS_VEC_RESERVE(dir->children, dir->cap_children,
			      (size_t)dir->nr_children + 1, 8))
		return NULL;
	if (hashtab_insert(&t->dentries, &d->hnode,
			   dentry_hash(dir, name, len)))
		return NULL;
	dir->children[dir->nr_children++] = d;
	return d;
}

void tree_kill(struct imgfs_tree *t, struct imgfs_dentry *d)
{
	/*
	 * Children stay in the hash but can no longer be reached: lookups
	 * start from live parents only, and layout skips dead dentries.
	 */
	d->dead = true;
}
