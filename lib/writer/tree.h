/* SPDX-License-Identifier: MIT */
/*
 * tree.h - the in-memory tree a writer builds from archive entries.
 *
 * A dentry is a name in a directory; an inode is what it points to. Hard
 * links are several dentries sharing one inode. Dentries are found by
 * (parent, name) through one hash table per tree, so inserting into a
 * directory of any size is O(1). Only metadata lives here: file data has
 * already been written to the image when an inode is created.
 */
#ifndef IMGFS_TREE_H
#define IMGFS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/error.h"
#include "util/hashtab.h"

struct imgfs_xattr_item;

/* One xattr reference of an inode: the item is shared by identical xattrs. */
struct imgfs_node_xattrs {
	struct imgfs_xattr_item **items;
	uint32_t count;
	size_t cap;
};

struct imgfs_node {
	uint32_t mode;
	uint32_t uid, gid;
	int64_t mtime;
	uint32_t mtime_nsec;
	uint64_t size;
	uint32_t rdev; /* encoded */
	uint32_t nlink;
	uint32_t ino; /* serial, assigned at layout */

	unsigned int layout; /* enum imgfs_datalayout */
	uint64_t startblk; /* first data block (FLAT_*) */
	uint32_t i_u; /* chunk format / compressed block count, by layout */
	bool i_u_set;

	uint8_t *tail; /* inline tail bytes (FLAT_INLINE) */
	uint32_t tail_len;
	uint8_t *extra; /* chunk array or compression map after xattrs */
	uint32_t extra_len;
	uint32_t extra_align;

	char *symlink; /* symlink target (size bytes, NUL-terminated copy) */
	struct imgfs_dentry *dir; /* directories: the dentry holding children */

	struct imgfs_node_xattrs xattrs;

	/* layout results */
	uint64_t nid;
	uint8_t extended;
	uint32_t xattr_isize;
	uint32_t nr_shared;
	uint32_t dir_nblocks; /* directories: blocks stored outside the inode */
	uint8_t placed;
	struct imgfs_node *next_placed;
	struct imgfs_node *next_all; /* every inode, for freeing */
};

struct imgfs_dentry {
	struct imgfs_dentry *parent;
	struct imgfs_node *inode;
	struct imgfs_hnode hnode; /* in the tree's (parent, name) table */
	char *name;
	uint16_t name_len;
	bool dead; /* replaced by a later entry; skipped at layout */
	bool implied; /* created for a missing parent, not yet listed */
	bool has_whiteouts; /* gets trusted.overlay.origin */
	bool opaque; /* gets trusted.overlay.opaque = y */
	/* a whiteout made from ".wh.NAME" by this layer: a directory of
	 * the layer at NAME replaces it as an opaque one */
	bool whiteout;
	/* directories only */
	struct imgfs_dentry **children;
	uint32_t nr_children;
	size_t cap_children;
};

/* Bump allocator for dentries and names: freed all at once. */
struct imgfs_arena_chunk;
struct imgfs_arena {
	struct imgfs_arena_chunk *head;
	size_t used;
	size_t bytes;
};

void *arena_alloc(struct imgfs_arena *a, size_t size);
void arena_free(struct imgfs_arena *a);

struct imgfs_tree {
	struct imgfs_arena arena;
	struct imgfs_node *all_inodes;
	struct imgfs_dentry *root;
	struct imgfs_hashtab dentries; /* by (parent, name) */
	uint64_t nr_inodes;
};

int tree_init(struct imgfs_tree *t, struct imgfs_error *err);
void tree_free(struct imgfs_tree *t);

/* A new zeroed inode owned by @t, or NULL on no memory. */
struct imgfs_node *tree_node_new(struct imgfs_tree *t);

/* Find the live child @name of @dir, or NULL. */
struct imgfs_dentry *tree_lookup(struct imgfs_tree *t, struct imgfs_dentry *dir,
				 const char *name, size_t len);

/*
 * Add a dentry @name under @dir pointing at @inode (which it does not own
 * exclusively: inodes are freed by tree_free via their dentries).
 * Returns the dentry or NULL on no memory.
 */
struct imgfs_dentry *tree_add(struct imgfs_tree *t, struct imgfs_dentry *dir,
			      const char *name, size_t len,
			      struct imgfs_node *inode);

/* Mark @d and its subtree as replaced. */
void tree_kill(struct imgfs_tree *t, struct imgfs_dentry *d);

static inline bool node_is_dir(const struct imgfs_node *inode)
{
	return (inode->mode & 0170000) == 0040000;
}

#endif /* IMGFS_TREE_H */
