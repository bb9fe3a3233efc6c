// SPDX-License-Identifier: MIT
/*
 * CRC-32C, four bits at a time. Only superblocks are checksummed (a few
 * KiB per image), so a 16-entry constant table is plenty and keeps the
 * library free of any table built at run time.
 */
#include "imgfs/crc32c.h"

/* crc of each nibble value under the reflected polynomial 0x82F63B78 */
static const uint32_t crc_nibble[16] = {
	0x00000000, 0x105ec76f, 0x20bd8ede, 0x30e349b1,
	0x417b1dbc, 0x5125dad3, 0x61c69362, 0x7198540d,
	0x82f63b78, 0x92a8fc17, 0xa24bb5a6, 0xb21572c9,
	0xc38d26c4, 0xd3d3e1ab, 0xe330a81a, 0xf36e6f75,
};

uint32_t imgfs_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len--) {
		crc ^= *p++;
		crc = (crc >> 4) ^ crc_nibble[crc & 15];
		crc = (crc >> 4) ^ crc_nibble[crc & 15];
	}
	return crc;
}
