/* SPDX-License-Identifier: MIT */
/*
 * writer/intake.h - what the library's upper layers (lib/stack) use of the
 * writer beyond imgfs/writer.h: libarchive entries taken one at a time,
 * with their data from the archive or from elsewhere, and the output file
 * handling of imgfs_convert() around entries the caller feeds.
 */
#ifndef IMGFS_WRITER_INTAKE_H
#define IMGFS_WRITER_INTAKE_H

#include <stddef.h>
#include <stdint.h>

#include "imgfs/writer.h"

struct archive;
struct archive_entry;

/*
 * archive.c: one entry and its data (also for directory sources), with
 * every rule of the archive intake (file flags, ACLs, pax times).
 */
int imgfs_writer_consume_entry(struct imgfs_writer *w, struct archive *a,
			       struct archive_entry *e, struct imgfs_error *err);

/*
 * Where a regular file's data blocks come from when it is not the archive
 * the entry was read from: next() returns 1 with the block's bytes, length
 * and offset in the file (increasing, as libarchive gives them), 0 after
 * the last block, or a negative errno with @err set.
 */
struct imgfs_block_source {
	int (*next)(void *arg, const void **buf, size_t *len, int64_t *off,
		    struct imgfs_error *err);
	void *arg;
};

/*
 * imgfs_writer_consume_entry() with the data of @e (a regular file) read
 * from @src; @a is still the archive @e came from (its format tells how
 * to read the entry's times). @src NULL: from @a.
 */
int imgfs_writer_consume_entry_from(struct imgfs_writer *w, struct archive *a,
				    struct archive_entry *e,
				    const struct imgfs_block_source *src,
				    struct imgfs_error *err);

/*
 * convert.c: imgfs_convert() with the entries given by @feed (called once,
 * on a new writer) instead of read from a source: the target is checked
 * and written as imgfs_convert() does (unnamed until committed, the
 * dm-verity sidecar, hooks), nothing is left behind on failure.
 */
typedef int (*imgfs_writer_feed_fn)(struct imgfs_writer *w, void *arg,
				    struct imgfs_error *err);
int imgfs_convert_feed(const char *image_path,
		       const struct imgfs_mkfs_options *o,
		       const struct imgfs_convert_hooks *hooks,
		       imgfs_writer_feed_fn feed, void *arg,
		       struct imgfs_mkfs_stats *stats, struct imgfs_error *err);

#endif /* IMGFS_WRITER_INTAKE_H */
