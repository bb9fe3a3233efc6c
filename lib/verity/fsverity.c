// SPDX-License-Identifier: MIT
/*
 * fsverity.c - fs-verity file digests: the tree with 4 KiB blocks and no salt, and the
 * SHA-256 of its fsverity_descriptor (what FS_IOC_MEASURE_VERITY reports).
 */
#include <errno.h>
#include <stdlib.h>

#include "imgfs/format.h"
#include "util/error.h"
#include "util/sha256.h"
#include "verity/verity.h"

#define FSV_BLOCK 4096
#define FSV_DESC_SIZE 256

struct imgfs_fsverity {
	struct vt t;
	int done;
};

int imgfs_fsverity_create(struct imgfs_fsverity **out, struct imgfs_error *err)
{
	struct imgfs_fsverity *f = calloc(1, sizeof(*f));
	int ret;

	*out = NULL;
	if (!f)
		return error_set(err, -ENOMEM, "fs-verity: out of memory");
	ret = vt_init(&f->t, FSV_BLOCK, FSV_BLOCK, NULL, 0, err);
	if (ret) {
		imgfs_fsverity_free(f);
		return ret;
	}
	*out = f;
	return 0;
}

int imgfs_fsverity_update(struct imgfs_fsverity *f, const void *buf, size_t len,
			  struct imgfs_error *err)
{
	if (f->done)
		return error_set(err, -EINVAL,
				 "fs-verity: update after finish");
	return vt_update(&f->t, buf, len, err);
}

int imgfs_fsverity_finish(struct imgfs_fsverity *f,
			  uint8_t digest[IMGFS_VERITY_DIGEST_SIZE],
			  struct imgfs_error *err)
{
	uint8_t desc[FSV_DESC_SIZE] = { 0 };
	int ret = 0;

	if (f->done)
		return error_set(err, -EINVAL, "fs-verity: finished twice");
	f->done = 1;
	/* the fsverity_descriptor; an empty file's root hash is all zeros */
	desc[0] = 1; /* version */
	desc[1] = 1; /* FS_VERITY_HASH_ALG_SHA256 */
	desc[2] = 12; /* log2 of the block size */
	imgfs_put_le64(desc + 8, f->t.fed);
	if (f->t.fed)
		ret = vt_finish(&f->t, desc + 16, err);
	if (!ret && sha256_join(desc, sizeof(desc), NULL, 0, digest))
		ret = error_set(err, -EIO, "fs-verity: SHA-256 failed");
	return ret;
}

void imgfs_fsverity_free(struct imgfs_fsverity *f)
{
	if (!f)
		return;
	vt_release(&f->t);
	free(f);
}

static int feed_fsv(void *ctx, const void *buf, size_t len,
		    struct imgfs_error *err)
{
	return imgfs_fsverity_update(ctx, buf, len, err);
}

int imgfs_fsverity_digest_fd(int fd, uint8_t digest[IMGFS_VERITY_DIGEST_SIZE],
			     struct imgfs_error *err)
{
	struct imgfs_fsverity *f;
	int ret = imgfs_fsverity_create(&f, err);

	if (ret)
		return ret;
	ret = vt_feed_fd(fd, UINT64_MAX, feed_fsv, f, err);
	if (!ret)
		ret = imgfs_fsverity_finish(f, digest, err);
	imgfs_fsverity_free(f);
	return ret;
}
