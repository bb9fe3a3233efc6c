// SPDX-License-Identifier: MIT
/*
 * spill.c - append-only temporary files for what the library keeps out of
 * memory: large xattr values while an image is built, hidden entries while
 * layers are flattened.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fileio.h"
#include "util/spill.h"
#include "util/tmpfile.h"

void spillfile_init(struct imgfs_spill *s, const char *prefix, const char *what)
{
	s->fd = -1;
	s->open = false;
	s->size = 0;
	s->prefix = prefix;
	s->what = what;
}

int spillfile_open(struct imgfs_spill *s, struct imgfs_error *err)
{
	const char *dir = temp_dir(NULL);

	if (s->open)
		return 0;
	s->fd = tmpfile_open(dir, s->prefix);
	if (s->fd < 0)
		return error_set(err, -errno, "creating %s in %s: %s", s->what,
				 dir, strerror(errno));
	s->open = true;
	s->size = 0;
	return 0;
}

int spillfile_append(struct imgfs_spill *s, const void *buf, size_t len,
		     uint64_t *off, struct imgfs_error *err)
{
	int ret = spillfile_open(s, err);

	if (ret)
		return ret;
	ret = pwrite_full(s->fd, buf, len, s->size);
	if (ret)
		return error_set(err, ret, "writing %s: %s", s->what,
				 strerror(-ret));
	if (off)
		*off = s->size;
	s->size += len;
	return 0;
}

int spillfile_read(const struct imgfs_spill *s, void *buf, size_t len,
		   uint64_t off, struct imgfs_error *err)
{
	ssize_t n = s->open ? pread_full(s->fd, buf, len, off) : -EBADF;

	if (n < 0 || (size_t)n < len)
		return error_set(err, n < 0 ? (int)n : -EIO, "reading %s: %s",
				 s->what,
				 n < 0 ? strerror((int)-n) : "unexpected end");
	return 0;
}

void spillfile_empty(struct imgfs_spill *s)
{
	if (s->open && s->size && !ftruncate(s->fd, 0))
		s->size = 0;
}

void spillfile_close(struct imgfs_spill *s)
{
	if (s->open)
		close(s->fd);
	s->fd = -1;
	s->open = false;
	s->size = 0;
}
