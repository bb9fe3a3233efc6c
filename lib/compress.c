// SPDX-License-Identifier: MIT
/*
 * Compressed file data. This build does not compress yet: asking for it
 * is refused up front, so no image is ever half-compressed.
 */
#include <errno.h>

#include "compress.h"
#include "writer_internal.h"

struct imgfs_compressor *
imgfs_compressor_create(const struct imgfs_mkfs_options *opts,
			unsigned int blkszbits, struct imgfs_error *err)
{
	(void)opts;
	(void)blkszbits;
	imgfs_error_set(err, -EOPNOTSUPP,
			"compression is not available in this build");
	return NULL;
}

void imgfs_compressor_destroy(struct imgfs_compressor *c)
{
	(void)c;
}

int imgfs_compress_file(struct imgfs_writer *w, struct archive *a,
			struct imgfs_inode *inode, const char *path,
			struct imgfs_error *err)
{
	return imgfs_error_set(err, -EOPNOTSUPP, "%s: compression unavailable",
			       path);
}

int imgfs_compressor_super(struct imgfs_compressor *c,
			   struct imgfs_sb_layout *sbl, struct imgfs_error *err)
{
	return 0;
}
