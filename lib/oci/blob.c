// SPDX-License-Identifier: MIT
/*
 * Blobs of a layout: read as a stream checked against the descriptor's
 * size and digest (a mismatch is an error naming the blob, found at the
 * latest when the stream ends, before anything derived from it is
 * published), and files written without a name (O_TMPFILE) and linked
 * into place once complete, so a killed run leaves no partial file under
 * a final name.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, O_TMPFILE, pipe2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "oci/internal.h"

/* JSON blobs (indexes, manifests, configs) larger than this are refused */
#define OCI_JSON_MAX (64u << 20)

char *oci_blob_path(const char *root, const struct oci_digest *d)
{
	char *p;

	if (asprintf(&p, "%s/blobs/sha256/%s", root, oci_digest_hex(d)) < 0)
		return NULL;
	return p;
}

int oci_blob_open(const char *root, const struct oci_digest *d, uint64_t size,
		  struct oci_blob_reader *r, struct imgfs_error *err)
{
	char *path = oci_blob_path(root, d);
	int ret;

	if (!path) {
		memset(r, 0, sizeof(*r));
		r->fd = -1;
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	}
	ret = oci_blob_open_path(path, d, size, r, err);
	free(path);
	return ret;
}

int oci_blob_open_path(const char *path, const struct oci_digest *d,
		       uint64_t size, struct oci_blob_reader *r,
		       struct imgfs_error *err)
{
	memset(r, 0, sizeof(*r));
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return imgfs_error_set(err, -errno, "blob %s: %s", d->str,
				       strerror(errno));
	r->h = oci_hash_new();
	if (!r->h) {
		oci_blob_close(r);
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	}
	r->want = *d;
	r->want_size = size;
	return 0;
}

ssize_t oci_blob_read(struct oci_blob_reader *r, void *buf, size_t len,
		      struct imgfs_error *err)
{
	ssize_t n;

	do
		n = read(r->fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		r->failed = true;
		return imgfs_error_set(err, -errno, "blob %s: %s", r->want.str,
				       strerror(errno));
	}
	if (r->size + (uint64_t)n > r->want_size) {
		r->failed = true;
		return imgfs_error_set(
			err, -EBADMSG,
			"blob %s: larger than the %llu bytes its descriptor gives",
			r->want.str, (unsigned long long)r->want_size);
	}
	oci_hash_update(r->h, buf, (size_t)n);
	r->size += (uint64_t)n;
	return n;
}

int oci_blob_finish(struct oci_blob_reader *r, struct imgfs_error *err)
{
	struct oci_digest got;
	char buf[65536];
	ssize_t n;

	if (r->failed)
		return imgfs_error_set(err, -EIO, "blob %s: read failed",
				       r->want.str);
	while ((n = oci_blob_read(r, buf, sizeof(buf), err)) > 0)
		;
	if (n < 0)
		return (int)n;
	if (r->size != r->want_size)
		return imgfs_error_set(
			err, -EBADMSG,
			"blob %s: %llu bytes, its descriptor gives %llu",
			r->want.str, (unsigned long long)r->size,
			(unsigned long long)r->want_size);
	oci_hash_final(r->h, &got);
	if (strcmp(got.str, r->want.str))
		return imgfs_error_set(
			err, -EBADMSG,
			"blob %s: its content has digest %s (corrupted)",
			r->want.str, got.str);
	return 0;
}

void oci_blob_close(struct oci_blob_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	oci_hash_free(r->h);
	r->h = NULL;
}

int oci_blob_load(const char *root, const struct oci_digest *d, uint64_t size,
		  char **buf, struct imgfs_error *err)
{
	struct oci_blob_reader r;
	size_t got = 0;
	char *b;
	int ret;

	*buf = NULL;
	if (size > OCI_JSON_MAX)
		return imgfs_error_set(
			err, -EFBIG,
			"blob %s: %llu bytes is too large for a JSON document",
			d->str, (unsigned long long)size);
	b = malloc((size_t)size + 1);
	if (!b)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	ret = oci_blob_open(root, d, size, &r, err);
	while (!ret && got < size) {
		ssize_t n = oci_blob_read(&r, b + got, (size_t)size - got, err);

		if (n < 0)
			ret = (int)n;
		else if (n == 0)
			break;
		got += (size_t)n;
	}
	if (!ret)
		ret = oci_blob_finish(&r, err);
	oci_blob_close(&r);
	if (ret) {
		free(b);
		return ret;
	}
	b[size] = '\0';
	*buf = b;
	return 0;
}

