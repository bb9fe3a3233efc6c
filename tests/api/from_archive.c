// SPDX-License-Identifier: MIT
/*
 * from_archive LAYER IMAGE: the same conversion as docs/examples/convert.c,
 * but with the layer opened by libarchive itself and handed over as a
 * struct archive * (imgfs_writer_add_archive()). It links with nothing
 * but "pkg-config --libs imgfs", which must therefore bring libarchive
 * (tests/api/install.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <imgfs/writer.h>

static int convert(struct archive *a, int fd, struct imgfs_error *err)
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
	ret = imgfs_writer_add_archive(w, a, err);
	if (!ret)
		ret = imgfs_writer_finish(w, NULL, err);
	imgfs_writer_destroy(w);
	return ret;
}

int main(int argc, char **argv)
{
	struct imgfs_error err;
	struct archive *a;
	int fd, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s LAYER IMAGE\n", argv[0]);
		return 2;
	}
	imgfs_error_clear(&err);
	a = archive_read_new();
	if (!a || archive_read_support_format_tar(a) != ARCHIVE_OK ||
	    archive_read_open_filename(a, argv[1], 65536) != ARCHIVE_OK) {
		fprintf(stderr, "%s: %s\n", argv[1],
			a ? archive_error_string(a) : "out of memory");
		return 1;
	}
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	ret = convert(a, fd, &err);
	archive_read_free(a);
	if (close(fd) && !ret) {
		fprintf(stderr, "from_archive: %s: %s\n", argv[2],
			strerror(errno));
		unlink(argv[2]);
		return 1;
	}
	if (ret) {
		fprintf(stderr, "from_archive: %s\n", err.msg);
		unlink(argv[2]);
		return 1;
	}
	return 0;
}
