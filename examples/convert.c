// SPDX-License-Identifier: MIT
/*
 * convert - libimgfs step by step: turn a tar layer into an EROFS image,
 * check the image, then print one of its files through the reader.
 *
 *   convert LAYER IMAGE PATH
 *
 * The image is reproducible (fixed build time and UUID). PATH's content
 * goes to standard output, a summary to standard error. See
 * docs/architecture.md; "make check" builds and runs this program
 * (tests/api/example.sh), and tests/api/install.sh builds it against the
 * installed library with pkg-config.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <imgfs/check.h>
#include <imgfs/reader.h>
#include <imgfs/source.h>
#include <imgfs/version.h>
#include <imgfs/writer.h>

/* Write the image from @tar on @fd. */
/* The program's own failures go into the same struct as the library's. */
static int fail(struct imgfs_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

static int build(struct imgfs_tar *tar, int fd, struct imgfs_mkfs_stats *st,
		 struct imgfs_error *err)
{
	struct imgfs_mkfs_options opts;
	struct imgfs_writer *w;
	int ret;

	imgfs_mkfs_options_init(&opts);
	opts.have_build_time = true;
	opts.build_time = 1600000000;
	opts.have_uuid = true;
	memset(opts.uuid, 0x5a, sizeof(opts.uuid));

	w = imgfs_writer_create(&opts, fd, err);
	if (!w)
		return err->code;
	ret = imgfs_writer_add_tar(w, tar, err);
	if (!ret)
		ret = imgfs_writer_finish(w, st, err);
	imgfs_writer_destroy(w);
	return ret;
}

/*
 * The image file is created unnamed next to @image and takes its name
 * only once complete: a failed run leaves nothing behind.
 */
static int convert(const char *layer, const char *image,
		   struct imgfs_error *err)
{
	struct imgfs_mkfs_stats st;
	struct imgfs_output *out;
	struct imgfs_tar *tar;
	int ret;

	tar = imgfs_tar_open(layer, err);
	if (!tar)
		return err->code;
	out = imgfs_output_open(image, err);
	if (!out) {
		imgfs_tar_close(tar);
		return err->code;
	}
	ret = build(tar, imgfs_output_fd(out), &st, err);
	if (!ret)
		ret = imgfs_output_commit(out, err);
	imgfs_output_abort(out);
	imgfs_tar_close(tar);
	if (!ret)
		fprintf(stderr, "%s: %" PRIu64 " entries, %" PRIu64
			" inodes, %" PRIu64 " bytes\n",
			image, st.entries, st.inodes, st.image_bytes);
	return ret;
}

/* What the kernel would trip on; any error fails. */
static int check(const char *image, struct imgfs_error *err)
{
	struct imgfs_check_result res;
	int ret;

	ret = imgfs_check_path(image, NULL, &res, err);
	if (ret)
		return ret;
	fprintf(stderr, "%s: %" PRIu64 " errors, %" PRIu64 " warnings, %" PRIu64
		" files checked\n", image, res.errors, res.warnings,
		res.inodes);
	if (res.errors)
		return fail(err, -EUCLEAN, "%s: not a sound image", image);
	return 0;
}

/* Copy the regular file @path of @img to standard output. */
static int cat(struct imgfs_image *img, const char *path,
	       struct imgfs_error *err)
{
	struct imgfs_inode inode;
	char buf[65536];
	uint64_t nid, off = 0;
	ssize_t n;
	int ret;

	ret = imgfs_lookup(img, path, &nid, err);
	if (!ret)
		ret = imgfs_inode_read(img, nid, &inode, err);
	if (ret)
		return ret;
	if (!imgfs_inode_is_reg(&inode))
		return fail(err, -EINVAL, "%s: not a regular file", path);
	while ((n = imgfs_read(img, &inode, off, buf, sizeof(buf), err)) > 0) {
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			return fail(err, -EIO, "standard output: %s",
				    strerror(errno));
		off += (uint64_t)n;
	}
	return n < 0 ? (int)n : 0;
}

int main(int argc, char **argv)
{
	struct imgfs_error err;
	struct imgfs_image *img = NULL;
	int ret;

	if (argc != 4) {
		fprintf(stderr, "usage: %s LAYER IMAGE PATH\n", argv[0]);
		return 2;
	}
	fprintf(stderr, "libimgfs %s (built with %s)\n", imgfs_version(),
		IMGFS_VERSION_STRING);
	imgfs_error_clear(&err);
	ret = convert(argv[1], argv[2], &err);
	if (!ret)
		ret = check(argv[2], &err);
	if (!ret)
		ret = imgfs_image_open(argv[2], 0, &img, &err);
	if (!ret)
		ret = cat(img, argv[3], &err);
	imgfs_image_close(img);
	if (ret) {
		fprintf(stderr, "convert: %s\n", err.msg);
		return 1;
	}
	return fflush(stdout) ? 1 : 0;
}
