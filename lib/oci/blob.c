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
#include <dirent.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "oci/internal.h"
#include "util/error.h"

char *oci_blob_path(const char *root, const struct oci_digest *d)
{
	char *p;

	if (asprintf(&p, "%s/blobs/sha256/%s", root, oci_digest_hex(d)) < 0)
		return NULL;
	return p;
}

/* "blobs/sha256/<hex>" */
static void blob_rel(const struct oci_digest *d, char rel[96])
{
	snprintf(rel, 96, "blobs/sha256/%s", oci_digest_hex(d));
}

static int reader_init(int fd, const struct oci_digest *d, uint64_t size,
		       struct oci_blob_reader *r, struct imgfs_error *err)
{
	r->fd = fd;
	r->h = oci_hash_new();
	if (!r->h) {
		oci_blob_close(r);
		return error_set(err, -ENOMEM, "out of memory");
	}
	r->want = *d;
	r->want_size = size;
	return 0;
}

int oci_blob_open_at(const char *root, const char *rel,
		     const struct oci_digest *d, uint64_t size,
		     struct oci_blob_reader *r, struct imgfs_error *err)
{
	struct imgfs_error e;
	int fd;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	imgfs_error_clear(&e);
	fd = oci_open_file(root, rel, &e);
	if (fd < 0)
		return error_set(err, fd, "blob %s: %s", d->str, e.msg);
	return reader_init(fd, d, size, r, err);
}

int oci_blob_open(const char *root, const struct oci_digest *d, uint64_t size,
		  struct oci_blob_reader *r, struct imgfs_error *err)
{
	char rel[96];

	blob_rel(d, rel);
	return oci_blob_open_at(root, rel, d, size, r, err);
}

int oci_blob_open_path(const char *path, const struct oci_digest *d,
		       uint64_t size, struct oci_blob_reader *r,
		       struct imgfs_error *err)
{
	char *dir = strdup(path), *slash;
	int ret;

