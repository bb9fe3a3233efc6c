// SPDX-License-Identifier: MIT
/*
 * Device table slots: the extra devices of an image, their sizes and
 * their places in the unified block address space (docs/format.md §10.1).
 */
#include <string.h>

#include "format/format.h"

void device_slot_encode(const struct imgfs_device_slot *d, uint8_t *b)
{
	memset(b, 0, IMGFS_DEVICE_SLOT_SIZE);
	memcpy(b, d->tag, sizeof(d->tag));
	imgfs_put_le32(b + 64, d->blocks_lo);
	imgfs_put_le32(b + 68, d->uniaddr_lo);
	imgfs_put_le16(b + 72, d->blocks_hi);
	imgfs_put_le16(b + 74, d->uniaddr_hi);
}

void device_slot_decode(const uint8_t *b, struct imgfs_device_slot *d)
{
	memcpy(d->tag, b, sizeof(d->tag));
	d->blocks_lo = imgfs_get_le32(b + 64);
	d->uniaddr_lo = imgfs_get_le32(b + 68);
	d->blocks_hi = imgfs_get_le16(b + 72);
	d->uniaddr_hi = imgfs_get_le16(b + 74);
}

/* Without 48BIT the high halves are reserved: not part of the values. */
uint64_t device_slot_blocks(const struct imgfs_device_slot *d, bool is48)
{
	return d->blocks_lo | (is48 ? (uint64_t)d->blocks_hi << 32 : 0);
}

uint64_t device_slot_uniaddr(const struct imgfs_device_slot *d, bool is48)
{
	return d->uniaddr_lo | (is48 ? (uint64_t)d->uniaddr_hi << 32 : 0);
}
