/* SPDX-License-Identifier: MIT */
/*
 * source/tar.h - what the library needs of a tar stream beyond its
 * entries: for tar-index images a byte-for-byte copy of the uncompressed
 * stream and its length; for names as archived, an entry's header blocks.
 */
#ifndef IMGFS_SOURCE_TAR_H
#define IMGFS_SOURCE_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/error.h"
#include "imgfs/source.h"

struct archive;
struct archive_entry;

/*
 * Advance to the next entry. Whatever the caller left unread of the
 * previous entry's data is skipped. Returns 1 with *@e set (owned by the
 * reader, valid until the next call; read its data with
 * archive_read_data_block() on tar_archive()), 0 at the end of the
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
int tar_next(struct imgfs_tar *t, const struct imgfs_tar_options *o,
	     struct archive_entry **e, struct imgfs_error *err);

struct readahead;

/*
 * A reader of the plain tar stream that someone else decodes into @ra,
 * as its reader @reader (left when the reader is closed). @compressed
 * says whether the stream was (for messages), @name names it, and @why
 * (the decoder's, read once @ra failed) says why it failed. NULL with
 * @err set when memory is lacking or the stream failed at once; the
 * reader has left @ra then.
 */
struct imgfs_tar *tar_open_shared(struct readahead *ra, unsigned int reader,
				  bool compressed, const char *name,
				  const struct imgfs_error *why,
				  struct imgfs_error *err);

/* The libarchive handle @t's entries and their data are read from. */
struct archive *tar_archive(struct imgfs_tar *t);

/*
 * From now on write every uncompressed byte of @t's stream to @fd (left
 * open) at its own offset, up to the end of the input (bytes after the
 * end-of-archive marker included). Only before the first entry is read.
 */
int tar_copy_to(struct imgfs_tar *t, int fd, struct imgfs_error *err);

/* Uncompressed bytes read so far: once the stream is done, its length. */
uint64_t tar_plain_bytes(const struct imgfs_tar *t);

/*
 * Bytes of the input read so far, as stored (compressed or not): a
 * progress measure; *@size is the input's size when it is a regular
 * file, else 0.
 */
uint64_t tar_input_bytes(const struct imgfs_tar *t, uint64_t *size);

/*
 * The header blocks of the entry tar_next() returned last (pax, long
 * name and its own header), as archived; NULL when none are kept.
 */
const uint8_t *tar_entry_headers(const struct imgfs_tar *t, size_t *len);

/*
 * Give @e the path and link target that the pax records among its header
 * blocks [@hdr, @hdr + @len) set, byte for byte (libarchive converts
 * them): 0 or -ENOMEM.
 */
int tar_raw_pax_names(const uint8_t *hdr, size_t len,
		      struct archive_entry *e);

#endif /* IMGFS_SOURCE_TAR_H */
