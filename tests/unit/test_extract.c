// SPDX-License-Identifier: MIT
/*
 * The extraction API (imgfs/extract.h) on a real image: a source tree
 * made here (directories with their own modes, a read-only one holding a
 * file, data, a hard link, a symlink, a FIFO, an xattr, times with
 * nanoseconds) is converted by mkfs.img, extracted with imgfs_extract()
 * and with the step-by-step calls fed by the checker, and each extraction
 * is compared with the source entry by entry (type, mode, owner, mtime,
 * size, content, symlink target, xattr, hard links, nothing extra). Then
 * the refusals: a non-empty target without IMGFS_EXTRACT_F_OVERWRITE is
 * left as it was, and the data limit stops the extraction.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "imgfs/check.h"
#include "imgfs/extract.h"
#include "imgfs/reader.h"
#include "unit.h"

static char tmp[] = "/tmp/imgfs-test-extract-XXXXXX";
static char mkfs[4096];

struct notices {
	unsigned int failed, limit, other;
};

static void collect(void *arg, const struct imgfs_extract_notice *n)
{
	struct notices *s = arg;

	if (n->kind == IMGFS_EXTRACT_FAILED) {
		fprintf(stderr, "test_extract: %s: %s: %s\n", n->path, n->what,
			strerror(n->errnum));
		s->failed++;
	} else if (n->kind == IMGFS_EXTRACT_LIMIT_REACHED) {
		CHECK(n->path && !strcmp(n->path, "/big"));
		CHECK(n->errnum == EFBIG && n->limit == 5 && n->written <= 5);
		s->limit++;
	} else {
		s->other++;
	}
}

static void put(const char *dir, const char *name, const char *data,
		mode_t mode)
{
	char p[8192];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, mode);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, data, strlen(data)) == (ssize_t)strlen(data));
	CHECK(fchmod(fd, mode) == 0);
	close(fd);
}

static void set_time(const char *dir, const char *name, time_t sec, long nsec)
{
	struct timespec ts[2] = { { sec, nsec }, { sec, nsec } };
	char p[8192];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	CHECK(utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW) == 0);
}

/* The source tree; directory times last, as creating entries sets them. */
static void make_source(const char *src)
{
	char p[8192];

	CHECK(mkdir(src, 0755) == 0);
	snprintf(p, sizeof(p), "%s/dir", src);
	CHECK(mkdir(p, 0750) == 0);
	snprintf(p, sizeof(p), "%s/dir/deeper", src);
	CHECK(mkdir(p, 0700) == 0);
	snprintf(p, sizeof(p), "%s/ro", src);
	CHECK(mkdir(p, 0755) == 0);
	put(src, "dir/file", "the content of a file\n", 0640);
	put(src, "dir/deeper/exec", "#!/bin/sh\nexit 0\n", 04755);
	put(src, "ro/inside", "kept below a read-only directory", 0444);
	put(src, "big", "more than five bytes of data", 0644);
	snprintf(p, sizeof(p), "%s/dir/file", src);
	CHECK(setxattr(p, "user.note", "a value", 7, 0) == 0);
	CHECK(chown(p, 1234, 567) == 0);
	{
		char q[8192];

		snprintf(q, sizeof(q), "%s/hard", src);
		CHECK(link(p, q) == 0);
	}
	snprintf(p, sizeof(p), "%s/sym", src);
	CHECK(symlink("dir/file", p) == 0);
	snprintf(p, sizeof(p), "%s/fifo", src);
	CHECK(mkfifo(p, 0620) == 0);
	set_time(src, "dir/file", 1500000000, 123456789);
	set_time(src, "dir/deeper/exec", 1400000000, 1);
	set_time(src, "ro/inside", 1300000000, 0);
	set_time(src, "big", 1600000000, 999999999);
	set_time(src, "sym", 1200000000, 5);
	set_time(src, "fifo", 1100000000, 0);
	set_time(src, "dir/deeper", 1000000000, 42);
	set_time(src, "dir", 1000000001, 0);
	snprintf(p, sizeof(p), "%s/ro", src);
	CHECK(chmod(p, 0555) == 0);
	set_time(src, "ro", 1000000002, 7);
}

