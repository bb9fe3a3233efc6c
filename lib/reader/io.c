// SPDX-License-Identifier: MIT
/*
 * io.c - bounds-checked reads of the image, the bottom of the reader:
 * every other file of lib/reader reads through here.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "reader/internal.h"
#include "util/error.h"
#include "util/fileio.h"

static int raw_pread(struct imgfs_image *img, void *buf, size_t len,
		     uint64_t off)
{
	ssize_t n;

	if (img->mem) {
		memcpy(buf, img->mem + off, len);
		return 0;
	}
	n = img_cache_read(img, buf, len, off);
	if (n <= 0)
		return (int)n;
	n = pread_full(img->fd, buf, len, off);
	if (n < 0)
		return (int)n;
	return (size_t)n < len ? -EIO : 0; /* file shrank under us */
}

int img_read(struct imgfs_image *img, void *buf, size_t len, uint64_t off,
	     const char *what, uint64_t nid, struct imgfs_error *err)
{
	int ret;

	if (!img_range_ok(img, off, len))
		return error_set(
			err, -IMGFS_EFSCORRUPTED,
			"nid %llu: %s at offset %llu (+%zu) is beyond the end of the image (%llu bytes)",
			(unsigned long long)nid, what, (unsigned long long)off,
			len, (unsigned long long)img->size);
	ret = raw_pread(img, buf, len, off);
	if (ret)
		return error_set(err, ret,
				 "nid %llu: reading %s at offset %llu: %s",
				 (unsigned long long)nid, what,
				 (unsigned long long)off, strerror(-ret));
	return 0;
}

int imgfs_image_pread(struct imgfs_image *img, void *buf, size_t len,
		      uint64_t off, struct imgfs_error *err)
{
	if (!img_range_ok(img, off, len))
		return error_set(
			err, -IMGFS_EFSCORRUPTED,
			"range %llu+%zu is beyond the end of the image (%llu bytes)",
			(unsigned long long)off, len,
			(unsigned long long)img->size);
	return img_read(img, buf, len, off, "data", 0, err);
}
