// SPDX-License-Identifier: MIT
/*
 * The writer's entry calls and imgfs_convert(), without libarchive.
 *
 *   test_entry_api build IMAGE [lz4]  build an image through the entry calls
 *                                     only, check it with the library's
 *                                     checker
 *   test_entry_api compare DIR        compare the mounted image at DIR with
 *                                     what "build" added (entry_api.sh)
 *   test_entry_api                    imgfs_convert() and misuse of the
 *                                     entry calls: errors, nothing left
 *                                     behind
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "imgfs/check.h"
#include "imgfs/reader.h"
#include "imgfs/writer.h"
#include "frontend/error.h"
#include "unit.h"

#define BUILD_TIME 1600000000
#define MIB (1024 * 1024)
#define BIG_SIZE (5 * MIB + 123)
#define SPARSE_SIZE (16ull * MIB)

/* Contents of the big file: compressible in places, not in others. */
static uint8_t big_byte(uint64_t off)
{
	if ((off / 65536) % 2)
		return (uint8_t)((off / 64) % 251);
	return (uint8_t)((off * 0x9E3779B97F4A7C15ull) >> 56);
}

/* The sparse file: data in these ranges, holes elsewhere. */
static const struct imgfs_data_range sparse_map[] = {
	{ 4096, 4096 },
	{ 10 * MIB, 100 },
};

static uint8_t sparse_byte(uint64_t off)
{
	for (size_t i = 0; i < 2; i++)
		if (off >= sparse_map[i].offset &&
		    off - sparse_map[i].offset < sparse_map[i].length)
			return (uint8_t)(off % 253 + 1);
	return 0;
}

static const char big_xattr_seed = 'q';

static void big_xattr(char *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = (char)(big_xattr_seed + i % 7);
}

static int fail_err(const char *what, const struct imgfs_error *err)
{
	fprintf(stderr, "%s: %s\n", what, err->msg);
	return 1;
}

static struct imgfs_entry entry(const char *path, uint32_t mode)
{
	struct imgfs_entry e = {
		.struct_size = sizeof(e),
		.path = path,
		.mode = mode,
		.uid = 1000,
		.gid = 100,
		.have_mtime = true,
		.mtime = 1700000000,
		.mtime_nsec = 123456789,
	};
	return e;
}

/* Append the big file in chunks of uneven sizes. */
static int append_big(struct imgfs_writer *w, struct imgfs_error *err)
{
	static const size_t sizes[] = { 1, 4095, 4097, 65536, 1000000, 7 };
	uint8_t *buf = malloc(1000000);
	uint64_t off = 0;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; off < BIG_SIZE && !ret; i++) {
		size_t n = sizes[i % 6];

		if (n > BIG_SIZE - off)
			n = BIG_SIZE - off;
		for (size_t k = 0; k < n; k++)
			buf[k] = big_byte(off + k);
		ret = imgfs_writer_append(w, buf, n, err);
		off += n;
	}
	free(buf);
	return ret;
}

static int append_sparse(struct imgfs_writer *w, struct imgfs_error *err)
{
	uint8_t buf[4096];
	uint64_t off = 0;
	int ret = 0;

	for (size_t i = 0; i < 2 && !ret; i++) {
		const struct imgfs_data_range *r = &sparse_map[i];

		for (size_t k = 0; k < r->length; k++)
			buf[k] = sparse_byte(r->offset + k);
		ret = imgfs_writer_skip(w, r->offset - off, err);
		if (!ret)
			ret = imgfs_writer_append(w, buf, r->length, err);
		off = r->offset + r->length;
	}
	return ret ? ret : imgfs_writer_skip(w, SPARSE_SIZE - off, err);
}

