// SPDX-License-Identifier: MIT
/*
 * extract.c - fsck.img --extract: write the image's tree into a directory.
 *
 * Everything is created relative to the target directory's fd. Parent
 * directories are opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)
 * (or component by component with O_NOFOLLOW where openat2 is missing), and
 * the final component is always created with O_EXCL / mkdirat / symlinkat /
 * mknodat, which never follow a symlink. So a hostile image cannot make us
 * write outside the directory, whatever names and symlinks it holds.
 * Directory metadata is applied at the end, deepest first, so that
 * read-only modes and mtimes survive the creation of their children.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "imgfs/format.h"
#include "fsck.h"

#define COPY_BUFSZ (1u << 20)

struct xdir {
	char *path;
	uint64_t nid;
};

struct fsck_extract {
	int rootfd;
	struct imgfs_image *img;
	bool overwrite;
	bool root;
	bool warned_owner;
	bool warned_xattr;
	bool no_openat2;
	struct xdir *dirs;
	size_t nr_dirs, cap_dirs;
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
	fprintf(stderr, "fsck.img: extract %s: %s: %s\n", path, what,
		strerror(errnum));
	x->failures++;
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

/* Open directory @rel (relative, no leading '/') beneath the root. */
static int open_beneath(struct fsck_extract *x, const char *rel)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	char comp[IMGFS_NAME_MAX + 1];
	const char *p = rel;
	int fd, next;

	if (!*rel)
		return fcntl(x->rootfd, F_DUPFD_CLOEXEC, 0);
	if (!x->no_openat2) {
		fd = (int)syscall(SYS_openat2, x->rootfd, rel, &how,
				  sizeof(how));
		if (fd >= 0 || errno != ENOSYS)
			return fd;
		x->no_openat2 = true;
	}
	fd = fcntl(x->rootfd, F_DUPFD_CLOEXEC, 0);
	while (fd >= 0 && *p) {
		size_t len = strcspn(p, "/");

		if (!len || len > IMGFS_NAME_MAX || (len == 2 && !memcmp(p, "..", 2)) ||
		    (len == 1 && *p == '.')) {
			close(fd);
			errno = EINVAL;
			return -1;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		next = openat(fd, comp, how.flags);
		close(fd);
		fd = next;
		p += len;
		while (*p == '/')
			p++;
	}
	return fd;
}

/* Split "/a/b/c" into an fd for "a/b" and the name "c". */
static int open_parent(struct fsck_extract *x, const char *path,
		       const char **name)
{
	const char *rel = path + strspn(path, "/");
	const char *slash = strrchr(rel, '/');
	char parent[8192];
	size_t len;

	if (!slash) {
		*name = rel;
		return open_beneath(x, "");
	}
	len = (size_t)(slash - rel);
	if (len >= sizeof(parent)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(parent, rel, len);
	parent[len] = '\0';
	*name = slash + 1;
	return open_beneath(x, parent);
}

/* Remove whatever is at @name (for --overwrite), never following links. */
static void remove_existing(struct fsck_extract *x, int pfd, const char *name)
{
	if (!x->overwrite)
		return;
	if (unlinkat(pfd, name, 0) && errno == EISDIR)
		unlinkat(pfd, name, AT_REMOVEDIR);
}

struct xattr_ctx {
	struct fsck_extract *x;
	int fd; /* >= 0: fsetxattr */
	const char *lpath; /* else lsetxattr on this /proc path */
	const char *path;
};

static int xattr_cb(void *arg, const struct imgfs_xattr_info *xi)
{
	struct xattr_ctx *c = arg;
	int r;

	if (c->fd >= 0)
		r = fsetxattr(c->fd, xi->name, xi->value, xi->value_size, 0);
	else
		r = lsetxattr(c->lpath, xi->name, xi->value, xi->value_size, 0);
	if (!r)
		return 0;
	if (!c->x->root && (errno == EPERM || errno == ENOTSUP)) {
		if (!c->x->warned_xattr)
			fprintf(stderr, "fsck.img: extract: not root, some xattrs (e.g. %s on %s) are not restored\n",
				xi->name, c->path);
		c->x->warned_xattr = true;
		return 0;
	}
	fail(c->x, c->path, xi->name, errno);
	return 0;
}

static void set_xattrs(struct fsck_extract *x, const struct imgfs_inode *inode,
		       const char *path, int fd, int pfd, const char *name)
{
	char lpath[64 + IMGFS_NAME_MAX];
	struct xattr_ctx c = { .x = x, .fd = fd, .path = path };
	struct imgfs_error err = { 0 };

	if (!inode->xattr_isize)
		return;
	if (fd < 0) {
		snprintf(lpath, sizeof(lpath), "/proc/self/fd/%d/%s", pfd, name);
		c.lpath = lpath;
	}
	if (imgfs_xattr_iterate(x->img, inode, false, xattr_cb, &c, &err) < 0)
		fail(x, path, err.msg, EIO);
}

static void set_owner(struct fsck_extract *x, const struct imgfs_inode *inode,
		      const char *path, int fd, int pfd, const char *name)
{
	int r;

	if (!x->root) {
		if (!x->warned_owner)
			fprintf(stderr, "fsck.img: extract: not root, owners are not restored\n");
		x->warned_owner = true;
		return;
	}
	if (fd >= 0)
		r = fchown(fd, inode->uid, inode->gid);
	else
		r = fchownat(pfd, name, inode->uid, inode->gid,
			     AT_SYMLINK_NOFOLLOW);
	if (r)
		fail(x, path, "chown", errno);
}

static void set_times(struct fsck_extract *x, const struct imgfs_inode *inode,
		      const char *path, int fd, int pfd, const char *name)
{
	struct timespec ts[2] = {
		{ .tv_sec = inode->mtime, .tv_nsec = inode->mtime_nsec },
		{ .tv_sec = inode->mtime, .tv_nsec = inode->mtime_nsec },
	};
	int r;

	if (inode->mtime_nsec >= 1000000000u)
		ts[0].tv_nsec = ts[1].tv_nsec = 0;
	if (fd >= 0)
		r = futimens(fd, ts);
	else
		r = utimensat(pfd, name, ts, AT_SYMLINK_NOFOLLOW);
	if (r)
		fail(x, path, "set times", errno);
}

/*
 * Owner, mode, xattrs, times, in the order that keeps each one intact:
 * chown clears setuid bits, so chmod follows it; a POSIX ACL xattr sets the
 * group bits from its mask, so it comes after chmod (as with tar), keeping
 * the ACL exactly as stored in the image.
 */
static void set_meta(struct fsck_extract *x, const struct imgfs_inode *inode,
		     const char *path, int fd, int pfd, const char *name)
{
	bool lnk = imgfs_inode_is_symlink(inode);
	int r = 0;

	set_owner(x, inode, path, fd, pfd, name);
	if (fd >= 0)
		r = fchmod(fd, inode->mode & 07777);
	else if (!lnk)
		r = fchmodat(pfd, name, inode->mode & 07777, 0);
	if (r)
		fail(x, path, "chmod", errno);
	set_xattrs(x, inode, path, fd, pfd, name);
	set_times(x, inode, path, fd, pfd, name);
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
	set_meta(x, inode, path, c.fd, pfd, name);
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
			return -1;
		}
		return symlinkat(target, pfd, name);
	}
	if ((type == 0020000 || type == 0060000) && !x->root) {
		fprintf(stderr, "fsck.img: extract %s: device node skipped (not root)\n",
			path);
		return 1;
	}
	return mknodat(pfd, name, type | 0600,
		       makedev(imgfs_dev_major(inode->rdev),
			       imgfs_dev_minor(inode->rdev)));
}

