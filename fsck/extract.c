// SPDX-License-Identifier: MIT
/*
 * extract.c - fsck.img --extract: write the image's tree into a directory.
 *
 * Everything is created relative to a directory fd: each directory written
 * is recorded (nid, parent, name) and a cursor keeps fds along the path to
 * the directory in use, opening each component with O_NOFOLLOW relative to
 * its parent, so no path string is ever resolved (any depth works, past
 * PATH_MAX too). The final component is always created with O_EXCL /
 * mkdirat / symlinkat / mknodat, which never follow a symlink, and
 * metadata goes through fds: the file's own, or an O_PATH fd of the node
 * just created, checked to be that node. So neither a hostile image nor
 * another process swapping names for symlinks can make us write or chmod
 * outside the directory.
 * Directory metadata is applied at the end, deepest first, so that
 * read-only modes and mtimes survive the creation of their children.
 */
/* O_PATH, AT_EMPTY_PATH */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "imgfs/escape.h"
#include "imgfs/format.h"
#include "fsck.h"

#define COPY_BUFSZ (1u << 20)
/* The cursor keeps the fds of the deepest x->window (at most FD_WINDOW)
 * directories on its path, and one every x->window levels above them, so
 * moving to a parent or child, or back up after closing, reopens at most
 * that many directories. */
#define FD_WINDOW 64u

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/*
 * A directory of the image, at the index of its walk serial (the checker
 * hands them out: the root 0, then in the order met, parents first), so
 * no table by nid is needed; @made once it is written.
 */
struct xdir {
	uint64_t nid;
	char *name; /* NULL for the root */
	size_t parent; /* the root is its own parent */
	size_t depth;
	int fd; /* open while on the cursor's path and kept, else -1 */
	bool made;
};

struct fsck_extract {
	int rootfd;
	struct imgfs_image *img;
	bool overwrite;
	bool root;
	bool warned_owner;
	bool warned_xattr;
	bool no_fchmodat2;
	struct xdir *dirs;
	size_t nr_dirs, cap_dirs;
	/* the cursor: dirs[lv[k]] is at depth k on the current path */
	size_t *lv, nr_lv, cap_lv;
	size_t *chain, cap_chain; /* scratch for cursor_goto() */
	size_t open_fds, fd_budget, window;
	uint64_t written;
	uint64_t failures;
	uint64_t limit; /* --extract-limit, 0: none */
	uint64_t data; /* file data bytes written */
	bool over_limit;
	uint8_t *buf;
};

static void fail(struct fsck_extract *x, const char *path, const char *what,
		 int errnum)
{
	fputs("fsck.img: extract ", stderr);
	imgfs_escape_fputs(stderr, path, 0);
	fputs(": ", stderr);
	imgfs_escape_fputs(stderr, what, 0);
	fprintf(stderr, ": %s\n", strerror(errnum));
	x->failures++;
}

/* The library's vector helper is internal to it: a front end's own. */
static int grow_array(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static int dir_is_empty(int fd)
{
	int dup_fd = dup(fd);
	struct dirent *de;
	int empty = 1;
	DIR *d;

	if (dup_fd < 0)
		return -errno;
	d = fdopendir(dup_fd);
	if (!d) {
		close(dup_fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			empty = 0;
			break;
		}
	}
	closedir(d);
	return empty;
}

/*
 * Deep trees need one fd per kept level: raise the soft limit on open
 * files to the hard one, and use half of it.
 */
static size_t fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 256;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1u << 20)
		return 1u << 19;
	return rl.rlim_cur > 16 ? (size_t)(rl.rlim_cur / 2) : 8;
}

struct fsck_extract *fsck_extract_new(const char *dir, bool overwrite,
				      struct imgfs_image *img,
				      struct imgfs_error *err)
{
	struct fsck_extract *x = calloc(1, sizeof(*x));
	int empty;