static int add_files(struct imgfs_writer *w, struct imgfs_error *err)
{
	static char bigval[300];
	const struct imgfs_xattr_pair hello_x[] = {
		{ "user.note", "v1", 2 },
		{ "trusted.t", "x", 1 },
	};
	const struct imgfs_xattr_pair etc_x[] = {
		{ "user.big", bigval, sizeof(bigval) },
	};
	struct imgfs_entry e;
	int ret;

	big_xattr(bigval, sizeof(bigval));
	e = entry("etc", 040750);
	e.xattrs = etc_x;
	e.nr_xattrs = 1;
	ret = imgfs_writer_add_entry(w, &e, err);
	if (ret)
		return ret;
	e = entry("/etc/hello", 0100644);
	e.size = 12;
	e.xattrs = hello_x;
	e.nr_xattrs = 2;
	ret = imgfs_writer_begin_file(w, &e, err);
	if (!ret)
		ret = imgfs_writer_append(w, "hello ", 6, err);
	if (!ret)
		ret = imgfs_writer_append(w, "world\n", 6, err);
	if (!ret)
		ret = imgfs_writer_end_file(w, err);
	if (ret)
		return ret;
	e = entry("home/user/big", 0100600);
	e.mtime = -2; /* -1.5 s */
	e.mtime_nsec = 500000000;
	e.size = BIG_SIZE;
	ret = imgfs_writer_begin_file(w, &e, err);
	if (!ret)
		ret = append_big(w, err);
	if (!ret)
		ret = imgfs_writer_end_file(w, err);
	if (ret)
		return ret;
	e = entry("./sparse", 0100644);
	e.size = SPARSE_SIZE;
	e.sparse = sparse_map;
	e.nr_sparse = 2;
	ret = imgfs_writer_begin_file(w, &e, err);
	if (!ret)
		ret = append_sparse(w, err);
	return ret ? ret : imgfs_writer_end_file(w, err);
}

static int add_others(struct imgfs_writer *w, struct imgfs_error *err)
{
	struct imgfs_entry e;
	int ret;

	e = entry("etc/link", 0120777);
	e.symlink = "hello";
	ret = imgfs_writer_add_entry(w, &e, err);
	/* a hard link to the file above, and one to a file added later */
	e = (struct imgfs_entry){ .struct_size = sizeof(e),
				  .path = "etc/hello2",
				  .hardlink = "etc/hello" };
	if (!ret)
		ret = imgfs_writer_add_entry(w, &e, err);
	e = (struct imgfs_entry){ .struct_size = sizeof(e),
				  .path = "early",
				  .hardlink = "late" };
	if (!ret)
		ret = imgfs_writer_add_entry(w, &e, err);
	e = entry("late", 0100444);
	if (!ret)
		ret = imgfs_writer_add_entry(w, &e, err);
	e = entry("dev/null", 020666);
	e.rdev_major = 1;
	e.rdev_minor = 3;
	if (!ret)
		ret = imgfs_writer_add_entry(w, &e, err);
	e = entry("dev/sda", 060660);
	e.rdev_major = 8;
	if (!ret)
		ret = imgfs_writer_add_entry(w, &e, err);
	e = entry("run/fifo", 010600);
	if (!ret)
		ret = imgfs_writer_add_entry(w, &e, err);
	/* whiteouts: of a file, and an opaque directory */
	e = entry("home/.wh.gone", 0100644);
	if (!ret)
		ret = imgfs_writer_add_entry(w, &e, err);
	e = entry("opq", 040755);
	if (!ret)
		ret = imgfs_writer_add_entry(w, &e, err);
	e = entry("opq/.wh..wh..opq", 0100644);
	if (!ret)
		ret = imgfs_writer_add_entry(w, &e, err);
	return ret;
}

static void build_options(struct imgfs_mkfs_options *o, bool lz4)
{
	imgfs_mkfs_options_init(o);
	o->have_build_time = true;
	o->build_time = BUILD_TIME;
	o->workers = 2;
	if (lz4)
		o->compress = IMGFS_COMPRESS_LZ4;
}

static int check_fd_result(int fd, struct imgfs_check_result *res,
			   struct imgfs_error *err)
{
	struct imgfs_check_options co;
	struct imgfs_image *img;
	int ret;

	imgfs_check_options_init(&co);
	ret = imgfs_image_open_fd(fd, 0, &img, err);
	if (ret)
		return ret;
	ret = imgfs_check_image(img, &co, res, err);
	imgfs_image_close(img);
	if (!ret && res->errors)
		ret = fe_error_set(err, -EUCLEAN, "checker: %llu error(s)",
				      (unsigned long long)res->errors);
	return ret;
}

