// SPDX-License-Identifier: MIT
/*
 * test_walk.c - imgfs_walk() on the hand-built sample image: both orders,
 * "." and "..", hard links and a directory cycle by nid, the depth limit,
 * directory serials, and the error policy (stop, or hand unreadable
 * inodes, bad directory blocks and unreadable directories to callbacks).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/walk.h"
#include "reader_img.h"
#include "unit.h"

/* What a walk handed out, one line per callback. */
struct trace {
	char text[8192];
	unsigned int entries;
};

static void add(struct trace *t, const char *line)
{
	if (strlen(t->text) + strlen(line) < sizeof(t->text))
		strcat(t->text, line);
}

static int on_entry(void *arg, const struct imgfs_walk_entry *e)
{
	struct trace *t = arg;
	char line[512], serial[24] = "-";

	if (e->serial != IMGFS_WALK_NO_SERIAL)
		snprintf(serial, sizeof(serial), "%llu",
			 (unsigned long long)e->serial);
	snprintf(line, sizeof(line), "%s %s%s%s s=%s p=%llu d=%u;", e->path,
		 e->inode ? "" : "noinode ", e->first ? "first" : "again",
		 e->error ? " error" : "", serial,
		 (unsigned long long)e->parent_serial, e->depth);
	CHECK(e->dirent && e->dirent->name_len == e->name_len);
	CHECK(!memcmp(e->name, e->dirent->name, e->name_len));
	add(t, line);
	t->entries++;
	return 0;
}

static int on_dir_begin(void *arg, const char *path,
			const struct imgfs_inode *dir)
{
	char line[512];

	snprintf(line, sizeof(line), "[%s nid=%llu;", path,
		 (unsigned long long)dir->nid);
	add(arg, line);
	return 0;
}

static int on_dir_end(void *arg, const char *path,
		      const struct imgfs_inode *dir, uint64_t entries)
{
	char line[512];

	(void)dir;
	snprintf(line, sizeof(line), "%s]%llu;", path,
		 (unsigned long long)entries);
	add(arg, line);
	return 0;
}

static int on_bad_block(void *arg, const char *path,
			const struct imgfs_inode *dir, uint64_t block,
			unsigned int entry, const char *why)
{
	char line[512];

	(void)dir;
	(void)why;
	snprintf(line, sizeof(line), "bad %s block %llu entry %u;", path,
		 (unsigned long long)block, entry);
	add(arg, line);
	return 0;
}

static int on_dir_error(void *arg, const char *path,
			const struct imgfs_inode *dir,
			const struct imgfs_error *e)
{
	char line[512];

	(void)dir;
	snprintf(line, sizeof(line), "failed %s%s;", path,
		 e->code ? "" : " (no code)");
	add(arg, line);
	return 0;
}

/* Walk @t from its root with @flags; the trace in @tr, the result back. */
static int walk(struct timg *t, unsigned int flags, unsigned int max_depth,
		bool bad_hook, struct trace *tr, struct imgfs_error *err)
{
	struct imgfs_walk_options o = {
		.struct_size = sizeof(o),
		.flags = flags,
		.dir_begin = on_dir_begin,
		.entry = on_entry,
		.dir_end = on_dir_end,
		.arg = tr,
		.max_depth = max_depth,
		.bad_block = bad_hook ? on_bad_block : NULL,
		.dir_error = on_dir_error,
	};
	struct imgfs_image *img;
	int ret;

	memset(tr, 0, sizeof(*tr));
	memset(err, 0, sizeof(*err));
	ret = imgfs_image_open_mem(t->b, t->size, IMGFS_OPEN_IGNORE_CHECKSUM,
				   &img, err);
	CHECK(!ret);
	if (ret)
		return ret;
	ret = imgfs_walk(img, SAMPLE_ROOT, "/", &o, err);
	imgfs_image_close(img);
	return ret;
}

static bool same(const struct trace *tr, const char *want)
{
	if (!strcmp(tr->text, want))
		return true;
	fprintf(stderr, "got:  %s\nwant: %s\n", tr->text, want);
	return false;
}

/* Position of the directory entry @i of /sub (block 4). */
static uint8_t *sub_dirent(struct timg *t, unsigned int i)
{
	return t->b + 4 * 4096 + 12 * i;
}

