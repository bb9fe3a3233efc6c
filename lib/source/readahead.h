/* SPDX-License-Identifier: MIT */
/*
 * source/readahead.h - a tar stream's decoding on a thread of its own.
 * The thread reads the decoded (plain) stream through a callback into a
 * ring of equal chunks; the tar reader takes them in order and holds the
 * last two it took (it looks back one chunk to tell the
 * end-of-archive marker from the end of the input). Decoding and
 * conversion then run on two cores. A stream that is not compressed has
 * nothing to decode: moving its bytes to another thread costs more than
 * it gives (a layer of an OCI layout already arrives decoded by a thread
 * of its own), so it is read without one.
 */
#ifndef IMGFS_SOURCE_READAHEAD_H
#define IMGFS_SOURCE_READAHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct readahead;

/*
 * What the thread does for each chunk: fill @p with the next @chunk plain
 * bytes, fewer at the end (*@end set); the length, or -1 when decoding
 * failed (the callback's owner keeps the message).
 */
typedef long (*readahead_fill_fn)(void *arg, uint8_t *p, size_t chunk,
				  bool *end);

/*
 * Start reading with @fill(@arg, ...) (which nobody else calls until
 * readahead_free) in chunks of @chunk bytes, at most @nslots (3 or more)
 * of them buffered. NULL with errno set when memory or a thread is lacking.
 */
struct readahead *readahead_start(readahead_fill_fn fill, void *arg,
				  size_t chunk, unsigned int nslots);

/*
 * The next chunk: *@buf stays valid until the call after next. Every chunk
 * holds @chunk bytes but the last, which sets *@end (it may be empty;
 * a call after it gives an empty one again).
 * -1 when decoding failed: the fill callback's owner says why, and its
 * message may be read now.
 */
int readahead_next(struct readahead *r, const uint8_t **buf, size_t *len,
		   bool *end);

/* Stop the thread (it is cancelled only while it waits for input). */
void readahead_free(struct readahead *r);

#endif