static int check_fd(int fd, struct imgfs_error *err)
{
	struct imgfs_check_result res;

	return check_fd_result(fd, &res, err);
}

static int build(const char *path, bool lz4)
{
	struct imgfs_mkfs_options o;
	struct imgfs_mkfs_stats st;
	struct imgfs_error err;
	struct imgfs_writer *w;
	int fd, ret;

	imgfs_error_clear(&err);
	build_options(&o, lz4);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	w = imgfs_writer_create(&o, fd, &err);
	ret = w ? add_files(w, &err) : err.code;
	if (!ret)
		ret = add_others(w, &err);
	if (!ret)
		ret = imgfs_writer_finish(w, &st, &err);
	imgfs_writer_destroy(w);
	if (!ret)
		ret = check_fd(fd, &err);
	close(fd);
	if (ret)
		return fail_err(path, &err);
	CHECK(st.entries == 14);
	CHECK(st.data_bytes == 12 + BIG_SIZE + 4096 + 100);
	/* the 16 MiB sparse file's holes take no room in the image */
	CHECK(st.image_bytes < BIG_SIZE + MIB);
	return unit_done("test_entry_api build");
}

/* --- compare: the mounted image against what build added --- */

static void check_meta(const char *dir, const char *path, uint32_t mode,
		       uid_t uid, gid_t gid, int64_t mtime, long nsec)
{
	char p[4096];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, path);
	if (lstat(p, &st)) {
		fprintf(stderr, "%s: %s\n", p, strerror(errno));
		CHECK(!"entry exists");
		return;
	}
	if (st.st_mode != mode || st.st_uid != uid || st.st_gid != gid ||
	    st.st_mtim.tv_sec != mtime || st.st_mtim.tv_nsec != nsec)
		fprintf(stderr, "%s: mode %o uid %u gid %u mtime %lld.%09ld\n",
			path, st.st_mode, st.st_uid, st.st_gid,
			(long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	CHECK(st.st_mode == mode);
	CHECK(st.st_uid == uid && st.st_gid == gid);
	CHECK(st.st_mtim.tv_sec == mtime && st.st_mtim.tv_nsec == nsec);
}

static void check_default(const char *dir, const char *path, uint32_t mode)
{
	check_meta(dir, path, mode, 1000, 100, 1700000000, 123456789);
}

/* Read the file at @path and compare every byte with @byte(offset). */
static void check_content(const char *dir, const char *path, uint64_t size,
			  uint8_t (*byte)(uint64_t))
{
	static uint8_t buf[65536];
	char p[4096];
	uint64_t off = 0, bad = 0;
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, path);
	fd = open(p, O_RDONLY);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++)
			bad += buf[i] != byte(off + (uint64_t)i);
		off += (uint64_t)n;
	}
	close(fd);
	CHECK(n == 0);
	CHECK(off == size);
	CHECK(bad == 0);
}

static uint8_t hello_byte(uint64_t off)
{
	return (uint8_t)"hello world\n"[off];
}

static void check_xattr(const char *dir, const char *path, const char *name,
			const void *value, size_t size)
{
	char p[4096], got[512];
	ssize_t n;

	snprintf(p, sizeof(p), "%s/%s", dir, path);
	n = lgetxattr(p, name, got, sizeof(got));
	if (n < 0)
		fprintf(stderr, "%s: %s: %s\n", path, name, strerror(errno));
	CHECK(n == (ssize_t)size);
	CHECK(n >= 0 && !memcmp(got, value, size));
}

static struct stat stat_of(const char *dir, const char *path)
{
	struct stat st = { 0 };
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, path);
	CHECK(!lstat(p, &st));
	return st;
}

