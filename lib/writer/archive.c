// SPDX-License-Identifier: MIT
/*
 * Archive intake: libarchive entries (tar streams, directory trees read by
 * the disk reader) turned into struct imgfs_entry and handed to the entry
 * calls, their data streamed through imgfs_writer_append(). What only an
 * archive has is settled here: file flags, ACL records, how libarchive
 * reads negative pax times, data blocks with offsets.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "imgfs/source.h"
#include "format/acl.h"
#include "writer/internal.h"
#include "util/error.h"

static void writer_warn(struct imgfs_writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Hand a warning to the caller's callback, if there is one. */
static void writer_warn(struct imgfs_writer *w, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int n;

	if (!w->opts.warn)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(msg = malloc((size_t)n + 1)))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, (size_t)n + 1, fmt, ap);
	va_end(ap);
	w->opts.warn(msg, w->opts.warn_arg);
	free(msg);
}

/* One ustar header block of the probe archive below. */
static void probe_header(char *h, char type, size_t size)
{
	unsigned int sum = 0;

	memset(h, 0, 512);
	h[0] = 'p';
	memcpy(h + 100, "0000644", 7);
	snprintf(h + 124, 12, "%011zo", size);
	h[156] = type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum);
}

/*
 * libarchive (3.6 to at least 3.8) reads the pax time "-1.5" as -1 s plus
 * 0.5 s: integer part truncated toward zero, fraction added as if it were
 * positive. Whether the library in use does so is learnt once per writer
 * from a two-header pax archive holding exactly that time.
 */
static bool pax_time_truncated(struct imgfs_writer *w)
{
	static const char rec[] = "14 mtime=-1.5\n";
	char tar[5 * 512];
	struct archive *a;
	struct archive_entry *e;

	if (w->pax_time_truncated)
		return w->pax_time_truncated > 0;
	w->pax_time_truncated = -1;
	probe_header(tar, 'x', sizeof(rec) - 1);
	memset(tar + 512, 0, 4 * 512);
	memcpy(tar + 512, rec, sizeof(rec) - 1);
	probe_header(tar + 1024, '0', 0);
	a = archive_read_new();
	if (!a)
		return false;
	archive_read_support_format_tar(a);
	if (archive_read_open_memory(a, tar, sizeof(tar)) == ARCHIVE_OK &&
	    archive_read_next_header(a, &e) == ARCHIVE_OK &&
	    archive_entry_mtime(e) == -1 &&
	    archive_entry_mtime_nsec(e) == 500000000)
		w->pax_time_truncated = 1;
	archive_read_free(a);
	return w->pax_time_truncated > 0;
}

/*
 * The entry's mtime as seconds and nanoseconds counted from the earlier
 * whole second (-1.5 s is -2 s + 500000000 ns), as stat() shows it.
 */
static void entry_mtime(struct imgfs_writer *w, struct archive *a,
			struct archive_entry *e, const char *path, int64_t *sec,
			uint32_t *nsec)
{
	int64_t s = archive_entry_mtime(e);
	long ns = archive_entry_mtime_nsec(e);

	if (ns < 0 || ns >= 1000000000L) {
		s += ns / 1000000000L;
		ns %= 1000000000L;
		if (ns < 0) {
			s--;
			ns += 1000000000L;
		}
	}
	/* only tar carries fractional times as text (pax) */
	if (s <= 0 && s > INT64_MIN && ns > 0 && a &&
	    (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) ==
		    ARCHIVE_FORMAT_TAR &&
	    pax_time_truncated(w)) {
		if (s < 0) {
			s--;
			ns = 1000000000L - ns;
		} else {
			/* "-0.5" arrived as 0 s + 0.5 s: its sign is lost */
			writer_warn(w, "%s: mtime 0.%09ld s may have been -0.%09ld s in the archive (libarchive reads pax times between -1 and 0 s without their sign)",
				    path, ns, ns);
		}
	}
	*sec = s;
	*nsec = (uint32_t)ns;
}

/*
 * File flags cannot be stored (lib/source/fflags.c says which are
 * internal and dropped silently). Those a user set are dropped with one
 * warning at finish, or refused.
 */
static int check_file_flags(struct imgfs_writer *w, struct archive_entry *e,
			    const char *path, struct imgfs_error *err)
{
	const char *text = archive_entry_fflags_text(e);
	char user[256];

	if (!text || !*text || w->opts.ignore_file_flags ||
	    w->opts.file_flags == IMGFS_FILE_FLAGS_IGNORE ||
	    !imgfs_fflags_user(text, user, sizeof(user)))
		return 0;
	if (w->opts.file_flags == IMGFS_FILE_FLAGS_ERROR)
		return imgfs_error_set(
			err, -EOPNOTSUPP,
			"%s: file flags (%s) cannot be stored in EROFS", path,
			user);
	imgfs_fflags_tally_add(&w->fflags, path, user);
	return 0;
}

