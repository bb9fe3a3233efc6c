// SPDX-License-Identifier: MIT
/*
 * The struct_size rule (docs/architecture.md, "Sized structs") at the
 * public calls: a struct from older headers (smaller, down to the first
 * published size) or newer ones (larger, the unknown bytes zero) is taken;
 * one below the first size, or asking for fields this library does not
 * know, is refused; the result structs say how much the library filled.
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <imgfs/check.h>
#include <imgfs/compare.h>
#include <imgfs/reader.h>
#include <imgfs/walk.h>
#include <imgfs/writer.h>

#include "unit.h"

/* @s (of @size bytes) copied into a buffer @extra bytes larger, the extra
 * bytes @fill, struct_size set to the larger size */
static void *grown(const void *s, size_t size, size_t extra, int fill)
{
	unsigned char *b = malloc(size + extra);
	size_t n = size + extra;

	if (!b)
		abort();
	memcpy(b, s, size);
	memset(b + size, fill, extra);
	memcpy(b, &n, sizeof(n));
	return b;
}

static void test_mkfs_options(void)
{
	struct imgfs_mkfs_options o, *big;
	struct imgfs_error err = { 0 };

	imgfs_mkfs_options_init(&o);
	CHECK(!imgfs_mkfs_options_check(&o, &err));
	/* newer headers, nothing asked of their new fields */
	big = grown(&o, sizeof(o), 16, 0);
	CHECK(!imgfs_mkfs_options_check(big, &err));
	free(big);
	/* newer headers asking for something this library cannot do */
	big = grown(&o, sizeof(o), 16, 1);
	CHECK(imgfs_mkfs_options_check(big, &err) == -E2BIG);
	CHECK(strstr(err.msg, "mkfs options"));
	free(big);
	/* below the first published size, or not set at all */
	o.struct_size = sizeof(o) - 8;
	CHECK(imgfs_mkfs_options_check(&o, &err) == -EINVAL);
	o.struct_size = 0;
	CHECK(imgfs_mkfs_options_check(&o, &err) == -EINVAL);
	/* garbage: no version is pages larger, and nothing is read there */
	o.struct_size = (size_t)1 << 40;
	CHECK(imgfs_mkfs_options_check(&o, &err) == -EINVAL);
}

/* A small image in a memory file: the root and one file. */
static int build(int fd, struct imgfs_mkfs_stats *st)
{
	struct imgfs_mkfs_options o;
	struct imgfs_error err = { 0 };
	struct imgfs_entry e = { .struct_size = sizeof(e),
				 .path = "f",
				 .mode = 0100644 };
	struct imgfs_entry bad = e;
	struct imgfs_writer *w;
	int ret;

	imgfs_mkfs_options_init(&o);
	o.have_build_time = true;
	w = imgfs_writer_create(&o, fd, &err);
	if (!w)
		return -1;
	/* an entry without its size is refused, naming what is wrong */
	bad.struct_size = 0;
	CHECK(imgfs_writer_add_entry(w, &bad, &err) == -EINVAL);
	CHECK(strstr(err.msg, "entry"));
	imgfs_writer_destroy(w);
	w = imgfs_writer_create(&o, fd, &err);
	if (!w)
		return -1;
	ret = imgfs_writer_add_entry(w, &e, &err);
	if (!ret)
		ret = imgfs_writer_finish(w, st, &err);
	imgfs_writer_destroy(w);
	return ret;
}

static void test_image_calls(struct imgfs_image *img)
{
	struct imgfs_check_options co, *big;
	struct imgfs_check_result res;
	struct imgfs_compare_options cmp;
	struct imgfs_compare *c = NULL;
	struct imgfs_walk_options wo = { .struct_size = sizeof(wo) };
	struct imgfs_error err = { 0 };
	void *wbig;

	imgfs_check_options_init(&co);
	CHECK(!imgfs_check_image(img, &co, &res, &err));
	CHECK(res.struct_size == sizeof(res) && !res.errors);
	big = grown(&co, sizeof(co), 8, 0xff);
	CHECK(imgfs_check_image(img, big, &res, &err) == -E2BIG);
	free(big);
	/* a zeroed struct is no struct of any version */
	imgfs_compare_options_init(&cmp);
	cmp.struct_size = 0;
	CHECK(imgfs_compare_new(img, &cmp, &c, &err) == -EINVAL && !c);
	/* the walker's first published struct ended with arg */
	wo.struct_size =
		offsetof(struct imgfs_walk_options, arg) + sizeof(wo.arg);
	CHECK(!imgfs_walk(img, imgfs_image_sb(img)->root_nid, "/", &wo, &err));
	wo.struct_size -= 1;
	CHECK(imgfs_walk(img, imgfs_image_sb(img)->root_nid, "/", &wo, &err) ==
	      -EINVAL);
	wo.struct_size = sizeof(wo);
	wbig = grown(&wo, sizeof(wo), 8, 0);
	CHECK(!imgfs_walk(img, imgfs_image_sb(img)->root_nid, "/", wbig, &err));
	free(wbig);
}

int main(void)
{
	struct imgfs_mkfs_stats st;
	struct imgfs_image *img = NULL;
	struct imgfs_error err = { 0 };
	int fd = memfd_create("sized", 0);

	test_mkfs_options();
	CHECK(fd >= 0);
	CHECK(!build(fd, &st));
	CHECK(st.struct_size == sizeof(st));
	CHECK(!imgfs_image_open_fd(fd, 0, &img, &err));
	if (img) {
		test_image_calls(img);
		imgfs_image_close(img);
	}
	close(fd);
	return unit_done("test_sized");
}
