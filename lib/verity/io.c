// SPDX-License-Identifier: MIT
/*
 * io.c - reads and writes of data and hash areas for dm-verity and
 * fs-verity, with the messages that name the offset.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/fileio.h"
#include "verity/verity.h"

int vt_pwrite(int fd, const void *buf, size_t len, uint64_t off,
	      struct imgfs_error *err)
{
	int ret = pwrite_full(fd, buf, len, off);

	if (ret)
		return error_set(err, ret,
				 "verity: writing at offset %" PRIu64 ": %s",
				 off, strerror(-ret));
	return 0;
}

/* Read up to @len bytes; returns how many (short only at end of file). */
static ssize_t pread_some(int fd, void *buf, size_t len, uint64_t off,
			  struct imgfs_error *err)
{
	ssize_t n = pread_full(fd, buf, len, off);

	if (n < 0)
		return error_set(err, (int)n,
				 "verity: reading at offset %" PRIu64 ": %s",
				 off, strerror((int)-n));
	return n;
}

int vt_pread(int fd, void *buf, size_t len, uint64_t off, const char *what,
	     struct imgfs_error *err)
{
	ssize_t n = pread_some(fd, buf, len, off, err);

	if (n < 0)
		return n;
	if ((size_t)n < len)
		return error_set(err, -EBADMSG,
				 "verity: %s at offset %" PRIu64
				 " is past the end of the file",
				 what, off + n);
	return 0;
}

int vt_feed_fd(int fd, uint64_t size,
	       int (*feed)(void *, const void *, size_t, struct imgfs_error *),
	       void *ctx, struct imgfs_error *err)
{
	uint8_t *buf = malloc(IO_CHUNK);
	int ret = buf ? 0 : error_set(err, -ENOMEM, "verity: out of memory");

	for (uint64_t off = 0; !ret && off < size;) {
		size_t want = size - off < IO_CHUNK ? size - off : IO_CHUNK;
		ssize_t n = pread_some(fd, buf, want, off, err);

		if (n < 0)
			ret = n;
		else if (n == 0 && size != UINT64_MAX)
			ret = error_set(err, -EIO,
					"verity: the data ends at %" PRIu64
					", before %" PRIu64,
					off, size);
		else if (n == 0)
			break;
		else
			ret = feed(ctx, buf, n, err);
		off += n > 0 ? n : 0;
	}
	free(buf);
	return ret;
}
