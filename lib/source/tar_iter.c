// SPDX-License-Identifier: MIT
/*
 * A tar stream as a source of entries (source/iter.h): tar_next()
 * with its end-of-archive rules, each entry converted, its data and the
 * stream offsets tar-index images name.
 */
#include <errno.h>
#include <stdlib.h>

#include <archive.h>
#include <archive_entry.h>

#include "imgfs/source.h"
#include "source/convert.h"
#include "source/tar.h"
#include "util/error.h"

struct tar_iter {
	struct la_iter l;
	struct imgfs_tar *t;
	struct imgfs_tar_options o;
};

static int tar_iter_next(struct entry_iter *it, const struct iter_entry **e,
			 struct imgfs_error *err)
{
	struct tar_iter *ti = (struct tar_iter *)it;
	struct archive_entry *ae;
	int r;

	*e = NULL;
	entry_conv_release(&ti->l.conv);
	r = tar_next(ti->t, &ti->o, &ae, err);
	if (r <= 0)
		return r;
	*e = la_iter_take(&ti->l, tar_archive(ti->t), ae, err);
	return 1;
}

static int tar_iter_copy_to(struct entry_iter *it, int fd,
			    struct imgfs_error *err)
{
	return tar_copy_to(((struct tar_iter *)it)->t, fd, err);
}

static uint64_t tar_iter_stream_bytes(const struct entry_iter *it)
{
	return tar_plain_bytes(((const struct tar_iter *)it)->t);
}

static void tar_iter_destroy(struct entry_iter *it)
{
	struct tar_iter *ti = (struct tar_iter *)it;

	entry_conv_release(&ti->l.conv);
	free(ti);
}

struct entry_iter *tar_iter_new(struct imgfs_tar *t,
				const struct imgfs_tar_options *o,
				struct imgfs_error *err)
{
	struct tar_iter *ti = calloc(1, sizeof(*ti));

	if (!ti) {
		error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	ti->t = t;
	ti->o = *o;
	ti->l.conv.warn = o->warn;
	ti->l.conv.warn_arg = o->warn_arg;
	ti->l.stream = true;
	ti->l.it.next = tar_iter_next;
	ti->l.it.read = la_iter_read;
	ti->l.it.copy_to = tar_iter_copy_to;
	ti->l.it.stream_bytes = tar_iter_stream_bytes;
	ti->l.it.destroy = tar_iter_destroy;
	return &ti->l.it;
}
