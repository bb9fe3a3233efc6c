/* SPDX-License-Identifier: MIT */
/*
 * blkout.h - sequential, buffered output of an image file.
 *
 * The writer produces the image front to back (data as it streams in, then
 * metadata), so one cursor and one buffer suffice; the superblock is
 * written last with a positioned write.
 */
#ifndef IMGFS_BLKOUT_H
#define IMGFS_BLKOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/error.h"

struct imgfs_blkout {
	int fd;
	unsigned int blkszbits;
	uint64_t pos; /* logical end of what was written (bytes) */
	uint64_t buf_start; /* file offset of buf[0] */
	uint64_t wb_start; /* writeback not yet started from here */
	bool no_write_behind; /* the image is not synced: leave writeback be */
	uint64_t pad_bytes; /* zeros blkout_pad() added */
	uint8_t *buf;
	size_t buf_len;
	size_t buf_cap;
	/*
	 * Sees every byte appended, in order, as it is appended (@p NULL:
	 * @len zeros): the dm-verity tree is built from it. NULL: none.
	 */
	int (*tap)(void *arg, const void *p, uint64_t len,
		   struct imgfs_error *err);
	void *tap_arg;
};

int blkout_init(struct imgfs_blkout *o, int fd, unsigned int blkszbits,
		uint64_t start, struct imgfs_error *err);
void blkout_free(struct imgfs_blkout *o);

/* Append @len bytes. */
int blkout_write(struct imgfs_blkout *o, const void *p, size_t len,
		 struct imgfs_error *err);
/* Append @len zero bytes (holes inside allocated data). */
int blkout_zero(struct imgfs_blkout *o, uint64_t len, struct imgfs_error *err);
/* Zero-fill up to the next block boundary. */
int blkout_pad(struct imgfs_blkout *o, struct imgfs_error *err);
/* Write out the buffer. */
int blkout_flush(struct imgfs_blkout *o, struct imgfs_error *err);

static inline uint64_t blkout_blk(const struct imgfs_blkout *o)
{
	return o->pos >> o->blkszbits;
}

#endif /* IMGFS_BLKOUT_H */
