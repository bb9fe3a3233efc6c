/* SPDX-License-Identifier: MIT */
/*
 * compress.h - compressed file data for the writer (docs/format.md §9).
 *
 * The compressor turns a file's byte stream into fixed-size-output
 * physical clusters written through the writer's block output, and
 * produces the inode's map (header + lcluster indexes) as the inode's
 * "extra" bytes.
 *
 * Work is asynchronous: compress_put() takes the file's bytes, cuts
 * them into
 * segments of a size fixed by the options (never by the thread count) and
 * queues them; worker threads compress segments independently, and the
 * writer's thread writes results strictly in queue order. The image is
 * therefore the same whatever the number of workers. An inode's fields are
 * final only after compressor_flush().
 */
#ifndef IMGFS_COMPRESS_H
#define IMGFS_COMPRESS_H

#include "imgfs/error.h"
#include "imgfs/writer.h"

struct imgfs_writer;
struct imgfs_node;
struct imgfs_sb_layout;
struct imgfs_compressor;

/*
 * Create the compression engine (and its worker threads) for @opts.
 * Returns NULL with @err set on bad options or missing support.
 */
struct imgfs_compressor *
compressor_create(const struct imgfs_mkfs_options *opts, unsigned int blkszbits,
		  struct imgfs_error *err);

/*
 * Check the compression options of @opts (algorithm, level, dictionary,
 * pcluster size) as compressor_create() does, without starting it.
 */
int compress_check_options(const struct imgfs_mkfs_options *opts,
			   unsigned int blkszbits, struct imgfs_error *err);

/* Stop the workers and free everything. NULL is allowed. */
void compressor_destroy(struct imgfs_compressor *c);

struct imgfs_compress_stream;

/*
 * Start queueing the data of regular file @inode (inode->size bytes, given
 * with compress_put(), then compress_end()); earlier files
 * whose work is done are written through w->out on the way. Once flushed,
 * the inode's layout, i_u (compressed block count, i_u_set), extra (map
 * header and indexes, extra_align 8) and, with ztailpacking, tail are
 * filled in. A file that does not gain from compression is stored
 * FLAT_PLAIN (or FLAT_INLINE with ztailpacking); with fragments, its end
 * goes to the packed inode. @inode must stay alive until the flush.
 */
int compress_begin(struct imgfs_writer *w, struct imgfs_node *inode,
		   const char *path, uint32_t inline_room,
		   struct imgfs_compress_stream **s, struct imgfs_error *err);

/* The next @len bytes of the file; @buf NULL stands for zeros. */
int compress_put(struct imgfs_compress_stream *s, const void *buf, uint64_t len,
		 struct imgfs_error *err);

/* The rest of the file is zeros; @s is freed, also on failure. */
int compress_end(struct imgfs_compress_stream *s, struct imgfs_error *err);

/* Drop the file (NULL is allowed). */
void compress_abort(struct imgfs_compress_stream *s);

/*
 * Wait for all queued work and write it through w->out. Call before
 * anything else is written to w->out, and before layout.
 */
int compressor_flush(struct imgfs_writer *w, struct imgfs_error *err);

/*
 * Before layout: compressor_flush(), then write the packed inode's
 * content (fragments, docs/format.md §9.11) if any.
 */
int compressor_finish(struct imgfs_writer *w, struct imgfs_error *err);

/*
 * The packed inode holding the fragments, once compressor_finish()
 * has run, or NULL (also when @c is NULL). The writer owns it (it is in
 * the tree's inode list) but no directory names it: layout must place it
 * and give its NID to the superblock (packed_nid).
 */
struct imgfs_node *compressor_packed_inode(struct imgfs_compressor *c);

/*
 * At layout, once @inode's xattr_isize is final: switch its map to compact
 * indexes when they can express it (they depend on where the map lands).
 * Does nothing for other inodes, or when @c is NULL.
 */
int compress_layout_inode(struct imgfs_compressor *c, struct imgfs_node *inode,
			  struct imgfs_error *err);

/*
 * Add the superblock fields compression needs to @sbl: feature bits,
 * u1 (algorithm bitmap or LZ4 distance), configuration records.
 */
int compressor_super(struct imgfs_compressor *c, struct imgfs_sb_layout *sbl,
		     struct imgfs_error *err);

#endif /* IMGFS_COMPRESS_H */
