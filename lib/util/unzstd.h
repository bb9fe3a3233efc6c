/* SPDX-License-Identifier: MIT */
/*
 * unzstd.h - checked zstd decoding of a whole input (not installed): its
 * frames one after the other (skippable ones included), each frame's
 * content checksum verified where it has one, nothing but frames allowed,
 * and an input that stops inside a frame reported as truncated.
 */
#ifndef IMGFS_UNZSTD_H
#define IMGFS_UNZSTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/gunzip.h" /* struct imgfs_raw_input */

struct imgfs_unzstd_stream {
	void *dctx; /* ZSTD_DStream */
	struct imgfs_raw_input raw;
	bool done;
	bool between; /* at a frame boundary: the last frame ended */
};

int unzstd_stream_init(struct imgfs_unzstd_stream *s, imgfs_gunzip_in_fn in,
		       void *arg);
void unzstd_stream_end(struct imgfs_unzstd_stream *s);
/*
 * Up to @size decoded bytes into @out: their count, 0 at the end of the
 * last frame, -errno from the input callback, or -EINVAL with @msg set.
 */
long unzstd_read(struct imgfs_unzstd_stream *s, uint8_t *out, size_t size,
		 char *msg, size_t msglen);
/* Whether @p (@n bytes) starts like a zstd frame. */
bool unzstd_magic(const uint8_t *p, size_t n);

#endif /* IMGFS_UNZSTD_H */
