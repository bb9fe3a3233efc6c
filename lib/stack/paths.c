// SPDX-License-Identifier: MIT
/*
 * The paths the layers above hold (stack/paths.h): a tree of names with,
 * per node, the topmost layer that had an entry, a directory, a whiteout
 * or an opaque marker (or a non-directory) there. Checking an entry walks
 * its path once from the root: an ancestor a layer above deleted, shut or
 * made opaque hides it, and so does anything a layer above put at the
 * path itself, but a directory implied above merges with a lower one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "stack/paths.h"
#include "util/vec.h"
#include "util/error.h"

static uint64_t node_hash(const struct stack_node *parent, const char *name,
			  size_t len)
{
	uint64_t h = hash_u64((uint64_t)(uintptr_t)parent);

	return hash_bytes(h, name, len);
}

struct node_key {
	const struct stack_node *parent;
	const char *name;
	size_t len;
};

static bool node_eq(const struct imgfs_hnode *n, const void *key)
{
	const struct stack_node *sn =
		imgfs_container_of(n, struct stack_node, hnode);
	const struct node_key *k = key;

	return sn->parent == k->parent && sn->name_len == k->len &&
	       !memcmp(sn->name, k->name, k->len);
}

static struct stack_node *node_new(struct stack_paths *p,
				   struct stack_node *parent, const char *name,
				   size_t len)
{
	struct stack_node *n = malloc(sizeof(*n) + len + 1);

	if (!n)
		return NULL;
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->entry = n->dir = n->gone = n->shut = n->saved_layer = -1;
	n->name_len = (uint16_t)len;
	memcpy(n->name, name, len);
	n->name[len] = '\0';
	n->next_all = p->all;
	p->all = n;
	return n;
}

int stack_paths_init(struct stack_paths *p, struct imgfs_error *err)
{
	memset(p, 0, sizeof(*p));
	p->root = node_new(p, NULL, "", 0);
	if (!p->root)
		return error_set(err, -ENOMEM, "out of memory");
	return 0;
}

void stack_paths_free(struct stack_paths *p)
{
	while (p->all) {
		struct stack_node *next = p->all->next_all;

		free(p->all);
		p->all = next;
	}
	hashtab_free(&p->tab);
	memset(p, 0, sizeof(*p));
}

static struct stack_node *child(const struct stack_paths *p,
				const struct stack_node *parent,
				const char *name, size_t len)
{
	struct node_key k = { parent, name, len };
	struct imgfs_hnode *h = hashtab_find(
		&p->tab, node_hash(parent, name, len), node_eq, &k);

	return h ? imgfs_container_of(h, struct stack_node, hnode) : NULL;
}

/* A stamp from a layer above @layer. */
static bool above(int32_t stamp, int32_t layer)
{
	return stamp > layer;
}

bool stack_paths_hidden(const struct stack_paths *p,
			const struct imgfs_path_comps *c, size_t n, int32_t layer,
			bool is_dir)
{
	const struct stack_node *node = p->root;

	for (size_t i = 0; i < n; i++) {
		/* what is below a deleted, opaque or non-directory path */
		if (above(node->gone, layer) || above(node->shut, layer))
			return true;
		node = child(p, node, c->text + c->off[i], c->len[i]);
		if (!node)
			return false; /* no layer above goes there */
	}
	return above(node->gone, layer) || above(node->entry, layer) ||
	       (!is_dir && above(node->dir, layer));
}

/* Set a fact's stamp unless a layer above set it already. */
static void stamp(int32_t *s, int32_t layer)
{
	if (*s < 0)
		*s = layer;
}

int stack_paths_record(struct stack_paths *p, const struct imgfs_path_comps *c,
		       size_t n, int32_t layer, enum stack_fact fact,
		       struct imgfs_error *err)
{
	struct stack_node *node = p->root, *next;

	for (size_t i = 0; i < n; i++) {
		const char *name = c->text + c->off[i];

		stamp(&node->dir, layer);
		next = child(p, node, name, c->len[i]);
		if (!next) {
			next = node_new(p, node, name, c->len[i]);
			if (!next ||
			    hashtab_insert(&p->tab, &next->hnode,
					   node_hash(node, name, c->len[i])))
				return error_set(err, -ENOMEM, "out of memory");
		}
		node = next;
	}
	switch (fact) {
	case STACK_DIR:
		stamp(&node->entry, layer);
		stamp(&node->dir, layer);
		break;
	case STACK_NONDIR:
		stamp(&node->entry, layer);
		stamp(&node->shut, layer);
		break;
	case STACK_WHITEOUT:
		stamp(&node->gone, layer);
		break;
	case STACK_OPAQUE:
		stamp(&node->dir, layer);
		stamp(&node->shut, layer);
		break;
	}
	return 0;
}

struct stack_node *stack_paths_find(const struct stack_paths *p,
				    const struct imgfs_path_comps *c)
{
	struct stack_node *node = p->root;

	for (size_t i = 0; node && i < c->n; i++)
		node = child(p, node, c->text + c->off[i], c->len[i]);
	return node;
}

int32_t stack_paths_entry_layer(const struct stack_paths *p,
				const struct imgfs_path_comps *c)
{
	const struct stack_node *node = stack_paths_find(p, c);

	return node ? node->entry : -1;
}
