// SPDX-License-Identifier: MIT
/*
 * Compressed inodes: the map header (docs/format.md §9.2), the full
 * lcluster index record (§9.5) and the entries and base address of compact
 * index packs (§9.6).
 */
#include <string.h>

#include "format/format.h"

#define FRAGMENT_INODE_BIT (1ull << 63)

void map_header_encode(const struct imgfs_map_header *h, uint8_t *b)
{
	memset(b, 0, IMGFS_MAP_HEADER_SIZE);
	if (h->fragment_inode) {
		imgfs_put_le64(b, h->fragment_off | FRAGMENT_INODE_BIT);
		return;
	}
	if (h->h_advise & IMGFS_ADVISE_FRAGMENT_PCLUSTER)
		imgfs_put_le32(b + 0, h->h_fragmentoff);
	else
		imgfs_put_le16(b + 2, h->h_idata_size);
	imgfs_put_le16(b + 4, h->h_advise);
	b[6] = h->h_algorithmtype;
	b[7] = h->h_clusterbits;
}

void map_header_decode(const uint8_t *b, struct imgfs_map_header *h)
{
	uint64_t word = imgfs_get_le64(b);

	h->fragment_inode = word & FRAGMENT_INODE_BIT;
	h->fragment_off = word & ~FRAGMENT_INODE_BIT;
	h->h_fragmentoff = imgfs_get_le32(b + 0);
	h->h_idata_size = imgfs_get_le16(b + 2);
	h->h_advise = imgfs_get_le16(b + 4);
	h->h_algorithmtype = b[6];
	h->h_clusterbits = b[7];
}

void lcluster_index_encode(const struct imgfs_lcluster_index *li, uint8_t *b)
{
	imgfs_put_le16(b + 0, li->di_advise);
	imgfs_put_le16(b + 2, li->di_clusterofs);
	if ((li->di_advise & IMGFS_LI_TYPE_MASK) == IMGFS_LCLUSTER_NONHEAD) {
		imgfs_put_le16(b + 4, li->di_delta[0]);
		imgfs_put_le16(b + 6, li->di_delta[1]);
	} else {
		imgfs_put_le32(b + 4, li->di_blkaddr);
	}
}

void lcluster_index_decode(const uint8_t *b, struct imgfs_lcluster_index *li)
{
	li->di_advise = imgfs_get_le16(b + 0);
	li->di_clusterofs = imgfs_get_le16(b + 2);
	li->di_blkaddr = imgfs_get_le32(b + 4);
	li->di_delta[0] = imgfs_get_le16(b + 4);
	li->di_delta[1] = imgfs_get_le16(b + 6);
}

void compact_entry_encode(uint8_t *pack, unsigned int ebits,
			  unsigned int lobits, unsigned int i, unsigned int lo,
			  unsigned int type)
{
	uint32_t v = (lo & ((1u << lobits) - 1)) | (type & 3u) << lobits;
	unsigned int bit = ebits * i;

	for (unsigned int k = 0; k < lobits + 2; k++, bit++)
		if (v >> k & 1)
			pack[bit / 8] |= (uint8_t)(1u << (bit % 8));
}

unsigned int compact_entry_decode(const uint8_t *pack, unsigned int ebits,
				  unsigned int lobits, unsigned int i,
				  unsigned int *type)
{
	unsigned int bit = ebits * i;
	const uint8_t *b = pack + bit / 8;
	/* an entry spans at most 3 bytes (lobits <= 14, ebits 14 or 16) */
	uint32_t v = (uint32_t)b[0] | ((uint32_t)b[1] << 8) |
		     ((uint32_t)b[2] << 16);

	v >>= bit % 8;
	*type = (v >> lobits) & 3;
	return v & ((1u << lobits) - 1);
}

void compact_blkaddr_encode(uint8_t *pack, unsigned int size, uint32_t blkaddr)
{
	imgfs_put_le32(pack + size - 4, blkaddr);
}

uint32_t compact_blkaddr_decode(const uint8_t *pack, unsigned int size)
{
	return imgfs_get_le32(pack + size - 4);
}
