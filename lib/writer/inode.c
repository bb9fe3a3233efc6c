// SPDX-License-Identifier: MIT
/*
 * Inode encoding: compact 32-byte inodes when every field fits and the
 * mtime equals the superblock epoch, extended 64-byte inodes otherwise.
 * Compact inodes always store a relative mtime of 0, which every kernel
 * version reads the same way (older ones take the epoch for all compact
 * inodes; newer ones add the stored offset).
 */
#include <string.h>

#include "format/format.h"
#include "writer/internal.h"

bool inode_needs_extended(const struct imgfs_writer *w,
			  const struct imgfs_node *inode)
{
	return inode->size > UINT32_MAX || inode->uid > UINT16_MAX ||
	       inode->gid > UINT16_MAX || inode->nlink > UINT16_MAX ||
	       inode->mtime != w->epoch || inode->mtime_nsec != w->epoch_nsec;
}

static uint32_t inode_i_u(const struct imgfs_node *inode)
{
	switch (inode->mode & 0170000) {
	case 0020000:
	case 0060000:
		return inode->rdev;
	case 0010000:
	case 0140000:
		return 0;
	}
	if (inode->i_u_set)
		return inode->i_u;
	return (uint32_t)inode->startblk;
}

static void encode_compact(const struct imgfs_node *inode, uint16_t icount,
			   uint8_t *buf)
{
	struct imgfs_inode_compact di = {
		.i_format = imgfs_i_format(IMGFS_INODE_COMPACT, inode->layout),
		.i_xattr_icount = icount,
		.i_mode = (uint16_t)inode->mode,
		.i_nb = (uint16_t)inode->nlink,
		.i_size = (uint32_t)inode->size,
		.i_mtime = 0, /* mtime == epoch */
		.i_u = inode_i_u(inode),
		.i_ino = inode->ino,
		.i_uid = (uint16_t)inode->uid,
		.i_gid = (uint16_t)inode->gid,
	};

	inode_compact_encode(&di, buf);
}

static void encode_extended(const struct imgfs_node *inode, uint16_t icount,
			    uint8_t *buf)
{
	struct imgfs_inode_extended di = {
		.i_format = imgfs_i_format(IMGFS_INODE_EXTENDED, inode->layout),
		.i_xattr_icount = icount,
		.i_mode = (uint16_t)inode->mode,
		.i_size = inode->size,
		.i_u = inode_i_u(inode),
		.i_ino = inode->ino,
		.i_uid = inode->uid,
		.i_gid = inode->gid,
		.i_mtime = (uint64_t)inode->mtime,
		.i_mtime_nsec = inode->mtime_nsec,
		.i_nlink = inode->nlink,
	};

	inode_extended_encode(&di, buf);
}

void inode_encode(const struct imgfs_writer *w, const struct imgfs_node *inode,
		  uint8_t *buf)
{
	uint16_t icount = inode_xattr_icount(inode->xattr_isize);

	(void)w;
	if (inode->extended)
		encode_extended(inode, icount, buf);
	else
		encode_compact(inode, icount, buf);
}
