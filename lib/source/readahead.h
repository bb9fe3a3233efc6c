/* SPDX-License-Identifier: MIT */
/*
 * source/readahead.h - a plain (decoded) stream produced on a thread of
 * its own into a ring of equal chunks, for one reader or several. The
 * thread reads the stream through a callback; each reader takes the
 * chunks in order and holds the last two it took (the tar reader looks
 * back one chunk to tell the end-of-archive marker from the end of the
 * input). A slot is filled again once every reader is past it, so
 * readers share the bytes instead of each getting a copy: an OCI layer
 * is decoded once for the writer and the comparison that checks it.
 * A stream that is not compressed has nothing to decode: moving its
 * bytes to another thread costs more than it gives, so a local plain
 * tar is read without one.
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
 * readahead_free) in chunks of @chunk bytes, at most @nslots (3 or more
 * per reader) of them buffered, for @readers readers numbered from 0
 * (none: the stream is only read through). NULL with errno set when
 * memory or a thread is lacking.
 */
struct readahead *readahead_start(readahead_fill_fn fill, void *arg,
				  size_t chunk, unsigned int nslots,
				  unsigned int readers);

/*
 * Reader @reader's next chunk: *@buf stays valid until its call after
 * next. Every chunk holds @chunk bytes but the last, which sets *@end
 * (it may be empty; a call after it gives an empty one again).
 * -1 when decoding failed: the fill callback's owner says why, and its
 * message may be read now.
 */
int readahead_next(struct readahead *r, unsigned int reader,
		   const uint8_t **buf, size_t *len, bool *end);

/*
 * Reader @reader reads no more: the thread no longer waits for it (its
 * chunks are no longer valid). Once every reader left, the thread reads
 * the rest of the stream on its own.
 */
void readahead_leave(struct readahead *r, unsigned int reader);

/*
 * Every reader left: wait until the thread has read the stream to its
 * end. 0, or -1 when the fill callback failed.
 */
int readahead_finish(struct readahead *r);

/*
 * Stop the thread (cancelled only where the fill callback allows it, see
 * source/tar.c) and free @r (NULL is ignored).
 */
void readahead_free(struct readahead *r);

#endif
