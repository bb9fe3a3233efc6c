// SPDX-License-Identifier: MIT
/*
 * Buffered sequential image output. Large writes bypass the buffer so file
 * data is copied once, from libarchive's block straight to the kernel.
 */
#define _GNU_SOURCE /* sync_file_range */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fileio.h"
#include "writer/blkout.h"
#include "util/error.h"

#define BLKOUT_BUF (1u << 20)
/* start writeback of every this many bytes written */
#define BLKOUT_WRITEBEHIND (8u << 20)

int blkout_init(struct imgfs_blkout *o, int fd, unsigned int blkszbits,
		uint64_t start, struct imgfs_error *err)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->blkszbits = blkszbits;
	o->pos = start;
	o->buf_start = start;
	o->wb_start = start;
	o->buf_cap = BLKOUT_BUF;
	o->buf = malloc(o->buf_cap);
	if (!o->buf)
		return error_set(err, -ENOMEM, "out of memory");
	return 0;
}

void blkout_free(struct imgfs_blkout *o)
{
	free(o->buf);
	o->buf = NULL;
}

static int pwrite_all(int fd, const uint8_t *p, size_t len, uint64_t off,
		      struct imgfs_error *err)
{
	int ret = pwrite_full(fd, p, len, off);

	if (ret)
		return error_set(err, ret, "writing image at offset %llu: %s",
				 (unsigned long long)off, strerror(-ret));
	return 0;
}

/*
 * The image is fsynced once complete; starting writeback as data streams in
 * lets the disk work while the tar is still being read, so that final fsync
 * finds little left to do. An image that will not be synced is left to the
 * kernel's own writeback. Advisory: a descriptor that cannot do it (a pipe,
 * some filesystems) just does not.
 */
static void write_behind(struct imgfs_blkout *o, uint64_t end)
{
	if (o->no_write_behind || end < o->wb_start + BLKOUT_WRITEBEHIND)
		return;
	sync_file_range(o->fd, (off_t)o->wb_start,
			(off_t)(end - o->wb_start), SYNC_FILE_RANGE_WRITE);
	o->wb_start = end;
}

int blkout_flush(struct imgfs_blkout *o, struct imgfs_error *err)
{
	int ret = 0;

	if (o->buf_len) {
		ret = pwrite_all(o->fd, o->buf, o->buf_len, o->buf_start, err);
		if (!ret)
			write_behind(o, o->buf_start + o->buf_len);
	}
	o->buf_start = o->pos;
	o->buf_len = 0;
	return ret;
}

int blkout_write(struct imgfs_blkout *o, const void *p, size_t len,
		 struct imgfs_error *err)
{
	int ret;

	if (o->tap) {
		ret = o->tap(o->tap_arg, p, len, err);
		if (ret)
			return ret;
	}
	if (o->buf_len + len > o->buf_cap) {
		ret = blkout_flush(o, err);
		if (ret)
			return ret;
		if (len >= o->buf_cap / 2) {
			ret = pwrite_all(o->fd, p, len, o->pos, err);
			if (ret)
				return ret;
			o->pos += len;
			o->buf_start = o->pos;
			write_behind(o, o->pos);
			return 0;
		}
	}
	memcpy(o->buf + o->buf_len, p, len);
	o->buf_len += len;
	o->pos += len;
	return 0;
}

int blkout_zero(struct imgfs_blkout *o, uint64_t len, struct imgfs_error *err)
{
	if (o->tap && len) {
		int ret = o->tap(o->tap_arg, NULL, len, err);

		if (ret)
			return ret;
	}
	/* Long runs of zeros become a hole in the image file. */
	if (len >= o->buf_cap) {
		int ret = blkout_flush(o, err);

		if (ret)
			return ret;
		o->pos += len;
		o->buf_start = o->pos;
		if (ftruncate(o->fd, (off_t)o->pos) < 0)
			return error_set(err, -errno, "extending image: %s",
					 strerror(errno));
		return 0;
	}
	while (len) {
		size_t room = o->buf_cap - o->buf_len;
		size_t n = len < room ? (size_t)len : room;

		if (!n) {
			int ret = blkout_flush(o, err);

			if (ret)
				return ret;
			continue;
		}
		memset(o->buf + o->buf_len, 0, n);
		o->buf_len += n;
		o->pos += n;
		len -= n;
	}
	return 0;
}

int blkout_pad(struct imgfs_blkout *o, struct imgfs_error *err)
{
	uint64_t bs = 1ull << o->blkszbits;
	uint64_t rem = o->pos & (bs - 1);

	if (!rem)
		return 0;
	o->pad_bytes += bs - rem;
	return blkout_zero(o, bs - rem, err);
}
