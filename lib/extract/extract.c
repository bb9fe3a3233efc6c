// SPDX-License-Identifier: MIT
/*
 * extract.c - the extraction step by step (imgfs/extract.h): the target
 * directory, one entry of the checker at a time, and the directories'
 * metadata at the end, deepest first, so that read-only modes and mtimes
 * survive the creation of their children.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extract/internal.h"
#include "imgfs/walk.h"
#include "util/error.h"
#include "util/sized.h"

/*
 * The cursor keeps at most this many directory fds in a row (fewer when
 * the limit on open files is low), see dirs.c.
 */
#define FD_WINDOW 64u

void imgfs_extract_options_init(struct imgfs_extract_options *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
}

/* Open (creating it if missing) the target directory, empty unless
 * overwriting. */
static int open_target(struct imgfs_extract *x, const char *dir,
		       struct imgfs_error *err)
{
	int empty;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return error_set(err, -errno, "cannot create %s: %s", dir,
				 strerror(errno));
	x->rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->rootfd < 0)
		return error_set(err, -errno, "cannot open %s: %s", dir,
				 strerror(errno));
	empty = extract_dir_is_empty(x->rootfd);
	if (empty < 0)
		return error_set(err, empty, "cannot read %s", dir);
	if (!empty && !x->overwrite)
		return error_set(err, -ENOTEMPTY, "%s is not empty", dir);
	return 0;
}

int imgfs_extract_new(struct imgfs_image *img, const char *dir,
		      const struct imgfs_extract_options *o,
		      struct imgfs_extract **xp, struct imgfs_error *err)
{
	struct imgfs_extract *x = calloc(1, sizeof(*x));
	int ret;

	*xp = NULL;
	if (!x)
		return error_set(err, -ENOMEM, "out of memory");
	x->rootfd = -1;
	imgfs_extract_options_init(&x->o);
	ret = o ? SIZED_IN(&x->o, o, sizeof(x->o), "extract options", err) : 0;
	if (ret) {
		free(x);
		return ret;
	}
	x->img = img;
	x->overwrite = x->o.flags & IMGFS_EXTRACT_F_OVERWRITE;
	x->root = geteuid() == 0;
	x->fd_budget = extract_fd_budget();
	x->window = x->fd_budget / 2 < FD_WINDOW ? x->fd_budget / 2 : FD_WINDOW;
	if (x->window < 2)
		x->window = 2;
	x->buf = malloc(EXTRACT_COPY_BUFSZ);
	ret = open_target(x, dir, err);
	if (!ret && !x->buf)
		ret = error_set(err, -ENOMEM, "out of memory");
	if (ret) {
		imgfs_extract_free(x);
		return ret;
	}
	*xp = x;
	return 0;
}

int imgfs_extract_check_entry(void *extract, const struct imgfs_check_entry *e)
{
	struct imgfs_extract *x = extract;
	const struct imgfs_inode *inode = e->inode;
	const char *name;
	size_t pidx;
	int pfd;

	if (!strcmp(e->path, "/"))
		return extract_add_root(x, inode->nid);
	name = strrchr(e->path, '/') + 1;
	pidx = extract_made_dir(x, e->parent_serial);
	if (pidx == SIZE_MAX || extract_bad_name(name)) {
		extract_fail(x, e->path,
			     pidx == SIZE_MAX ? "parent directory not extracted"
					      : "invalid name",
			     EINVAL);
		return 0;
	}
	x->res.entries++;
	if (e->link_to) {
		extract_write_link(x, e, pidx, name);
		return 0;
	}
	pfd = extract_cursor_goto(x, pidx);
	if (pfd < 0) {
		if (pfd == -ENOMEM)
			return pfd;
		extract_fail(x, e->path, "open parent directory", -pfd);
		return 0;
	}
	if (imgfs_inode_is_dir(inode)) {
		if (mkdirat(pfd, name, 0700) &&
		    !(errno == EEXIST && x->overwrite))
			extract_fail(x, e->path, "mkdir", errno);
		else if (e->serial != IMGFS_WALK_NO_SERIAL &&
			 extract_add_dir(x, e->serial, inode->nid, pidx, name))
			return -ENOMEM;
		return 0;
	}
	if (imgfs_inode_is_reg(inode)) {
		extract_write_file(x, inode, e->path, pfd, name);
		if (x->res.limit_reached)
			return 1; /* stop the walk: nothing more is written */
	} else {
		extract_write_node(x, inode, e->path, pfd, name);
	}
	return 0;
}

static void finish_dir(struct imgfs_extract *x, size_t i, char **pbuf)
{
	struct extract_target t = { .path = NULL };
	struct imgfs_error err = { 0 };
	struct imgfs_inode inode;
	int fd;

	if (imgfs_inode_read(x->img, x->dirs[i].nid, &inode, &err)) {
		extract_fail(x, extract_dir_path(x, i, pbuf), err.msg, EIO);
		return;
	}
	fd = extract_cursor_goto(x, i);
	if (fd < 0) {
		extract_fail(x, extract_dir_path(x, i, pbuf), "open directory",
			     -fd);
		return;
	}
	t.fd = fd;
	t.dir = i;
	t.pbuf = pbuf;
	extract_set_meta(x, &inode, &t);
}

int imgfs_extract_finish(struct imgfs_extract *x,
			 struct imgfs_extract_result *res,
			 struct imgfs_error *err)
{
	char *pbuf = NULL;
	size_t i;

	(void)err;
	if (!x->finished) {
		/* deepest first: a directory's serial follows its parent's */
		for (i = x->nr_dirs; i-- > 0;)
			if (x->dirs[i].made)
				finish_dir(x, i, &pbuf);
		extract_cursor_close(x);
		free(pbuf);
		x->finished = true;
	}
	x->res.struct_size = sizeof(x->res);
	if (res)
		*res = x->res;
	return 0;
}

void imgfs_extract_free(struct imgfs_extract *x)
{
	size_t i;

	if (!x)
		return;
	extract_cursor_close(x);
	for (i = 0; i < x->nr_dirs; i++)
		free(x->dirs[i].name);
	free(x->dirs);
	free(x->lv);
	free(x->chain);
	free(x->buf);
	if (x->rootfd >= 0)
		close(x->rootfd);
	free(x);
}
