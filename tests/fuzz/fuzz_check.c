// SPDX-License-Identifier: MIT
/*
 * fuzz_check.c - libFuzzer target: the reader and the checker on an
 * in-memory image. Besides the full check, every reachable entry is looked
 * up by path and read through the public reader calls, so that the
 * mapping, xattr and symlink paths see the mutated bytes too.
 */
#include <stddef.h>
#include <stdint.h>

#include "imgfs/check.h"
#include "imgfs/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_ctx {
	struct imgfs_image *img;
	unsigned int entries;
};

static int xattr_cb(void *arg, const struct imgfs_xattr_info *x)
{
	return x->name_len > IMGFS_XATTR_NAME_MAX ? -1 : 0;
}

static int entry_cb(void *arg, const struct imgfs_check_entry *e)
{
	struct fuzz_ctx *f = arg;
	const struct imgfs_inode *in = e->inode;
	struct imgfs_error err = { 0 };
	char buf[IMGFS_SYMLINK_MAX + 1];
	struct imgfs_extent ext;
	uint64_t nid;

	if (++f->entries > 256)
		return 0;
	imgfs_lookup(f->img, e->path, &nid, &err);
	imgfs_xattr_iterate(f->img, in, true, xattr_cb, NULL, &err);
	imgfs_getxattr(f->img, in, "user.a", buf, sizeof(buf), &err);
	if (imgfs_inode_is_symlink(in))
		imgfs_readlink(f->img, in, buf, sizeof(buf), &err);
	if (in->size) {
		imgfs_map(f->img, in, in->size - 1, &ext, &err);
		imgfs_read(f->img, in, in->size / 2, buf, 100, &err);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imgfs_check_options opts;
	struct imgfs_check_result res;
	struct imgfs_error err = { 0 };
	struct fuzz_ctx f = { 0 };

	if (imgfs_image_open_mem(data, size, IMGFS_OPEN_IGNORE_CHECKSUM |
					     IMGFS_OPEN_IGNORE_FEATURES,
				 &f.img, &err))
		return 0;
	imgfs_check_options_init(&opts);
	opts.entry = entry_cb;
	opts.entry_arg = &f;
	imgfs_check_image(f.img, &opts, &res, &err);
	imgfs_image_close(f.img);
	return 0;
}
