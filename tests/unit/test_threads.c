// SPDX-License-Identifier: MIT
/*
 * Two writers at once: images built concurrently in two threads (one of
 * them compressed by its own worker pool) must be byte-identical to the
 * same images built one after the other, which fails if writers share any
 * mutable state. Then four checkers at once, two per image, must each find
 * a sound image holding every file. Last, as a verified OCI conversion
 * does, each image is built again while a comparison reads the same tar in
 * a thread of its own (four threads at once), and then finds no
 * difference with the image.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "imgfs/check.h"
#include "imgfs/compare.h"
#include "imgfs/reader.h"
#include "imgfs/source.h"
#include "imgfs/writer.h"
#include "unit.h"

#define NR_IMAGES 2
#define TAR_CAP (8u << 20)

struct job {
	int seed;
	uint8_t *tar;
	size_t tar_len;
	int fd;
	int ret;
};

static void add_file(struct archive *a, const char *name, const void *data,
		     size_t len, int seed)
{
	struct archive_entry *e = archive_entry_new();

	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_mtime(e, 1600000000 + seed, 0);
	archive_entry_xattr_add_entry(e, "user.seed", &seed, sizeof(seed));
	archive_write_header(a, e);
	archive_write_data(a, data, len);
	archive_entry_free(e);
}

/* A pax tar of a few hundred files whose contents depend on @seed. */
static void make_tar(struct job *j)
{
	struct archive *a = archive_write_new();
	static char data[20000];
	char name[64];
	size_t used = 0;

	j->tar = malloc(TAR_CAP);
	archive_write_set_format_pax(a);
	archive_write_open_memory(a, j->tar, TAR_CAP, &used);
	for (int i = 0; i < 300; i++) {
		size_t len = (size_t)((i * 977 + j->seed * 131) % sizeof(data));

		memset(data, 'a' + (i + j->seed) % 26, len);
		snprintf(name, sizeof(name), "dir%d/file%03d", i % 7, i);
		add_file(a, name, data, len, j->seed);
	}
	archive_write_close(a);
	archive_write_free(a);
	j->tar_len = used;
}

/* The job's tar in a temporary file, at its start; NULL if it cannot be. */
static FILE *tar_file(const struct job *j)
{
	FILE *f = tmpfile();

	if (f && (fwrite(j->tar, 1, j->tar_len, f) != j->tar_len || fflush(f) ||
		  fseek(f, 0, SEEK_SET))) {
		fclose(f);
		f = NULL;
	}
	return f;
}

/* The job's tar as a file, read back as a tar stream of the library. */
static struct imgfs_tar *job_tar(const struct job *j, int *fd,
				 struct imgfs_error *err)
{
	FILE *f = tar_file(j);
	struct imgfs_tar *t;

	if (!f) {
		/* the setter is the library's own: the message is ours */
		snprintf(err->msg, sizeof(err->msg), "cannot write the job's tar");
		err->code = -EIO;
		return NULL;
	}
	/* the reader leaves its descriptor open: closed after it */
	*fd = dup(fileno(f));
	t = imgfs_tar_open_fd(*fd, "job", err);
	fclose(f);
	return t;
}

static void *build(void *arg)
{
	struct job *j = arg;
	struct imgfs_mkfs_options o;
	struct imgfs_error err = { 0 };
	struct imgfs_writer *w;
	int tfd = -1;
	struct imgfs_tar *t = job_tar(j, &tfd, &err);

	imgfs_mkfs_options_init(&o);
	o.have_build_time = true;
	o.build_time = 1700000000;
	o.have_uuid = true;
	memset(o.uuid, j->seed, sizeof(o.uuid));
	if (j->seed == 2) {
		o.compress = IMGFS_COMPRESS_LZ4HC;
		o.workers = 2;
	}
	j->fd = fileno(tmpfile());
	w = t ? imgfs_writer_create(&o, j->fd, &err) : NULL;
	j->ret = w ? imgfs_writer_add_tar(w, t, &err) : -EINVAL;
	if (!j->ret)
		j->ret = imgfs_writer_finish(w, NULL, &err);
	if (j->ret)
		fprintf(stderr, "build %d: %s\n", j->seed, err.msg);
	imgfs_writer_destroy(w);
	imgfs_tar_close(t);
	if (tfd >= 0)
		close(tfd);
	return NULL;
}

struct check_job {
	int fd;
	struct imgfs_check_result res;
	int ret;
};

static void *check(void *arg)
{
	struct check_job *j = arg;
	struct imgfs_check_options o;
	struct imgfs_error err = { 0 };
	char path[64];

	imgfs_check_options_init(&o);
	o.flags = IMGFS_CHECK_F_DIGEST;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", j->fd);
	j->ret = imgfs_check_path(path, &o, &j->res, &err);
	if (j->ret)
		fprintf(stderr, "check %s: %s\n", path, err.msg);
	return NULL;
}