static void compare_files(const char *d)
{
	struct stat a, b;
	char bigval[300];

	check_meta(d, ".", 040755, 0, 0, BUILD_TIME, 0);
	check_meta(d, "home", 040755, 0, 0, BUILD_TIME, 0);
	check_meta(d, "home/user", 040755, 0, 0, BUILD_TIME, 0);
	check_default(d, "etc", 040750);
	big_xattr(bigval, sizeof(bigval));
	check_xattr(d, "etc", "user.big", bigval, sizeof(bigval));
	check_default(d, "etc/hello", 0100644);
	check_content(d, "etc/hello", 12, hello_byte);
	check_xattr(d, "etc/hello", "user.note", "v1", 2);
	check_xattr(d, "etc/hello", "trusted.t", "x", 1);
	check_meta(d, "home/user/big", 0100600, 1000, 100, -2, 500000000);
	check_content(d, "home/user/big", BIG_SIZE, big_byte);
	check_default(d, "sparse", 0100644);
	check_content(d, "sparse", SPARSE_SIZE, sparse_byte);
	a = stat_of(d, "etc/hello");
	b = stat_of(d, "etc/hello2");
	CHECK(a.st_ino == b.st_ino && a.st_nlink == 2);
	a = stat_of(d, "late");
	b = stat_of(d, "early");
	CHECK(a.st_ino == b.st_ino && a.st_nlink == 2);
	check_default(d, "late", 0100444);
}

static void compare_others(const char *d)
{
	char p[4096], target[64];
	ssize_t n;

	check_default(d, "etc/link", 0120777);
	snprintf(p, sizeof(p), "%s/etc/link", d);
	n = readlink(p, target, sizeof(target));
	CHECK(n == 5 && !memcmp(target, "hello", 5));
	check_default(d, "dev/null", 020666);
	CHECK(stat_of(d, "dev/null").st_rdev == makedev(1, 3));
	check_default(d, "dev/sda", 060660);
	CHECK(stat_of(d, "dev/sda").st_rdev == makedev(8, 0));
	check_default(d, "run/fifo", 010600);
	/* overlayfs whiteout: a 0:0 character device under the plain name */
	check_meta(d, "home/gone", 020000, 1000, 100, 1700000000, 123456789);
	CHECK(stat_of(d, "home/gone").st_rdev == makedev(0, 0));
	snprintf(p, sizeof(p), "%s/home/.wh.gone", d);
	CHECK(lstat(p, &(struct stat){ 0 }) && errno == ENOENT);
	check_default(d, "opq", 040755);
	check_xattr(d, "opq", "trusted.overlay.opaque", "y", 1);
}