static void test_orders(void)
{
	struct imgfs_error err;
	struct trace tr;
	struct timg t;

	timg_sample(&t);
	CHECK(!walk(&t, 0, 0, false, &tr, &err));
	CHECK(same(&tr, "[/ nid=36;"
			"/dev first s=- p=0 d=1;/file first s=- p=0 d=1;"
			"/hard again s=- p=0 d=1;/link first s=- p=0 d=1;"
			"/sub first s=1 p=0 d=1;/]5;"
			"[/sub nid=56;/sub/inner first s=- p=1 d=2;/sub]1;"));
	/* breadth first, with the dot entries (never walked, no inode) */
	CHECK(!walk(&t, IMGFS_WALK_BREADTH_FIRST | IMGFS_WALK_DOTS, 0, false,
		    &tr, &err));
	CHECK(same(&tr, "[/ nid=36;"
			"/. noinode again s=- p=0 d=1;"
			"/.. noinode again s=- p=0 d=1;"
			"/dev first s=- p=0 d=1;/file first s=- p=0 d=1;"
			"/hard again s=- p=0 d=1;/link first s=- p=0 d=1;"
			"/sub first s=1 p=0 d=1;/]5;"
			"[/sub nid=56;/sub/. noinode again s=- p=1 d=2;"
			"/sub/.. noinode again s=- p=1 d=2;"
			"/sub/inner first s=- p=1 d=2;/sub]1;"));
	/* the depth limit: /sub is met but not listed, so has no serial */
	CHECK(!walk(&t, 0, 1, false, &tr, &err));
	CHECK(strstr(tr.text, "/sub first s=- p=0 d=1;/]5;") &&
	      !strstr(tr.text, "inner"));
	CHECK(!walk(&t, IMGFS_WALK_NO_RECURSE, 0, false, &tr, &err));
	CHECK(tr.entries == 5 && !strstr(tr.text, "inner"));
	free(t.b);
}

static void test_cycle(void)
{
	struct imgfs_error err;
	struct trace tr;
	struct timg t;

	/* /sub/inner -> the root directory: the walk still ends, once */
	timg_sample(&t);
	imgfs_put_le64(sub_dirent(&t, 2), SAMPLE_ROOT);
	sub_dirent(&t, 2)[10] = IMGFS_FT_DIR;
	CHECK(!walk(&t, 0, 0, false, &tr, &err));
	CHECK(strstr(tr.text, "/sub/inner again s=- p=1 d=2;/sub]1;"));
	CHECK(tr.entries == 6);
	CHECK(!walk(&t, IMGFS_WALK_BREADTH_FIRST, 0, false, &tr, &err));
	CHECK(strstr(tr.text, "/sub/inner again s=- p=1 d=2;/sub]1;"));
	CHECK(tr.entries == 6);
	free(t.b);
}

static void test_errors(void)
{
	struct imgfs_error err;
	struct trace tr;
	struct timg t;
	unsigned int cont = IMGFS_WALK_CONTINUE | IMGFS_WALK_BREADTH_FIRST;

	/* /link names a nid beyond the end of the image */
	timg_sample(&t);
	imgfs_put_le64(t.b + timg_nid_pos(&t, SAMPLE_ROOT) + 32 + 12 * 5,
		       1u << 20);
	CHECK(walk(&t, 0, 0, false, &tr, &err) < 0 && err.code < 0);
	CHECK(!strstr(tr.text, "/link") && !strstr(tr.text, "inner"));
	CHECK(!walk(&t, cont, 0, false, &tr, &err) && !err.code);
	CHECK(strstr(tr.text, "/link noinode first error s=- p=0 d=1;"));
	CHECK(strstr(tr.text, "/sub/inner first"));
	free(t.b);

	/* a bad block in /sub: skipped when a hook takes it */
	timg_sample(&t);
	imgfs_put_le16(sub_dirent(&t, 0) + 8, 30); /* nameoff not 12 * n */
	CHECK(walk(&t, 0, 0, false, &tr, &err) == -EUCLEAN);
	CHECK(!walk(&t, 0, 0, true, &tr, &err));
	CHECK(strstr(tr.text, "[/sub nid=56;bad /sub block 0 entry 0;/sub]0;"));
	free(t.b);

	/* /sub's block beyond the end of the image: unreadable */
	timg_sample(&t);
	imgfs_put_le32(t.b + timg_nid_pos(&t, SAMPLE_SUB) + 16, 1000);
	CHECK(walk(&t, 0, 0, false, &tr, &err) < 0 && err.code < 0);
	CHECK(!walk(&t, cont, 0, false, &tr, &err));
	CHECK(strstr(tr.text, "[/sub nid=56;failed /sub;/sub]0;"));
	free(t.b);
}

static void test_start(void)
{
	struct imgfs_walk_options o = { .struct_size = sizeof(o) };
	struct imgfs_error err = { 0 };
	struct imgfs_image *img;
	struct timg t;

	timg_sample(&t);
	CHECK(!imgfs_image_open_mem(t.b, t.size, 0, &img, &err));
	/* a file is no start directory */
	CHECK(imgfs_walk(img, SAMPLE_FILE, "/file", &o, &err) == -ENOTDIR);
	memset(&err, 0, sizeof(err));
	/* options of the first, smaller layout are still accepted */
	o.struct_size = offsetof(struct imgfs_walk_options, max_depth);
	CHECK(!imgfs_walk(img, SAMPLE_ROOT, "/", &o, &err));
	o.struct_size = 8;
	CHECK(imgfs_walk(img, SAMPLE_ROOT, "/", &o, &err) == -EINVAL);
	imgfs_image_close(img);
	free(t.b);
}

int main(void)
{
	test_orders();
	test_cycle();
	test_errors();
	test_start();
	return unit_done("test_walk");
}
