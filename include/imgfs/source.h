/* SPDX-License-Identifier: MIT */
/*
 * imgfs/source.h - opening the inputs of a conversion with libarchive.
 *
 * A source is a libarchive read handle. Tar layers (plain, gzip, zstd, xz,
 * bzip2, lz4; V7, ustar, pax, GNU) are opened with every format and filter
 * enabled, so compression is detected from the bytes. A directory is read
 * through libarchive's disk reader, which yields the same entry objects,
 * xattrs and ACLs included.
 */
#ifndef IMGFS_SOURCE_H
#define IMGFS_SOURCE_H

#include <stdbool.h>

#include "imgfs/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct archive;

/*
 * Open the tar stream at @path ("-" reads standard input). Returns a new
 * handle owned by the caller (free with archive_read_free()), or NULL with
 * @err set.
 */
struct archive *imgfs_source_open_tar(const char *path,
				      struct imgfs_error *err);

/* True when @path names a directory (the front ends pick the opener). */
bool imgfs_source_is_dir(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_SOURCE_H */
