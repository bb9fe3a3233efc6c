// SPDX-License-Identifier: MIT
/*
 * Inode encoding: compact 32-byte inodes when every field fits and the
 * mtime equals the superblock epoch, extended 64-byte inodes otherwise.
 * Compact inodes always store a relative mtime of 0, which every kernel
 * version reads the same way (older ones take the epoch for all compact
 * inodes; newer ones add the stored offset).
 */
#include <string.h>

#include "imgfs/format.h"
#include "writer/internal.h"

bool imgfs_inode_needs_extended(const struct imgfs_writer *w,
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

void imgfs_inode_encode(const struct imgfs_writer *w,
			const struct imgfs_node *inode, uint8_t *buf)
{
	uint16_t icount = imgfs_xattr_icount(inode->xattr_isize);

	if (!inode->extended) {
		memset(buf, 0, IMGFS_INODE_COMPACT_SIZE);
		imgfs_put_le16(buf, imgfs_i_format(IMGFS_INODE_COMPACT,
						   inode->layout));
		imgfs_put_le16(buf + 2, icount);
		imgfs_put_le16(buf + 4, (uint16_t)inode->mode);
		imgfs_put_le16(buf + 6, (uint16_t)inode->nlink);
		imgfs_put_le32(buf + 8, (uint32_t)inode->size);
		imgfs_put_le32(buf + 12, 0); /* mtime == epoch */
		imgfs_put_le32(buf + 16, inode_i_u(inode));
		imgfs_put_le32(buf + 20, inode->ino);
		imgfs_put_le16(buf + 24, (uint16_t)inode->uid);
		imgfs_put_le16(buf + 26, (uint16_t)inode->gid);
		return;
	}
	memset(buf, 0, IMGFS_INODE_EXTENDED_SIZE);
	imgfs_put_le16(buf, imgfs_i_format(IMGFS_INODE_EXTENDED, inode->layout));
	imgfs_put_le16(buf + 2, icount);
	imgfs_put_le16(buf + 4, (uint16_t)inode->mode);
	imgfs_put_le64(buf + 8, inode->size);
	imgfs_put_le32(buf + 16, inode_i_u(inode));
	imgfs_put_le32(buf + 20, inode->ino);
	imgfs_put_le32(buf + 24, inode->uid);
	imgfs_put_le32(buf + 28, inode->gid);
	imgfs_put_le64(buf + 32, (uint64_t)inode->mtime);
	imgfs_put_le32(buf + 40, inode->mtime_nsec);
	imgfs_put_le32(buf + 44, inode->nlink);
}
