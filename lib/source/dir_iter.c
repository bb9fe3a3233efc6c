// SPDX-License-Identifier: MIT
/*
 * A directory tree as a source of entries (source/iter.h), through
 * libarchive's disk reader: its entries are converted as a tar's are.
 * Hard links are found by the link resolver; a file that changes while
 * its data is read is an error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>

#include "source/convert.h"
#include "util/error.h"

struct dir_iter {
	struct la_iter l;
	struct archive *disk;
	struct archive_entry_linkresolver *lr;
	struct archive_entry *e; /* the reader's entry, reused */
	struct archive_entry *spare; /* from the link resolver */
	const struct archive_entry *cur; /* checked once its data is read */
	char *root; /* the tree's path, without trailing "/" */
	const char *path; /* as given, for messages */
	struct dir_iter_options o;
};

/* Make a disk entry's path relative to the tree root. */
static int strip_root(struct archive_entry *e, const char *root, size_t rlen)
{
	const char *p = archive_entry_pathname(e);

	if (!p || strncmp(p, root, rlen))
		return -EINVAL;
	p += rlen;
	while (*p == '/')
		p++;
	archive_entry_copy_pathname(e, *p ? p : ".");
	return 0;
}

static bool is_skipped(const struct dir_iter *d, struct archive_entry *e)
{
	for (size_t i = 0; i < d->o.nr_skip; i++)
		if (d->o.skip[i].dev == (uint64_t)archive_entry_dev(e) &&
		    d->o.skip[i].ino == (uint64_t)archive_entry_ino64(e))
			return true;
	return false;
}

/* Is this entry's data read (rather than the entry converted)? */
static bool reads_data(const struct dir_iter *d, struct archive_entry *e)
{
	const char *p = archive_entry_pathname(e);
	const char *base = strrchr(p, '/');

	if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e))
		return false;
	base = base ? base + 1 : p;
	return !d->o.overlay_whiteouts || strncmp(base, ".wh.", 4);
}

/* Bytes the disk reader delivers for @e: its size less its holes. */
static uint64_t data_expected(struct archive_entry *e)
{
	uint64_t size = (uint64_t)archive_entry_size(e), sum = 0;
	la_int64_t off, len;

	if (!archive_entry_sparse_reset(e))
		return size;
	while (archive_entry_sparse_next(e, &off, &len) == ARCHIVE_OK) {
		if (off < 0 || len <= 0 || (uint64_t)off >= size)
			continue;
		sum += (uint64_t)len < size - (uint64_t)off ?
			       (uint64_t)len :
			       size - (uint64_t)off;
	}
	return sum;
}

/*
 * The disk reader reads a file up to the size it had when it was listed
 * and stops early, without an error, if the file ends sooner; the writer
 * would pad with zeros. Compare what was read with what the listing
 * promised, and the file's state now with its state then, as an archiver
 * does: a file that changed while it was read is an error, not an
 * inconsistent copy. A file removed or replaced meanwhile was read whole,
 * from the descriptor, and is what the image holds.
 */
static int check_unchanged(struct archive_entry *e, uint64_t read,
			   struct imgfs_error *err)
{
	const char *path = archive_entry_pathname(e);
	uint64_t want = data_expected(e);
	struct stat st;

	if (read != want)
		return error_set(
			err, -EIO,
			"%s: changed while being read: %llu bytes of data read, %llu when it was listed",
			path, (unsigned long long)read,
			(unsigned long long)want);
	if (lstat(archive_entry_sourcepath(e), &st) < 0 ||
	    (uint64_t)st.st_dev != (uint64_t)archive_entry_dev(e) ||
	    (uint64_t)st.st_ino != (uint64_t)archive_entry_ino64(e))
		return 0;
	if ((uint64_t)st.st_size != (uint64_t)archive_entry_size(e))
		return error_set(
			err, -EIO,
			"%s: changed while being read: %llu bytes when it was listed, %llu now",
			path, (unsigned long long)archive_entry_size(e),
			(unsigned long long)st.st_size);
	if (st.st_ctim.tv_sec != archive_entry_ctime(e) ||
	    st.st_ctim.tv_nsec != archive_entry_ctime_nsec(e))
		return error_set(
			err, -EIO,
			"%s: changed while being read (its ctime moved)", path);
	return 0;
}

