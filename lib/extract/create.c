// SPDX-License-Identifier: MIT
/*
 * create.c - make each kind of node of the image below a directory fd:
 * regular files (O_EXCL, data copied extent by extent, holes kept),
 * symlinks, devices and FIFOs, hard links. None of the calls used follows
 * a symlink at the final component, and the parents come from the cursor
 * (dirs.c), so nothing is created outside the target directory.
 */
/* O_PATH */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "extract/internal.h"
#include "imgfs/format.h"
#include "util/error.h"
#include "util/fileio.h"

/* A name from the image that cannot be created as such. */
bool extract_bad_name(const char *name)
{
	return !*name || !strcmp(name, ".") || !strcmp(name, "..");
}

/* Remove whatever is at @name (when overwriting), never following links. */
void extract_remove_existing(struct imgfs_extract *x, int pfd, const char *name)
{
	if (!x->overwrite)
		return;
	if (unlinkat(pfd, name, 0) && errno == EISDIR)
		unlinkat(pfd, name, AT_REMOVEDIR);
}

struct copy_ctx {
	struct imgfs_extract *x;
	const struct imgfs_inode *inode;
	int fd;
	struct imgfs_error err;
};

static int copy_extent(void *arg, const struct imgfs_extent *ext)
{
	struct copy_ctx *c = arg;
	struct imgfs_extract *x = c->x;
	uint64_t done = 0;
	int ret;

	if (ext->kind == IMGFS_EXTENT_HOLE)
		return 0;
	while (done < ext->length) {
		uint64_t left = ext->length - done;
		size_t n = left < EXTRACT_COPY_BUFSZ ? (size_t)left
						     : EXTRACT_COPY_BUFSZ;
		ssize_t got = imgfs_read(x->img, c->inode, ext->logical + done,
					 x->buf, n, &c->err);

		if (got <= 0)
			return got < 0 ? (int)got : -EIO;
		if (x->o.limit &&
		    (uint64_t)got > x->o.limit - x->res.data_bytes) {
			x->res.limit_reached = true;
			return error_set(&c->err, -EFBIG,
					 "file data beyond the limit");
		}
		x->res.data_bytes += (uint64_t)got;
		ret = pwrite_full(c->fd, x->buf, (size_t)got,
				  ext->logical + done);
		if (ret)
			return error_set(&c->err, ret, "write: %s",
					 strerror(-ret));
		done += (uint64_t)got;
	}
	return 0;
}

void extract_write_file(struct imgfs_extract *x,
			const struct imgfs_inode *inode, const char *path,
			int pfd, const char *name)
{
	struct copy_ctx c = { .x = x, .inode = inode };
	struct extract_target t = { .path = path };
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;

	c.fd = openat(pfd, name, flags, 0600);
	if (c.fd < 0 && errno == EEXIST && x->overwrite) {
		extract_remove_existing(x, pfd, name);
		c.fd = openat(pfd, name, flags, 0600);
	}
	if (c.fd < 0) {
		extract_fail(x, path, "create", errno);
		return;
	}
	if (imgfs_extent_iterate(x->img, inode, copy_extent, &c, &c.err) < 0) {
		if (x->res.limit_reached) {
			struct imgfs_extract_notice n = {
				.kind = IMGFS_EXTRACT_LIMIT_REACHED,
				.path = path,
				.errnum = EFBIG,
				.limit = x->o.limit,
				.written = x->res.data_bytes,
			};

			x->res.failures++;
			extract_notice(x, &n);
		} else {
			extract_fail(x, path, c.err.code ? c.err.msg : "read",
				     c.err.code == -EFBIG ? EFBIG : EIO);
		}
	} else if (ftruncate(c.fd, (off_t)inode->size)) {
		extract_fail(x, path, "truncate", errno);
	}
	t.fd = c.fd;
	extract_set_meta(x, inode, &t);
	if (close(c.fd))
		extract_fail(x, path, "close", errno);
}