	if (!dir) {
		memset(r, 0, sizeof(*r));
		r->fd = -1;
		return error_set(err, -ENOMEM, "out of memory");
	}
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		ret = oci_blob_open_at(dir, slash + 1, d, size, r, err);
	} else {
		ret = oci_blob_open_at(slash ? "/" : ".",
				       slash ? slash + 1 : dir, d, size, r,
				       err);
	}
	free(dir);
	return ret;
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
		return error_set(err, -errno, "blob %s: %s", r->want.str,
				 strerror(errno));
	}
	if (r->size + (uint64_t)n > r->want_size) {
		r->failed = true;
		return error_set(
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
		return error_set(err, -EIO, "blob %s: read failed",
				 r->want.str);
	while ((n = oci_blob_read(r, buf, sizeof(buf), err)) > 0)
		;
	if (n < 0)
		return (int)n;
	if (r->size != r->want_size)
		return error_set(
			err, -EBADMSG,
			"blob %s: %llu bytes, its descriptor gives %llu",
			r->want.str, (unsigned long long)r->size,
			(unsigned long long)r->want_size);
	oci_hash_final(r->h, &got);
	if (strcmp(got.str, r->want.str))
		return error_set(
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
		return error_set(
			err, -EFBIG,
			"blob %s: %llu bytes is too large for a JSON document",
			d->str, (unsigned long long)size);
	b = malloc((size_t)size + 1);
	if (!b)
		return error_set(err, -ENOMEM, "out of memory");
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

/*
 * Temporary names, for filesystems without O_TMPFILE:
 * ".imgfs-<6 random>-<pid>@<host>", so that a later run can tell a dead
 * writer's leftover (this host, no such process) from a live one's.
 */
#define TMP_PREFIX ".imgfs-"

static void host_name(char *host, size_t size)
{
	if (gethostname(host, size - 1))
		snprintf(host, size, "localhost");
	host[size - 1] = '\0';
	for (char *p = host; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-'))
			*p = '_';
}

bool oci_tmpname_parse(const char *name, long *pid, char *host, size_t size)
{
	const char *p = name + sizeof(TMP_PREFIX) - 1, *at;
	char *end;

	if (strncmp(name, TMP_PREFIX, sizeof(TMP_PREFIX) - 1))
		return false;
	if (strlen(p) < 7 || p[6] != '-' || !(at = strchr(p + 7, '@')))
		return false;
	errno = 0;
	*pid = strtol(p + 7, &end, 10);
	if (errno || end != at || *pid <= 0 || !at[1])
		return false;
	snprintf(host, size, "%s", at + 1);
	return true;
}

/* What a temporary name says of its writer, for messages. */
static void describe(const char *name, char *buf, size_t size)
{
	char host[72], mine[72];
	long pid;

	if (!oci_tmpname_parse(name, &pid, host, sizeof(host))) {
		snprintf(buf, size, "a writer that did not record itself");
		return;
	}
	host_name(mine, sizeof(mine));
	snprintf(buf, size, "%s (pid %ld on %s)",
		 strcmp(host, mine)		      ? "a writer on another host"
		 : kill((pid_t)pid, 0) && errno == ESRCH ? "a writer that died"
						      : "a running writer",
		 pid, host);
}

bool oci_tmpname_dead(const char *name)
{
	char host[72], mine[72];
	long pid;

	if (!oci_tmpname_parse(name, &pid, host, sizeof(host)))
		return false;
	host_name(mine, sizeof(mine));
	return !strcmp(host, mine) && kill((pid_t)pid, 0) && errno == ESRCH;
}

int oci_tmpname_scan(const char *root, const char *rel, bool remove,
		     imgfs_warn_fn fn, void *arg)
{
	struct dirent *de;
	DIR *d;
	int fd = oci_open(root, rel, O_RDONLY | O_DIRECTORY, 0), n = 0;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		char msg[512], who[160];

		if (strncmp(de->d_name, TMP_PREFIX, sizeof(TMP_PREFIX) - 1))
			continue;
		if (remove && (!oci_tmpname_dead(de->d_name) ||
			       unlinkat(dirfd(d), de->d_name, 0)))
			continue;
		n++;
		describe(de->d_name, who, sizeof(who));
		snprintf(msg, sizeof(msg), "%s/%s/%s: %stemporary file of %s",
			 root, rel, de->d_name, remove ? "removed the " : "a ",
			 who);
		if (fn)
			fn(msg, arg);
	}
	closedir(d);
	return n;
}

static void tmp_name(char *buf, size_t size)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	char host[64], rnd[7];
	uint8_t b[6];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		memset(b, 0, sizeof(b));
	for (int i = 0; i < 6; i++)
		rnd[i] = set[(b[i] ^ (uint8_t)rand()) % (sizeof(set) - 1)];
	rnd[6] = '\0';
	host_name(host, sizeof(host));
	snprintf(buf, size, TMP_PREFIX "%s-%ld@%s", rnd, (long)getpid(), host);
}

int oci_tmpfile_open(const char *root, const char *reldir,
		     struct oci_tmpfile *t, struct imgfs_error *err)
{
	char name[128];

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	if (asprintf(&t->dir, "%s/%s", root, reldir) < 0) {
		t->dir = NULL;
		return error_set(err, -ENOMEM, "out of memory");
	}
	t->dirfd = oci_dir_open(root, reldir, true, err);
	if (t->dirfd < 0) {
		int e = t->dirfd;

		oci_tmpfile_close(t);
		return e;
	}
	t->fd = openat(t->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	if (t->fd >= 0) {
		/* O_TMPFILE takes the umask into account: be readable */
		fchmod(t->fd, 0644);
		return 0;
	}
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
		int e = errno;

		oci_tmpfile_close(t);
		return error_set(err, -e, "%s: %s", root, strerror(e));
	}
	/* no O_TMPFILE: a hidden name, removed on failure */
	for (int i = 0; t->fd < 0 && i < 100; i++) {
		tmp_name(name, sizeof(name));
		t->fd = openat(t->dirfd, name,
			       O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
				       O_CLOEXEC,
			       0644);
		if (t->fd < 0 && errno != EEXIST)
			break;
	}
	if (t->fd < 0 || !(t->tmpname = strdup(name))) {
		int e = t->fd < 0 ? errno : ENOMEM;

		if (t->fd >= 0)
			unlinkat(t->dirfd, name, 0);
		oci_tmpfile_close(t);
		return error_set(err, -e, "%s: %s", root, strerror(e));
	}
	fchmod(t->fd, 0644);
	return 0;
}

/* Is @name in @dirfd a regular file whose SHA-256 is its name? */
static bool existing_ok(int dirfd, const char *name)
{
	struct oci_digest want;
	struct oci_blob_reader r;
	struct imgfs_error e;
	struct stat st;
	char full[80];
	int fd;
	bool ok;

	snprintf(full, sizeof(full), "sha256:%s", name);
	imgfs_error_clear(&e);
	if (oci_digest_parse(full, &want, "name", &e))
		return false;
	fd = oci_openat(dirfd, name, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0)
		return false;
	if (oci_fd_regular(fd) || fstat(fd, &st)) {
		close(fd);
		return false;
	}
	memset(&r, 0, sizeof(r));
	if (reader_init(fd, &want, (uint64_t)st.st_size, &r, &e))
		return false;
	ok = !oci_blob_finish(&r, &e);
	oci_blob_close(&r);
	return ok;
}

/* Link the open file @fd into @dirfd as @name, replacing what is there. */
static int link_replace(int fd, int dirfd, const char *dir, const char *name,
			struct imgfs_error *err)
{
	char proc[64], tmp[128];
	int i;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (i = 0; i < 100; i++) {
		tmp_name(tmp, sizeof(tmp));
		if (!linkat(AT_FDCWD, proc, dirfd, tmp, AT_SYMLINK_FOLLOW))
			break;
		if (errno != EEXIST)
			return error_set(err, -errno, "%s/%s: %s", dir, name,
					 strerror(errno));
	}
	if (i == 100)
		return error_set(err, -EEXIST, "%s: no temporary name", dir);
	if (renameat(dirfd, tmp, dirfd, name)) {
		int e = errno;

		unlinkat(dirfd, tmp, 0);
		return error_set(err, -e, "%s/%s: %s", dir, name, strerror(e));
	}
	return 0;
}

int oci_tmpfile_publish(struct oci_tmpfile *t, const char *name, bool replace,
			bool sync, struct imgfs_error *err)
{
	char proc[64];
	int ret = 0;

	if (sync && fsync(t->fd))
		return error_set(err, -errno, "%s/%s: %s", t->dir, name,
				 strerror(errno));
	if (t->tmpname) {
		/* what is already there is kept only if it is right */
		if (!replace && existing_ok(t->dirfd, name)) {
			unlinkat(t->dirfd, t->tmpname, 0);
		} else if (renameat(t->dirfd, t->tmpname, t->dirfd, name)) {
			return error_set(err, -errno, "%s/%s: %s", t->dir, name,
					 strerror(errno));
		}
		free(t->tmpname);
		t->tmpname = NULL;
		goto synced;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", t->fd);
	if (!replace) {
		if (!linkat(AT_FDCWD, proc, t->dirfd, name, AT_SYMLINK_FOLLOW))
			goto synced;
		if (errno != EEXIST)
			return error_set(err, -errno, "%s/%s: %s", t->dir, name,
					 strerror(errno));
		if (existing_ok(t->dirfd, name))
			goto synced;
	}
	ret = link_replace(t->fd, t->dirfd, t->dir, name, err);
	if (ret)
		return ret;
synced:
	if (sync && fsync(t->dirfd))
		ret = error_set(err, -EIO, "%s: cannot sync", t->dir);
	return ret;
}

void oci_tmpfile_close(struct oci_tmpfile *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	if (t->tmpname)
		unlinkat(t->dirfd, t->tmpname, 0);
	if (t->dirfd > 0)
		close(t->dirfd);
	t->dirfd = -1;
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
			return error_set(err, -errno, "%s: %s", what,
					 strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int oci_file_write(const char *root, const char *reldir, const char *name,
		   const void *buf, size_t len, bool sync,
		   struct imgfs_error *err)
{
	struct oci_tmpfile t;
	int ret = oci_tmpfile_open(root, reldir, &t, err);

	if (ret)
		return ret;
	ret = oci_write_all(t.fd, buf, len, name, err);
	if (!ret)
		ret = oci_tmpfile_publish(&t, name, true, sync, err);
	oci_tmpfile_close(&t);
	return ret;
}

int oci_blob_write(const char *root, const void *buf, size_t len,
		   struct oci_digest *d, bool sync, struct imgfs_error *err)
{
	struct oci_tmpfile t;
	int ret;

	if (oci_sha256_buf(buf, len, d))
		return error_set(err, -ENOMEM, "out of memory");
	ret = oci_tmpfile_open(root, "blobs/sha256", &t, err);
	if (ret)
		return ret;
	ret = oci_write_all(t.fd, buf, len, d->str, err);
	if (!ret)
		ret = oci_tmpfile_publish(&t, oci_digest_hex(d), false, sync,
					  err);
	oci_tmpfile_close(&t);
	return ret;
}

int oci_blob_copy(const char *src, const char *dst, const struct oci_digest *d,
		  uint64_t size, bool sync, struct imgfs_error *err)
{
	char rel[96];

	blob_rel(d, rel);
	return oci_blob_copy_at(src, rel, dst, d, size, sync, err);
}

/* @r (verified to its end) copied into @t */
static int copy_into(struct oci_blob_reader *r, struct oci_tmpfile *t,
		     const struct oci_digest *d, struct imgfs_error *err)
{
	char buf[65536];
	ssize_t n;
	int ret = 0;

	if (lseek(r->fd, 0, SEEK_SET) < 0)
		return error_set(err, -errno, "blob %s: %s", d->str,
				 strerror(errno));
	r->size = 0;
	oci_hash_free(r->h);
	r->h = oci_hash_new();
	if (!r->h)
		return error_set(err, -ENOMEM, "out of memory");
	while (!ret && (n = oci_blob_read(r, buf, sizeof(buf), err)) != 0)
		ret = n < 0 ? (int)n
			    : oci_write_all(t->fd, buf, (size_t)n, d->str, err);
	return ret ? ret : oci_blob_finish(r, err);
}

int oci_blob_copy_at(const char *sroot, const char *srel, const char *dst,
		     const struct oci_digest *d, uint64_t size, bool sync,
		     struct imgfs_error *err)
{
	struct oci_blob_reader r;
	struct oci_tmpfile t;
	int ret, dfd;

	dfd = oci_dir_open(dst, "blobs/sha256", true, err);
	if (dfd < 0)
		return dfd;
	/* already there: kept only once checked */
	if (existing_ok(dfd, oci_digest_hex(d))) {
		close(dfd);
		return 0;
	}
	ret = oci_blob_open_at(sroot, srel, d, size, &r, err);
	if (!ret)
		ret = oci_blob_finish(&r, err);
	if (ret)
		goto out;
	/* on the same filesystem: the checked file hard-linked (no copy) */
	if (!link_replace(r.fd, dfd, dst, oci_digest_hex(d), err)) {
		if (sync && fsync(dfd))
			ret = error_set(err, -EIO, "%s: cannot sync", dst);
		goto out;
	}
	imgfs_error_clear(err);
	ret = oci_tmpfile_open(dst, "blobs/sha256", &t, err);
	if (!ret) {
		ret = copy_into(&r, &t, d, err);
		if (!ret)
			ret = oci_tmpfile_publish(&t, oci_digest_hex(d), false,
						  sync, err);
		oci_tmpfile_close(&t);
	}
out:
	oci_blob_close(&r);
	close(dfd);
	return ret;
}

const char *oci_json_text(struct json_object *o, size_t *len)
{
	const char *s = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

	*len = strlen(s);
	return s;
}
