// SPDX-License-Identifier: MIT
/*
 * Opening what is under a layout, a destination or a cache directory:
 * never through a symbolic link, never out of the directory named, and
 * for reading only regular files (a FIFO would hang, a device never end).
 * openat2() with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel
 * has it, else one component at a time with O_NOFOLLOW. The directory
 * itself, as the user names it, is opened as any path.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#ifdef __has_include
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2_H 1
#endif
#endif

#include "oci/internal.h"
#include "util/error.h"

/* One component at a time: "." and ".." are refused, links too. */
static int walk_open(int dirfd, const char *rel, int flags, mode_t mode)
{
	char *p = strdup(rel), *s, *next;
	int cur = dirfd, fd = -ENOENT;

	if (!p)
		return -ENOMEM;
	for (s = p; s; s = next) {
		next = strchr(s, '/');
		if (next)
			*next++ = '\0';
		if (!*s || !strcmp(s, "..") || (!strcmp(s, ".") && next)) {
			fd = -EXDEV;
			break;
		}
		if (next)
			fd = openat(cur, s,
				    O_PATH | O_DIRECTORY | O_NOFOLLOW |
					    O_CLOEXEC);
		else
			fd = openat(cur, s, flags, mode);
		if (fd < 0)
			fd = -errno;
		if (cur != dirfd)
			close(cur);
		if (fd < 0 || !next)
			break;
		cur = fd;
	}
	free(p);
	return fd;
}

int oci_openat(int dirfd, const char *rel, int flags, mode_t mode)
{
	/* openat2() takes O_PATH with only a few other flags */
	flags |= O_NOFOLLOW | O_CLOEXEC | ((flags & O_PATH) ? 0 : O_NOCTTY);
#if defined(HAVE_OPENAT2_H) && defined(SYS_openat2)
	{
		struct open_how how = {
			.flags = (uint64_t)flags,
			.mode = (flags & (O_CREAT | __O_TMPFILE)) ? mode : 0,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
		};
		long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));

		if (fd >= 0)
			return (int)fd;
		if (errno != ENOSYS && errno != EPERM)
			return -errno;
	}
#endif
	return walk_open(dirfd, rel, flags, mode);
}

int oci_open(const char *root, const char *rel, int flags, mode_t mode)
{
	int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;

	if (dfd < 0)
		return -errno;
	fd = oci_openat(dfd, rel, flags, mode);
	close(dfd);
	return fd;
}

int oci_fd_regular(int fd)
{
	struct stat st;
	int fl;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK))
		return -errno;
	return 0;
}

static int file_error(int e, const char *root, const char *rel,
		      struct imgfs_error *err)
{
	if (e == -ELOOP || e == -EXDEV)
		return error_set(
			err, -ELOOP,
			"%s/%s: a symbolic link (links are not followed)", root,
			rel);
	if (e == -EINVAL)
		return error_set(err, -EINVAL, "%s/%s: not a regular file",
				 root, rel);
	return error_set(err, e, "%s/%s: %s", root, rel, strerror(-e));
}

int oci_open_file(const char *root, const char *rel, struct imgfs_error *err)
{
	int fd = oci_open(root, rel, O_RDONLY | O_NONBLOCK, 0), r;

	if (fd < 0)
		return file_error(fd, root, rel, err);
	r = oci_fd_regular(fd);
	if (r) {
		close(fd);
		return file_error(r, root, rel, err);
	}
	return fd;
}

/* mkdir -p of the directory the user names (as any path) */
static int mkdirs(const char *root)
{
	char *p = strdup(root);
	int ret = 0;

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; !ret; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			ret = -errno;
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return ret;
}

int oci_dir_open(const char *root, const char *rel, bool create,
		 struct imgfs_error *err)
{
	char *p = strdup(rel), *s, *next;
	int cur, fd = 0;

	if (!p)
		return error_set(err, -ENOMEM, "out of memory");
	if (create && (fd = mkdirs(root)) < 0) {
		fd = error_set(err, fd, "%s: %s", root, strerror(-fd));
		goto out;
	}
	cur = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0) {
		fd = error_set(err, -errno, "%s: %s", root, strerror(errno));
		goto out;
	}
	for (s = p; s && *s; s = next) {
		next = strchr(s, '/');
		if (next)
			*next++ = '\0';
		if (create && mkdirat(cur, s, 0755) && errno != EEXIST) {
			fd = -errno;
		} else {
			fd = oci_openat(cur, s, O_RDONLY | O_DIRECTORY, 0);
		}
		close(cur);
		if (fd < 0) {
			fd = file_error(fd == -ENOTDIR ? -ELOOP : fd, root, rel,
					err);
			goto out;
		}
		cur = fd;
	}
	fd = cur;
out:
	free(p);
	return fd;
}

int oci_read_fd(int fd, uint64_t max, char **buf, size_t *len, const char *what,
		struct imgfs_error *err)
{
	struct stat st;
	size_t got = 0;
	char *b;

	*buf = NULL;
	if (fstat(fd, &st))
		return error_set(err, -errno, "%s: %s", what, strerror(errno));
	if ((uint64_t)st.st_size > max)
		return error_set(
			err, -EFBIG,
			"%s: %llu bytes is more than the %llu a JSON document may have",
			what, (unsigned long long)st.st_size,
			(unsigned long long)max);
	b = malloc((size_t)max + 1);
	if (!b)
		return error_set(err, -ENOMEM, "out of memory");
	for (;;) {
		ssize_t n = read(fd, b + got, (size_t)max + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(b);
			return error_set(err, -errno, "%s: %s", what,
					 strerror(errno));
		}
		if (!n)
			break;
		got += (size_t)n;
		if (got > max) {
			free(b);
			return error_set(
				err, -EFBIG,
				"%s: more than the %llu bytes a JSON document may have",
				what, (unsigned long long)max);
		}
	}
	b[got] = '\0';
	*buf = b;
	*len = got;
	return 0;
}

int oci_json_parse(const char *buf, size_t len, struct json_object **out)
{
	struct json_tokener *tok = json_tokener_new();

	*out = NULL;
	if (!tok)
		return -ENOMEM;
	*out = json_tokener_parse_ex(tok, buf, (int)len);
	if (!*out || json_tokener_get_error(tok) != json_tokener_success ||
	    (size_t)json_tokener_get_parse_end(tok) != len ||
	    !json_object_is_type(*out, json_type_object)) {
		json_object_put(*out);
		*out = NULL;
	}
	json_tokener_free(tok);
	return *out ? 0 : -EINVAL;
}

int oci_read_json_file(const char *root, const char *rel,
		       struct json_object **out, struct imgfs_error *err)
{
	char what[PATH_MAX + 64], *buf;
	size_t len;
	int fd, ret;

	*out = NULL;
	fd = oci_open_file(root, rel, err);
	if (fd < 0)
		return fd;
	snprintf(what, sizeof(what), "%s/%s", root, rel);
	ret = oci_read_fd(fd, OCI_JSON_MAX, &buf, &len, what, err);
	close(fd);
	if (ret)
		return ret;
	ret = oci_json_parse(buf, len, out);
	free(buf);
	if (ret == -ENOMEM)
		return error_set(err, ret, "out of memory");
	if (ret)
		return error_set(err, -EBADMSG, "%s: not a JSON object", what);
	return 0;
}