void imgfs_writer_warn_file_flags(struct imgfs_writer *w)
{
	imgfs_fflags_tally_warn(
		&w->fflags, "file flags EROFS cannot store were dropped from",
		w->opts.warn, w->opts.warn_arg);
}

/* An entry converted for the entry calls, and what it owns. */
struct converted {
	struct imgfs_entry e;
	struct imgfs_xattr_pair *xattrs;
	uint8_t *acl[2]; /* encoded ACL values */
	struct imgfs_data_range *sparse;
};

static void converted_free(struct converted *c)
{
	free(c->xattrs);
	free(c->acl[0]);
	free(c->acl[1]);
	free(c->sparse);
}

/*
 * The entry's xattrs, then its access and default ACLs as
 * system.posix_acl_* values. libarchive keeps the owning group's bits in
 * the mode; the kernel shows the ACL mask there.
 */
static int convert_xattrs(struct converted *c, struct archive_entry *e,
			  const char *path, struct imgfs_error *err)
{
	static const int acl_types[] = { ARCHIVE_ENTRY_ACL_TYPE_ACCESS,
					 ARCHIVE_ENTRY_ACL_TYPE_DEFAULT };
	static const char *const acl_names[] = { "system.posix_acl_access",
						 "system.posix_acl_default" };
	int count = archive_entry_xattr_reset(e);
	size_t n = 0;
	int mask;

	c->xattrs = calloc((size_t)(count > 0 ? count : 0) + 2,
			   sizeof(*c->xattrs));
	if (!c->xattrs)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	while (n < (size_t)count &&
	       archive_entry_xattr_next(e, &c->xattrs[n].name,
					&c->xattrs[n].value,
					&c->xattrs[n].size) == ARCHIVE_OK)
		n++;
	for (int i = 0; i < 2; i++) {
		long len = imgfs_acl_encode(e, acl_types[i], &c->acl[i], path,
					    err);

		if (len < 0)
			return (int)len;
		if (!len)
			continue;
		c->xattrs[n].name = acl_names[i];
		c->xattrs[n].value = c->acl[i];
		c->xattrs[n++].size = (size_t)len;
	}
	c->e.xattrs = c->xattrs;
	c->e.nr_xattrs = n;
	mask = imgfs_acl_mask_perm(e);
	if (mask >= 0)
		c->e.mode = (c->e.mode & ~070u) | ((unsigned int)mask << 3);
	return 0;
}

static int convert_sparse(struct converted *c, struct archive_entry *e,
			  struct imgfs_error *err)
{
	int count = archive_entry_sparse_reset(e);
	la_int64_t off, len;
	size_t n = 0;

	if (count <= 0)
		return 0;
	c->sparse = calloc((size_t)count, sizeof(*c->sparse));
	if (!c->sparse)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	/* negative values stay out of range as huge ones, and are refused */
	while (n < (size_t)count &&
	       archive_entry_sparse_next(e, &off, &len) == ARCHIVE_OK) {
		c->sparse[n].offset = (uint64_t)off;
		c->sparse[n++].length = (uint64_t)len;
	}
	c->e.sparse = c->sparse;
	/* a map, even one without data, makes the file chunk-based */
	c->e.nr_sparse = n ? n : 1;
	return 0;
}

static int convert(struct imgfs_writer *w, struct archive *a,
		   struct archive_entry *e, const char *path,
		   struct converted *c, struct imgfs_error *err)
{
	struct imgfs_entry *ie = &c->e;
	int ret;

	memset(c, 0, sizeof(*c));
	ie->path = path;
	ie->hardlink = archive_entry_hardlink(e);
	if (ie->hardlink) {
		/* a hard link takes nothing else from its entry */
		if (archive_entry_size_is_set(e))
			ie->size = (uint64_t)archive_entry_size(e);
		ie->mode = archive_entry_mode(e);
		return 0;
	}
	ie->mode = archive_entry_mode(e);
	ie->uid = archive_entry_uid(e);
	ie->gid = archive_entry_gid(e);
	ie->have_mtime = archive_entry_mtime_is_set(e);
	if (ie->have_mtime)
		entry_mtime(w, a, e, path, &ie->mtime, &ie->mtime_nsec);
	ie->symlink = archive_entry_symlink(e);
	ie->rdev_major = archive_entry_rdevmajor(e);
	ie->rdev_minor = archive_entry_rdevminor(e);
	ret = convert_xattrs(c, e, path, err);
	if (ret || archive_entry_filetype(e) != AE_IFREG)
		return ret;
	if (archive_entry_size(e) < 0)
		return imgfs_error_set(err, -EINVAL, "%s: negative size", path);
	ie->size = (uint64_t)archive_entry_size(e);
	return convert_sparse(c, e, err);
}

static int data_fail(struct archive *a, const char *path,
		     struct imgfs_error *err)
{
	const char *msg = archive_error_string(a);

