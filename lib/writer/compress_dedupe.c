// SPDX-License-Identifier: MIT
/*
 * compress_dedupe.c - files by content (SHA-256 and size): a file of one
 * segment seen before shares the earlier file's pclusters and fragment
 * instead of storing them again (the superblock's DEDUPE bit, Linux 6.1).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "writer/compress_int.h"
#include "writer/tree.h"

static uint64_t seen_hash(uint64_t size, const uint8_t *digest)
{
	uint64_t h;

	memcpy(&h, digest, sizeof(h));
	return h ^ size;
}

struct zseen *zseen_find(const struct imgfs_compressor *c, uint64_t size,
			 const uint8_t *digest)
{
	struct imgfs_hnode *n =
		hashtab_first(&c->seen, seen_hash(size, digest));

	for (; n; n = hashtab_next(n)) {
		struct zseen *e = imgfs_container_of(n, struct zseen, hnode);

		if (e->size == size && !memcmp(e->digest, digest, 32))
			return e;
	}
	return NULL;
}

int zseen_add(struct imgfs_compressor *c, struct imgfs_node *inode,
	      const uint8_t *digest)
{
	struct zseen *e = malloc(sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->size = inode->size;
	memcpy(e->digest, digest, 32);
	e->inode = inode;
	if (hashtab_insert(&c->seen, &e->hnode,
			   seen_hash(inode->size, digest))) {
		free(e);
		return -ENOMEM;
	}
	e->next_all = c->all_seen;
	c->all_seen = e;
	return 0;
}

static void *memdup(const void *p, size_t n)
{
	void *q = n ? malloc(n) : NULL;

	if (q)
		memcpy(q, p, n);
	return q;
}

/*
 * @f has the same content as @orig, whose layout is final: use its
 * pclusters and fragment. Flat files keep their own blocks (checkers take
 * blocks of two flat inodes for a corrupt allocation).
 */
int zseen_share(struct imgfs_compressor *c, struct zfile *f,
		const struct imgfs_node *orig, bool *shared)
{
	struct imgfs_node *inode = f->inode;

	*shared = false;
	if (!c->fragments || (orig->layout != IMGFS_LAYOUT_COMPRESSED_FULL &&
			      orig->layout != IMGFS_LAYOUT_COMPRESSED_COMPACT))
		return 0;
	/* an inline tail must fit behind this inode's own xattrs */
	if (orig->tail_len > f->tail_room)
		return 0;
	inode->extra = memdup(orig->extra, orig->extra_len);
	inode->tail = memdup(orig->tail, orig->tail_len);
	if ((orig->extra_len && !inode->extra) ||
	    (orig->tail_len && !inode->tail))
		return -ENOMEM;
	inode->layout = orig->layout;
	inode->startblk = orig->startblk;
	inode->i_u = orig->i_u;
	inode->i_u_set = orig->i_u_set;
	inode->extra_len = orig->extra_len;
	inode->extra_align = orig->extra_align;
	inode->tail_len = orig->tail_len;
	*shared = true;
	return 0;
}

void zseen_free_all(struct imgfs_compressor *c)
{
	while (c->all_seen) {
		struct zseen *e = c->all_seen;

		c->all_seen = e->next_all;
		free(e);
	}
	hashtab_free(&c->seen);
}
