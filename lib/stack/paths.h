/* SPDX-License-Identifier: MIT */
/*
 * stack/paths.h - what the layers above the one being read hold, path by
 * path, for flattening a stack of layers (flatten.c).
 *
 * Layers are read top first. Each path any layer names (its ancestors
 * included) is a node keyed by (parent, name); the node keeps, for each
 * fact, the topmost layer it came from (-1: none yet). As layers go down
 * a fact set by an upper layer is never overwritten, so "does a layer
 * above layer K say so" is a comparison: the stamp is greater than K.
 */
#ifndef IMGFS_STACK_PATHS_H
#define IMGFS_STACK_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/error.h"
#include "source/path.h"
#include "util/hashtab.h"

struct stack_node {
	struct imgfs_hnode hnode; /* in the table, by (parent, name) */
	struct stack_node *parent;
	struct stack_node *next_all; /* every node, for freeing */
	int32_t entry; /* an entry at this path */
	int32_t dir; /* a directory here, listed or implied by a child */
	int32_t gone; /* a whiteout of this path */
	int32_t shut; /* what lower layers have below is hidden: an
		       * opaque marker or a non-directory here */
	/* the layer being read hides its entry here: where it is kept
	 * (stack/links.h), valid while saved_layer is that layer */
	int32_t saved_layer;
	uint64_t saved_off;
	uint16_t name_len;
	char name[];
};

struct stack_paths {
	struct imgfs_hashtab tab;
	struct stack_node *root;
	struct stack_node *all;
};

/* What an entry tells about its path (stack_paths_record()). */
enum stack_fact {
	STACK_DIR, /* a directory entry */
	STACK_NONDIR, /* any other entry, hard links included */
	STACK_WHITEOUT, /* .wh.NAME: the path is deleted */
	STACK_OPAQUE, /* .wh..wh..opq: lower contents of the directory go */
};

int stack_paths_init(struct stack_paths *p, struct imgfs_error *err);
void stack_paths_free(struct stack_paths *p);

/*
 * Is an entry of layer @layer at the first @n components of @c hidden by
 * the layers above? @is_dir: the entry is a directory (a lower
 * directory merges with an upper one, anything else is covered by it).
 */
bool stack_paths_hidden(const struct stack_paths *p,
			const struct imgfs_path_comps *c, size_t n, int32_t layer,
			bool is_dir);

/*
 * Note that layer @layer holds @fact at the first @n components of @c
 * (every ancestor is then a directory in that layer). 0 or -ENOMEM.
 */
int stack_paths_record(struct stack_paths *p, const struct imgfs_path_comps *c,
		       size_t n, int32_t layer, enum stack_fact fact,
		       struct imgfs_error *err);

/* The node of @c (all of it), or NULL. */
struct stack_node *stack_paths_find(const struct stack_paths *p,
				    const struct imgfs_path_comps *c);

/* The topmost layer with an entry at @c (all of it), or -1. */
int32_t stack_paths_entry_layer(const struct stack_paths *p,
				const struct imgfs_path_comps *c);

#endif /* IMGFS_STACK_PATHS_H */
