/* SPDX-License-Identifier: MIT */
/*
 * xattr.h - extended attributes of the writer: interning, sharing, encoding.
 *
 * Every distinct (name, value) pair is stored once in a per-writer table
 * and counted; at layout, pairs used by enough inodes move to the shared
 * xattr area and inodes refer to them by id.
 */
#ifndef IMGFS_XATTR_H
#define IMGFS_XATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/error.h"

struct imgfs_node;

struct imgfs_xattr_item {
	struct imgfs_xattr_item *hash_next;
	struct imgfs_xattr_item *next_all;
	uint32_t hash;
	uint32_t refcount;
	uint32_t shared_id; /* offset / 4 in the shared area */
	bool shared;
	uint8_t index; /* short name prefix index */
	uint8_t name_len; /* stored suffix length */
	uint16_t value_len;
	uint8_t filter_bit;
	uint8_t data[]; /* name suffix, then value */
};

struct imgfs_xattr_table {
	struct imgfs_xattr_item **buckets;
	size_t nr_buckets;
	size_t count;
	struct imgfs_xattr_item *all;
	struct imgfs_xattr_item **shared; /* shared items in area order */
	size_t nr_shared;
	uint32_t shared_size; /* bytes */
};

void imgfs_xattr_table_free(struct imgfs_xattr_table *t);

/*
 * Map a full xattr name to its short prefix index and suffix. Returns 0,
 * or -EOPNOTSUPP when EROFS has no prefix for it.
 */
int imgfs_xattr_split_name(const char *name, uint8_t *index,
			   const char **suffix);

/*
 * Set xattr @name = @value on @inode (replacing an earlier value of the
 * same name). @path names the entry in error messages.
 */
int imgfs_xattr_set(struct imgfs_xattr_table *t, struct imgfs_node *inode,
		    const char *name, const void *value, size_t len,
		    const char *path, struct imgfs_error *err);

/* Drop every reference @inode holds (used when an entry is replaced). */
void imgfs_xattr_clear(struct imgfs_node *inode);

/*
 * Decide which items are shared (used by at least @min_refs inodes; 0
 * disables sharing) and assign their ids. Returns 0 or -ENOMEM.
 */
int imgfs_xattr_plan_shared(struct imgfs_xattr_table *t, unsigned int min_refs);

/* Sort @inode's xattrs and compute inode->xattr_isize / nr_shared. */
void imgfs_xattr_layout_inode(struct imgfs_node *inode);

/* Encode @inode's inline xattr area (xattr_isize bytes) into @buf. */
void imgfs_xattr_encode_ibody(const struct imgfs_node *inode, uint8_t *buf);

/* Encode the shared area (t->shared_size bytes) into @buf. */
void imgfs_xattr_encode_shared(const struct imgfs_xattr_table *t, uint8_t *buf);

/* Name bloom-filter bit of an xattr (docs/format.md §7.6); shared with the
 * reader, defined in reader_xattr.c. */
unsigned int imgfs_xattr_filter_bit(unsigned int base_index,
				    const char *suffix, size_t len);

/* i_xattr_icount for an inline area of @isize bytes (0 when none). */
static inline uint16_t imgfs_xattr_icount(uint32_t isize)
{
	return isize ? (uint16_t)((isize - 12) / 4 + 1) : 0;
}

#endif /* IMGFS_XATTR_H */
