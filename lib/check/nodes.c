// SPDX-License-Identifier: MIT
/*
 * nodes.c - what the checker remembers about each inode it reached, by
 * nid, and the paths built from it.
 *
 * Records live in fixed chunks (their addresses never change while the
 * walk goes on) in the order they were met; a u64 map finds them by nid.
 * A record holds its first parent's nid and its own name, so any path is
 * rebuilt on demand and no full path is stored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/internal.h"
#include "util/vec.h"

#define NODES_PER_CHUNK 4096u

struct check_node *check_node_at(struct check_ctx *c, size_t i)
{
	return &c->nodes.chunks[i / NODES_PER_CHUNK][i % NODES_PER_CHUNK];
}

struct check_node *check_node_find(struct check_ctx *c, uint64_t nid)
{
	uint64_t i;

	if (!u64map_get(&c->nodes.index, nid, &i))
		return NULL;
	return check_node_at(c, (size_t)i);
}

/* Room for one more record; false on no memory. */
static bool nodes_reserve(struct check_nodes *t)
{
	struct check_node *chunk;

	if (t->count < t->nr_chunks * NODES_PER_CHUNK)
		return true;
	chunk = calloc(NODES_PER_CHUNK, sizeof(*chunk));
	if (!chunk ||
	    IMGFS_VEC_RESERVE(t->chunks, t->chunks_cap, t->nr_chunks + 1, 16)) {
		free(chunk);
		return false;
	}
	t->chunks[t->nr_chunks++] = chunk;
	return true;
}

struct check_node *check_node_get(struct check_ctx *c, uint64_t nid,
				  bool *is_new)
{
	struct check_nodes *t = &c->nodes;
	struct check_node *n;
	uint64_t *pos;

	if (!nodes_reserve(t))
		return NULL;
	pos = u64map_find_or_add(&t->index, nid, t->count, is_new);
	if (!pos)
		return NULL;
	if (!*is_new)
		return check_node_at(c, (size_t)*pos);
	n = check_node_at(c, t->count++);
	memset(n, 0, sizeof(*n));
	n->nid = nid;
	return n;
}

struct check_node *check_node_insert(struct check_ctx *c, uint64_t nid)
{
	bool is_new;
	struct check_node *n = check_node_get(c, nid, &is_new);

	return n && is_new ? n : NULL;
}

void check_nodes_free(struct check_ctx *c)
{
	struct check_nodes *t = &c->nodes;
	size_t i;

	for (i = 0; i < t->count; i++)
		free(check_node_at(c, i)->name);
	for (i = 0; i < t->nr_chunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	u64map_free(&t->index);
	memset(t, 0, sizeof(*t));
}

/*
 * The chain of first parents holds no cycle: a node's parent is a
 * directory inserted before it.
 */
size_t check_node_path_len(struct check_ctx *c, struct check_node *n)
{
	size_t len = 0;

	while (n && n->name) {
		len += 1 + strlen(n->name);
		n = check_node_find(c, n->parent);
	}
	return n ? len : SIZE_MAX;
}

void check_node_path_fill(struct check_ctx *c, struct check_node *n, char *out,
			  size_t len, size_t skip)
{
	size_t pos = len, l;

	while (n && n->name && pos > skip) {
		l = strlen(n->name);
		while (l-- > 0)
			if (pos-- > skip)
				out[pos - skip] = n->name[l];
		if (pos-- > skip)
			out[pos - skip] = '/';
		n = check_node_find(c, n->parent);
	}
}

static const char *nid_path(struct check_ctx *c, uint64_t nid)
{
	snprintf(c->nid_path, sizeof(c->nid_path), "<nid %llu>",
		 (unsigned long long)nid);
	return c->nid_path;
}

const char *check_node_path_buf(struct check_ctx *c, uint64_t nid,
				struct check_buf *b)
{
	struct check_node *n = check_node_find(c, nid);
	size_t len = check_node_path_len(c, n);

	if (len == SIZE_MAX || IMGFS_VEC_RESERVE(b->s, b->cap, len + 2, 256))
		return nid_path(c, nid);
	if (!len) {
		strcpy(b->s, "/");
		return b->s;
	}
	check_node_path_fill(c, n, b->s, len, 0);
	b->s[len] = '\0';
	return b->s;
}

const char *check_node_path(struct check_ctx *c, uint64_t nid, char *buf,
			    size_t size)
{
	struct check_node *n = check_node_find(c, nid);
	size_t len = check_node_path_len(c, n);

	if (len == SIZE_MAX) {
		snprintf(buf, size, "<nid %llu>", (unsigned long long)nid);
		return buf;
	}
	if (!len) {
		snprintf(buf, size, "/");
		return buf;
	}
	if (len < size) {
		check_node_path_fill(c, n, buf, len, 0);
		buf[len] = '\0';
		return buf;
	}
	/* too long: "..." and the end of the path */
	if (size < 8) {
		snprintf(buf, size, "...");
		return buf;
	}
	check_node_path_fill(c, n, buf + 3, len, len - (size - 1 - 3));
	memcpy(buf, "...", 3);
	buf[size - 1] = '\0';
	return buf;
}
