// SPDX-License-Identifier: MIT
/*
 * Compact (32-byte) and extended (64-byte) inodes (docs/format.md §4.2,
 * §4.3).
 */
#include <string.h>

#include "format/format.h"

void inode_compact_encode(const struct imgfs_inode_compact *di, uint8_t *b)
{
	memset(b, 0, IMGFS_INODE_COMPACT_SIZE);
	imgfs_put_le16(b + 0, di->i_format);
	imgfs_put_le16(b + 2, di->i_xattr_icount);
	imgfs_put_le16(b + 4, di->i_mode);
	imgfs_put_le16(b + 6, di->i_nb);
	imgfs_put_le32(b + 8, di->i_size);
	imgfs_put_le32(b + 12, di->i_mtime);
	imgfs_put_le32(b + 16, di->i_u);
	imgfs_put_le32(b + 20, di->i_ino);
	imgfs_put_le16(b + 24, di->i_uid);
	imgfs_put_le16(b + 26, di->i_gid);
}

void inode_compact_decode(const uint8_t *b, struct imgfs_inode_compact *di)
{
	di->i_format = imgfs_get_le16(b + 0);
	di->i_xattr_icount = imgfs_get_le16(b + 2);
	di->i_mode = imgfs_get_le16(b + 4);
	di->i_nb = imgfs_get_le16(b + 6);
	di->i_size = imgfs_get_le32(b + 8);
	di->i_mtime = imgfs_get_le32(b + 12);
	di->i_u = imgfs_get_le32(b + 16);
	di->i_ino = imgfs_get_le32(b + 20);
	di->i_uid = imgfs_get_le16(b + 24);
	di->i_gid = imgfs_get_le16(b + 26);
}

void inode_extended_encode(const struct imgfs_inode_extended *di, uint8_t *b)
{
	memset(b, 0, IMGFS_INODE_EXTENDED_SIZE);
	imgfs_put_le16(b + 0, di->i_format);
	imgfs_put_le16(b + 2, di->i_xattr_icount);
	imgfs_put_le16(b + 4, di->i_mode);
	imgfs_put_le16(b + 6, di->i_nb);
	imgfs_put_le64(b + 8, di->i_size);
	imgfs_put_le32(b + 16, di->i_u);
	imgfs_put_le32(b + 20, di->i_ino);
	imgfs_put_le32(b + 24, di->i_uid);
	imgfs_put_le32(b + 28, di->i_gid);
	imgfs_put_le64(b + 32, di->i_mtime);
	imgfs_put_le32(b + 40, di->i_mtime_nsec);
	imgfs_put_le32(b + 44, di->i_nlink);
}

void inode_extended_decode(const uint8_t *b, struct imgfs_inode_extended *di)
{
	di->i_format = imgfs_get_le16(b + 0);
	di->i_xattr_icount = imgfs_get_le16(b + 2);
	di->i_mode = imgfs_get_le16(b + 4);
	di->i_nb = imgfs_get_le16(b + 6);
	di->i_size = imgfs_get_le64(b + 8);
	di->i_u = imgfs_get_le32(b + 16);
	di->i_ino = imgfs_get_le32(b + 20);
	di->i_uid = imgfs_get_le32(b + 24);
	di->i_gid = imgfs_get_le32(b + 28);
	di->i_mtime = imgfs_get_le64(b + 32);
	di->i_mtime_nsec = imgfs_get_le32(b + 40);
	di->i_nlink = imgfs_get_le32(b + 44);
}
