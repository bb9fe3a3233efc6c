// SPDX-License-Identifier: MIT
/*
 * Length field of the compression configuration records that follow the
 * superblock (docs/format.md §3.5); each codec encodes and parses the
 * record itself (lib/codec).
 */
#include "format/format.h"

void imgfs_compr_cfg_len_encode(uint8_t *b, uint16_t len)
{
	imgfs_put_le16(b, len);
}

uint32_t imgfs_compr_cfg_len_decode(const uint8_t *b)
{
	uint32_t len = imgfs_get_le16(b);

	return len ? len : 65536;
}