	return imgfs_error_set(err, -EIO, "%s: reading data: %s", path,
			       msg ? msg : "unknown error");
}

/*
 * libarchive hands data blocks (and a sparse map) out as they were
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
			return imgfs_error_set(err, -EIO,
					       "%s: data block at offset %lld out of order or beyond the file size",
					       ie->path, (long long)off);
		return 0;
	}
	if (off < 0 || (uint64_t)off < pos)
		return imgfs_error_set(err, -EINVAL,
				       "%s: sparse map out of order or overlapping: data at offset %lld after data up to offset %llu",
				       ie->path, (long long)off,
				       (unsigned long long)pos);
	if (outside)
		return imgfs_error_set(err, -EINVAL,
				       "%s: sparse map reaches beyond the file size (%llu bytes): %zu bytes at offset %lld",
				       ie->path, (unsigned long long)ie->size,
				       len, (long long)off);
	return 0;
}

/* Stream the entry's data blocks into the open file; gaps are skipped. */
static int copy_data(struct imgfs_writer *w, struct archive *a,
		     const struct imgfs_entry *ie, struct imgfs_error *err)
{
	uint64_t pos = 0;
	const void *buf;
	size_t len;
	int64_t off;
	int r, ret;

	while ((r = archive_read_data_block(a, &buf, &len, &off)) ==
	       ARCHIVE_OK) {
		ret = check_block(ie, off, len, pos, err);
		if (!ret && (uint64_t)off > pos)
			ret = imgfs_writer_skip(w, (uint64_t)off - pos, err);
		/* tar index: the block's place in the (uncompressed) tar,
		 * what libarchive has consumed of it before the block */
		if (!ret && w->opts.tar_index)
			w->tar_pos = archive_filter_bytes(a, 0);
		if (!ret)
			ret = imgfs_writer_append(w, buf, len, err);
		if (ret)
			return ret;
		pos = (uint64_t)off + len;
	}
	if (r != ARCHIVE_EOF)
		return data_fail(a, ie->path, err);
	/* a file that ends in a hole */
	return imgfs_writer_skip(w, ie->size - pos, err);
}

static int add_converted(struct imgfs_writer *w, struct archive *a,
			 const struct imgfs_entry *ie, struct imgfs_error *err)
{
	int ret;

	if (ie->hardlink || (ie->mode & 0170000) != 0100000)
		return imgfs_writer_add_entry(w, ie, err);
	ret = imgfs_writer_begin_file(w, ie, err);
	if (!ret && ie->size && imgfs_writer_file_keeps_data(w))
		ret = copy_data(w, a, ie, err);
	if (!ret)
		ret = imgfs_writer_end_file(w, err);
	return ret;
}

int imgfs_writer_consume_entry(struct imgfs_writer *w, struct archive *a,
			       struct archive_entry *e, struct imgfs_error *err)
{
	const char *path = archive_entry_pathname(e);
	struct converted c = { 0 };
	int ret;

	if (!path) {
		w->failed = true;
		return imgfs_error_set(err, -EINVAL,
				       "entry %llu: path name cannot be decoded",
				       (unsigned long long)w->entries + 1);
	}
	ret = check_file_flags(w, e, path, err);
	if (!ret)
		ret = convert(w, a, e, path, &c, err);
	if (!ret)
		ret = add_converted(w, a, &c.e, err);
	converted_free(&c);
	if (ret)
		w->failed = true;
	return ret;
}

int imgfs_writer_read_entries(struct imgfs_writer *w, struct archive *a,
			      struct imgfs_error *err)
{
	struct archive_entry *e;
	const char *msg;
	int r, ret;

	for (;;) {
		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			return 0;
		/* RETRY: a damaged header; WARN: part of the entry could not
		 * be decoded. Neither may be taken as a good entry. */
		if (r != ARCHIVE_OK) {
			msg = archive_error_string(a);
			return imgfs_error_set(err, -EIO,
					       "reading archive after %llu entries: %s",
					       (unsigned long long)w->entries,
					       msg ? msg : "unknown error");
		}
		ret = imgfs_writer_consume_entry(w, a, e, err);
		if (ret)
			return ret;
	}
}

int imgfs_writer_read_tar(struct imgfs_writer *w, struct imgfs_tar *t,
			  struct imgfs_error *err)
{
	struct imgfs_tar_options o = {
		.allow_missing_end = w->opts.allow_missing_end,
		.require_end = w->opts.require_end,
		.warn = w->opts.warn,
		.warn_arg = w->opts.warn_arg,
	};
	struct archive_entry *e;
	int r;

	while ((r = imgfs_tar_next(t, &o, &e, err)) > 0) {
		r = imgfs_writer_consume_entry(w, imgfs_tar_archive(t), e, err);
		if (r)
			return r;
	}
	return r;
}
