// SPDX-License-Identifier: MIT
/*
 * Hidden entries kept while their layer is read (stack/links.h). They go
 * to the spill file as a pax tar stream, through libarchive's writer, so
 * that everything an archive entry carries (xattrs, ACLs, sparse maps,
 * file flags, times) comes back exactly through libarchive's reader, the
 * same way the layer gave it, and memory holds no copy of their headers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "stack/links.h"
#include "util/fileio.h"
#include "util/spill.h"
#include "util/vec.h"
#include "util/error.h"

#define SPILL_CHUNK (64u * 1024u)

static uint64_t path_hash(const char *path)
{
	return hash_bytes(0, path, strlen(path));
}

static bool saved_eq(const struct imgfs_hnode *n, const void *key)
{
	return !strcmp(imgfs_container_of(n, struct stack_saved, hnode)->path,
		       key);
}

void stack_links_init(struct stack_links *l)
{
	memset(l, 0, sizeof(*l));
	spillfile_init(&l->spill_file, "imgfs-flatten",
		       "the temporary file for hidden entries");
}

void stack_links_forget(struct stack_saved *s)
{
	free(s->alias);
	free(s->shown);
	s->alias = NULL;
	s->shown = NULL;
}

static void saved_free(struct stack_saved *s)
{
	stack_links_forget(s);
	for (size_t i = 0; i < s->nr_pending; i++)
		free(s->pending[i]);
	free(s->pending);
	free(s);
}

static void spill_writer_free(struct stack_links *l)
{
	if (l->spill)
		archive_write_free(l->spill);
	l->spill = NULL;
}

void stack_links_reset(struct stack_links *l)
{
	while (l->all) {
		struct stack_saved *next = l->all->next_all;

		saved_free(l->all);
		l->all = next;
	}
	hashtab_free(&l->tab);
	memset(&l->tab, 0, sizeof(l->tab));
	stack_links_done(l);
	spill_writer_free(l);
	/* the next layer starts from an empty file (or, should truncating
	 * fail, after what is there) */
	spillfile_empty(&l->spill_file);
}

void stack_links_free(struct stack_links *l)
{
	stack_links_reset(l);
	spillfile_close(&l->spill_file);
	free(l->buf);
	stack_links_init(l);
}

struct stack_saved *stack_links_find(const struct stack_links *l,
				     const char *path)
{
	struct imgfs_hnode *n =
		hashtab_find(&l->tab, path_hash(path), saved_eq, path);

	return n ? imgfs_container_of(n, struct stack_saved, hnode) : NULL;
}

struct stack_saved *stack_links_get(struct stack_links *l, const char *path,
				    struct imgfs_error *err)
{
	struct stack_saved *s = stack_links_find(l, path);
	size_t len = strlen(path);

	if (s)
		return s;
	s = calloc(1, sizeof(*s) + len + 1);
	if (!s || hashtab_insert(&l->tab, &s->hnode, path_hash(path))) {
		free(s);
		error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	memcpy(s->path, path, len + 1);
	s->next_all = l->all;
	l->all = s;
	return s;
}

static la_ssize_t spill_write(struct archive *a, void *arg, const void *buf,
			      size_t len)
{
	struct stack_links *l = arg;
	struct imgfs_error err = { 0 };

	/* libarchive's writer hands its errors back through the handle */
	if (spillfile_append(&l->spill_file, buf, len, NULL, &err)) {
		archive_set_error(a, -err.code, "%s", err.msg);
		return -1;
	}
	return (la_ssize_t)len;
}

/* The spill file and its tar writer, made when first needed. */
static int spill_open(struct stack_links *l, struct imgfs_error *err)
{
	int ret = spillfile_open(&l->spill_file, err);

	if (ret)
		return ret;
	if (l->spill)
		return 0;
	l->spill = archive_write_new();
	/* no blocking: each entry's bytes are in the file once written */
	if (!l->spill || archive_write_set_format_pax(l->spill) ||
	    archive_write_set_bytes_per_block(l->spill, 0) ||
	    archive_write_open(l->spill, l, NULL, spill_write, NULL)) {
		spill_writer_free(l);
		return error_set(
			err, -ENOMEM,
			"temporary file for hidden entries: cannot start its tar writer");
	}
	return 0;
}

/*
 * The tar writer takes a file's whole content in order and leaves out
 * what its sparse map calls holes: gaps between the data blocks (and
 * after the last) are given as zeros, which it skips.
 */
static int write_zeros(struct stack_links *l, uint64_t len, const char *name,
		       struct imgfs_error *err)
{
	static const uint8_t zeros[65536];

	while (len) {
		size_t n = len > sizeof(zeros) ? sizeof(zeros) : (size_t)len;

		if (archive_write_data(l->spill, zeros, n) < 0)
			return error_set(err, -EIO, "%s: keeping it: %s", name,
					 archive_error_string(l->spill));
		len -= n;
	}
	return 0;
}

static int copy_data(struct stack_links *l, struct archive *a,
		     struct archive_entry *e, const char *name,
		     struct imgfs_error *err)
{
	uint64_t pos = 0, size = (uint64_t)archive_entry_size(e);
	const void *buf;
	const char *msg;
	size_t len;
	int64_t off;
	int r, ret;