static int compare(const char *dir)
{
	static const char *const top[] = { "dev", "early", "etc", "home",
					   "late", "opq", "run", "sparse" };
	struct dirent *de;
	size_t n = 0;
	DIR *dh;

	compare_files(dir);
	compare_others(dir);
	dh = opendir(dir);
	CHECK(dh != NULL);
	while (dh && (de = readdir(dh)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			bool known = false;

			for (size_t i = 0; i < 8; i++)
				known |= !strcmp(de->d_name, top[i]);
			CHECK(known);
			n++;
		}
	if (dh)
		closedir(dh);
	CHECK(n == 8);
	return unit_done("test_entry_api compare");
}

/* --- imgfs_convert() and misuse of the entry calls --- */

static void tar_header(uint8_t *h, const char *name, size_t size)
{
	unsigned int sum = 0;

	memset(h, 0, 512);
	snprintf((char *)h, 100, "%s", name);
	memcpy(h + 100, "0000644", 7);
	memcpy(h + 108, "0000000", 7);
	memcpy(h + 116, "0000000", 7);
	snprintf((char *)h + 124, 12, "%011zo", size);
	memcpy(h + 136, "14000000000", 11);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

/* A one-file tar; without its end-of-archive blocks when @cut. */
static void write_tar(const char *path, bool cut)
{
	uint8_t t[4 * 512] = { 0 };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	tar_header(t, "a", 3);
	memcpy(t + 512, "hi\n", 3);
	CHECK(fd >= 0 && write(fd, t, cut ? 1024 : sizeof(t)) ==
				 (ssize_t)(cut ? 1024 : sizeof(t)));
	close(fd);
}

static size_t count_files(const char *dir)
{
	struct dirent *de;
	DIR *dh = opendir(dir);
	size_t n = 0;

	while (dh && (de = readdir(dh)))
		n += de->d_name[0] != '.' || strlen(de->d_name) > 2;
	if (dh)
		closedir(dh);
	return n;
}

static bool holds(const char *path, const char *text)
{
	char buf[64] = { 0 };
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(text) && !strcmp(buf, text);
}

static int checked_commit(int fd, void *arg, struct imgfs_error *err)
{
	int *calls = arg;

	(*calls)++;
	/* the image is complete before it is put in place */
	CHECK(check_fd(fd, err) == 0);
	return fe_error_set(err, -ECANCELED, "refused by the hook");
}

static void test_convert(const char *d)
{
	char tar[4096], cut[4096], img[4096], keep[4096], bad[4096];
	struct imgfs_convert_hooks hooks = { .struct_size = sizeof(hooks) };
	struct imgfs_mkfs_options o;
	struct imgfs_mkfs_stats st = { 0 };
	struct imgfs_error err;
	int fd, calls = 0;

	build_options(&o, false);
	snprintf(tar, sizeof(tar), "%s/layer.tar", d);
	snprintf(cut, sizeof(cut), "%s/cut.tar", d);
	snprintf(img, sizeof(img), "%s/ok.img", d);
	snprintf(keep, sizeof(keep), "%s/keep.img", d);
	snprintf(bad, sizeof(bad), "%s/missing/x.img", d);
	write_tar(tar, false);
	write_tar(cut, true);
	fd = open(keep, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "old", 3) == 3);
	close(fd);
	CHECK(count_files(d) == 3);

	CHECK(imgfs_convert(tar, img, &o, NULL, &st, &err) == 0);
	CHECK(st.entries == 1 && st.data_bytes == 3);
	fd = open(img, O_RDONLY);
	CHECK(fd >= 0 && check_fd(fd, &err) == 0);
	close(fd);
	CHECK(unlink(img) == 0);

	/* from a descriptor, which stays open */
	fd = open(tar, O_RDONLY);
	CHECK(imgfs_convert_fd(fd, img, &o, NULL, &st, &err) == 0);
	CHECK(fcntl(fd, F_GETFD) >= 0);
	close(fd);
	CHECK(unlink(img) == 0);

	/* a tar without its end marker where the end is required: refused,
	 * the old image untouched */
	o.require_end = true;
	CHECK(imgfs_convert(cut, keep, &o, NULL, NULL, &err) < 0);
	CHECK(strstr(err.msg, "end-of-archive") != NULL);
	CHECK(holds(keep, "old"));
	CHECK(count_files(d) == 3);
	o.require_end = false;

	/* a target in a missing directory, the source as its own target */
	CHECK(imgfs_convert(tar, bad, &o, NULL, NULL, &err) == -ENOENT);
	CHECK(strstr(err.msg, bad) != NULL);
	CHECK(imgfs_convert(tar, tar, &o, NULL, NULL, &err) < 0);
	CHECK(strstr(err.msg, "refusing to overwrite the source") != NULL);
	CHECK(count_files(d) == 3);

	/* a hook refusing the complete image: nothing is put in place */
	hooks.before_commit = checked_commit;
	hooks.arg = &calls;
	CHECK(imgfs_convert(tar, keep, &o, &hooks, NULL, &err) == -ECANCELED);
	CHECK(calls == 1);
	CHECK(holds(keep, "old"));
	CHECK(count_files(d) == 3);
	unlink(tar);
	unlink(cut);
	unlink(keep);
}

/* A directory source holding the image's own target: left out of it. */
static void test_convert_dir(const char *d)
{
	char src[4096], file[4096], img[4096];
	struct imgfs_check_result res = { 0 };
	struct imgfs_mkfs_options o;
	struct imgfs_error err;
	int fd;

	build_options(&o, false);
	snprintf(src, sizeof(src), "%s/tree", d);
	snprintf(file, sizeof(file), "%s/tree/f", d);
	snprintf(img, sizeof(img), "%s/tree/self.img", d);
	CHECK(mkdir(src, 0755) == 0);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "data", 4) == 4);
	close(fd);
	/* twice: the second run replaces an image inside the tree */
	for (int i = 0; i < 2; i++) {
		CHECK(imgfs_convert(src, img, &o, NULL, NULL, &err) == 0);
		fd = open(img, O_RDONLY);
		CHECK(fd >= 0 && check_fd_result(fd, &res, &err) == 0);
		close(fd);
		CHECK(res.regular == 1 && res.dirs == 1);
	}
	CHECK(count_files(src) == 2);
	unlink(img);
	unlink(file);
	rmdir(src);
}

