// SPDX-License-Identifier: MIT
/*
 * The comparison API (imgfs/compare.h) on real images: tars written here
 * with libarchive are converted by mkfs.img, and each image is compared
 * with its own tar (no difference) and with altered tars, checking every
 * difference reported (path and kind), the counts, the options that
 * change the expectation, the step-by-step calls fed by the checker, the
 * tar read before the image is known, the keyed fast content digest, and
 * a tar without its end-of-archive marker.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "imgfs/check.h"
#include "imgfs/compare.h"
#include "imgfs/reader.h"
#include "imgfs/source.h"
#include "unit.h"

static char tmp[] = "/tmp/imgfs-test-compare-XXXXXX";
static char mkfs[4096];

/* What a tar variant changes from the base layer. */
enum variant {
	V_BASE,
	V_CHANGED, /* other content, other mode, symlink dropped, one more */
	V_FLAGS, /* the base and a file with file flags */
	V_NO_END, /* the base without its end-of-archive marker */
	V_LONG_LINK, /* the symlink's target longer than 4095 bytes */
};

static void add(struct archive *a, const char *path, unsigned int mode,
		const char *data, const char *link)
{
	struct archive_entry *e = archive_entry_new();
	size_t len = data ? strlen(data) : 0;

	archive_entry_set_pathname(e, path);
	archive_entry_set_mode(e, mode);
	archive_entry_set_uid(e, 1000);
	archive_entry_set_gid(e, 100);
	archive_entry_set_mtime(e, 1600000000, 250);
	if (S_ISREG(mode))
		archive_entry_set_size(e, (la_int64_t)len);
	if (link)
		archive_entry_set_symlink(e, link);
	if (!strcmp(path, "flagged"))
		archive_entry_copy_fflags_text(e, "nodump");
	CHECK(archive_write_header(a, e) == ARCHIVE_OK);
	if (len)
		CHECK(archive_write_data(a, data, len) == (la_ssize_t)len);
	archive_entry_free(e);
}

/* Drop the end-of-archive blocks and the padding after them. */
static void cut_end(const char *path)
{
	FILE *f = fopen(path, "rb");
	long end = 0, pos = 0;
	int ch;

	CHECK(f != NULL);
	if (!f)
		return;
	while ((ch = getc(f)) != EOF) {
		pos++;
		if (ch)
			end = pos;
	}
	fclose(f);
	CHECK(truncate(path, (end + 511) / 512 * 512) == 0);
}

static void write_tar(const char *path, enum variant v)
{
	struct archive *a = archive_write_new();
	bool changed = v == V_CHANGED;

	archive_write_set_format_pax(a);
	CHECK(archive_write_open_filename(a, path) == ARCHIVE_OK);
	add(a, "dir", S_IFDIR | 0755, NULL, NULL);
	add(a, "dir/file", S_IFREG | 0644,
	    changed ? "the content, changed!" : "the content, original", NULL);
	add(a, "exec", S_IFREG | (changed ? 0700 : 0755), "#!/bin/sh\n", NULL);
	if (v == V_LONG_LINK) {
		char target[5001];

		memset(target, 'x', sizeof(target) - 1);
		target[sizeof(target) - 1] = '\0';
		add(a, "sym", S_IFLNK | 0777, NULL, target);
	} else if (!changed) {
		add(a, "sym", S_IFLNK | 0777, NULL, "dir/file");
	}
	if (changed)
		add(a, "dir/new", S_IFREG | 0644, "only in the changed tar",
		    NULL);
	add(a, "fifo", S_IFIFO | 0600, NULL, NULL);
	if (v == V_FLAGS)
		add(a, "flagged", S_IFREG | 0644, "flags", NULL);
	CHECK(archive_write_close(a) == ARCHIVE_OK);
	archive_write_free(a);
	if (v == V_NO_END)
		cut_end(path);
}

