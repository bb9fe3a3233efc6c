// SPDX-License-Identifier: MIT
/*
 * meta.c - owner, mode, xattrs and times of an extracted node, applied
 * through an fd of that node (its own, or an O_PATH fd checked to be the
 * node just created), never through a name that may have changed since.
 */
/* O_PATH, AT_EMPTY_PATH */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "extract/internal.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/* The path of @t, built only when a message needs it (a directory's path
 * costs its depth). */
const char *extract_tpath(struct imgfs_extract *x,
			  const struct extract_target *t)
{
	return t->path ? t->path : extract_dir_path(x, t->dir, t->pbuf);
}

struct xattr_ctx {
	struct imgfs_extract *x;
	const struct extract_target *t;
};

static int xattr_cb(void *arg, const struct imgfs_xattr_info *xi)
{
	struct xattr_ctx *c = arg;
	const struct extract_target *t = c->t;
	int r;

	/* An O_PATH fd takes no fsetxattr(); its /proc link names the very
	 * inode it was opened on, whatever happens to the name since. */
	if (t->opath)
		r = setxattr(t->proc, xi->name, xi->value, xi->value_size, 0);
	else
		r = fsetxattr(t->fd, xi->name, xi->value, xi->value_size, 0);
	if (!r)
		return 0;
	if (!c->x->root && (errno == EPERM || errno == ENOTSUP)) {
		if (!c->x->warned_xattr) {
			struct imgfs_extract_notice n = {
				.kind = IMGFS_EXTRACT_NO_XATTRS,
				.path = extract_tpath(c->x, t),
				.what = xi->name,
			};

			extract_notice(c->x, &n);
		}
		c->x->warned_xattr = true;
		return 0;
	}
	extract_fail(c->x, extract_tpath(c->x, t), xi->name, errno);
	return 0;
}

static void set_xattrs(struct imgfs_extract *x, const struct imgfs_inode *inode,
		       const struct extract_target *t)
{
	struct xattr_ctx c = { .x = x, .t = t };
	struct imgfs_error err = { 0 };

	if (!inode->xattr_isize)
		return;
	if (imgfs_xattr_iterate(x->img, inode, false, xattr_cb, &c, &err) < 0)
		extract_fail(x, extract_tpath(x, t), err.msg, EIO);
}

static void set_owner(struct imgfs_extract *x, const struct imgfs_inode *inode,
		      const struct extract_target *t)
{
	if (!x->root) {
		if (!x->warned_owner) {
			struct imgfs_extract_notice n = {
				.kind = IMGFS_EXTRACT_NO_OWNERS,
			};

			extract_notice(x, &n);
		}
		x->warned_owner = true;
		return;
	}
	if (fchownat(t->fd, "", inode->uid, inode->gid,
		     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		extract_fail(x, extract_tpath(x, t), "chown", errno);
}

static void set_times(struct imgfs_extract *x, const struct imgfs_inode *inode,
		      const struct extract_target *t)
{
	struct timespec ts[2] = {
		{ .tv_sec = inode->mtime, .tv_nsec = inode->mtime_nsec },
		{ .tv_sec = inode->mtime, .tv_nsec = inode->mtime_nsec },
	};

	if (inode->mtime_nsec >= 1000000000u)
		ts[0].tv_nsec = ts[1].tv_nsec = 0;
	if (!utimensat(t->fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		return;
	/* kernels without AT_EMPTY_PATH here: the fd itself, or the /proc
	 * link of an O_PATH fd (it names the inode, even a symlink's) */
	if (errno != EINVAL || (t->opath ? utimensat(AT_FDCWD, t->proc, ts, 0)
					 : futimens(t->fd, ts)))
		extract_fail(x, extract_tpath(x, t), "set times", errno);
}

/* chmod of what @t holds, never of a name that may have changed since. */
static int set_mode(struct imgfs_extract *x, const struct extract_target *t,
		    mode_t mode)
{
	if (!t->opath)
		return fchmod(t->fd, mode);
	if (!x->no_fchmodat2) {
		if (!syscall(SYS_fchmodat2, t->fd, "", mode, AT_EMPTY_PATH))
			return 0;
		if (errno != ENOSYS)
			return -1;
		x->no_fchmodat2 = true;
	}
	/* older kernels: the /proc link of the O_PATH fd; the node was
	 * checked not to be a symlink, so this reaches the node itself */
	return chmod(t->proc, mode);
}

/*
 * Owner, mode, xattrs, times, in the order that keeps each one intact:
 * chown clears setuid bits, so chmod follows it; a POSIX ACL xattr sets the
 * group bits from its mask, so it comes after chmod (as with tar), keeping
 * the ACL exactly as stored in the image. Symlinks have no mode of their
 * own on Linux.
 */
void extract_set_meta(struct imgfs_extract *x, const struct imgfs_inode *inode,
		      const struct extract_target *t)
{
	set_owner(x, inode, t);
	if (!imgfs_inode_is_symlink(inode) &&
	    set_mode(x, t, inode->mode & 07777))
		extract_fail(x, extract_tpath(x, t), "chmod", errno);
	set_xattrs(x, inode, t);
	set_times(x, inode, t);
}
