// SPDX-License-Identifier: MIT
/*
 * Image output files: the image is built in a file that has no name (or,
 * where the filesystem cannot make one, a short hidden name) in the
 * target's directory, and is given the target's name only once complete
 * and synced. A run that dies leaves the target untouched and, in the
 * unnamed case, nothing at all behind.
 */
#define _GNU_SOURCE /* O_TMPFILE, AT_EMPTY_PATH */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "imgfs/writer.h"
#include "util/error.h"

/* ".imgfs-" and 6 random characters: short whatever the target's name */
#define TMP_NAME_LEN 13
#define TMP_TRIES 100

struct imgfs_output {
	char *target; /* as given, for messages */
	char *base; /* last component of target */
	char *dir; /* target's directory */
	char *tmp_path; /* dir/tmp_name, while that name exists */
	int dirfd;
	int fd;
	bool named; /* fallback: tmp_name exists in the directory */
	bool no_sync; /* the caller syncs: commit only renames */
	bool committed;
	char tmp_name[TMP_NAME_LEN + 1];
	char proc_path[32]; /* /proc/self/fd/N */
};

static const char *type_name(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return "a directory";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	}
	return "not a regular file";
}

/*
 * Only a regular file (or nothing) may be replaced. A symbolic link is
 * refused rather than followed: renaming over it would replace the link,
 * and following it could make a privileged run replace whatever file
 * someone else's link points to.
 */