int oci_mkdirs(const char *path, struct imgfs_error *err)
{
	char *p = strdup(path);

	if (!p)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	for (char *s = p + 1;; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST) {
			int e = errno;

			imgfs_error_set(err, -e, "%s: %s", p, strerror(e));
			free(p);
			return -e;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return 0;
}

int oci_tmpfile_open(const char *dir, struct oci_tmpfile *t,
		     struct imgfs_error *err)
{
	memset(t, 0, sizeof(*t));
	t->dir = strdup(dir);
	if (!t->dir)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	t->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	if (t->fd >= 0) {
		/* O_TMPFILE takes the umask into account: be readable */
		fchmod(t->fd, 0644);
		return 0;
	}
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
		int e = errno;

		oci_tmpfile_close(t);
		return imgfs_error_set(err, -e, "%s: %s", dir, strerror(e));
	}
	/* no O_TMPFILE: a hidden name, removed on failure */
	if (asprintf(&t->tmpname, "%s/.imgfs-XXXXXX", dir) < 0) {
		t->tmpname = NULL;
		oci_tmpfile_close(t);
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	}
	t->fd = mkostemp(t->tmpname, O_CLOEXEC);
	if (t->fd < 0) {
		int e = errno;

		free(t->tmpname);
		t->tmpname = NULL;
		oci_tmpfile_close(t);
		return imgfs_error_set(err, -e, "%s: %s", dir, strerror(e));
	}
	fchmod(t->fd, 0644);
	return 0;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	r = fsync(fd) ? -errno : 0;
	close(fd);
	return r;
}

