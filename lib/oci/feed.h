/* SPDX-License-Identifier: MIT */
/*
 * oci/feed.h - a layer blob decoded once on a thread of its own, verified
 * as it goes, and read by as many tar readers as need it (feed.c).
 */
#ifndef IMGFS_OCI_FEED_H
#define IMGFS_OCI_FEED_H

#include <pthread.h>

#include <archive.h>

#include "oci/internal.h"
#include "util/decoder.h"

struct readahead;

/* How the blob's bytes become the plain stream. */
enum oci_feed_mode {
	FEED_START, /* not read yet */
	FEED_RAW, /* stored plain, or not to be decompressed */
	FEED_DECODER, /* gzip or zstd: util/decoder.h */
	FEED_ARCHIVE, /* any other compression libarchive knows */
	FEED_EMPTY, /* compressed, and empty once decompressed */
};

#define OCI_FEED_READERS 2

struct oci_feed {
	struct oci_blob_reader blob;
	struct readahead *ra;
	unsigned int readers;
	bool handed[OCI_FEED_READERS]; /* reader i has its tar reader */
	bool decompress;
	enum oci_feed_mode mode;
	struct decoder dec;
	struct archive *a;
	/* the blob as stored, read ahead (and hashed) on a thread of its own */
	struct readahead *raw;
	struct imgfs_error raw_err; /* why reading it failed */
	const uint8_t *pend; /* its bytes taken and not used yet */
	size_t pend_len;
	/* decompress: the uncompressed bytes are hashed by a reader of the
	 * ring of their own, on a thread of its own */
	struct oci_hash *plain;
	struct oci_digest plain_digest; /* decompress: the diffID */
	pthread_t hasher;
	bool hasher_running;
	struct imgfs_error err; /* why the stream failed */
	/* called by the thread after each read with the bytes read so far */
	void (*on_read)(void *arg, uint64_t bytes);
	void *on_read_arg;
};

/*
 * Start decoding blob @d of @root (as stored unless @decompress) for
 * @readers (up to OCI_FEED_READERS) tar readers, calling @on_read (may be
 * NULL) with @arg as it reads. With no reader, the blob is only read
 * through and checked.
 */
int oci_feed_start(struct oci_feed *f, const char *root,
		   const struct oci_digest *d, uint64_t size, bool decompress,
		   unsigned int readers, void (*on_read)(void *, uint64_t),
		   void *arg, struct imgfs_error *err);

/*
 * The tar reader of reader @reader, named @name in messages: each reader
 * reads in a thread of its own and closes its tar reader as soon as it
 * stops reading, or the others wait for ever. NULL with @err set (the
 * reader has left then).
 */
struct imgfs_tar *oci_feed_tar(struct oci_feed *f, unsigned int reader,
			       const char *name, struct imgfs_error *err);

/*
 * Every tar reader closed: read the rest of the blob and wait for the
 * threads. 0 when the whole blob had its digest and size (f->plain_digest
 * then holds the uncompressed bytes' digest; @err is left as it was),
 * else the error, which replaces whatever @err held (a corrupted blob is
 * the cause of what its readers saw): it names the blob. @err may be
 * NULL.
 */
int oci_feed_end(struct oci_feed *f, struct imgfs_error *err);

/*
 * After oci_feed_end() returned 0 for a decompressed stream: 0 when its
 * digest is @diff_id, else -EBADMSG with @err naming the layer @blob.
 */
int oci_feed_check_diff_id(const struct oci_feed *f,
			   const struct oci_digest *blob,
			   const struct oci_digest *diff_id,
			   struct imgfs_error *err);

#endif /* IMGFS_OCI_FEED_H */
