/* SPDX-License-Identifier: MIT */
/*
 * imgfs/source.h - opening the inputs of a conversion with libarchive.
 *
 * A tar layer (plain, gzip, zstd, xz, bzip2, lz4; V7, ustar, pax, GNU) is
 * read as a struct imgfs_tar: compression is detected from the bytes and
 * decoded first, then the plain stream is parsed as tar, so that where the
 * archive ends can be told apart from where the input ends. mkfs.img and
 * fsck.img --compare both read tars through imgfs_tar_next(), with the
 * same rules. A directory is read through libarchive's disk reader, which
 * yields the same entry objects, xattrs and ACLs included.
 */
#ifndef IMGFS_SOURCE_H
#define IMGFS_SOURCE_H

#include <stdbool.h>

#include "imgfs/api.h"
#include "imgfs/error.h"
#include "imgfs/writer.h"

#ifdef __cplusplus
extern "C" {
#endif

struct archive;
struct archive_entry;
struct imgfs_tar;

/* How a tar stream may end (see imgfs_tar_next()). */
struct imgfs_tar_options {
	/* accept (with a warning) an empty (0-byte) input as an empty
	 * archive; also overrides @require_end */
	bool allow_missing_end;
	/* refuse a stream that ends at an entry boundary without the
	 * end-of-archive blocks (by default it is read, with a warning) */
	bool require_end;
	/* warnings (reading goes on); NULL: none are reported */
	imgfs_warn_fn warn;
	void *warn_arg;
};

/*
 * Open the tar stream at @path ("-" reads standard input). Returns a new
 * reader owned by the caller (free with imgfs_tar_close()), or NULL with
 * @err set.
 */
IMGFS_API
struct imgfs_tar *imgfs_tar_open(const char *path, struct imgfs_error *err);

/*
 * The same for the tar stream on the open descriptor @fd, read from where
 * it stands and left open; @name (NULL: "-") stands for it in messages.
 */
IMGFS_API
struct imgfs_tar *imgfs_tar_open_fd(int fd, const char *name,
				    struct imgfs_error *err);

/*
 * Advance to the next entry. Whatever the caller left unread of the
 * previous entry's data is skipped. Returns 1 with *@e set (owned by the
 * reader, valid until the next call; read its data with
 * archive_read_data_block() on imgfs_tar_archive()), 0 at the end of the
 * archive, or a negative errno with @err naming the entry and the cause.
 *
 * The archive ends at its end-of-archive marker (zero blocks); nothing
 * after it is parsed as entries (a second archive appended with cat is
 * not read), but the input is read to its end so that compression
 * trailers are checked, and non-zero bytes there are reported as a
 * warning. A stream that ends at an entry boundary without the marker (as
 * some producers write them) is read with one warning naming the last
 * entry, or is an error with @o->require_end; an empty input is an error
 * unless @o->allow_missing_end; one that ends
 * inside an entry's headers or data is always an error, and so are bytes
 * after the end of a compressed stream, a damaged header (libarchive's
 * ARCHIVE_RETRY) and anything libarchive could not decode in an entry
 * (ARCHIVE_WARN).
 */
IMGFS_API
int imgfs_tar_next(struct imgfs_tar *t, const struct imgfs_tar_options *o,
		   struct archive_entry **e, struct imgfs_error *err);

/* The libarchive handle entries and their data are read from. */
IMGFS_API
struct archive *imgfs_tar_archive(struct imgfs_tar *t);

/* Number of entries returned so far. */
IMGFS_API
unsigned long long imgfs_tar_entries(const struct imgfs_tar *t);

/* Close the input and free the reader (NULL is ignored). */
IMGFS_API
void imgfs_tar_close(struct imgfs_tar *t);

/* True when @path names a directory (the front ends pick the opener). */
IMGFS_API
bool imgfs_source_is_dir(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_SOURCE_H */
