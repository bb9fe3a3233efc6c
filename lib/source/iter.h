/* SPDX-License-Identifier: MIT */
/*
 * source/iter.h - the entries of a source (a tar stream, a directory
 * tree), one at a time, as the writer takes them: already converted to
 * struct imgfs_entry (xattrs, ACLs as system.posix_acl_* values, sparse
 * map, times), their data in blocks. The writer sees no libarchive type;
 * each source is a struct of callbacks over its own reader.
 */
#ifndef IMGFS_SOURCE_ITER_H
#define IMGFS_SOURCE_ITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/error.h"
#include "imgfs/writer.h"

struct archive;
struct archive_entry;
struct imgfs_tar;
struct imgfs_tar_options;

/* One entry of a source, valid until the next call to next(). */
struct iter_entry {
	/* e.path is NULL when the name cannot be decoded */
	struct imgfs_entry e;
	/* the file flags as libarchive writes them ("uchg,nodump"), or NULL:
	 * what becomes of them is the writer's rule */
	const char *fflags;
	/* non-zero: the entry could not be converted (@err of next() says
	 * why); reported after what the writer checks first */
	int bad;
};

/* One block of an entry's data. */
struct iter_block {
	const void *buf;
	size_t len;
	int64_t off; /* in the file: blocks come in order, holes between */
	/* a tar source: how many bytes of the uncompressed stream were
	 * consumed when the block was handed out (tar-index images); 0
	 * for other sources */
	uint64_t stream_off;
};

struct entry_iter {
	/* 1 with *@e set, 0 at the end of the source, or a negative errno
	 * with @err naming the entry and the cause; the data the caller
	 * left unread of the previous entry is skipped */
	int (*next)(struct entry_iter *it, const struct iter_entry **e,
		    struct imgfs_error *err);
	/* the current entry's next data block: 1 with *@b set, 0 after
	 * its last one, or a negative errno with @err set */
	int (*read)(struct entry_iter *it, struct iter_block *b,
		    struct imgfs_error *err);
	/* tar streams only (NULL otherwise): from now on copy every
	 * uncompressed byte of the stream to @fd, before the first entry;
	 * and the uncompressed bytes read so far */
	int (*copy_to)(struct entry_iter *it, int fd, struct imgfs_error *err);
	uint64_t (*stream_bytes)(const struct entry_iter *it);
	void (*destroy)(struct entry_iter *it);
};

/*
 * tar_iter.c: the entries of @t with tar_next()'s rules (@o is
 * copied); @t is not closed by destroy.
 */
struct entry_iter *tar_iter_new(struct imgfs_tar *t,
				const struct imgfs_tar_options *o,
				struct imgfs_error *err);

/* A file (device and inode) a directory source leaves out. */
struct dir_skip {
	uint64_t dev;
	uint64_t ino;
};

/* How a directory tree is read (dir_iter.c). */
struct dir_iter_options {
	/* files left out (the image being written, say) */
	const struct dir_skip *skip;
	size_t nr_skip;
	/* true: ".wh." files are whiteouts whose data is not read (and
	 * so not checked for changes while being read) */
	bool overlay_whiteouts;
	imgfs_warn_fn warn;
	void *warn_arg;
};

/*
 * dir_iter.c: the tree at @path (kept, for messages: it must outlive
 * the source), not following symlinks, @path itself the root ("."); hard
 * links inside it as hard links. A file that changes while its data is
 * read is an error, reported by the next call to next().
 */
struct entry_iter *dir_iter_new(const char *path,
				const struct dir_iter_options *o,
				struct imgfs_error *err);

/*
 * archive_iter.c: entries the caller reads from libarchive handles
 * itself (lib/stack picks them among layers), converted one by one with
 * archive_iter_set(); next() is not used. The handle @a stays the
 * caller's; the entry's data is read from it. A conversion error is
 * in the entry's bad (with @err set), as next() gives it.
 */
struct entry_iter *archive_iter_new(imgfs_warn_fn warn, void *warn_arg,
				    struct imgfs_error *err);
const struct iter_entry *archive_iter_set(struct entry_iter *it,
					  struct archive *a,
					  struct archive_entry *ae,
					  struct imgfs_error *err);

#endif /* IMGFS_SOURCE_ITER_H */