/* Create the node; 1 when it is skipped (already reported). */
static int make_node(struct imgfs_extract *x, const struct imgfs_inode *inode,
		     const char *path, int pfd, const char *name)
{
	char target[IMGFS_SYMLINK_MAX + 1];
	struct imgfs_error err = { 0 };
	uint32_t type = inode->mode & 0170000;

	if (type == 0120000) {
		if (imgfs_readlink(x->img, inode, target, sizeof(target),
				   &err) < 0) {
			extract_fail(x, path, err.msg, EIO);
			return 1;
		}
		return symlinkat(target, pfd, name);
	}
	if ((type == 0020000 || type == 0060000) && !x->root) {
		struct imgfs_extract_notice n = {
			.kind = IMGFS_EXTRACT_DEVICE_SKIPPED,
			.path = path,
		};

		extract_notice(x, &n);
		return 1;
	}
	return mknodat(pfd, name, type | 0600,
		       makedev(imgfs_dev_major(inode->rdev),
			       imgfs_dev_minor(inode->rdev)));
}

/*
 * Open the node just created at @name without following it, and check
 * that it is what we made (its type, and our own as owner: nothing has
 * chowned it yet). Another process may have swapped the name for a
 * symlink or other file in between; then nothing is changed.
 */
static int open_node(struct imgfs_extract *x, const struct imgfs_inode *inode,
		     int pfd, const char *name, struct extract_target *t)
{
	struct stat st;

	t->fd = openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (t->fd < 0) {
		extract_fail(x, extract_tpath(x, t), "open the new node",
			     errno);
		return -1;
	}
	if (fstat(t->fd, &st) ||
	    (st.st_mode & S_IFMT) != (inode->mode & 0170000) ||
	    st.st_uid != geteuid()) {
		extract_fail(x, extract_tpath(x, t),
			     "node replaced while extracting", EEXIST);
		close(t->fd);
		return -1;
	}
	t->opath = true;
	snprintf(t->proc, sizeof(t->proc), "/proc/self/fd/%d", t->fd);
	return 0;
}

void extract_write_node(struct imgfs_extract *x,
			const struct imgfs_inode *inode, const char *path,
			int pfd, const char *name)
{
	struct extract_target t = { .path = path };
	int r = make_node(x, inode, path, pfd, name);

	if (r < 0 && errno == EEXIST && x->overwrite) {
		extract_remove_existing(x, pfd, name);
		r = make_node(x, inode, path, pfd, name);
	}
	if (r > 0)
		return;
	if (r < 0) {
		extract_fail(x, path, "create", errno);
		return;
	}
	if (open_node(x, inode, pfd, name, &t))
		return;
	extract_set_meta(x, inode, &t);
	close(t.fd);
}

/* A later path of a hard-linked inode: linkat() from its first path. */
void extract_write_link(struct imgfs_extract *x,
			const struct imgfs_check_entry *e, size_t pidx,
			const char *name)
{
	size_t li = extract_made_dir(x, e->link_parent_serial);
	int ofd, pfd;

	/* the first path had one link only (a corrupt link count), or its
	 * directory was not written */
	if (li == SIZE_MAX || e->inode->nlink <= 1 || !e->link_name ||
	    extract_bad_name(e->link_name)) {
		extract_fail(x, e->path, "hard link target was not recorded",
			     ENOENT);
		return;
	}
	ofd = extract_cursor_goto(x, li);
	if (ofd >= 0 && (ofd = fcntl(ofd, F_DUPFD_CLOEXEC, 0)) < 0)
		ofd = -errno;
	if (ofd < 0) {
		extract_fail(x, e->path, "open link target directory", -ofd);
		return;
	}
	pfd = extract_cursor_goto(x, pidx);
	if (pfd < 0) {
		extract_fail(x, e->path, "open parent directory", -pfd);
	} else if (linkat(ofd, e->link_name, pfd, name, 0)) {
		if (errno == EEXIST && x->overwrite) {
			extract_remove_existing(x, pfd, name);
			if (linkat(ofd, e->link_name, pfd, name, 0))
				extract_fail(x, e->path, "link", errno);
		} else {
			extract_fail(x, e->path, "link", errno);
		}
	}
	close(ofd);
}