static int run_mkfs(const char *src, const char *img)
{
	char *argv[] = { mkfs, "-q", (char *)src, (char *)img, NULL };
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		execv(mkfs, argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool same_file_data(const char *a, const char *b)
{
	char ba[256], bb[256];
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	size_t na = 0, nb = 0;

	if (fa)
		na = fread(ba, 1, sizeof(ba), fa);
	if (fb)
		nb = fread(bb, 1, sizeof(bb), fb);
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return fa && fb && na == nb && !memcmp(ba, bb, na);
}

/* Compare @a (source) and @b (extracted) below them; count the entries. */
static void compare_tree(const char *a, const char *b, unsigned int *count)
{
	struct dirent *de;
	DIR *d = opendir(a);
	unsigned int in_b = 0;

	CHECK(d != NULL);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char pa[4096], pb[4096];
		struct stat sa, sb;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(pa, sizeof(pa), "%s/%s", a, de->d_name);
		snprintf(pb, sizeof(pb), "%s/%s", b, de->d_name);
		(*count)++;
		CHECK(lstat(pa, &sa) == 0);
		CHECK(lstat(pb, &sb) == 0);
		if (lstat(pb, &sb)) {
			fprintf(stderr, "test_extract: %s missing\n", pb);
			continue;
		}
		CHECK(sa.st_mode == sb.st_mode);
		CHECK(sa.st_uid == sb.st_uid && sa.st_gid == sb.st_gid);
		CHECK(sa.st_mtim.tv_sec == sb.st_mtim.tv_sec);
		CHECK(sa.st_mtim.tv_nsec == sb.st_mtim.tv_nsec);
		CHECK(sa.st_nlink == sb.st_nlink);
		if (S_ISREG(sa.st_mode)) {
			char va[64], vb[64];
			ssize_t la = lgetxattr(pa, "user.note", va, sizeof(va));
			ssize_t lb = lgetxattr(pb, "user.note", vb, sizeof(vb));

			CHECK(sa.st_size == sb.st_size);
			CHECK(same_file_data(pa, pb));
			CHECK(la == lb &&
			      (la < 0 || !memcmp(va, vb, (size_t)la)));
		} else if (S_ISLNK(sa.st_mode)) {
			char ta[256] = "", tb[256] = "";

			CHECK(readlink(pa, ta, sizeof(ta) - 1) > 0);
			CHECK(readlink(pb, tb, sizeof(tb) - 1) > 0);
			CHECK(!strcmp(ta, tb));
		} else if (S_ISDIR(sa.st_mode)) {
			compare_tree(pa, pb, count);
		}
	}
	closedir(d);
	/* nothing extra in the extraction */
	d = opendir(b);
	CHECK(d != NULL);
	while (d && (de = readdir(d)))
		in_b += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	d = opendir(a);
	while (d && (de = readdir(d)))
		in_b -= strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	CHECK(in_b == 0);
}

static void check_links(const char *out)
{
	char p[8192], q[8192];
	struct stat a, b;

	snprintf(p, sizeof(p), "%s/hard", out);
	snprintf(q, sizeof(q), "%s/dir/file", out);
	CHECK(lstat(p, &a) == 0 && lstat(q, &b) == 0);
	CHECK(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
}

/* imgfs_extract() in one call, then the refusal of a non-empty target. */
static void test_one_call(struct imgfs_image *img, const char *src,
			  const char *out)
{
	struct imgfs_extract_options o;
	struct imgfs_extract_result res = { 0 };
	struct imgfs_error err = { 0 };
	struct notices s = { 0 };
	unsigned int count = 0;
	char marker[8192];
	struct stat st;

	imgfs_extract_options_init(&o);
	o.notice = collect;
	o.notice_arg = &s;
	CHECK(imgfs_extract(img, out, &o, &res, &err) == 0);
	CHECK(res.failures == 0 && s.failed == 0 && !res.limit_reached);
	compare_tree(src, out, &count);
	CHECK(count == 10);
	CHECK(res.entries == count);
	check_links(out);

	/* a non-empty target is refused, and left as it was */
	snprintf(marker, sizeof(marker), "%s/dir/file", out);
	CHECK(chmod(marker, 0600) == 0);
	imgfs_error_clear(&err);
	CHECK(imgfs_extract(img, out, &o, &res, &err) == -ENOTEMPTY);
	CHECK(err.code == -ENOTEMPTY && strstr(err.msg, out) != NULL);
	CHECK(lstat(marker, &st) == 0 && (st.st_mode & 07777) == 0600);

	/* with overwriting it is replaced */
	o.flags = IMGFS_EXTRACT_F_OVERWRITE;
	imgfs_error_clear(&err);
	CHECK(imgfs_extract(img, out, &o, &res, &err) == 0);
	CHECK(res.failures == 0 && s.failed == 0);
	count = 0;
	compare_tree(src, out, &count);
	check_links(out);
}

/* The step-by-step form, fed by the checker's entries. */
static void test_with_checker(struct imgfs_image *img, const char *src,
			      const char *out)
{
	struct imgfs_extract_options o;
	struct imgfs_extract_result res = { 0 };
	struct imgfs_check_options co;
	struct imgfs_check_result cres = { 0 };
	struct imgfs_error err = { 0 };
	struct imgfs_extract *x = NULL;
	struct notices s = { 0 };
	unsigned int count = 0;

	imgfs_extract_options_init(&o);
	o.notice = collect;
	o.notice_arg = &s;
	CHECK(imgfs_extract_new(img, out, &o, &x, &err) == 0);
	if (!x)
		return;
	imgfs_check_options_init(&co);
	co.entry = imgfs_extract_check_entry;
	co.entry_arg = x;
	CHECK(imgfs_check_image(img, &co, &cres, &err) == 0);
	CHECK(cres.errors == 0);
	CHECK(imgfs_extract_finish(x, &res, &err) == 0);
	imgfs_extract_free(x);
	CHECK(res.failures == 0 && s.failed == 0);
	compare_tree(src, out, &count);
	CHECK(res.entries == count && count == 10);
	check_links(out);
}

/* A data limit of 5 bytes: the file beyond it is named, the rest stops. */
static void test_limit(struct imgfs_image *img, const char *out)
{
	struct imgfs_extract_options o;
	struct imgfs_extract_result res = { 0 };
	struct imgfs_error err = { 0 };
	struct notices s = { 0 };

	imgfs_extract_options_init(&o);
	o.limit = 5;
	o.notice = collect;
	o.notice_arg = &s;
	CHECK(imgfs_extract(img, out, &o, &res, &err) == 0);
	CHECK(res.limit_reached && s.limit == 1 && res.failures == 1);
	CHECK(res.data_bytes <= 5);
}

static void path(char *buf, const char *name)
{
	snprintf(buf, 4096, "%s/%s", tmp, name);
}

int main(void)
{
	char src[4096], image[4096], out1[4096], out2[4096], out3[4096];
	const char *top = getenv("top_builddir");
	struct imgfs_image *img = NULL;
	struct imgfs_error err = { 0 };

	snprintf(mkfs, sizeof(mkfs), "%s/mkfs/mkfs.img", top ? top : ".");
	if (access(mkfs, X_OK)) {
		fprintf(stderr, "test_extract: %s not built\n", mkfs);
		return 77;
	}
	if (geteuid() != 0) {
		/* owners, the setuid bit and xattrs need root to compare */
		fprintf(stderr, "test_extract: needs root\n");
		return 77;
	}
	if (!mkdtemp(tmp))
		return 99;
	path(src, "src");
	path(image, "src.img");
	path(out1, "out1");
	path(out2, "out2");
	path(out3, "out3");
	make_source(src);
	CHECK(run_mkfs(src, image) == 0);
	CHECK(imgfs_image_open(image, 0, &img, &err) == 0);
	if (img) {
		test_one_call(img, src, out1);
		test_with_checker(img, src, out2);
		test_limit(img, out3);
		imgfs_image_close(img);
	}
	if (!unit_failures) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			execlp("rm", "rm", "-rf", tmp, (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, &st, 0);
	}
	return unit_done("test_extract");
}