/* Run mkfs.img on @tar with up to two options (NULL: none). */
static int run_mkfs(const char *tar, const char *img, const char *opt1,
		    const char *opt2)
{
	char *argv[7] = { mkfs, "-q" };
	int st, n = 2;

	if (opt1)
		argv[n++] = (char *)opt1;
	if (opt2)
		argv[n++] = (char *)opt2;
	argv[n++] = (char *)tar;
	argv[n] = (char *)img;
	pid_t pid = fork();

	if (pid == 0) {
		execv(mkfs, argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The differences reported, as "path:kind" lines. */
struct seen {
	char text[4096];
	char content_msg[256]; /* the last content difference's message */
	unsigned int warnings;
};

static void collect(void *arg, const struct imgfs_compare_difference *d)
{
	struct seen *s = arg;
	size_t n = strlen(s->text);

	snprintf(s->text + n, sizeof(s->text) - n, "%s:%s\n", d->path,
		 imgfs_compare_kind_name(d->kind));
	CHECK(d->msg && *d->msg);
	if (d->kind == IMGFS_COMPARE_CONTENT)
		snprintf(s->content_msg, sizeof(s->content_msg), "%s", d->msg);
}

static void warned(const char *msg, void *arg)
{
	struct seen *s = arg;

	CHECK(msg && *msg);
	s->warnings++;
}

static void options(struct imgfs_compare_options *o, struct seen *s,
		    unsigned int flags)
{
	memset(s, 0, sizeof(*s));
	imgfs_compare_options_init(o);
	o->flags = flags;
	o->report = collect;
	o->report_arg = s;
	o->warn = warned;
	o->warn_arg = s;
}

static struct imgfs_image *open_image(const char *path)
{
	struct imgfs_image *img = NULL;
	struct imgfs_error err = { 0 };

	CHECK(imgfs_image_open(path, 0, &img, &err) == 0);
	return img;
}

/* Compare @img with @tar in one call; returns the call's result. */
static int compare(struct imgfs_image *img, const char *tar,
		   const struct imgfs_compare_options *o,
		   struct imgfs_compare_result *res)
{
	struct imgfs_error err = { 0 };
	int ret = imgfs_compare_tar(img, tar, o, res, &err);

	CHECK(ret == 0 ? !err.code : err.code == ret && *err.msg);
	return ret;
}

static void test_same_and_changed(const char *base_tar, const char *img_path,
				  const char *changed_tar)
{
	struct imgfs_image *img = open_image(img_path);
	struct imgfs_compare_options o;
	struct imgfs_compare_result res;
	struct seen s;

	if (!img)
		return;
	options(&o, &s, 0);
	CHECK(compare(img, base_tar, &o, &res) == 0);
	CHECK(res.differences == 0 && !strcmp(s.text, ""));
	CHECK(res.archive_entries == 5);
	CHECK(res.image_entries == 6); /* the root too */

	options(&o, &s, 0);
	CHECK(compare(img, changed_tar, &o, &res) == 0);
	CHECK(!strcmp(s.text, "/dir/file:content\n"
			      "/dir/new:missing\n"
			      "/exec:mode\n"
			      "/sym:extra\n"));
	CHECK(res.differences == 4);
	CHECK(res.by_kind[IMGFS_COMPARE_CONTENT] == 1);
	CHECK(res.by_kind[IMGFS_COMPARE_MISSING] == 1);
	CHECK(res.by_kind[IMGFS_COMPARE_MODE] == 1);
	CHECK(res.by_kind[IMGFS_COMPARE_EXTRA] == 1);

	/* no callback: the counts alone */
	CHECK(compare(img, changed_tar, NULL, &res) == 0);
	CHECK(res.differences == 4);
	imgfs_image_close(img);
}

static int feed(void *arg, const struct imgfs_check_entry *e)
{
	return imgfs_compare_check_entry(arg, e);
}

/*
 * The checker's walk handed in: the same differences (with
 * IMGFS_COMPARE_F_FAST_CONTENT in @flags, contents read again by the
 * comparison and hashed with its own digest).
 */
static void test_with_checker(const char *img_path, const char *changed_tar,
			      unsigned int flags)
{
	struct imgfs_image *img = open_image(img_path);
	struct imgfs_check_options copts;
	struct imgfs_check_result cres = { 0 };
	struct imgfs_compare_options o;
	struct imgfs_compare_result res;
	struct imgfs_error err = { 0 };
	struct imgfs_compare *c = NULL;
	struct seen s;

	if (!img)
		return;
	options(&o, &s, flags);
	CHECK(imgfs_compare_new(img, &o, &c, &err) == 0);
	imgfs_check_options_init(&copts);
	copts.flags = IMGFS_CHECK_F_DIGEST;
	copts.entry = feed;
	copts.entry_arg = c;
	CHECK(imgfs_check_image(img, &copts, &cres, &err) == 0);
	CHECK(cres.errors == 0);
	CHECK(imgfs_compare_run(c, changed_tar, &res, &err) == 0);
	CHECK(!strcmp(s.text, "/dir/file:content\n"
			      "/dir/new:missing\n"
			      "/exec:mode\n"
			      "/sym:extra\n"));
	CHECK(res.differences == 4 && res.image_entries == 6);
	CHECK(strstr(s.content_msg, (flags & IMGFS_COMPARE_F_FAST_CONTENT)
					    ? "keyed XXH3-128 mismatch"
					    : "SHA-256 mismatch") != NULL);
	/* a comparison runs once */
	CHECK(imgfs_compare_run(c, changed_tar, &res, &err) == -EINVAL);
	imgfs_compare_free(c);
	imgfs_image_close(img);
}

/*
 * The tar read before the comparison has its image (as a conversion
 * reads it while writing the image): the implied root gets the image's
 * build time once the image is given, calls out of order are refused,
 * and the differences are those of the one-call comparison.
 */
static void test_tar_first(const char *tar, const char *img_path,
			   const char *want, unsigned int flags,
			   bool from_reader)
{
	struct imgfs_tar *t = NULL;
	struct imgfs_image *img = open_image(img_path);
	struct imgfs_compare_options o;
	struct imgfs_compare_result res;
	struct imgfs_error err = { 0 };
	struct imgfs_compare *c = NULL;
	struct seen s;

	if (!img)
		return;
	options(&o, &s, flags);
	CHECK(imgfs_compare_new(NULL, &o, &c, &err) == 0 && c);
	if (!c) {
		imgfs_image_close(img);
		return;
	}
	CHECK(imgfs_compare_run(c, NULL, &res, &err) == -EINVAL);
	if (from_reader) {
		/* a tar reader opened by the caller, who closes it */
		t = imgfs_tar_open(tar, &err);
		CHECK(t != NULL);
		CHECK(imgfs_compare_read_tar_stream(c, t, tar, &err) == 0);
		CHECK(imgfs_compare_read_tar_stream(c, t, tar, &err) ==
		      -EINVAL);
		imgfs_tar_close(t);
	} else {
		CHECK(imgfs_compare_read_tar(c, tar, &err) == 0);
	}
	CHECK(imgfs_compare_read_tar(c, tar, &err) == -EINVAL);
	CHECK(imgfs_compare_run(c, NULL, &res, &err) == -EINVAL); /* no image */
	CHECK(imgfs_compare_set_image(c, img, &err) == 0);
	CHECK(imgfs_compare_set_image(c, img, &err) == -EINVAL);
	CHECK(imgfs_compare_run(c, tar, &res, &err) == -EINVAL); /* read */
	CHECK(imgfs_compare_run(c, NULL, &res, &err) == 0);
	CHECK(!strcmp(s.text, want));
	CHECK(res.archive_entries == 5 && res.image_entries == 6);
	imgfs_compare_free(c);
	imgfs_image_close(img);
}

/* Owners mapped by mkfs.img must be mapped by the comparison too. */
static void test_owner_options(const char *base_tar, const char *img_path)
{
	struct imgfs_image *img = open_image(img_path);
	struct imgfs_compare_options o;
	struct imgfs_compare_result res;
	struct seen s;

	if (!img)
		return;
	options(&o, &s, 0);
	o.uid_offset = 5;
	o.force_gid = 7;
	CHECK(compare(img, base_tar, &o, &res) == 0);
	CHECK(res.differences == 0);

	options(&o, &s, 0);
	CHECK(compare(img, base_tar, &o, &res) == 0);
	/* every entry of the tar; the implied root keeps 0:0 */
	CHECK(!strcmp(s.text, "/dir:owner\n"
			      "/dir/file:owner\n"
			      "/exec:owner\n"
			      "/sym:owner\n"
			      "/fifo:owner\n"));
	CHECK(res.by_kind[IMGFS_COMPARE_OWNER] == 5);
	CHECK(res.differences == 5);
	imgfs_image_close(img);
}

/*
 * File flags a user set (nodump): dropped by mkfs.img with one warning by
 * default, so one warning and no difference; a difference per entry when
 * they are refused; nothing when ignored (also by the deprecated flag).
 */
static void test_file_flags(const char *flags_tar, const char *img_path)
{
	struct imgfs_image *img = open_image(img_path);
	struct imgfs_compare_options o;
	struct imgfs_compare_result res;
	struct seen s;

	if (!img)
		return;
	options(&o, &s, 0);
	CHECK(compare(img, flags_tar, &o, &res) == 0);
	CHECK(res.differences == 0 && s.warnings == 1);
	options(&o, &s, 0);
	o.file_flags = IMGFS_FILE_FLAGS_ERROR;
	CHECK(compare(img, flags_tar, &o, &res) == 0);
	CHECK(!strcmp(s.text, "flagged:unrepresentable\n"));
	CHECK(s.warnings == 0);
	options(&o, &s, 0);
	o.file_flags = IMGFS_FILE_FLAGS_IGNORE;
	CHECK(compare(img, flags_tar, &o, &res) == 0);
	CHECK(res.differences == 0 && s.warnings == 0);
	options(&o, &s, IMGFS_COMPARE_F_IGNORE_FILE_FLAGS);
	CHECK(compare(img, flags_tar, &o, &res) == 0);
	CHECK(res.differences == 0 && s.warnings == 0);
	imgfs_image_close(img);
}

/*
 * A tar cut after its last entry: read with one warning, an error when the
 * end is required (and allowed again by ALLOW_MISSING_END).
 */
static void test_missing_end(const char *img_path, const char *no_end_tar)
{
	struct imgfs_image *img = open_image(img_path);
	struct imgfs_compare_options o;
	struct imgfs_compare_result res;
	struct seen s;

	if (!img)
		return;
	options(&o, &s, 0);
	CHECK(compare(img, no_end_tar, &o, &res) == 0);
	CHECK(res.differences == 0 && s.warnings == 1);
	options(&o, &s, IMGFS_COMPARE_F_REQUIRE_END);
	CHECK(compare(img, no_end_tar, &o, &res) < 0);
	options(&o, &s,
		IMGFS_COMPARE_F_REQUIRE_END | IMGFS_COMPARE_F_ALLOW_MISSING_END);
	CHECK(compare(img, no_end_tar, &o, &res) == 0);
	CHECK(res.differences == 0 && s.warnings == 1);
	CHECK(compare(img, "/nonexistent/layer.tar", &o, &res) < 0);
	imgfs_image_close(img);
}

/*
 * A symlink mkfs.img would refuse, where the image has one: reported
 * once as unrepresentable (this used to compare a NULL target).
 */
static void test_refused_symlink(const char *img_path, const char *tar)
{
	struct imgfs_image *img = open_image(img_path);
	struct imgfs_compare_options o;
	struct imgfs_compare_result res;
	struct seen s;

	if (!img)
		return;
	options(&o, &s, 0);
	CHECK(compare(img, tar, &o, &res) == 0);
	CHECK(!strcmp(s.text, "sym:unrepresentable\n"));
	imgfs_image_close(img);
}

static void test_names(void)
{
	CHECK(!strcmp(imgfs_compare_kind_name(IMGFS_COMPARE_CONTENT),
		      "content"));
	CHECK(!strcmp(imgfs_compare_kind_name(IMGFS_COMPARE_UNREPRESENTABLE),
		      "unrepresentable"));
	CHECK(!strcmp(imgfs_compare_kind_name(IMGFS_COMPARE_NR_KINDS),
		      "unknown"));
}

static void path(char *buf, const char *name)
{
	snprintf(buf, 4096, "%s/%s", tmp, name);
}

int main(void)
{
	char base[4096], changed[4096], flags[4096], no_end[4096], llink[4096];
	char img[4096], own[4096], fimg[4096];
	const char *top = getenv("top_builddir");

	snprintf(mkfs, sizeof(mkfs), "%s/mkfs/mkfs.img", top ? top : ".");
	if (access(mkfs, X_OK)) {
		fprintf(stderr, "test_compare: %s not built\n", mkfs);
		return 77;
	}
	if (!mkdtemp(tmp))
		return 99;
	path(base, "base.tar");
	path(changed, "changed.tar");
	path(flags, "flags.tar");
	path(no_end, "no-end.tar");
	path(llink, "long-link.tar");
	path(img, "base.img");
	path(own, "own.img");
	path(fimg, "flags.img");
	write_tar(base, V_BASE);
	write_tar(changed, V_CHANGED);
	write_tar(flags, V_FLAGS);
	write_tar(no_end, V_NO_END);
	write_tar(llink, V_LONG_LINK);
	CHECK(run_mkfs(base, img, NULL, NULL) == 0);
	CHECK(run_mkfs(base, own, "--uid-offset=5", "--force-gid=7") == 0);
	CHECK(run_mkfs(flags, fimg, NULL, NULL) == 0);
	test_names();
	test_same_and_changed(base, img, changed);
	test_with_checker(img, changed, 0);
	test_with_checker(img, changed, IMGFS_COMPARE_F_FAST_CONTENT);
	test_tar_first(base, img, "", 0, false);
	test_tar_first(base, img, "", IMGFS_COMPARE_F_FAST_CONTENT, false);
	test_tar_first(changed, img,
		       "/dir/file:content\n/dir/new:missing\n/exec:mode\n"
		       "/sym:extra\n",
		       IMGFS_COMPARE_F_FAST_CONTENT, false);
	test_tar_first(changed, img,
		       "/dir/file:content\n/dir/new:missing\n/exec:mode\n"
		       "/sym:extra\n",
		       IMGFS_COMPARE_F_FAST_CONTENT, true);
	test_missing_end(img, no_end);
	test_file_flags(flags, fimg);
	test_refused_symlink(img, llink);
	test_owner_options(base, own);
	if (!unit_failures) {
		const char *f[] = { base,  changed, flags, no_end,
				    llink, img,	    own,   fimg };

		for (size_t i = 0; i < sizeof(f) / sizeof(*f); i++)
			unlink(f[i]);
		rmdir(tmp);
	}
	return unit_done("test_compare");
}
