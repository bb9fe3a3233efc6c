// SPDX-License-Identifier: MIT
/*
 * Sources: tar streams through libarchive's readers and filters, and
 * directory trees through its disk reader. Both yield archive entries, so
 * the writer has one intake path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>

#include "imgfs/source.h"
#include "writer_internal.h"

#define READ_BLOCK (128u * 1024u)

bool imgfs_source_is_dir(const char *path)
{
	struct stat st;

	return strcmp(path, "-") && !stat(path, &st) && S_ISDIR(st.st_mode);
}

struct archive *imgfs_source_open_tar(const char *path, struct imgfs_error *err)
{
	struct archive *a = archive_read_new();
	int r;

	if (!a) {
		imgfs_error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	archive_read_support_filter_all(a);
	/* tar only: a stray zip or cpio file must not pass as a layer */
	archive_read_support_format_tar(a);
	archive_read_support_format_gnutar(a);
	if (!strcmp(path, "-"))
		r = archive_read_open_fd(a, 0, READ_BLOCK);
	else
		r = archive_read_open_filename(a, path, READ_BLOCK);
	if (r != ARCHIVE_OK) {
		imgfs_error_set(err, -EIO, "%s: %s", path,
				archive_error_string(a) ? archive_error_string(a) :
							  "cannot open");
		archive_read_free(a);
		return NULL;
	}
	return a;
}

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

static int feed_dir_entry(struct imgfs_writer *w, struct archive *a,
			  struct archive_entry_linkresolver *lr,
			  struct archive_entry *e, const char *root,
			  struct imgfs_error *err)
{
	struct archive_entry *spare = NULL;
	size_t rlen = strlen(root);
	int ret;

	if (strip_root(e, root, rlen))
		return imgfs_error_set(err, -EINVAL, "%s: unexpected path",
				       archive_entry_pathname(e));
	if (archive_entry_filetype(e) != AE_IFDIR)
		archive_entry_linkify(lr, &e, &spare);
	if (!e)
		return 0;
	w->entries++;
	ret = imgfs_writer_consume_entry(w, a, e, err);
	if (spare)
		archive_entry_free(spare);
	imgfs_writer_report_progress(w);
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
