// SPDX-License-Identifier: MIT
/*
 * Directory trees through libarchive's disk reader: its entries take the
 * same way as a tar's (archive.c), to the entry calls.
 */
#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>
#include <zlib.h>

#include "imgfs/source.h"
#include "writer/internal.h"
#include "util/error.h"

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

static bool is_excluded(const struct imgfs_writer *w, struct archive_entry *e)
{
	for (size_t i = 0; i < w->nr_excluded; i++)
		if (w->excluded[i].dev == (uint64_t)archive_entry_dev(e) &&
		    w->excluded[i].ino == (uint64_t)archive_entry_ino64(e))
			return true;
	return false;
}

/* Does the writer read this entry's data (rather than converting it)? */
static bool reads_data(const struct imgfs_writer *w, struct archive_entry *e)
{
	const char *p = archive_entry_pathname(e);
	const char *base = strrchr(p, '/');

	if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e))
		return false;
	base = base ? base + 1 : p;
	return w->opts.whiteouts != IMGFS_WHITEOUT_OVERLAY ||
	       strncmp(base, ".wh.", 4);
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
		return imgfs_error_set(err, -EIO,
				       "%s: changed while being read: %llu bytes of data read, %llu when it was listed",
				       path, (unsigned long long)read,
				       (unsigned long long)want);
	if (lstat(archive_entry_sourcepath(e), &st) < 0 ||
	    (uint64_t)st.st_dev != (uint64_t)archive_entry_dev(e) ||
	    (uint64_t)st.st_ino != (uint64_t)archive_entry_ino64(e))
		return 0;
	if ((uint64_t)st.st_size != (uint64_t)archive_entry_size(e))
		return imgfs_error_set(err, -EIO,
				       "%s: changed while being read: %llu bytes when it was listed, %llu now",
				       path,
				       (unsigned long long)archive_entry_size(e),
				       (unsigned long long)st.st_size);
	if (st.st_ctim.tv_sec != archive_entry_ctime(e) ||
	    st.st_ctim.tv_nsec != archive_entry_ctime_nsec(e))
		return imgfs_error_set(err, -EIO,
				       "%s: changed while being read (its ctime moved)",
				       path);
	return 0;
}

static int feed_dir_entry(struct imgfs_writer *w, struct archive *a,
			  struct archive_entry_linkresolver *lr,
			  struct archive_entry *e, const char *root,
			  struct imgfs_error *err)
{
	struct archive_entry *spare = NULL;
	size_t rlen = strlen(root);
	uint64_t before = w->data_bytes;
	int ret;

	if (strip_root(e, root, rlen))
		return imgfs_error_set(err, -EINVAL, "%s: unexpected path",
				       archive_entry_pathname(e));
	if (archive_entry_filetype(e) != AE_IFDIR)
		archive_entry_linkify(lr, &e, &spare);
	if (!e)
		return 0;
	ret = imgfs_writer_consume_entry(w, a, e, err);
	if (!ret && reads_data(w, e))
		ret = check_unchanged(e, w->data_bytes - before, err);
	if (spare)
		archive_entry_free(spare);
	return ret;
}

int imgfs_source_read_dir(struct imgfs_writer *w, const char *path,
			  struct imgfs_error *err)
{
	struct archive *a = archive_read_disk_new();
	struct archive_entry_linkresolver *lr = archive_entry_linkresolver_new();
	struct archive_entry *e = archive_entry_new();
	char *root = NULL;
	int r, ret = 0;

	if (!a || !lr || !e || !(root = strdup(path))) {
		ret = imgfs_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	while (strlen(root) > 1 && root[strlen(root) - 1] == '/')
		root[strlen(root) - 1] = '\0';
	archive_entry_linkresolver_set_strategy(lr, ARCHIVE_FORMAT_TAR_PAX_RESTRICTED);
	archive_read_disk_set_symlink_physical(a);
	archive_read_disk_set_standard_lookup(a);
	/* default behaviour: xattrs, ACLs and holes are all reported */
	archive_read_disk_set_behavior(a, 0);
	if (archive_read_disk_open(a, root) != ARCHIVE_OK) {
		ret = imgfs_error_set(err, -EIO, "%s: %s", path,
				      archive_error_string(a));
		goto out;
	}
	for (;;) {
		r = archive_read_next_header2(a, e);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			ret = imgfs_error_set(err, -EIO, "%s: %s", path,
					      archive_error_string(a));
			goto out;
		}
		if (archive_entry_filetype(e) == AE_IFDIR)
			archive_read_disk_descend(a);
		else if (is_excluded(w, e))
			continue;
		ret = feed_dir_entry(w, a, lr, e, root, err);
		if (ret)
			goto out;
	}
out:
	free(root);
	if (e)
		archive_entry_free(e);
	if (lr)
		archive_entry_linkresolver_free(lr);
	if (a)
		archive_read_free(a);
	return ret;
}