int oci_tmpfile_publish(struct oci_tmpfile *t, const char *name, bool replace,
			bool sync, struct imgfs_error *err)
{
	char *target = NULL, *tmp = NULL, proc[64];
	int ret = 0;

	if (sync && fsync(t->fd))
		return imgfs_error_set(err, -errno, "%s/%s: %s", t->dir, name,
				       strerror(errno));
	if (asprintf(&target, "%s/%s", t->dir, name) < 0)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	if (t->tmpname) {
		if (!replace && !access(target, F_OK)) {
			unlink(t->tmpname);
		} else if (rename(t->tmpname, target)) {
			ret = imgfs_error_set(err, -errno, "%s: %s", target,
					      strerror(errno));
			goto out;
		}
		free(t->tmpname);
		t->tmpname = NULL;
		goto synced;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", t->fd);
	if (!replace) {
		if (linkat(AT_FDCWD, proc, AT_FDCWD, target,
			   AT_SYMLINK_FOLLOW) &&
		    errno != EEXIST) {
			ret = imgfs_error_set(err, -errno, "%s: %s", target,
					      strerror(errno));
			goto out;
		}
		goto synced;
	}
	for (unsigned int i = 0;; i++) {
		free(tmp);
		if (asprintf(&tmp, "%s/.imgfs-%ld-%u", t->dir, (long)getpid(),
			     i) < 0) {
			tmp = NULL;
			ret = imgfs_error_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		if (!linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW))
			break;
		if (errno != EEXIST) {
			ret = imgfs_error_set(err, -errno, "%s: %s", tmp,
					      strerror(errno));
			goto out;
		}
	}
	if (rename(tmp, target)) {
		ret = imgfs_error_set(err, -errno, "%s: %s", target,
				      strerror(errno));
		unlink(tmp);
		goto out;
	}
synced:
	if (sync && fsync_dir(t->dir) < 0)
		ret = imgfs_error_set(err, -EIO, "%s: cannot sync", t->dir);
out:
	free(tmp);
	free(target);
	return ret;
}

void oci_tmpfile_close(struct oci_tmpfile *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	if (t->tmpname)
		unlink(t->tmpname);
	free(t->tmpname);
	t->tmpname = NULL;
	free(t->dir);
	t->dir = NULL;
}

int oci_write_all(int fd, const void *buf, size_t len, const char *what,
		  struct imgfs_error *err)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return imgfs_error_set(err, -errno, "%s: %s", what,
					       strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_named(const char *dir, const char *name, const void *buf,
		       size_t len, bool replace, bool sync,
		       struct imgfs_error *err)
{
	struct oci_tmpfile t;
	int ret = oci_tmpfile_open(dir, &t, err);

	if (ret)
		return ret;
	ret = oci_write_all(t.fd, buf, len, name, err);
	if (!ret)
		ret = oci_tmpfile_publish(&t, name, replace, sync, err);
	oci_tmpfile_close(&t);
	return ret;
}

int oci_blob_write(const char *root, const void *buf, size_t len,
		   struct oci_digest *d, bool sync, struct imgfs_error *err)
{
	char *dir;
	int ret;

	if (oci_sha256_buf(buf, len, d))
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	if (asprintf(&dir, "%s/blobs/sha256", root) < 0)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	ret = write_named(dir, oci_digest_hex(d), buf, len, false, sync, err);
	free(dir);
	return ret;
}

int oci_file_write(const char *dir, const char *name, const void *buf,
		   size_t len, bool sync, struct imgfs_error *err)
{
	return write_named(dir, name, buf, len, true, sync, err);
}

int oci_blob_copy(const char *src, const char *dst, const struct oci_digest *d,
		  uint64_t size, bool sync, struct imgfs_error *err)
{
	char *path = oci_blob_path(src, d);
	int ret;

	if (!path)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	ret = oci_blob_copy_path(path, dst, d, size, sync, err);
	free(path);
	return ret;
}

int oci_blob_copy_path(const char *path, const char *dst,
		       const struct oci_digest *d, uint64_t size, bool sync,
		       struct imgfs_error *err)
{
	struct oci_blob_reader r;
	struct oci_tmpfile t;
	char *dir = NULL, *target = oci_blob_path(dst, d);
	char buf[65536];
	ssize_t n;
	int ret;

	if (!target)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	/* already there: published only ever after verification */
	if (!access(target, F_OK)) {
		free(target);
		return 0;
	}
	free(target);
	if (asprintf(&dir, "%s/blobs/sha256", dst) < 0)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	/* on the same filesystem: check it, then hard-link it (no copy) */
	ret = oci_blob_open_path(path, d, size, &r, err);
	if (!ret)
		ret = oci_blob_finish(&r, err);
	oci_blob_close(&r);
	if (ret) {
		free(dir);
		return ret;
	}
	target = oci_blob_path(dst, d);
	if (!target) {
		free(dir);
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	}
	if (!link(path, target) || errno == EEXIST) {
		ret = sync && fsync_dir(dir) < 0
			      ? imgfs_error_set(err, -EIO, "%s: cannot sync",
						dir)
			      : 0;
		free(target);
		free(dir);
		return ret;
	}
	free(target);
	ret = oci_blob_open_path(path, d, size, &r, err);
	if (ret) {
		free(dir);
		return ret;
	}
	ret = oci_tmpfile_open(dir, &t, err);
	while (!ret && (n = oci_blob_read(&r, buf, sizeof(buf), err)) != 0) {
		if (n < 0)
			ret = (int)n;
		else
			ret = oci_write_all(t.fd, buf, (size_t)n, d->str, err);
	}
	if (!ret)
		ret = oci_blob_finish(&r, err);
	if (!ret)
		ret = oci_tmpfile_publish(&t, oci_digest_hex(d), false, sync,
					  err);
	if (t.dir)
		oci_tmpfile_close(&t);
	oci_blob_close(&r);
	free(dir);
	return ret;
}

const char *oci_json_text(struct json_object *o, size_t *len)
{
	const char *s = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

	*len = strlen(s);
	return s;
}
