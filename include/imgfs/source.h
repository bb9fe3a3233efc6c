/* SPDX-License-Identifier: MIT */
/*
 * imgfs/source.h - opening the inputs of a conversion.
 *
 * A tar layer (plain, gzip, zstd, xz, bzip2, lz4; V7, ustar, pax, GNU) is
 * opened as a struct imgfs_tar: compression is detected from the bytes and
 * decoded first, then the plain stream is parsed as tar, so that where the
 * archive ends can be told apart from where the input ends. Hand it to
 * imgfs_writer_add_tar() or to a struct imgfs_layer_opener (imgfs/stack.h);
 * mkfs.img and fsck.img --compare read its entries with the same rules.
 * A directory is given to imgfs_writer_add_directory() by its path.
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

struct imgfs_tar;

/*
 * How a tar stream may end. The archive ends at its end-of-archive marker
 * (zero blocks); nothing after it is parsed as entries (a second archive
 * appended with cat is not read), but the input is read to its end so
 * that compression trailers are checked, and non-zero bytes there are
 * reported as a warning. A stream that ends at an entry boundary without
 * the marker (as some producers write them) is read with one warning
 * naming the last entry, or is an error with @require_end; an empty input
 * is an error unless @allow_missing_end; one that ends inside an entry's
 * headers or data is always an error, and so are bytes after the end of
 * a compressed stream and a damaged header.
 */
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