	while ((r = archive_read_data_block(a, &buf, &len, &off)) ==
	       ARCHIVE_OK) {
		if (off < 0 || (uint64_t)off < pos)
			return error_set(
				err, -EIO,
				"%s: data block at offset %lld out of order",
				name, (long long)off);
		ret = write_zeros(l, (uint64_t)off - pos, name, err);
		if (ret)
			return ret;
		if (archive_write_data(l->spill, buf, len) < 0) {
			msg = archive_error_string(l->spill);
			return error_set(err, -EIO, "%s: keeping it: %s", name,
					 msg ? msg : "write error");
		}
		pos = (uint64_t)off + len;
	}
	if (r != ARCHIVE_EOF) {
		msg = archive_error_string(a);
		return error_set(err, -EIO, "%s: reading data: %s", name,
				 msg ? msg : "unknown error");
	}
	return pos < size ? write_zeros(l, size - pos, name, err) : 0;
}

/*
 * The bytes of holes the tar writer would have to be given for @e: its
 * apparent size less the data its sparse map names (0 if not sparse).
 */
static uint64_t hole_bytes(struct archive_entry *e)
{
	uint64_t size = (uint64_t)archive_entry_size(e), data = 0;
	la_int64_t o, n;

	if (archive_entry_sparse_reset(e) <= 0)
		return 0;
	while (archive_entry_sparse_next(e, &o, &n) == ARCHIVE_OK)
		if (n > 0)
			data += (uint64_t)n;
	return data < size ? size - data : 0;
}

int stack_links_save(struct stack_links *l, struct archive *a,
		     struct archive_entry *e, const char *name, uint64_t *off,
		     struct imgfs_error *err)
{
	int ret;

	*off = STACK_UNSAVED;
	/* a huge sparse file would take for ever to pass as zeros: its
	 * data is skipped, as any hidden data (a link to it is an error) */
	if (hole_bytes(e) > STACK_SPILL_HOLES_MAX)
		return 0;
	ret = spill_open(l, err);
	if (ret)
		return ret;
	*off = l->spill_file.size;
	if (archive_write_header(l->spill, e) < ARCHIVE_WARN) {
		/* not kept: an error only if a link of the layer needs it */
		*off = STACK_UNSAVED;
		spill_writer_free(l);
		return 0;
	}
	ret = copy_data(l, a, e, name, err);
	if (!ret && archive_write_finish_entry(l->spill) < ARCHIVE_WARN)
		ret = error_set(err, -EIO, "%s: keeping it: %s", name,
				archive_error_string(l->spill));
	return ret;
}

static la_ssize_t spill_read(struct archive *a, void *arg, const void **buf)
{
	struct stack_links *l = arg;
	ssize_t n =
		pread_full(l->spill_file.fd, l->buf, SPILL_CHUNK, l->back_pos);

	if (n < 0) {
		archive_set_error(a, (int)-n, "temporary file: %s",
				  strerror((int)-n));
		return -1;
	}
	l->back_pos += (uint64_t)n;
	*buf = l->buf;
	return n;
}

int stack_links_load(struct stack_links *l, uint64_t off, struct archive **a,
		     struct archive_entry **e, struct imgfs_error *err)
{
	const char *msg;

	stack_links_done(l);
	if (!l->buf && !(l->buf = malloc(SPILL_CHUNK)))
		return error_set(err, -ENOMEM, "out of memory");
	l->back = archive_read_new();
	l->back_pos = off;
	if (!l->back || archive_read_support_format_tar(l->back) ||
	    archive_read_open(l->back, l, NULL, spill_read, NULL) ||
	    archive_read_next_header(l->back, e) != ARCHIVE_OK) {
		msg = l->back ? archive_error_string(l->back) : NULL;
		error_set(
			err, -EIO,
			"reading back a hidden entry from the temporary file: %s",
			msg ? msg : "out of memory");
		stack_links_done(l);
		return err->code;
	}
	*a = l->back;
	return 0;
}

void stack_links_done(struct stack_links *l)
{
	if (l->back)
		archive_read_free(l->back);
	l->back = NULL;
}

int stack_links_alias(struct stack_saved *s, const char *target,
		      struct imgfs_error *err)
{
	char *copy = strdup(target);

	if (!copy)
		return error_set(err, -ENOMEM, "out of memory");
	stack_links_forget(s);
	s->alias = copy;
	return 0;
}

int stack_links_wait(struct stack_saved *s, const char *path,
		     struct imgfs_error *err)
{
	char *copy = strdup(path);

	if (!copy || IMGFS_VEC_RESERVE(s->pending, s->cap_pending,
				       s->nr_pending + 1, 2)) {
		free(copy);
		return error_set(err, -ENOMEM, "out of memory");
	}
	s->pending[s->nr_pending++] = copy;
	return 0;
}
