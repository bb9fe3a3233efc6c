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
#include "imgfs/format.h"
#include "format/format.h" /* name prefixes and the filter bit */
#include "util/spill.h"

struct imgfs_node;

/*
 * Values longer than this go to the table's spill file as they arrive and
 * are read back at layout: memory then grows with the number of xattrs,
 * not with their payload.
 */
#define IMGFS_XATTR_SPILL_MIN 128u

/* Largest inline xattr area an inode can declare (i_xattr_icount 65535). */
#define IMGFS_XATTR_IBODY_MAX (IMGFS_XATTR_IBODY_HEADER_SIZE + 4u * 65534u)

/* Kernel limits (XATTR_NAME_MAX, XATTR_LIST_MAX): longer full names cannot
 * be read with getxattr, longer name lists not with listxattr. */
#define IMGFS_XATTR_FULL_NAME_MAX 255u
#define IMGFS_XATTR_LIST_MAX 65536u

struct imgfs_xattr_item {
	struct imgfs_hnode hnode; /* hash of index, name suffix and value */
	struct imgfs_xattr_item *next_all;
	uint64_t spill_off; /* where the value is in the spill file */
	uint32_t refcount;
	uint32_t shared_id; /* offset / 4 in the shared area */
	bool shared;
	bool spilled; /* the value is in the spill file, not in data[] */
	bool must_share; /* an inode's inline area cannot hold it */
	uint8_t index; /* short name prefix index */
	uint8_t name_len; /* stored suffix length */
	uint16_t value_len;
	uint8_t filter_bit;
	uint8_t data[]; /* name suffix, then the value unless spilled */
};

struct imgfs_xattr_table {
	struct imgfs_hashtab items; /* interned, by hnode.hash */
	struct imgfs_xattr_item *all;
	struct imgfs_xattr_item **shared; /* shared items in area order */
	size_t nr_shared;
	uint32_t shared_size; /* bytes */
	struct imgfs_spill spill; /* values over IMGFS_XATTR_SPILL_MIN */
};

void xattr_table_free(struct imgfs_xattr_table *t);

/*
 * Set xattr @name = @value on @inode (replacing an earlier value of the
 * same name). Names the kernel cannot look up (unknown namespace, prefix
 * alone, longer than 255 bytes) and POSIX ACL values it would refuse are
 * errors. @path names the entry in error messages.
 */
int xattr_set(struct imgfs_xattr_table *t, struct imgfs_node *inode,
	      const char *name, const void *value, size_t len, const char *path,
	      struct imgfs_error *err);

/* Drop every reference @inode holds (used when an entry is replaced). */
void xattr_clear(struct imgfs_node *inode);

/*
 * Check, once all of @inode's xattrs are set, that the kernel can read
 * them all: no POSIX ACL on a symlink, user. xattrs only on regular files
 * and directories, the name list fits listxattr, and
 * the inline area fits
 * i_xattr_icount once at most 255 of the largest values are moved to the
 * shared area (only when @min_refs, the sharing threshold, is not 0).
 * Marks the values to move. Returns 0, -EOPNOTSUPP or -E2BIG naming @path.
 */
int xattr_check_inode(struct imgfs_node *inode, unsigned int min_refs,
		      const char *path, struct imgfs_error *err);

/*
 * Decide which items are shared (used by at least @min_refs inodes; 0
 * disables sharing; items marked by xattr_check_inode() are shared
 * whatever their use) and assign their ids. Returns 0, -ENOMEM, or
 * -EFBIG when the shared area would exceed 4 GiB.
 */
int xattr_plan_shared(struct imgfs_xattr_table *t, unsigned int min_refs);

/*
 * Order @inode's xattrs (referenced shared ones first) and compute
 * inode->xattr_isize / nr_shared.
 */
void xattr_layout_inode(struct imgfs_node *inode);

/* Encode @inode's inline xattr area (xattr_isize bytes) into @buf. */
int xattr_encode_ibody(const struct imgfs_xattr_table *t,
		       const struct imgfs_node *inode, uint8_t *buf,
		       struct imgfs_error *err);

/* Largest encoded xattr entry (4 + 255 + 65535, aligned). */
#define IMGFS_XATTR_ENTRY_MAX (4u + 255u + 65535u + 3u)

/*
 * Encode one xattr entry (imgfs_xattr_entry_size() bytes, at most
 * IMGFS_XATTR_ENTRY_MAX) into @buf. Returns its size or a negative errno.
 */
long xattr_encode_entry(const struct imgfs_xattr_table *t,
			const struct imgfs_xattr_item *it, uint8_t *buf,
			struct imgfs_error *err);

/* i_xattr_icount for an inline area of @isize bytes (0 when none). */
static inline uint16_t inode_xattr_icount(uint32_t isize)
{
	return isize ? (uint16_t)((isize - 12) / 4 + 1) : 0;
}

#endif /* IMGFS_XATTR_H */
