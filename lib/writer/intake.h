/* SPDX-License-Identifier: MIT */
/*
 * writer/intake.h - what the library's upper layers (lib/stack) use of the
 * writer beyond imgfs/writer.h: entries of a source taken one at a time,
 * the output file handling of imgfs_convert() around entries the caller
 * feeds, and files whose data lies on extra devices.
 */
#ifndef IMGFS_WRITER_INTAKE_H
#define IMGFS_WRITER_INTAKE_H

#include <stddef.h>
#include <stdint.h>

#include "imgfs/writer.h"

struct entry_iter;
struct iter_entry;

/*
 * iterate.c: entry @e of the source @it (source/iter.h) and its data, read
 * through @it, with every rule the writer applies to a source's entries
 * (file flags, the data's order and bounds).
 */
int writer_take(struct imgfs_writer *w, struct entry_iter *it,
		const struct iter_entry *e, struct imgfs_error *err);

/*
 * convert.c: imgfs_convert() with the entries given by @feed (called once,
 * on a new writer) instead of read from a source: the target is checked
 * and written as imgfs_convert() does (unnamed until committed, the
 * dm-verity sidecar, hooks), nothing is left behind on failure.
 */
typedef int (*imgfs_writer_feed_fn)(struct imgfs_writer *w, void *arg,
				    struct imgfs_error *err);
int convert_feed(const char *image_path, const struct imgfs_mkfs_options *o,
		 const struct imgfs_convert_hooks *hooks,
		 imgfs_writer_feed_fn feed, void *arg,
		 struct imgfs_mkfs_stats *stats, struct imgfs_error *err);

/*
 * external.c: images whose file data lies on extra devices (a merged
 * image's layers, docs/format.md §10.1). Declare the @n devices first,
 * each @blocks[i] blocks long, tagged @tags[i] (at most 64 bytes; may be
 * NULL): device i + 1 in chunk indexes. Their slots follow the
 * superblock, inside its block.
 */
int writer_set_devices(struct imgfs_writer *w, unsigned int n,
		       const uint64_t *blocks, const char *const *tags,
		       struct imgfs_error *err);

/* One chunk of an external file: device 0 is a hole. */
struct imgfs_external_chunk {
	uint16_t device;
	uint32_t blkaddr;
};

/*
 * Add regular file @e (e->size bytes; no sparse map) whose data is the
 * @nr chunks of 2^@chunkbits bytes each, on the devices given: a
 * chunk-based inode with 8-byte chunk indexes.
 */
int writer_add_external(struct imgfs_writer *w, const struct imgfs_entry *e,
			unsigned int chunkbits,
			const struct imgfs_external_chunk *chunks, size_t nr,
			struct imgfs_error *err);

#endif /* IMGFS_WRITER_INTAKE_H */
