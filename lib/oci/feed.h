/* SPDX-License-Identifier: MIT */
/*
 * oci/feed.h - a layer blob streamed into a pipe, verified as it goes
 * (feed.c).
 */
#ifndef IMGFS_OCI_FEED_H
#define IMGFS_OCI_FEED_H

#include <pthread.h>

#include "oci/internal.h"

struct oci_feed {
	struct oci_blob_reader blob;
	int rfd; /* the caller reads the stream here */
	int wfd;
	/* with a tee, the same stream again: the second reader takes
	 * tee_rfd (leaving -1) and closes it when done */
	int tee_rfd;
	int tee_wfd;
	bool decompress;
	bool sink_closed;
	bool tee_closed;
	bool running;
	pthread_t thread;
	char *inbuf;
	size_t pending; /* peeked bytes at the start of inbuf */
	struct oci_hash *plain;
	struct oci_digest plain_digest; /* decompress: the diffID */
	uint64_t plain_size;
	int ret;
	struct imgfs_error err;
	/* called by the thread after each read with the bytes read so far */
	void (*on_read)(void *arg, uint64_t bytes);
	void *on_read_arg;
};

/* Start streaming blob @d of @root into f->rfd. */
int oci_feed_start(struct oci_feed *f, const char *root,
		   const struct oci_digest *d, uint64_t size, bool decompress,
		   struct imgfs_error *err);
/*
 * The same, calling @on_read(@arg, bytes read so far) as it reads, and
 * with @tee writing every byte to f->tee_rfd too. The two readers must
 * read apart (each in a thread of its own), and each close its end as
 * soon as it stops reading (oci_feed_close_reader() for f->rfd), or the
 * other waits for ever.
 */
int oci_feed_start_cb(struct oci_feed *f, const char *root,
		      const struct oci_digest *d, uint64_t size,
		      bool decompress, bool tee,
		      void (*on_read)(void *, uint64_t), void *arg,
		      struct imgfs_error *err);
/* Close the reading end f->rfd now (the other reader goes on). */
void oci_feed_close_reader(struct oci_feed *f);
/*
 * Close the reading ends, wait for the thread: 0 when the whole blob had
 * its digest and size (f->plain_digest then holds the uncompressed
 * bytes' digest), else the error (@err set, naming the blob).
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