	if (!x) {
		imgfs_error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	x->img = img;
	x->overwrite = overwrite;
	x->root = geteuid() == 0;
	x->fd_budget = fd_budget();
	x->window = x->fd_budget / 2 < FD_WINDOW ? x->fd_budget / 2 : FD_WINDOW;
	if (x->window < 2)
		x->window = 2;
	x->buf = malloc(COPY_BUFSZ);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		imgfs_error_set(err, -errno, "--extract: cannot create %s: %s",
				dir, strerror(errno));
		goto fail;
	}
	x->rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->rootfd < 0) {
		imgfs_error_set(err, -errno, "--extract: cannot open %s: %s",
				dir, strerror(errno));
		goto fail;
	}
	empty = dir_is_empty(x->rootfd);
	if (empty < 0) {
		imgfs_error_set(err, empty, "--extract: cannot read %s", dir);
		goto fail_fd;
	}
	if (!empty && !overwrite) {
		imgfs_error_set(err, -ENOTEMPTY,
				"--extract: %s is not empty (use --overwrite)",
				dir);
		goto fail_fd;
	}
	if (x->buf)
		return x;
	imgfs_error_set(err, -ENOMEM, "out of memory");
fail_fd:
	close(x->rootfd);
fail:
	free(x->buf);
	free(x);
	return NULL;
}

/* ---- the cursor: an fd for any directory written, at any depth */

static void lv_close(struct fsck_extract *x, size_t level)
{
	struct xdir *d = &x->dirs[x->lv[level]];

	if (level && d->fd >= 0) {
		close(d->fd);
		d->fd = -1;
		x->open_fds--;
	}
}

