/* SPDX-License-Identifier: MIT */
/*
 * compress.h - compressed file data for the writer (FORMAT.md section 9).
 *
 * The compressor turns a file's byte stream into fixed-size-output
 * physical clusters written through the writer's block output, and
 * produces the inode's map (header + lcluster indexes) as the inode's
 * "extra" bytes.
 */
#ifndef IMGFS_COMPRESS_H
#define IMGFS_COMPRESS_H

#include "imgfs/error.h"
#include "imgfs/writer.h"

struct archive;
struct imgfs_writer;
struct imgfs_inode;
struct imgfs_sb_layout;
struct imgfs_compressor;

/*
 * Create the compression engine (and its worker threads) for @opts.
 * Returns NULL with @err set on bad options or missing support.
 */
struct imgfs_compressor *
imgfs_compressor_create(const struct imgfs_mkfs_options *opts,
			unsigned int blkszbits, struct imgfs_error *err);

/* Stop the workers and free everything. NULL is allowed. */
void imgfs_compressor_destroy(struct imgfs_compressor *c);

/*
 * Read the data of regular file @inode (inode->size bytes) from @a and
 * write it compressed through w->out, block aligned. On return the inode's
 * layout, i_u (compressed block count, i_u_set), extra (map header and
 * indexes, extra_align 8) and, with ztailpacking, tail are filled in.
 * A file that does not gain from compression may be stored FLAT_PLAIN.
 */
int imgfs_compress_file(struct imgfs_writer *w, struct archive *a,
			struct imgfs_inode *inode, const char *path,
			struct imgfs_error *err);

/*
 * Add the superblock fields compression needs to @sbl: feature bits,
 * u1 (algorithm bitmap or LZ4 distance), configuration records.
 */
int imgfs_compressor_super(struct imgfs_compressor *c,
			   struct imgfs_sb_layout *sbl,
			   struct imgfs_error *err);

#endif /* IMGFS_COMPRESS_H */
