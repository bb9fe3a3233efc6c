// SPDX-License-Identifier: MIT
/*
 * Superblock: 128 bytes at byte 1024 (docs/format.md §3.1) and the
 * CRC-32C that covers it (§3.3).
 */
#include <string.h>

#include "imgfs/crc32c.h"
#include "format/format.h"

void super_block_encode(const struct imgfs_super_block *sb, uint8_t *b)
{
	memset(b, 0, IMGFS_SUPER_BASE_SIZE);
	imgfs_put_le32(b + 0, sb->magic);
	imgfs_put_le32(b + 4, sb->checksum);
	imgfs_put_le32(b + 8, sb->feature_compat);
	b[12] = sb->blkszbits;
	b[13] = sb->sb_extslots;
	imgfs_put_le16(b + 14, sb->root_nid);
	imgfs_put_le64(b + 16, sb->inos);
	imgfs_put_le64(b + 24, sb->epoch);
	imgfs_put_le32(b + 32, sb->fixed_nsec);
	imgfs_put_le32(b + 36, sb->blocks_lo);
	imgfs_put_le32(b + 40, sb->meta_blkaddr);
	imgfs_put_le32(b + 44, sb->xattr_blkaddr);
	memcpy(b + 48, sb->uuid, 16);
	memcpy(b + 64, sb->volume_name, 16);
	imgfs_put_le32(b + 80, sb->feature_incompat);
	imgfs_put_le16(b + 84, sb->u1);
	imgfs_put_le16(b + 86, sb->extra_devices);
	imgfs_put_le16(b + 88, sb->devt_slotoff);
	b[90] = sb->dirblkbits;
	b[91] = sb->xattr_prefix_count;
	imgfs_put_le32(b + 92, sb->xattr_prefix_start);
	imgfs_put_le64(b + 96, sb->packed_nid);
	b[104] = sb->xattr_filter_reserved;
	b[105] = sb->ishare_xattr_prefix_id;
	imgfs_put_le32(b + 108, sb->build_time);
	imgfs_put_le64(b + 112, sb->root_nid_64);
}

void super_block_decode(const uint8_t *b, struct imgfs_super_block *sb)
{
	sb->magic = imgfs_get_le32(b + 0);
	sb->checksum = imgfs_get_le32(b + 4);
	sb->feature_compat = imgfs_get_le32(b + 8);
	sb->blkszbits = b[12];
	sb->sb_extslots = b[13];
	sb->root_nid = imgfs_get_le16(b + 14);
	sb->inos = imgfs_get_le64(b + 16);
	sb->epoch = imgfs_get_le64(b + 24);
	sb->fixed_nsec = imgfs_get_le32(b + 32);
	sb->blocks_lo = imgfs_get_le32(b + 36);
	sb->meta_blkaddr = imgfs_get_le32(b + 40);
	sb->xattr_blkaddr = imgfs_get_le32(b + 44);
	memcpy(sb->uuid, b + 48, 16);
	memcpy(sb->volume_name, b + 64, 16);
	sb->feature_incompat = imgfs_get_le32(b + 80);
	sb->u1 = imgfs_get_le16(b + 84);
	sb->extra_devices = imgfs_get_le16(b + 86);
	sb->devt_slotoff = imgfs_get_le16(b + 88);
	sb->dirblkbits = b[90];
	sb->xattr_prefix_count = b[91];
	sb->xattr_prefix_start = imgfs_get_le32(b + 92);
	sb->packed_nid = imgfs_get_le64(b + 96);
	sb->xattr_filter_reserved = b[104];
	sb->ishare_xattr_prefix_id = b[105];
	sb->build_time = imgfs_get_le32(b + 108);
	sb->root_nid_64 = imgfs_get_le64(b + 112);
	sb->reserved_set = b[106] || b[107];
}

uint32_t super_csum_len(uint32_t blksz)
{
	return blksz > IMGFS_SUPER_OFFSET ? blksz - IMGFS_SUPER_OFFSET : blksz;
}

uint32_t super_checksum(const uint8_t *b, uint32_t len)
{
	static const uint8_t zero[4];
	uint32_t crc;

	crc = imgfs_crc32c(0xFFFFFFFFu, b, 4);
	crc = imgfs_crc32c(crc, zero, sizeof(zero));
	return imgfs_crc32c(crc, b + 8, len - 8);
}