/* Open level @level from the level below (which is open). */
static int lv_open(struct fsck_extract *x, size_t level)
{
	struct xdir *d = &x->dirs[x->lv[level]];
	int fd = openat(x->dirs[x->lv[level - 1]].fd, d->name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	d->fd = fd;
	x->open_fds++;
	return 0;
}

/* Level @level was just opened at the top: close the one leaving the
 * window unless it is a step level and fds remain. */
static void lv_trim(struct fsck_extract *x, size_t level)
{
	size_t m;

	if (level <= x->window)
		return;
	m = level - x->window;
	if (m % x->window || x->open_fds >= x->fd_budget)
		lv_close(x, m);
}

/* Make level @k open, reopening from the nearest open level below. */
static int lv_ensure(struct fsck_extract *x, size_t k)
{
	size_t j = k;
	int ret;

	while (x->dirs[x->lv[j]].fd < 0)
		j--;
	while (++j <= k) {
		ret = lv_open(x, j);
		if (ret)
			return ret;
		/* keep what lv_trim() would have kept, no more */
		if (j > 1 && k - (j - 1) >= x->window &&
		    ((j - 1) % x->window || x->open_fds >= x->fd_budget))
			lv_close(x, j - 1);
	}
	return 0;
}

/*
 * An fd for directory @t (index into x->dirs), borrowed from the cursor:
 * valid until the next call. Moving costs the tree distance from the
 * previous directory; every component is opened with O_NOFOLLOW relative
 * to its parent's fd, so no path string is ever resolved and nothing
 * outside the target directory can be reached.
 */
static int cursor_goto(struct fsck_extract *x, size_t t)
{
	size_t u = t, n = 0, k;
	int ret;

	while (x->dirs[u].depth >= x->nr_lv || x->lv[x->dirs[u].depth] != u) {
		if (grow_array((void **)&x->chain, &x->cap_chain, n + 1,
			       sizeof(*x->chain)))
			return -ENOMEM;
		x->chain[n++] = u;
		u = x->dirs[u].parent;
	}
	k = x->dirs[u].depth;
	while (x->nr_lv > k + 1)
		lv_close(x, --x->nr_lv);
	if (grow_array((void **)&x->lv, &x->cap_lv, k + 1 + n, sizeof(*x->lv)))
		return -ENOMEM;
	ret = lv_ensure(x, k);
	while (!ret && n) {
		x->lv[x->nr_lv] = x->chain[--n];
		ret = lv_open(x, x->nr_lv);
		if (!ret)
			lv_trim(x, x->nr_lv++);
	}
	if (ret) {
		/* leave the cursor consistent: everything above k closed */
		return ret;
	}
	return x->dirs[t].fd;
}

/* Directory @serial, written under directory @parent (made). */
static int add_dir(struct fsck_extract *x, uint64_t serial, uint64_t nid,
		   size_t parent, const char *name)
{
	struct xdir *d;

	if (serial >= SIZE_MAX / sizeof(*x->dirs) ||
	    grow_array((void **)&x->dirs, &x->cap_dirs, (size_t)serial + 1,
		       sizeof(*x->dirs)))
		return -ENOMEM;
	/* serials of directories not written leave holes */
	for (; x->nr_dirs <= serial; x->nr_dirs++)
		x->dirs[x->nr_dirs] = (struct xdir){ .fd = -1 };
	d = &x->dirs[serial];
	if (d->made)
		return 0;
	d->nid = nid;
	d->parent = serial ? parent : 0;
	d->depth = serial ? x->dirs[parent].depth + 1 : 0;
	d->fd = -1;
	d->name = name ? strdup(name) : NULL;
	if (name && !d->name)
		return -ENOMEM;
	d->made = true;
	return 0;
}

/* The directory of @serial if it was written, else SIZE_MAX. */
static size_t made_dir(const struct fsck_extract *x, uint64_t serial)
{
	if (serial >= x->nr_dirs || !x->dirs[serial].made)
		return SIZE_MAX;
	return (size_t)serial;
}

/* The root directory: the cursor's level 0, always open. */
static int add_root(struct fsck_extract *x, uint64_t nid)
{
	if (x->nr_dirs)
		return 0;
	if (add_dir(x, 0, nid, 0, NULL) ||
	    grow_array((void **)&x->lv, &x->cap_lv, 1, sizeof(*x->lv)))
		return -ENOMEM;
	x->dirs[0].fd = x->rootfd;
	x->lv[0] = 0;
	x->nr_lv = 1;
	return 0;
}

/* Remove whatever is at @name (for --overwrite), never following links. */
static void remove_existing(struct fsck_extract *x, int pfd, const char *name)
{
	if (!x->overwrite)
		return;
	if (unlinkat(pfd, name, 0) && errno == EISDIR)
		unlinkat(pfd, name, AT_REMOVEDIR);
}

/*
 * Where metadata goes: @fd is an fd opened for reading or writing (regular
 * files, directories), or an O_PATH fd of a node we just created and
 * checked (FIFO, device, symlink); never a name resolved again.
 */
struct meta_target {
	const char *path; /* for messages; NULL: directory @dir */
	size_t dir;
	char **pbuf; /* where that directory's path is built */
	int fd;
	bool opath;
	char proc[32]; /* "/proc/self/fd/N" for O_PATH fds */
};

static const char *dir_path(struct fsck_extract *x, size_t i, char **buf);

/* The path of @t, built only when a message needs it (a directory's path
 * costs its depth). */
static const char *tpath(struct fsck_extract *x, const struct meta_target *t)
{
	return t->path ? t->path : dir_path(x, t->dir, t->pbuf);
}

struct xattr_ctx {
	struct fsck_extract *x;
	const struct meta_target *t;
};

static int xattr_cb(void *arg, const struct imgfs_xattr_info *xi)
{
	struct xattr_ctx *c = arg;
	const struct meta_target *t = c->t;
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
			fprintf(stderr,
				"fsck.img: extract: not root, some xattrs (e.g. %s on ",
				xi->name);
			imgfs_escape_fputs(stderr, tpath(c->x, t), 0);
			fputs(") are not restored\n", stderr);
		}
		c->x->warned_xattr = true;
		return 0;
	}
	fail(c->x, tpath(c->x, t), xi->name, errno);
	return 0;
}

