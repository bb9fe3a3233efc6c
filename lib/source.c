// SPDX-License-Identifier: MIT
/*
 * Sources: tar streams through libarchive's readers and filters, and
 * directory trees through its disk reader. Both yield archive entries, so
 * the writer has one intake path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>
#include <zlib.h>

#include "imgfs/source.h"
#include "writer_internal.h"

#define READ_BLOCK (128u * 1024u)

bool imgfs_source_is_dir(const char *path)
{
	struct stat st;

	return strcmp(path, "-") && !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* Every filter (compression is detected), tar formats only. */
static struct archive *new_tar_reader(struct imgfs_error *err)
{
	struct archive *a = archive_read_new();

	if (!a) {
		imgfs_error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	archive_read_support_filter_all(a);
	/* tar only: a stray zip or cpio file must not pass as a layer */
	archive_read_support_format_tar(a);
	archive_read_support_format_gnutar(a);
	/*
	 * Read to the real end of the input, past the end-of-archive
	 * blocks: trailing data is then examined rather than ignored, a
	 * gzip trailer gets checked, and a writer feeding us through a pipe
	 * is never cut off.
	 */
	archive_read_set_format_option(a, "tar", "read_concatenated_archives",
				       "1");
	return a;
}

static struct archive *open_failed(struct archive *a, const char *path,
				   struct imgfs_error *err)
{
	imgfs_error_set(err, -EIO, "%s: %s", path,
			archive_error_string(a) ? archive_error_string(a) :
						  "cannot open");
	archive_read_free(a);
	return NULL;
}

/*
 * gzip layers are decoded here with zlib rather than by libarchive's gzip
 * filter, which does not check the members' CRC-32 and length trailers:
 * a corrupt layer must fail the conversion. libarchive then reads a plain
 * tar. Other compressions keep libarchive's filters, whose libraries
 * verify their own checksums. Standard input is peeked at through the
 * same reader, which hands non-gzip bytes through unchanged.
 */
#define SRC_IN (256u * 1024u)
#define SRC_OUT (256u * 1024u)

struct stream_source {
	int fd;
	bool own_fd;
	bool gzip;
	bool eof; /* no more raw input */
	bool done; /* all gzip members decoded */
	bool in_member;
	z_stream zs;
	uint8_t in[SRC_IN];
	uint8_t out[SRC_OUT];
};

static ssize_t src_fill(struct archive *a, struct stream_source *g)
{
	ssize_t n;

	if (g->zs.avail_in || g->eof)
		return 0;
	do
		n = read(g->fd, g->in, sizeof(g->in));
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		archive_set_error(a, errno, "read error");
		return -1;
	}
	g->eof = n == 0;
	g->zs.next_in = g->in;
	g->zs.avail_in = (uInt)n;
	return n;
}

/* Between members: only another gzip member (or the end) may follow. */
static int gz_next_member(struct archive *a, struct stream_source *g)
{
	if (src_fill(a, g) < 0)
		return -1;
	if (!g->zs.avail_in) {
		g->done = true;
		return 0;
	}
	if (g->zs.next_in[0] != 0x1f) {
		archive_set_error(a, EINVAL, "trailing garbage after gzip data");
		return -1;
	}
	inflateReset(&g->zs);
	g->in_member = true;
	return 0;
}

static la_ssize_t gz_read(struct archive *a, struct stream_source *g,
			  const void **buf)
{
	*buf = g->out;
	while (!g->done) {
		int r;

		if (!g->in_member) {
			if (gz_next_member(a, g))
				return -1;
			continue;
		}
		if (src_fill(a, g) < 0)
			return -1;
		if (!g->zs.avail_in && g->eof) {
			archive_set_error(a, EINVAL, "truncated gzip input");
			return -1;
		}
		g->zs.next_out = g->out;
		g->zs.avail_out = sizeof(g->out);
		r = inflate(&g->zs, Z_NO_FLUSH);
		if (r == Z_STREAM_END) {
			g->in_member = false;
		} else if (r != Z_OK && r != Z_BUF_ERROR) {
			archive_set_error(a, EINVAL, "corrupt gzip data: %s",
					  g->zs.msg ? g->zs.msg : "inflate failed");
			return -1;
		}
		if (g->zs.avail_out != sizeof(g->out))
			return (la_ssize_t)(sizeof(g->out) - g->zs.avail_out);
	}
	return 0;
}

static la_ssize_t src_read(struct archive *a, void *arg, const void **buf)
{
	struct stream_source *g = arg;
	la_ssize_t n;

	if (g->gzip)
		return gz_read(a, g, buf);
	if (src_fill(a, g) < 0)
		return -1;
	*buf = g->zs.next_in;
	n = (la_ssize_t)g->zs.avail_in;
	g->zs.avail_in = 0;
	return n;
}

static int src_close(struct archive *a, void *arg)
{
	struct stream_source *g = arg;

	(void)a;
	inflateEnd(&g->zs);
	if (g->own_fd)
		close(g->fd);
	free(g);
	return ARCHIVE_OK;
}

/* Peek at the first bytes of @fd: gzip or not. */
static int src_probe(struct stream_source *g)
{
	ssize_t n;

	do
		n = read(g->fd, g->in, sizeof(g->in));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	g->eof = n == 0;
	g->zs.next_in = g->in;
	g->zs.avail_in = (uInt)n;
	g->gzip = n >= 2 && g->in[0] == 0x1f && g->in[1] == 0x8b;
	return 0;
}

static struct archive *open_stream(struct archive *a, int fd, bool own_fd,
				   const char *path, struct imgfs_error *err)
{
	struct stream_source *g = calloc(1, sizeof(*g));
	int ret;

	if (!g || inflateInit2(&g->zs, 15 + 16) != Z_OK) {
		free(g);
		if (own_fd)
			close(fd);
		archive_read_free(a);
		imgfs_error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	g->fd = fd;
	g->own_fd = own_fd;
	g->in_member = true;
	ret = src_probe(g);
	if (ret) {
		imgfs_error_set(err, ret, "%s: %s", path, strerror(-ret));
		src_close(a, g);
		archive_read_free(a);
		return NULL;
	}
	/* on failure libarchive has already called src_close */
	if (archive_read_open(a, g, NULL, src_read, src_close) != ARCHIVE_OK)
		return open_failed(a, path, err);
	return a;
}

static bool is_gzip_file(int fd)
{
	uint8_t magic[2];

	return pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f &&
	       magic[1] == 0x8b;
}

struct archive *imgfs_source_open_tar(const char *path, struct imgfs_error *err)
{
	struct archive *a = new_tar_reader(err);
	int fd;

	if (!a)
		return NULL;
	if (!strcmp(path, "-"))
		return open_stream(a, 0, false, path, err);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		imgfs_error_set(err, -errno, "%s: %s", path, strerror(errno));
		archive_read_free(a);
		return NULL;
	}
	if (is_gzip_file(fd))
		return open_stream(a, fd, true, path, err);
	close(fd);
	/* libarchive's own file reader can seek over data it skips */
	if (archive_read_open_filename(a, path, READ_BLOCK) != ARCHIVE_OK)
		return open_failed(a, path, err);
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
	w->entries++;
	ret = imgfs_writer_consume_entry(w, a, e, err);
	if (!ret && reads_data(w, e))
		ret = check_unchanged(e, w->data_bytes - before, err);
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
