/* SPDX-License-Identifier: MIT */
/*
 * imgfs/crc32c.h - CRC-32C (Castagnoli) as used by the EROFS superblock.
 */
#ifndef IMGFS_CRC32C_H
#define IMGFS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#include "imgfs/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Feed @len bytes at @buf into the raw CRC-32C state @crc (reflected
 * polynomial 0x82F63B78) and return the new state. No inversion is applied
 * on input or output: the EROFS superblock checksum is
 * imgfs_crc32c(0xFFFFFFFF, bytes, len).
 */
IMGFS_API
uint32_t imgfs_crc32c(uint32_t crc, const void *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_CRC32C_H */