static void set_xattrs(struct fsck_extract *x, const struct imgfs_inode *inode,
		       const struct meta_target *t)
{
	struct xattr_ctx c = { .x = x, .t = t };
	struct imgfs_error err = { 0 };

	if (!inode->xattr_isize)
		return;
	if (imgfs_xattr_iterate(x->img, inode, false, xattr_cb, &c, &err) < 0)
		fail(x, tpath(x, t), err.msg, EIO);
}

static void set_owner(struct fsck_extract *x, const struct imgfs_inode *inode,
		      const struct meta_target *t)
{
	if (!x->root) {
		if (!x->warned_owner)
			fprintf(stderr, "fsck.img: extract: not root, owners are not restored\n");
		x->warned_owner = true;
		return;
	}
	if (fchownat(t->fd, "", inode->uid, inode->gid,
		     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		fail(x, tpath(x, t), "chown", errno);
}

static void set_times(struct fsck_extract *x, const struct imgfs_inode *inode,
		      const struct meta_target *t)
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
		fail(x, tpath(x, t), "set times", errno);
}

/* chmod of what @t holds, never of a name that may have changed since. */
static int set_mode(struct fsck_extract *x, const struct meta_target *t,
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
static void set_meta(struct fsck_extract *x, const struct imgfs_inode *inode,
		     const struct meta_target *t)
{
	set_owner(x, inode, t);
	if (!imgfs_inode_is_symlink(inode) &&
	    set_mode(x, t, inode->mode & 07777))
		fail(x, tpath(x, t), "chmod", errno);
	set_xattrs(x, inode, t);
	set_times(x, inode, t);
}

struct copy_ctx {
	struct fsck_extract *x;
	const struct imgfs_inode *inode;
	int fd;
	struct imgfs_error err;
};

static int copy_extent(void *arg, const struct imgfs_extent *ext)
{
	struct copy_ctx *c = arg;
	uint64_t done = 0;

	if (ext->kind == IMGFS_EXTENT_HOLE)
		return 0;
	while (done < ext->length) {
		uint64_t left = ext->length - done;
		size_t n = left < COPY_BUFSZ ? (size_t)left : COPY_BUFSZ;
		ssize_t got = imgfs_read(c->x->img, c->inode,
					 ext->logical + done, c->x->buf, n,
					 &c->err);

		if (got <= 0)
			return got < 0 ? (int)got : -EIO;
		if (c->x->limit && (uint64_t)got > c->x->limit - c->x->data) {
			c->x->over_limit = true;
			return imgfs_error_set(&c->err, -EFBIG,
					       "file data beyond --extract-limit=%llu bytes (%llu written)",
					       (unsigned long long)c->x->limit,
					       (unsigned long long)c->x->data);
		}
		c->x->data += (uint64_t)got;
		if (pwrite(c->fd, c->x->buf, (size_t)got,
			   (off_t)(ext->logical + done)) != got)
			return imgfs_error_set(&c->err, -errno ? -errno : -EIO,
					       "write: %s", strerror(errno));
		done += (uint64_t)got;
	}
	return 0;
}

static void write_file(struct fsck_extract *x, const struct imgfs_inode *inode,
		       const char *path, int pfd, const char *name)
{
	struct copy_ctx c = { .x = x, .inode = inode };
	struct meta_target t = { .path = path };
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;

	c.fd = openat(pfd, name, flags, 0600);
	if (c.fd < 0 && errno == EEXIST && x->overwrite) {
		remove_existing(x, pfd, name);
		c.fd = openat(pfd, name, flags, 0600);
	}
	if (c.fd < 0) {
		fail(x, path, "create", errno);
		return;
	}
	if (imgfs_extent_iterate(x->img, inode, copy_extent, &c, &c.err) < 0)
		fail(x, path, c.err.code ? c.err.msg : "read",
		     c.err.code == -EFBIG ? EFBIG : EIO);
	else if (ftruncate(c.fd, (off_t)inode->size))
		fail(x, path, "truncate", errno);
	t.fd = c.fd;
	set_meta(x, inode, &t);
	if (close(c.fd))
		fail(x, path, "close", errno);
}

static int make_node(struct fsck_extract *x, const struct imgfs_inode *inode,
		     const char *path, int pfd, const char *name)
{
	char target[IMGFS_SYMLINK_MAX + 1];
	struct imgfs_error err = { 0 };
	uint32_t type = inode->mode & 0170000;

	if (type == 0120000) {
		if (imgfs_readlink(x->img, inode, target, sizeof(target),
				   &err) < 0) {
			fail(x, path, err.msg, EIO);
			return 1;
		}
		return symlinkat(target, pfd, name);
	}
	if ((type == 0020000 || type == 0060000) && !x->root) {
		fputs("fsck.img: extract ", stderr);
		imgfs_escape_fputs(stderr, path, 0);
		fputs(": device node skipped (not root)\n", stderr);
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
static int open_node(struct fsck_extract *x, const struct imgfs_inode *inode,
		     int pfd, const char *name, struct meta_target *t)
{
	struct stat st;

	t->fd = openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (t->fd < 0) {
		fail(x, tpath(x, t), "open the new node", errno);
		return -1;
	}
	if (fstat(t->fd, &st) ||
	    (st.st_mode & S_IFMT) != (inode->mode & 0170000) ||
	    st.st_uid != geteuid()) {
		fail(x, tpath(x, t), "node replaced while extracting", EEXIST);
		close(t->fd);
		return -1;
	}
	t->opath = true;
	snprintf(t->proc, sizeof(t->proc), "/proc/self/fd/%d", t->fd);
	return 0;
}

static void write_node(struct fsck_extract *x, const struct imgfs_inode *inode,
		       const char *path, int pfd, const char *name)
{
	struct meta_target t = { .path = path };
	int r = make_node(x, inode, path, pfd, name);

	if (r < 0 && errno == EEXIST && x->overwrite) {
		remove_existing(x, pfd, name);
		r = make_node(x, inode, path, pfd, name);
	}
	if (r > 0)
		return;
	if (r < 0) {
		fail(x, path, "create", errno);
		return;
	}
	if (open_node(x, inode, pfd, name, &t))
		return;
	set_meta(x, inode, &t);
	close(t.fd);
}

/* A name from the image that cannot be created as such. */
static bool bad_name(const char *name)
{
	return !*name || !strcmp(name, ".") || !strcmp(name, "..");
}

static void write_link(struct fsck_extract *x,
		       const struct imgfs_check_entry *e, size_t pidx,
		       const char *name)
{
	size_t li = made_dir(x, e->link_parent_serial);
	int ofd, pfd;

	/* the first path had one link only (a corrupt link count), or its
	 * directory was not written */
	if (li == SIZE_MAX || e->inode->nlink <= 1 || !e->link_name ||
	    bad_name(e->link_name)) {
		fail(x, e->path, "hard link target was not recorded", ENOENT);
		return;
	}
	ofd = cursor_goto(x, li);
	if (ofd >= 0 && (ofd = fcntl(ofd, F_DUPFD_CLOEXEC, 0)) < 0)
		ofd = -errno;
	if (ofd < 0) {
		fail(x, e->path, "open link target directory", -ofd);
		return;
	}
	pfd = cursor_goto(x, pidx);
	if (pfd < 0) {
		fail(x, e->path, "open parent directory", -pfd);
	} else if (linkat(ofd, e->link_name, pfd, name, 0)) {
		if (errno == EEXIST && x->overwrite) {
			remove_existing(x, pfd, name);
			if (linkat(ofd, e->link_name, pfd, name, 0))
				fail(x, e->path, "link", errno);
		} else {
			fail(x, e->path, "link", errno);
		}
	}
	close(ofd);
}

void fsck_extract_set_limit(struct fsck_extract *x, uint64_t bytes)
{
	x->limit = bytes;
}

int fsck_extract_entry(void *arg, const struct imgfs_check_entry *e)
{
	struct fsck_extract *x = arg;
	const struct imgfs_inode *inode = e->inode;
	const char *name;
	size_t pidx;
	int pfd;

	if (!strcmp(e->path, "/"))
		return add_root(x, inode->nid);
	name = strrchr(e->path, '/') + 1;
	pidx = made_dir(x, e->parent_serial);
	if (pidx == SIZE_MAX || bad_name(name)) {
		fail(x, e->path,
		     pidx == SIZE_MAX ? "parent directory not extracted"
				      : "invalid name",
		     EINVAL);
		return 0;
	}
	x->written++;
	if (e->link_to) {
		write_link(x, e, pidx, name);
		return 0;
	}
	pfd = cursor_goto(x, pidx);
	if (pfd < 0) {
		if (pfd == -ENOMEM)
			return pfd;
		fail(x, e->path, "open parent directory", -pfd);
		return 0;
	}
	if (imgfs_inode_is_dir(inode)) {
		if (mkdirat(pfd, name, 0700) &&
		    !(errno == EEXIST && x->overwrite))
			fail(x, e->path, "mkdir", errno);
		else if (e->serial != IMGFS_WALK_NO_SERIAL &&
			 add_dir(x, e->serial, inode->nid, pidx, name))
			return -ENOMEM;
		return 0;
	}
	if (imgfs_inode_is_reg(inode)) {
		write_file(x, inode, e->path, pfd, name);
		if (x->over_limit)
			return 1; /* stop the walk: nothing more is written */
	} else {
		write_node(x, inode, e->path, pfd, name);
	}
	return 0;
}

/* Path of directory @i for messages (built only when one is printed). */
static const char *dir_path(struct fsck_extract *x, size_t i, char **buf)
{
	size_t len = 0, pos, l, j;

	for (j = i; j; j = x->dirs[j].parent)
		len += 1 + strlen(x->dirs[j].name);
	free(*buf);
	*buf = malloc(len + 2);
	if (!*buf)
		return "?";
	strcpy(*buf, "/");
	if (!len)
		return *buf;
	(*buf)[len] = '\0';
	for (j = i, pos = len; j; j = x->dirs[j].parent) {
		l = strlen(x->dirs[j].name);
		pos -= l;
		memcpy(*buf + pos, x->dirs[j].name, l);
		(*buf)[--pos] = '/';
	}
	return *buf;
}

static void finish_dir(struct fsck_extract *x, size_t i, char **pbuf)
{
	struct meta_target t = { .path = NULL };
	struct imgfs_error err = { 0 };
	struct imgfs_inode inode;
	int fd;

	if (imgfs_inode_read(x->img, x->dirs[i].nid, &inode, &err)) {
		fail(x, dir_path(x, i, pbuf), err.msg, EIO);
		return;
	}
	fd = cursor_goto(x, i);
	if (fd < 0) {
		fail(x, dir_path(x, i, pbuf), "open directory", -fd);
		return;
	}
	t.fd = fd;
	t.dir = i;
	t.pbuf = pbuf;
	set_meta(x, &inode, &t);
}

int fsck_extract_finish(struct fsck_extract *x, uint64_t *written,
			uint64_t *failures, struct imgfs_error *err)
{
	char *pbuf = NULL;
	size_t i;

	(void)err;
	/* deepest first: the entries came breadth first */
	for (i = x->nr_dirs; i-- > 0;)
		if (x->dirs[i].made)
			finish_dir(x, i, &pbuf);
	while (x->nr_lv > 1)
		lv_close(x, --x->nr_lv);
	for (i = 0; i < x->nr_dirs; i++) {
		if (i && x->dirs[i].fd >= 0)
			close(x->dirs[i].fd);
		free(x->dirs[i].name);
	}
	*written = x->written;
	*failures = x->failures;
	free(pbuf);
	free(x->dirs);
	free(x->lv);
	free(x->chain);
	free(x->buf);
	close(x->rootfd);
	free(x);
	return 0;
}