static void check_in_threads(const struct job *images)
{
	struct check_job cj[2 * NR_IMAGES];
	pthread_t th[2 * NR_IMAGES];

	for (int i = 0; i < 2 * NR_IMAGES; i++) {
		cj[i] = (struct check_job){ .fd = images[i % NR_IMAGES].fd };
		pthread_create(&th[i], NULL, check, &cj[i]);
	}
	for (int i = 0; i < 2 * NR_IMAGES; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2 * NR_IMAGES; i++) {
		CHECK(cj[i].ret == 0);
		CHECK(cj[i].res.errors == 0 && cj[i].res.warnings == 0);
		CHECK(cj[i].res.regular == 300 && cj[i].res.dirs == 8);
		CHECK(cj[i].res.data_bytes > 0 &&
		      cj[i].res.data_bytes == cj[i % NR_IMAGES].res.data_bytes);
	}
}

struct read_job {
	const struct job *j;
	struct imgfs_compare *c;
	int ret;
};

/* The comparison's reading of the job's tar, from a file of its own. */
static void *read_tar(void *arg)
{
	struct read_job *r = arg;
	struct imgfs_error err = { 0 };
	FILE *f = tar_file(r->j);
	char path[64];

	r->ret = -EIO;
	if (!f)
		return NULL;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fileno(f));
	r->ret = imgfs_compare_read_tar(r->c, path, &err);
	if (r->ret)
		fprintf(stderr, "read tar %d: %s\n", r->j->seed, err.msg);
	fclose(f);
	return NULL;
}

static void compare_while_building(const struct job *images)
{
	struct job again[NR_IMAGES];
	struct read_job rj[NR_IMAGES];
	pthread_t bt[NR_IMAGES], rt[NR_IMAGES];

	for (int i = 0; i < NR_IMAGES; i++) {
		struct imgfs_compare_options o;
		struct imgfs_error err = { 0 };

		imgfs_compare_options_init(&o);
		if (i)
			o.flags = IMGFS_COMPARE_F_FAST_CONTENT;
		again[i] = images[i];
		rj[i] = (struct read_job){ .j = &images[i] };
		CHECK(imgfs_compare_new(NULL, &o, &rj[i].c, &err) == 0);
		pthread_create(&bt[i], NULL, build, &again[i]);
		pthread_create(&rt[i], NULL, read_tar, &rj[i]);
	}
	for (int i = 0; i < NR_IMAGES; i++) {
		pthread_join(bt[i], NULL);
		pthread_join(rt[i], NULL);
	}
	for (int i = 0; i < NR_IMAGES; i++) {
		struct imgfs_compare_result res = { 0 };
		struct imgfs_error err = { 0 };
		struct imgfs_image *img = NULL;
		char path[64];

		CHECK(again[i].ret == 0 && rj[i].ret == 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", again[i].fd);
		CHECK(imgfs_image_open(path, 0, &img, &err) == 0);
		if (img) {
			CHECK(imgfs_compare_set_image(rj[i].c, img, &err) == 0);
			CHECK(imgfs_compare_run(rj[i].c, NULL, &res, &err) ==
			      0);
			CHECK(res.differences == 0 &&
			      res.archive_entries == 300);
		}
		imgfs_compare_free(rj[i].c);
		imgfs_image_close(img);
	}
}

static uint8_t *slurp(int fd, size_t *len)
{
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t *buf = malloc((size_t)size);

	*len = (size_t)size;
	if (pread(fd, buf, (size_t)size, 0) != size)
		*len = 0;
	return buf;
}

int main(void)
{
	struct job serial[NR_IMAGES], parallel[NR_IMAGES];
	pthread_t th[NR_IMAGES];

	for (int i = 0; i < NR_IMAGES; i++) {
		serial[i] = (struct job){ .seed = i + 1 };
		make_tar(&serial[i]);
		parallel[i] = serial[i];
		build(&serial[i]);
		CHECK(serial[i].ret == 0);
	}
	for (int i = 0; i < NR_IMAGES; i++)
		pthread_create(&th[i], NULL, build, &parallel[i]);
	for (int i = 0; i < NR_IMAGES; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NR_IMAGES; i++) {
		size_t la, lb;
		uint8_t *a = slurp(serial[i].fd, &la);
		uint8_t *b = slurp(parallel[i].fd, &lb);

		CHECK(parallel[i].ret == 0);
		CHECK(la > 4096 && la == lb && !memcmp(a, b, la));
		free(a);
		free(b);
	}
	/* and the two images differ from each other */
	{
		size_t la, lb;
		uint8_t *a = slurp(serial[0].fd, &la);
		uint8_t *b = slurp(serial[1].fd, &lb);

		CHECK(la != lb || memcmp(a, b, la));
		free(a);
		free(b);
	}
	check_in_threads(parallel);
	compare_while_building(serial);
	for (int i = 0; i < NR_IMAGES; i++)
		free(serial[i].tar); /* parallel[i] shares it */
	return unit_done("threads");
}
