// SPDX-License-Identifier: MIT
/*
 * dirs.c - the directories an extraction writes, and a cursor that gives
 * an fd for any of them at any depth.
 *
 * Each directory written is recorded (nid, parent, name) and the cursor
 * keeps fds along the path to the directory in use, opening each
 * component with O_NOFOLLOW relative to its parent's fd, so no path
 * string is ever resolved and nothing outside the target directory can be
 * reached, whatever the depth.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "extract/internal.h"
#include "util/vec.h"

int extract_dir_is_empty(int fd)
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
size_t extract_fd_budget(void)
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

static void lv_close(struct imgfs_extract *x, size_t level)
{
	struct extract_dir *d = &x->dirs[x->lv[level]];

	if (level && d->fd >= 0) {
		close(d->fd);
		d->fd = -1;
		x->open_fds--;
	}
}

/* Open level @level from the level below (which is open). */
static int lv_open(struct imgfs_extract *x, size_t level)
{
	struct extract_dir *d = &x->dirs[x->lv[level]];
	int fd = openat(x->dirs[x->lv[level - 1]].fd, d->name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	d->fd = fd;
	x->open_fds++;
	return 0;
}

/*
 * The cursor keeps the fds of the deepest x->window directories on its
 * path, and one every x->window levels above them, so moving to a parent
 * or child, or back up after closing, reopens at most that many. Level
 * @level was just opened at the top: close the one leaving the window
 * unless it is a step level and fds remain.
 */
static void lv_trim(struct imgfs_extract *x, size_t level)
{
	size_t m;

	if (level <= x->window)
		return;
	m = level - x->window;
	if (m % x->window || x->open_fds >= x->fd_budget)
		lv_close(x, m);
}

/* Make level @k open, reopening from the nearest open level below. */
static int lv_ensure(struct imgfs_extract *x, size_t k)
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
 * previous directory. Returns the fd or a negative errno.
 */
int extract_cursor_goto(struct imgfs_extract *x, size_t t)
{
	size_t u = t, n = 0, k;
	int ret;

	while (x->dirs[u].depth >= x->nr_lv || x->lv[x->dirs[u].depth] != u) {
		if (IMGFS_VEC_RESERVE(x->chain, x->cap_chain, n + 1, 16))
			return -ENOMEM;
		x->chain[n++] = u;
		u = x->dirs[u].parent;
	}
	k = x->dirs[u].depth;
	while (x->nr_lv > k + 1)
		lv_close(x, --x->nr_lv);
	if (IMGFS_VEC_RESERVE(x->lv, x->cap_lv, k + 1 + n, 16))
		return -ENOMEM;
	ret = lv_ensure(x, k);
	while (!ret && n) {
		x->lv[x->nr_lv] = x->chain[--n];
		ret = lv_open(x, x->nr_lv);
		if (!ret)
			lv_trim(x, x->nr_lv++);
	}
	/* on failure the cursor stays consistent: everything above k closed */
	if (ret)
		return ret;
	return x->dirs[t].fd;
}

/* Close every fd of the cursor but the target directory's own. */
void extract_cursor_close(struct imgfs_extract *x)
{
	size_t i;

	while (x->nr_lv > 1)
		lv_close(x, --x->nr_lv);
	for (i = 1; i < x->nr_dirs; i++) {
		if (x->dirs[i].fd >= 0) {
			close(x->dirs[i].fd);
			x->dirs[i].fd = -1;
		}
	}
}

/* Directory @serial, written under directory @parent (made). */
int extract_add_dir(struct imgfs_extract *x, uint64_t serial, uint64_t nid,
		    size_t parent, const char *name)
{
	struct extract_dir *d;

	if (serial >= SIZE_MAX / sizeof(*x->dirs) ||
	    IMGFS_VEC_RESERVE(x->dirs, x->cap_dirs, (size_t)serial + 1, 16))
		return -ENOMEM;
	/* serials of directories not written leave holes */
	for (; x->nr_dirs <= serial; x->nr_dirs++)
		x->dirs[x->nr_dirs] = (struct extract_dir){ .fd = -1 };
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
size_t extract_made_dir(const struct imgfs_extract *x, uint64_t serial)
{
	if (serial >= x->nr_dirs || !x->dirs[serial].made)
		return SIZE_MAX;
	return (size_t)serial;
}

/* The root directory: the cursor's level 0, always open. */
int extract_add_root(struct imgfs_extract *x, uint64_t nid)
{
	if (x->nr_dirs)
		return 0;
	if (extract_add_dir(x, 0, nid, 0, NULL) ||
	    IMGFS_VEC_RESERVE(x->lv, x->cap_lv, 1, 16))
		return -ENOMEM;
	x->dirs[0].fd = x->rootfd;
	x->lv[0] = 0;
	x->nr_lv = 1;
	return 0;
}

/* Path of directory @i for messages (built only when one is needed: it
 * costs the depth). */
const char *extract_dir_path(struct imgfs_extract *x, size_t i, char **buf)
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
