// SPDX-License-Identifier: MIT
/*
 * The compression configuration records that follow the superblock, one
 * per algorithm of the bitmap: a length, then the record (docs/format.md
 * §3.5). The codecs (lib/codec) judge the values.
 */
#include <string.h>

#include "format/format.h"

void compr_cfg_len_encode(uint8_t *b, uint16_t len)
{
	imgfs_put_le16(b, len);
}

uint32_t compr_cfg_len_decode(const uint8_t *b)
{
	uint32_t len = imgfs_get_le16(b);

	return len ? len : 65536;
}

void lz4_cfg_encode(const struct imgfs_lz4_cfg *c, uint8_t *b)
{
	memset(b, 0, IMGFS_LZ4_CFGS_SIZE);
	imgfs_put_le16(b + 0, c->max_distance);
	imgfs_put_le16(b + 2, c->max_pclusterblks);
}

void lz4_cfg_decode(const uint8_t *b, struct imgfs_lz4_cfg *c)
{
	c->max_distance = imgfs_get_le16(b + 0);
	c->max_pclusterblks = imgfs_get_le16(b + 2);
}

void lzma_cfg_encode(const struct imgfs_lzma_cfg *c, uint8_t *b)
{
	memset(b, 0, IMGFS_LZMA_CFGS_SIZE);
	imgfs_put_le32(b + 0, c->dict_size);
	imgfs_put_le16(b + 4, c->format);
}

void lzma_cfg_decode(const uint8_t *b, struct imgfs_lzma_cfg *c)
{
	c->dict_size = imgfs_get_le32(b + 0);
	c->format = imgfs_get_le16(b + 4);
}

void deflate_cfg_encode(const struct imgfs_deflate_cfg *c, uint8_t *b)
{
	memset(b, 0, IMGFS_DEFLATE_CFGS_SIZE);
	b[0] = c->windowbits;
}

void deflate_cfg_decode(const uint8_t *b, struct imgfs_deflate_cfg *c)
{
	c->windowbits = b[0];
}

void zstd_cfg_encode(const struct imgfs_zstd_cfg *c, uint8_t *b)
{
	memset(b, 0, IMGFS_ZSTD_CFGS_SIZE);
	b[0] = c->format;
	b[1] = c->windowlog;
}

void zstd_cfg_decode(const uint8_t *b, struct imgfs_zstd_cfg *c)
{
	c->format = b[0];
	c->windowlog = b[1];
}
