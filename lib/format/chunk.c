// SPDX-License-Identifier: MIT
/*
 * Chunk index records and the block map of chunk-based inodes
 * (docs/format.md §5.3).
 */
#include "format/format.h"

void chunk_index_encode(const struct imgfs_chunk_index *ci, uint8_t *b)
{
	imgfs_put_le16(b + 0, ci->startblk_hi);
	imgfs_put_le16(b + 2, ci->device_id);
	imgfs_put_le32(b + 4, ci->startblk_lo);
}

void chunk_index_decode(const uint8_t *b, struct imgfs_chunk_index *ci)
{
	ci->startblk_hi = imgfs_get_le16(b + 0);
	ci->device_id = imgfs_get_le16(b + 2);
	ci->startblk_lo = imgfs_get_le32(b + 4);
}

void block_map_encode(uint8_t *map, uint64_t i, uint32_t blkaddr)
{
	imgfs_put_le32(map + 4 * i, blkaddr);
}

uint32_t block_map_decode(const uint8_t *map, uint64_t i)
{
	return imgfs_get_le32(map + 4 * i);
}
