// SPDX-License-Identifier: MIT
/*
 * Entries from a source (source/iter.h: a tar stream, a directory tree,
 * the entries lib/stack picks), handed to the entry calls, their data
 * streamed through imgfs_writer_append(). What the writer's options say
 * of an entry is settled here (file flags, the data's order and bounds,
 * where it lies in a tar for tar-index images); what the source's format
 * says (conversion, names) is the source's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "source/iter.h"
#include "util/error.h"
#include "writer/intake.h"
#include "writer/internal.h"

/*
 * File flags cannot be stored (lib/source/fflags.c says which are
 * internal and dropped silently). Those a user set are dropped with one
 * warning at finish, or refused.
 */
static int check_file_flags(struct imgfs_writer *w, const char *text,
			    const char *path, struct imgfs_error *err)
{
	char user[256];

	if (!text || !*text || w->opts.ignore_file_flags ||
	    w->opts.file_flags == IMGFS_FILE_FLAGS_IGNORE ||
	    !fflags_user(text, user, sizeof(user)))
		return 0;
	if (w->opts.file_flags == IMGFS_FILE_FLAGS_ERROR)
		return error_set(
			err, -EOPNOTSUPP,
			"%s: file flags (%s) cannot be stored in EROFS", path,
			user);
	fflags_tally_add(&w->fflags, path, user);
	return 0;
}

void writer_warn_file_flags(struct imgfs_writer *w)
{
	fflags_tally_warn(&w->fflags,
			  "file flags EROFS cannot store were dropped from",
			  w->opts.warn, w->opts.warn_arg);
}

/*
 * Sources hand data blocks (and a sparse map) out as they were
 * archived: they must come in increasing order, apart, and inside the
 * file, or the file would be stored as something else than it reads back
 * as.
 */
static int check_block(const struct imgfs_entry *ie, int64_t off, size_t len,
		       uint64_t pos, struct imgfs_error *err)
{
	bool outside = len > ie->size ||
		       (off >= 0 && (uint64_t)off > ie->size - len);

	if (!ie->nr_sparse) {
		if (off < 0 || (uint64_t)off < pos || outside)
			return error_set(
				err, -EIO,
				"%s: data block at offset %lld out of order or beyond the file size",
				ie->path, (long long)off);
		return 0;
	}
	if (off < 0 || (uint64_t)off < pos)
		return error_set(
			err, -EINVAL,
			"%s: sparse map out of order or overlapping: data at offset %lld after data up to offset %llu",
			ie->path, (long long)off, (unsigned long long)pos);
	if (outside)
		return error_set(
			err, -EINVAL,
			"%s: sparse map reaches beyond the file size (%llu bytes): %zu bytes at offset %lld",
			ie->path, (unsigned long long)ie->size, len,
			(long long)off);
	return 0;
}

/* Stream the entry's data blocks into the open file; gaps are skipped. */
static int copy_data(struct imgfs_writer *w, struct entry_iter *it,
		     const struct imgfs_entry *ie, struct imgfs_error *err)
{
	struct iter_block b;
	uint64_t pos = 0;
	int r, ret;

	while ((r = it->read(it, &b, err)) > 0) {
		ret = check_block(ie, b.off, b.len, pos, err);
		if (!ret && (uint64_t)b.off > pos)
			ret = imgfs_writer_skip(w, (uint64_t)b.off - pos, err);
		/* tar index: the block's place in the (uncompressed) tar */
		if (!ret && w->opts.tar_index)
			w->tar_pos = (int64_t)b.stream_off;
		if (!ret)
			ret = imgfs_writer_append(w, b.buf, b.len, err);
		if (ret)
			return ret;
		pos = (uint64_t)b.off + b.len;
	}
	if (r < 0)
		return r;
	/* a file that ends in a hole */
	return imgfs_writer_skip(w, ie->size - pos, err);
}

static int add_converted(struct imgfs_writer *w, struct entry_iter *it,
			 const struct imgfs_entry *ie, struct imgfs_error *err)
{
	int ret;

	if (ie->hardlink || (ie->mode & 0170000) != 0100000)
		return imgfs_writer_add_entry(w, ie, err);
	ret = imgfs_writer_begin_file(w, ie, err);
	if (!ret && ie->size && writer_file_keeps_data(w))
		ret = copy_data(w, it, ie, err);
	if (!ret)
		ret = imgfs_writer_end_file(w, err);
	return ret;
}

int writer_take(struct imgfs_writer *w, struct entry_iter *it,
		const struct iter_entry *e, struct imgfs_error *err)
{
	const char *path = e->e.path;
	int ret;

	if (!path) {
		w->failed = true;
		return error_set(err, -EINVAL,
				 "entry %llu: path name cannot be decoded",
				 (unsigned long long)w->entries + 1);
	}
	ret = check_file_flags(w, e->fflags, path, err);
	/* the conversion's error, said when it was found, comes second */
	if (!ret && e->bad)
		ret = e->bad;
	if (!ret)
		ret = add_converted(w, it, &e->e, err);
	if (ret)
		w->failed = true;
	return ret;
}

int writer_read_iter(struct imgfs_writer *w, struct entry_iter *it,
		     struct imgfs_error *err)
{
	const struct iter_entry *e;
	int r;

	while ((r = it->next(it, &e, err)) > 0) {
		r = writer_take(w, it, e, err);
		if (r)
			return r;
	}
	return r;
}
