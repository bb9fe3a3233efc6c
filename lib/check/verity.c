// SPDX-License-Identifier: MIT
/*
 * A dm-verity hash tree after an image: where mkfs.img --dm-verity (and
 * "veritysetup format --hash-offset" as containerd uses it) puts it, at
 * the image size rounded up to 4096, and its check over the whole file.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "check/internal.h"
#include "imgfs/verity.h"
#include "util/error.h"

/* the hash offset is aligned for the 4096-byte hash blocks */
#define VERITY_ALIGN 4096u

/*
 * End of the bytes the tree covers: the filesystem's blocks, or, when the
 * device table maps extra devices into the image (a tar-index image's
 * tar after the index), the end of the last one. The superblock's block
 * count is the index's only. UINT64_MAX if absurd.
 */
static uint64_t data_end(const struct imgfs_image *img)
{
	const struct imgfs_sb_info *sb = imgfs_image_sb(img);
	uint64_t blocks = sb->blocks;

	if (img->dev_base && img->dev_blocks)
		for (unsigned int i = 0; i < sb->extra_devices; i++) {
			uint64_t end = img->dev_base[i] + img->dev_blocks[i];

			if (img->dev_base[i] && end > blocks)
				blocks = end;
		}
	if (blocks >> 52)
		return UINT64_MAX;
	return blocks << sb->blkszbits;
}

uint64_t imgfs_check_verity_offset(const struct imgfs_image *img)
{
	uint64_t end = data_end(img);

	if (end == UINT64_MAX)
		return UINT64_MAX;
	return (end + VERITY_ALIGN - 1) / VERITY_ALIGN * VERITY_ALIGN;
}

bool imgfs_check_has_verity(struct imgfs_image *img)
{
	uint64_t off = imgfs_check_verity_offset(img);
	struct imgfs_error e = { 0 };
	uint8_t magic[8];

	if (off == UINT64_MAX || off > img->size ||
	    img->size - off < IMGFS_VERITY_SB_SIZE)
		return false;
	if (img_read(img, magic, sizeof(magic), off, "verity superblock", 0,
		     &e))
		return false;
	return !memcmp(magic, "verity\0\0", sizeof(magic));
}

int imgfs_check_verity(struct imgfs_image *img, const uint8_t *root_hash,
		       struct imgfs_verity_check *chk, struct imgfs_error *err)
{
	const struct imgfs_sb_info *sb = imgfs_image_sb(img);
	uint64_t off = imgfs_check_verity_offset(img);
	uint64_t fs_end = data_end(img);
	uint64_t covered;
	int ret;

	if (img->fd < 0)
		return error_set(err, -EOPNOTSUPP,
				 "dm-verity: only image files can be checked");
	if (!imgfs_check_has_verity(img))
		return error_set(
			err, -EBADMSG,
			"dm-verity: no verity superblock at offset %" PRIu64
			" (the image size rounded up to 4096)",
			off);
	ret = imgfs_verity_verify_fd(img->fd, img->fd, off, root_hash, chk,
				     err);
	if (ret)
		return ret;
	/* a tree over a prefix would leave the rest unprotected */
	covered = chk->info.data_blocks * chk->info.data_block_size;
	if (covered < fs_end)
		return error_set(err, -EBADMSG,
				 "dm-verity: the tree covers %" PRIu64
				 " bytes, the image has %" PRIu64 "%s",
				 covered, fs_end,
				 fs_end > sb->blocks << sb->blkszbits
					 ? " (index and tar)"
					 : "");
	if (chk->info.data_block_size > (1u << sb->blkszbits))
		return error_set(
			err, -EBADMSG,
			"dm-verity: data blocks of %u bytes, larger than the image's %u: the kernel cannot mount it on the verity device",
			chk->info.data_block_size, 1u << sb->blkszbits);
	return 0;
}
