// SPDX-License-Identifier: MIT
/*
 * Superblock: written last, with its CRC-32C over the rest of the block it
 * sits in (bytes 1024 .. max(bs, 2048) - 1), checksum field zeroed.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "imgfs/crc32c.h"
#include "imgfs/format.h"
#include "writer/internal.h"

static uint32_t sb_csum_len(uint32_t bs)
{
	return bs > IMGFS_SUPER_OFFSET ? bs - IMGFS_SUPER_OFFSET : bs;
}

int imgfs_super_write(struct imgfs_writer *w, const struct imgfs_sb_layout *l,
		      struct imgfs_error *err)
{
	uint8_t blk[4096];
	uint32_t len = sb_csum_len(w->bs);
	uint8_t *sb = blk;
	ssize_t n;

	/* everything in the checksummed range after the sb is ours: zeros
	 * or the compression config records */
	memset(blk, 0, sizeof(blk));
	imgfs_put_le32(sb + 0, IMGFS_SUPER_MAGIC);
	imgfs_put_le32(sb + 8, l->feature_compat | IMGFS_FEATURE_COMPAT_SB_CHKSUM);
	sb[12] = (uint8_t)w->blkszbits;
	sb[13] = 0;
	imgfs_put_le16(sb + 14, (uint16_t)l->root_nid);
	imgfs_put_le64(sb + 16, l->inos);
	imgfs_put_le64(sb + 24, (uint64_t)w->epoch);
	imgfs_put_le32(sb + 32, w->epoch_nsec);
	imgfs_put_le32(sb + 36, (uint32_t)l->blocks);
	imgfs_put_le32(sb + 40, l->meta_blkaddr);
	imgfs_put_le32(sb + 44, l->xattr_blkaddr);
	memcpy(sb + 48, w->opts.uuid, 16);
	memcpy(sb + 64, w->opts.label, strnlen(w->opts.label, 16));
	/* build time = epoch + this field; the epoch was chosen so it fits */
	if (w->epoch > w->build_time ||
	    (uint64_t)w->build_time - (uint64_t)w->epoch > UINT32_MAX)
		return imgfs_error_set(err, -ERANGE,
				       "build time %lld cannot be recorded relative to epoch %lld",
				       (long long)w->build_time,
				       (long long)w->epoch);
	imgfs_put_le32(sb + 108,
		       (uint32_t)((uint64_t)w->build_time - (uint64_t)w->epoch));
	imgfs_put_le32(sb + 80, l->feature_incompat);
	imgfs_put_le16(sb + 84, l->u1);
	imgfs_put_le64(sb + 96, l->packed_nid);
	if (l->compr_cfgs_len) {
		if (IMGFS_SUPER_BASE_SIZE + l->compr_cfgs_len > len)
			return imgfs_error_set(err, -EINVAL,
					       "compression config records do not fit in the superblock block");
		memcpy(sb + IMGFS_SUPER_BASE_SIZE, l->compr_cfgs,
		       l->compr_cfgs_len);
	}
	if (l->extra_devices) {
		uint64_t at = (uint64_t)l->devt_slotoff * IMGFS_DEVICE_SLOT_SIZE -
			      IMGFS_SUPER_OFFSET;

		if (l->compr_cfgs_len || l->extra_devices != 1 ||
		    at < IMGFS_SUPER_BASE_SIZE || at + IMGFS_DEVICE_SLOT_SIZE > len)
			return imgfs_error_set(err, -EINVAL,
					       "internal: device table does not fit in the superblock block");
		imgfs_put_le16(sb + 86, l->extra_devices);
		imgfs_put_le16(sb + 88, l->devt_slotoff);
		memcpy(sb + at, l->devt, IMGFS_DEVICE_SLOT_SIZE);
	}
	imgfs_put_le32(sb + 4, imgfs_crc32c(0xFFFFFFFFu, sb, len));
	n = pwrite(w->fd, blk, len, IMGFS_SUPER_OFFSET);
	if (n != (ssize_t)len)
		return imgfs_error_set(err, n < 0 ? -errno : -EIO,
				       "writing superblock: %s",
				       n < 0 ? strerror(errno) : "short write");
	return 0;
}
