// SPDX-License-Identifier: MIT
/*
 * reader_zmap.c - compressed layouts (COMPRESSED_FULL / COMPRESSED_COMPACT).
 *
 * Placeholder: mapping and decompression are not implemented yet, so
 * compressed inodes are reported as unsupported. The hooks are declared in
 * reader_internal.h; a full implementation replaces this file.
 */
#include <errno.h>

#include "reader_internal.h"

int imgfs_z_image_init(struct imgfs_image *img, struct imgfs_error *err)
{
	return 0;
}

void imgfs_z_image_free(struct imgfs_image *img)
{
}

int imgfs_z_map(struct imgfs_image *img, const struct imgfs_inode *inode,
		uint64_t offset, struct imgfs_extent *ext,
		struct imgfs_error *err)
{
	return imgfs_error_set(err, -EOPNOTSUPP,
			       "nid %llu: compressed data layout %u is not supported",
			       (unsigned long long)inode->nid, inode->layout);
}

ssize_t imgfs_z_read(struct imgfs_image *img, const struct imgfs_inode *inode,
		     const struct imgfs_extent *ext, uint64_t offset, void *buf,
		     size_t len, struct imgfs_error *err)
{
	return imgfs_error_set(err, -EOPNOTSUPP,
			       "nid %llu: compressed data is not supported",
			       (unsigned long long)inode->nid);
}