static void write_node(struct fsck_extract *x, const struct imgfs_inode *inode,
		       const char *path, int pfd, const char *name)
{
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
	set_meta(x, inode, path, -1, pfd, name);
}

static int add_dir(struct fsck_extract *x, const char *path, uint64_t nid)
{
	if (x->nr_dirs == x->cap_dirs) {
		size_t cap = x->cap_dirs ? x->cap_dirs * 2 : 64;
		struct xdir *d = realloc(x->dirs, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		x->dirs = d;
		x->cap_dirs = cap;
	}
	x->dirs[x->nr_dirs].path = strdup(path);
	if (!x->dirs[x->nr_dirs].path)
		return -ENOMEM;
	x->dirs[x->nr_dirs++].nid = nid;
	return 0;
}

static void write_link(struct fsck_extract *x, const char *path,
		       const char *to, int pfd, const char *name)
{
	const char *oname;
	int ofd = open_parent(x, to, &oname);

	if (ofd < 0) {
		fail(x, path, "open link target directory", errno);
		return;
	}
	if (linkat(ofd, oname, pfd, name, 0)) {
		if (errno == EEXIST && x->overwrite) {
			remove_existing(x, pfd, name);
			if (linkat(ofd, oname, pfd, name, 0))
				fail(x, path, "link", errno);
		} else {
			fail(x, path, "link", errno);
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
	int pfd;

	if (!strcmp(e->path, "/"))
		return add_dir(x, e->path, inode->nid);
	pfd = open_parent(x, e->path, &name);
	if (pfd < 0) {
		fail(x, e->path, "open parent directory", errno);
		return 0;
	}
	x->written++;
	if (e->link_to) {
		write_link(x, e->path, e->link_to, pfd, name);
	} else if (imgfs_inode_is_dir(inode)) {
		if (mkdirat(pfd, name, 0700) &&
		    !(errno == EEXIST && x->overwrite))
			fail(x, e->path, "mkdir", errno);
		else if (add_dir(x, e->path, inode->nid)) {
			close(pfd);
			return -ENOMEM;
		}
	} else if (imgfs_inode_is_reg(inode)) {
		write_file(x, inode, e->path, pfd, name);
		if (x->over_limit) {
			close(pfd);
			return 1; /* stop the walk: nothing more is written */
		}
	} else {
		write_node(x, inode, e->path, pfd, name);
	}
	close(pfd);
	return 0;
}

static void finish_dir(struct fsck_extract *x, const struct xdir *d)
{
	struct imgfs_error err = { 0 };
	struct imgfs_inode inode;
	const char *name = ".";
	int pfd, fd;

	if (imgfs_inode_read(x->img, d->nid, &inode, &err)) {
		fail(x, d->path, err.msg, EIO);
		return;
	}
	pfd = strcmp(d->path, "/") ? open_parent(x, d->path, &name) :
				     open_beneath(x, "");
	if (pfd < 0) {
		fail(x, d->path, "open parent directory", errno);
		return;
	}
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fail(x, d->path, "open directory", errno);
	else
		set_meta(x, &inode, d->path, fd, pfd, name);
	if (fd >= 0)
		close(fd);
	close(pfd);
}

int fsck_extract_finish(struct fsck_extract *x, uint64_t *written,
			uint64_t *failures, struct imgfs_error *err)
{
	size_t i;

	for (i = x->nr_dirs; i-- > 0;) {
		finish_dir(x, &x->dirs[i]);
		free(x->dirs[i].path);
	}
	*written = x->written;
	*failures = x->failures;
	free(x->dirs);
	free(x->buf);
	close(x->rootfd);
	free(x);
	return 0;
}
