// SPDX-License-Identifier: MIT
/*
 * The dm-verity hash tree of the image being written (opts.dm_verity),
 * built in the same pass: every byte the writer appends goes through the
 * block output's tap to the tree in order. Only the head, the bytes before
 * the first data block (the EROFS superblock's block), is written last:
 * the tree engine takes it at the end and redoes the tree's left edge
 * (see imgfs_verity_params.head_size), so the image is never read back.
 * The tree goes into the image file itself at the image size rounded up
 * to 4096, its levels spilled to temporary files until that size is known.
 * A tar-index image's size includes the tar appended after the index
 * (tarindex.c feeds its bytes through writer_verity_update()), so
 * the tree covers both and lies after the tar.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "writer/internal.h"
#include "util/error.h"

/* enough zeros to hash holes and padding in few calls */
#define ZERO_CHUNK 65536

static int tap(void *arg, const void *p, uint64_t len, struct imgfs_error *err)
{
	static const uint8_t zeros[ZERO_CHUNK];
	struct imgfs_writer *w = arg;
	int ret = 0;

	if (p)
		return imgfs_verity_update(w->verity, p, (size_t)len, err);
	while (len && !ret) {
		size_t n = len < ZERO_CHUNK ? (size_t)len : ZERO_CHUNK;

		ret = imgfs_verity_update(w->verity, zeros, n, err);
		len -= n;
	}
	return ret;
}

int writer_verity_start(struct imgfs_writer *w, uint64_t head,
			struct imgfs_error *err)
{
	const struct imgfs_mkfs_options *o = &w->opts;
	struct imgfs_verity_params p = IMGFS_VERITY_PARAMS_INIT;
	uint8_t seed[16 + 8];
	int ret;

	p.data_block_size = o->dm_verity_data_block_size
				    ? o->dm_verity_data_block_size
				    : w->bs;
	if (p.data_block_size > w->bs)
		return error_set(
			err, -EINVAL,
			"dm-verity data block size %u exceeds the image's block size %u: the kernel could not mount the image on the verity device",
			p.data_block_size, w->bs);
	p.hash_block_size = 4096;
	p.hash_fd = w->fd;
	p.head_size = head;
	/* the image's identity: reproducible with -U and -T */
	memcpy(seed, o->uuid, 16);
	imgfs_put_le64(seed + 16, (uint64_t)w->build_time);
	p.seed = seed;
	p.seed_size = sizeof(seed);
	if (o->dm_verity_have_salt) {
		p.salt = o->dm_verity_salt;
		p.salt_size = o->dm_verity_salt_size;
	}
	if (o->dm_verity_have_uuid)
		p.uuid = o->dm_verity_uuid;
	ret = imgfs_verity_create(&w->verity, &p, err);
	if (ret)
		return ret;
	w->verity_head = head;
	w->out.tap = tap;
	w->out.tap_arg = w;
	return 0;
}

int writer_verity_update(struct imgfs_writer *w, const void *p, size_t len,
			 struct imgfs_error *err)
{
	if (!w->verity)
		return 0;
	return imgfs_verity_update(w->verity, p, len, err);
}

int writer_verity_head(struct imgfs_writer *w, uint64_t offset,
		       const uint8_t *buf, size_t len, struct imgfs_error *err)
{
	uint64_t head = w->verity_head;
	uint8_t *h;
	int ret;

	if (!w->verity)
		return 0;
	if (offset + len > head)
		return error_set(
			err, -EINVAL,
			"internal: superblock past the head the tree expects");
	/* what precedes the superblock is zeros */
	h = calloc(1, head);
	if (!h)
		return error_set(err, -ENOMEM, "out of memory");
	memcpy(h + offset, buf, len);
	ret = imgfs_verity_set_head(w->verity, h, head, err);
	free(h);
	return ret;
}

int writer_verity_finish(struct imgfs_writer *w,
			 struct imgfs_verity_result *res,
			 struct imgfs_error *err)
{
	w->out.tap = NULL;
	return imgfs_verity_finish(w->verity, res, err);
}
