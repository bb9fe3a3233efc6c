// SPDX-License-Identifier: MIT
/*
 * What the libarchive sources share: an entry's data read block by block
 * from the handle it came from, and a source whose entries the caller
 * picks itself (lib/stack reads its layers and spill that way).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "source/convert.h"
#include "util/error.h"

const struct iter_entry *la_iter_take(struct la_iter *l, struct archive *a,
				      struct archive_entry *ae,
				      struct imgfs_error *err)
{
	l->a = a;
	l->path = archive_entry_pathname(ae);
	l->data_read = 0;
	entry_conv_set(&l->conv, a, ae, l->path, err);
	return &l->conv.out;
}

int la_iter_read(struct entry_iter *it, struct iter_block *b,
		 struct imgfs_error *err)
{
	struct la_iter *l = (struct la_iter *)it;
	la_int64_t off;
	const char *msg;
	int r;

	r = archive_read_data_block(l->a, &b->buf, &b->len, &off);
	if (r == ARCHIVE_EOF)
		return 0;
	if (r != ARCHIVE_OK) {
		msg = archive_error_string(l->a);
		return error_set(err, -EIO, "%s: reading data: %s", l->path,
				 msg ? msg : "unknown error");
	}
	b->off = off;
	/* what libarchive has consumed of the stream, up to the block (a
	 * disk reader has no stream: no filter to ask) */
	b->stream_off = l->stream ? (uint64_t)archive_filter_bytes(l->a, 0) : 0;
	l->data_read += b->len;
	return 1;
}

static int archive_iter_next(struct entry_iter *it, const struct iter_entry **e,
			     struct imgfs_error *err)
{
	(void)it;
	*e = NULL;
	return error_set(err, -EINVAL,
			 "entries of this source are set by its caller");
}

static void archive_iter_destroy(struct entry_iter *it)
{
	struct la_iter *l = (struct la_iter *)it;

	entry_conv_release(&l->conv);
	free(l);
}

struct entry_iter *archive_iter_new(imgfs_warn_fn warn, void *warn_arg,
				    struct imgfs_error *err)
{
	struct la_iter *l = calloc(1, sizeof(*l));

	if (!l) {
		error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	l->it.next = archive_iter_next;
	l->it.read = la_iter_read;
	l->it.destroy = archive_iter_destroy;
	l->conv.warn = warn;
	l->conv.warn_arg = warn_arg;
	return &l->it;
}

const struct iter_entry *archive_iter_set(struct entry_iter *it,
					  struct archive *a,
					  struct archive_entry *ae,
					  struct imgfs_error *err)
{
	return la_iter_take((struct la_iter *)it, a, ae, err);
}
