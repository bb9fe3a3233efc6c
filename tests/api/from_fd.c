// SPDX-License-Identifier: MIT
/*
 * from_fd LAYER IMAGE: the same conversion as examples/convert.c,
 * but step by step, with the layer handed over as an open descriptor
 * (imgfs_tar_open_fd(), imgfs_writer_add_tar()). It links with nothing
 * but "pkg-config --libs imgfs" (tests/api/install.sh), and sees no
 * libarchive type.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <imgfs/source.h>
#include <imgfs/writer.h>

static int convert(struct imgfs_tar *t, int fd, struct imgfs_error *err)
{
	struct imgfs_mkfs_options opts;
	struct imgfs_writer *w;
	int ret;

	/* the options of convert.c, so that the images are the same */
	imgfs_mkfs_options_init(&opts);
	opts.have_build_time = true;
	opts.build_time = 1600000000;
	opts.have_uuid = true;
	memset(opts.uuid, 0x5a, sizeof(opts.uuid));

	w = imgfs_writer_create(&opts, fd, err);
	if (!w)
		return err->code;
	ret = imgfs_writer_add_tar(w, t, err);
	if (!ret)
		ret = imgfs_writer_finish(w, NULL, err);
	imgfs_writer_destroy(w);
	return ret;
}

int main(int argc, char **argv)
{
	struct imgfs_error err;
	struct imgfs_tar *t;
	int in, fd, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s LAYER IMAGE\n", argv[0]);
		return 2;
	}
	imgfs_error_clear(&err);
	in = open(argv[1], O_RDONLY | O_CLOEXEC);
	t = in < 0 ? NULL : imgfs_tar_open_fd(in, argv[1], &err);
	if (!t) {
		fprintf(stderr, "%s: %s\n", argv[1],
			in < 0 ? strerror(errno) : err.msg);
		return 1;
	}
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	ret = convert(t, fd, &err);
	imgfs_tar_close(t);
	close(in);
	if (close(fd) && !ret) {
		fprintf(stderr, "from_fd: %s: %s\n", argv[2],
			strerror(errno));
		unlink(argv[2]);
		return 1;
	}
	if (ret) {
		fprintf(stderr, "from_fd: %s\n", err.msg);
		unlink(argv[2]);
		return 1;
	}
	return 0;
}