/* Run @step on a fresh writer; it must fail with a message holding @msg. */
static void expect_misuse(int (*step)(struct imgfs_writer *,
				      struct imgfs_error *),
			  const char *msg)
{
	struct imgfs_mkfs_options o;
	struct imgfs_error err;
	struct imgfs_writer *w;
	FILE *f = tmpfile();

	build_options(&o, false);
	imgfs_error_clear(&err);
	w = f ? imgfs_writer_create(&o, fileno(f), &err) : NULL;
	CHECK(w != NULL);
	if (w) {
		CHECK(step(w, &err) < 0);
		if (!strstr(err.msg, msg))
			fprintf(stderr, "got \"%s\", want \"%s\"\n", err.msg,
				msg);
		CHECK(strstr(err.msg, msg) != NULL);
		/* and the writer is done with */
		CHECK(imgfs_writer_finish(w, NULL, &err) < 0);
	}
	imgfs_writer_destroy(w);
	if (f)
		fclose(f);
}

static int too_much(struct imgfs_writer *w, struct imgfs_error *err)
{
	struct imgfs_entry e = entry("f", 0100644);

	e.size = 2;
	if (imgfs_writer_begin_file(w, &e, err))
		return err->code;
	return imgfs_writer_append(w, "abc", 3, err);
}

static int too_little(struct imgfs_writer *w, struct imgfs_error *err)
{
	struct imgfs_entry e = entry("f", 0100644);

	e.size = 2;
	if (imgfs_writer_begin_file(w, &e, err) ||
	    imgfs_writer_append(w, "a", 1, err))
		return err->code;
	return imgfs_writer_end_file(w, err);
}

static int entry_while_open(struct imgfs_writer *w, struct imgfs_error *err)
{
	struct imgfs_entry e = entry("f", 0100644);

	e.size = 2;
	if (imgfs_writer_begin_file(w, &e, err))
		return err->code;
	return imgfs_writer_add_entry(w, &e, err);
}

static int bad_symlink(struct imgfs_writer *w, struct imgfs_error *err)
{
	struct imgfs_entry e = entry("l", 0120777);

	return imgfs_writer_add_entry(w, &e, err);
}

static int file_as_dir(struct imgfs_writer *w, struct imgfs_error *err)
{
	struct imgfs_entry e = entry("f/.", 0100644);

	return imgfs_writer_add_entry(w, &e, err);
}

static int bad_owner(struct imgfs_writer *w, struct imgfs_error *err)
{
	struct imgfs_entry e = entry("f", 0100644);

	e.uid = -1;
	return imgfs_writer_add_entry(w, &e, err);
}

static int errors(void)
{
	char dir[] = "/tmp/imgfs-entry-api.XXXXXX";

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_convert(dir);
	test_convert_dir(dir);
	CHECK(count_files(dir) == 0);
	rmdir(dir);
	expect_misuse(too_much, "f: more data than the 2 bytes of its size");
	expect_misuse(too_little, "f: data ended after 1 of its 2 bytes");
	expect_misuse(entry_while_open, "f: the file's data is not ended yet");
	expect_misuse(bad_symlink, "l: symlink target length 0");
	expect_misuse(file_as_dir, "f/.: path ends in");
	expect_misuse(bad_owner, "f: uid -1 / gid 100 out of range");
	return unit_done("test_entry_api");
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "build"))
		return build(argv[2], argc > 3 && !strcmp(argv[3], "lz4"));
	if (argc == 3 && !strcmp(argv[1], "compare"))
		return compare(argv[2]);
	if (argc == 1)
		return errors();
	fprintf(stderr, "usage: %s [build IMAGE [lz4] | compare DIR]\n",
		argv[0]);
	return 2;
}
