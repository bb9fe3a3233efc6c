// SPDX-License-Identifier: MIT
/*
 * Superblock: written last, with its CRC-32C over the rest of the block it
 * sits in (bytes 1024 .. max(bs, 2048) - 1), checksum field zeroed.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "util/fileio.h"
#include "writer/internal.h"
#include "util/error.h"

/* Build time = epoch + sb.build_time; the epoch was chosen so it fits. */
static int super_fill(const struct imgfs_writer *w,
		      const struct imgfs_sb_layout *l,
		      struct imgfs_super_block *sb, struct imgfs_error *err)
{
	if (w->epoch > w->build_time ||
	    (uint64_t)w->build_time - (uint64_t)w->epoch > UINT32_MAX)
		return error_set(
			err, -ERANGE,
			"build time %lld cannot be recorded relative to epoch %lld",
			(long long)w->build_time, (long long)w->epoch);
	memset(sb, 0, sizeof(*sb));
	sb->magic = IMGFS_SUPER_MAGIC;
	sb->feature_compat = l->feature_compat | IMGFS_FEATURE_COMPAT_SB_CHKSUM;
	sb->blkszbits = (uint8_t)w->blkszbits;
	sb->root_nid = (uint16_t)l->root_nid;
	sb->inos = l->inos;
	sb->epoch = (uint64_t)w->epoch;
	sb->fixed_nsec = w->epoch_nsec;
	sb->blocks_lo = (uint32_t)l->blocks;
	sb->meta_blkaddr = l->meta_blkaddr;
	sb->xattr_blkaddr = l->xattr_blkaddr;
	memcpy(sb->uuid, w->opts.uuid, 16);
	memcpy(sb->volume_name, w->opts.label, strnlen(w->opts.label, 16));
	sb->feature_incompat = l->feature_incompat;
	sb->u1 = l->u1;
	sb->packed_nid = l->packed_nid;
	sb->extra_devices = l->extra_devices;
	sb->build_time =
		(uint32_t)((uint64_t)w->build_time - (uint64_t)w->epoch);
	return 0;
}

/*
 * The device table, right after the superblock and inside its checksummed
 * range: never together with compression configuration records, which
 * would take the same bytes (no image has both).
 */
static int devt_encode(const struct imgfs_sb_layout *l, uint8_t *blk,
		       uint32_t len, struct imgfs_super_block *sb,
		       struct imgfs_error *err)
{
	uint32_t at = IMGFS_SUPER_BASE_SIZE;

	if (l->compr_cfgs_len || l->extra_devices > IMGFS_WRITER_MAX_DEVICES ||
	    at + l->extra_devices * IMGFS_DEVICE_SLOT_SIZE > len)
		return error_set(
			err, -EINVAL,
			"internal: device table does not fit in the superblock block");
	sb->devt_slotoff = (IMGFS_SUPER_OFFSET + at) / IMGFS_DEVICE_SLOT_SIZE;
	for (unsigned int i = 0; i < l->extra_devices; i++)
		device_slot_encode(&l->devt[i],
				   blk + at + i * IMGFS_DEVICE_SLOT_SIZE);
	return 0;
}

int super_write(struct imgfs_writer *w, const struct imgfs_sb_layout *l,
		struct imgfs_error *err)
{
	uint8_t blk[4096];
	uint32_t len = super_csum_len(w->bs);
	struct imgfs_super_block sb;
	int ret;

	ret = super_fill(w, l, &sb, err);
	if (ret)
		return ret;
	/* everything in the checksummed range after the sb is ours: zeros,
	 * the device table or the compression config records */
	memset(blk, 0, sizeof(blk));
	if (l->extra_devices) {
		ret = devt_encode(l, blk, len, &sb, err);
		if (ret)
			return ret;
	}
	super_block_encode(&sb, blk);
	if (l->compr_cfgs_len) {
		if (IMGFS_SUPER_BASE_SIZE + l->compr_cfgs_len > len)
			return error_set(
				err, -EINVAL,
				"compression config records do not fit in the superblock block");
		memcpy(blk + IMGFS_SUPER_BASE_SIZE, l->compr_cfgs,
		       l->compr_cfgs_len);
	}
	sb.checksum = super_checksum(blk, len);
	super_block_encode(&sb, blk);
	ret = pwrite_full(w->fd, blk, len, IMGFS_SUPER_OFFSET);
	if (ret)
		return error_set(err, ret, "writing superblock: %s",
				 strerror(-ret));
	/* the dm-verity tree hashes the block now that it is final */
	return writer_verity_head(w, IMGFS_SUPER_OFFSET, blk, len, err);
}