/* The entry handed out last is done with: check it, free the spare. */
static int dir_entry_done(struct dir_iter *d, struct imgfs_error *err)
{
	struct archive_entry *e = (struct archive_entry *)d->cur;
	int ret = 0;

	d->cur = NULL;
	if (e && reads_data(d, e))
		ret = check_unchanged(e, d->l.data_read, err);
	if (d->spare)
		archive_entry_free(d->spare);
	d->spare = NULL;
	return ret;
}

/* The next entry of the tree to hand out, in *@out; 0 at the end. */
static int dir_read_next(struct dir_iter *d, struct archive_entry **out,
			 struct imgfs_error *err)
{
	struct archive_entry *e;
	int r;

	for (;;) {
		e = d->e;
		r = archive_read_next_header2(d->disk, e);
		if (r == ARCHIVE_EOF)
			return 0;
		if (r < ARCHIVE_WARN)
			return error_set(err, -EIO, "%s: %s", d->path,
					 archive_error_string(d->disk));
		if (archive_entry_filetype(e) == AE_IFDIR)
			archive_read_disk_descend(d->disk);
		else if (is_skipped(d, e))
			continue;
		if (strip_root(e, d->root, strlen(d->root)))
			return error_set(err, -EINVAL, "%s: unexpected path",
					 archive_entry_pathname(e));
		if (archive_entry_filetype(e) != AE_IFDIR)
			archive_entry_linkify(d->lr, &e, &d->spare);
		if (e) {
			*out = e;
			return 1;
		}
	}
}

static int dir_iter_next(struct entry_iter *it, const struct iter_entry **out,
			 struct imgfs_error *err)
{
	struct dir_iter *d = (struct dir_iter *)it;
	struct archive_entry *e = NULL;
	int r = dir_entry_done(d, err);

	*out = NULL;
	entry_conv_release(&d->l.conv);
	if (!r)
		r = dir_read_next(d, &e, err);
	if (r <= 0)
		return r;
	d->cur = e;
	*out = la_iter_take(&d->l, d->disk, e, err);
	return 1;
}

static void dir_iter_destroy(struct entry_iter *it)
{
	struct dir_iter *d = (struct dir_iter *)it;

	entry_conv_release(&d->l.conv);
	if (d->spare)
		archive_entry_free(d->spare);
	if (d->e)
		archive_entry_free(d->e);
	if (d->lr)
		archive_entry_linkresolver_free(d->lr);
	if (d->disk)
		archive_read_free(d->disk);
	free(d->root);
	free(d);
}

/* The disk reader: symlinks not followed; xattrs, ACLs and holes kept. */
static int dir_open(struct dir_iter *d, struct imgfs_error *err)
{
	archive_entry_linkresolver_set_strategy(
		d->lr, ARCHIVE_FORMAT_TAR_PAX_RESTRICTED);
	archive_read_disk_set_symlink_physical(d->disk);
	archive_read_disk_set_standard_lookup(d->disk);
	/* default behaviour: xattrs, ACLs and holes are all reported */
	archive_read_disk_set_behavior(d->disk, 0);
	if (archive_read_disk_open(d->disk, d->root) != ARCHIVE_OK)
		return error_set(err, -EIO, "%s: %s", d->path,
				 archive_error_string(d->disk));
	return 0;
}

struct entry_iter *dir_iter_new(const char *path,
				const struct dir_iter_options *o,
				struct imgfs_error *err)
{
	struct dir_iter *d = calloc(1, sizeof(*d));
	size_t n;

	if (!d || !(d->disk = archive_read_disk_new()) ||
	    !(d->lr = archive_entry_linkresolver_new()) ||
	    !(d->e = archive_entry_new()) || !(d->root = strdup(path))) {
		error_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	n = strlen(d->root);
	while (n > 1 && d->root[n - 1] == '/')
		d->root[--n] = '\0';
	d->path = path;
	d->o = *o;
	d->l.conv.warn = o->warn;
	d->l.conv.warn_arg = o->warn_arg;
	d->l.it.next = dir_iter_next;
	d->l.it.read = la_iter_read;
	d->l.it.destroy = dir_iter_destroy;
	if (!dir_open(d, err))
		return &d->l.it;
fail:
	if (d)
		dir_iter_destroy(&d->l.it);
	return NULL;
}