static int check_target(int dirfd, const struct imgfs_output *o,
			struct imgfs_error *err)
{
	char link[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (fstatat(dirfd, o->base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		return error_set(err, -errno, "%s: %s", o->target,
				 strerror(errno));
	}
	if (S_ISREG(st.st_mode))
		return 0;
	if (!S_ISLNK(st.st_mode))
		return error_set(
			err, -EEXIST,
			"%s: is %s; only a regular file is replaced by an image",
			o->target, type_name(st.st_mode));
	n = readlinkat(dirfd, o->base, link, sizeof(link) - 1);
	link[n < 0 ? 0 : n] = '\0';
	return error_set(
		err, -EEXIST,
		"%s: is a symbolic link to %s; give the path of the file itself",
		o->target, link);
}

/* Split @target into its directory (opened) and last component. */
static int open_dir(struct imgfs_output *o, struct imgfs_error *err)
{
	const char *slash = strrchr(o->target, '/');

	o->base = strdup(slash ? slash + 1 : o->target);
	if (!o->base)
		return error_set(err, -ENOMEM, "out of memory");
	if (!*o->base || !strcmp(o->base, ".") || !strcmp(o->base, ".."))
		return error_set(err, -EISDIR,
				 "%s: names a directory, not a file",
				 o->target);
	if (!slash)
		o->dir = strdup(".");
	else if (slash == o->target)
		o->dir = strdup("/");
	else
		o->dir = strndup(o->target, (size_t)(slash - o->target));
	if (!o->dir)
		return error_set(err, -ENOMEM, "out of memory");
	o->dirfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (o->dirfd < 0)
		return error_set(err, -errno, "%s: directory %s: %s", o->target,
				 o->dir, strerror(errno));
	return 0;
}

static int random_name(char name[TMP_NAME_LEN + 1])
{
	static const char set[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[6];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -EIO;
	memcpy(name, ".imgfs-", 7);
	for (int i = 0; i < 6; i++)
		name[7 + i] = set[r[i] % (sizeof(set) - 1)];
	name[TMP_NAME_LEN] = '\0';
	return 0;
}

static int set_named(struct imgfs_output *o)
{
	size_t len = strlen(o->dir) + 1 + TMP_NAME_LEN + 1;

	/* set first: abort removes the name even if the copy fails */
	o->named = true;
	free(o->tmp_path);
	o->tmp_path = malloc(len);
	if (!o->tmp_path)
		return -ENOMEM;
	snprintf(o->tmp_path, len, "%s/%s", o->dir, o->tmp_name);
	return 0;
}

/* Filesystems without O_TMPFILE: a named file, created exclusively. */
static int create_named(struct imgfs_output *o)
{
	for (int i = 0; i < TMP_TRIES; i++) {
		if (random_name(o->tmp_name))
			return -EIO;
		o->fd = openat(o->dirfd, o->tmp_name,
			       O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (o->fd >= 0)
			return set_named(o);
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int create_file(struct imgfs_output *o, struct imgfs_error *err)
{
	int ret = 0;

	/* the mode is subject to the umask, as for any new file */
	o->fd = openat(o->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
	if (o->fd < 0) {
		ret = -errno;
		/* filesystems (or kernels) that cannot make unnamed files */
		if (ret == -EOPNOTSUPP || ret == -EISDIR || ret == -EINVAL)
			ret = create_named(o);
	}
	if (ret)
		return error_set(
			err, ret,
			"%s: cannot create the image in its directory: %s",
			o->target, strerror(-ret));
	snprintf(o->proc_path, sizeof(o->proc_path), "/proc/self/fd/%d",
		 o->fd);
	return 0;
}

struct imgfs_output *imgfs_output_open(const char *target,
				       struct imgfs_error *err)
{
	struct imgfs_output *o = calloc(1, sizeof(*o));

	if (!o || !(o->target = strdup(target))) {
		free(o);
		error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	o->dirfd = -1;
	o->fd = -1;
	if (open_dir(o, err) || check_target(o->dirfd, o, err) ||
	    create_file(o, err)) {
		imgfs_output_abort(o);
		return NULL;
	}
	return o;
}

int imgfs_output_fd(const struct imgfs_output *o)
{
	return o->fd;
}

const char *imgfs_output_temp_path(const struct imgfs_output *o)
{
	return o->named ? o->tmp_path : NULL;
}

/* Give the unnamed file @name in the target's directory. */
static int link_fd(struct imgfs_output *o, const char *name)
{
	/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH: /proc first */
	if (!linkat(AT_FDCWD, o->proc_path, o->dirfd, name, AT_SYMLINK_FOLLOW))
		return 0;
	if (errno == ENOENT &&
	    !linkat(o->fd, "", o->dirfd, name, AT_EMPTY_PATH))
		return 0;
	return -errno;
}

/*
 * linkat() cannot replace a file: for an existing target, give the file a
 * short unique name, then rename that over the target.
 */
static int link_unnamed(struct imgfs_output *o)
{
	for (int i = 0; i < TMP_TRIES; i++) {
		int ret;

		if (random_name(o->tmp_name))
			return -EIO;
		ret = link_fd(o, o->tmp_name);
		if (!ret)
			return set_named(o);
		if (ret != -EEXIST)
			return ret;
	}
	return -EEXIST;
}

/* Put the file in place of the target: 1 when it is there already. */
static int place(struct imgfs_output *o)
{
	int ret;

	if (o->named)
		return 0;
	/* no target yet: the file takes its name at once, atomically */
	ret = link_fd(o, o->base);
	if (ret != -EEXIST)
		return ret ? ret : 1;
	return link_unnamed(o);
}

int imgfs_output_commit(struct imgfs_output *o, struct imgfs_error *err)
{
	int ret;

	if (o->committed)
		return 0;
	if (!o->no_sync && fsync(o->fd) < 0)
		return error_set(err, -errno, "%s: fsync: %s", o->target,
				 strerror(errno));
	/* the target may have changed since it was checked */
	ret = check_target(o->dirfd, o, err);
	if (ret)
		return ret;
	ret = place(o);
	if (ret < 0)
		return error_set(
			err, ret,
			"%s: cannot link the image into its directory: %s",
			o->target, strerror(-ret));
	if (!ret && renameat(o->dirfd, o->tmp_name, o->dirfd, o->base) < 0)
		return error_set(err, -errno, "%s: rename: %s", o->target,
				 strerror(errno));
	o->named = false;
	o->committed = true;
	/* the new name must survive a crash too */
	if (!o->no_sync && fsync(o->dirfd) < 0)
		return error_set(err, -errno, "%s: fsync of its directory: %s",
				 o->target, strerror(errno));
	return 0;
}

void imgfs_output_set_sync(struct imgfs_output *o, bool sync)
{
	o->no_sync = !sync;
}

void imgfs_output_abort(struct imgfs_output *o)
{
	if (!o)
		return;
	if (o->named && !o->committed)
		unlinkat(o->dirfd, o->tmp_name, 0);
	if (o->fd >= 0)
		close(o->fd);
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->tmp_path);
	free(o->dir);
	free(o->base);
	free(o->target);
	free(o);
}
