// SPDX-License-Identifier: MIT
/*
 * oci/check_layer.c - one layer blob of a layout being checked: its
 * digest, the SHA-256 of its uncompressed content (its diff_id), and for
 * an EROFS layer the image checker and, when a source layout is given,
 * the comparison with the source layer it was converted from. Compressed
 * blobs are decompressed as they stream through the verifying reader (a
 * +zstd EROFS layer into an unnamed temporary file, for the checker).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <archive.h>

#include "oci/check.h"
#include "util/gunzip.h"
#include "util/tmpfile.h"

/* Annotations a converted layer carries (docs/oci.md). */
#define ANN_UNCOMPRESSED "org.erofs.uncompressed-digest"
#define ANN_SOURCE "org.imgfs.source.digest"

/*
 * The verifying reader, its bytes decoded by util/gunzip.c when they are
 * gzip, else by libarchive's filters.
 */
struct chk_stream {
	struct oci_blob_reader r;
	struct imgfs_error e;
	bool failed;
	bool gzip;
	size_t pending; /* peeked bytes at the start of buf */
	struct imgfs_gunzip_stream gs;
	char msg[160];
	char buf[65536];
};

static ssize_t raw_next(struct chk_stream *s)
{
	ssize_t n = (ssize_t)s->pending;

	s->pending = 0;
	if (!n)
		n = oci_blob_read(&s->r, s->buf, sizeof(s->buf), &s->e);
	if (n < 0)
		s->failed = true;
	return n;
}

static la_ssize_t stream_read(struct archive *a, void *arg, const void **buf)
{
	struct chk_stream *s = arg;
	ssize_t n = raw_next(s);

	if (n < 0) {
		archive_set_error(a, EIO, "%s", s->e.msg);
		return -1;
	}
	*buf = s->buf;
	return n;
}

static long gz_raw(void *arg, const uint8_t **buf)
{
	struct chk_stream *s = arg;
	ssize_t n = raw_next(s);

	*buf = (const uint8_t *)s->buf;
	return n < 0 ? -EIO : (long)n;
}

/* Peek at the blob and open its decoder: an ARCHIVE_ status. */
static int open_plain(struct chk_stream *s, struct archive *a)
{
	struct archive_entry *ae;
	ssize_t n = raw_next(s);
	int r;

	if (n < 0)
		return ARCHIVE_FATAL;
	s->pending = (size_t)n;
	s->gzip = imgfs_gunzip_magic((const uint8_t *)s->buf, s->pending);
	if (s->gzip)
		return imgfs_gunzip_stream_init(&s->gs, gz_raw, s) ?
			       ARCHIVE_FATAL :
			       ARCHIVE_OK;
	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	archive_read_support_format_empty(a);
	r = archive_read_open(a, s, NULL, stream_read, NULL);
	if (r == ARCHIVE_OK)
		r = archive_read_next_header(a, &ae);
	return r;
}

static la_ssize_t read_plain(struct chk_stream *s, struct archive *a,
			     char *buf, size_t size)
{
	if (!s->gzip)
		return archive_read_data(a, buf, size);
	return imgfs_gunzip_read(&s->gs, (uint8_t *)buf, size, s->msg,
				 sizeof(s->msg));
}

static const char *plain_error(struct chk_stream *s, struct archive *a)
{
	if (s->gzip)
		return s->msg[0] ? s->msg : s->e.msg;
	return archive_error_string(a);
}

/*
 * Stream @b through its decompressor (whatever the bytes say: Docker's
 * media types do not tell), hashing the output into b->diff_id and
 * writing it to @out_fd when >= 0. 0, 1 when reported, or -errno.
 */
static int uncompress(struct oci_chk *c, struct chk_blob *b, int out_fd)
{
	struct chk_stream *s = calloc(1, sizeof(*s));
	struct oci_hash *h = oci_hash_new();
	struct archive *a = archive_read_new();
	char *what = NULL;
	int ret = 0, r;

	if (!s || !h || !a) {
		ret = imgfs_error_set(c->err, -ENOMEM, "out of memory");
		goto out;
	}
	ret = oci_blob_open_path(b->path, &b->digest, b->size, &s->r, &s->e);
	if (ret) {
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where, "%s", s->e.msg);
		ret = 1;
		goto out;
	}
	r = open_plain(s, a);
	while (r == ARCHIVE_OK) {
		char buf[65536];
		la_ssize_t n = read_plain(s, a, buf, sizeof(buf));

		if (n < 0) {
			r = ARCHIVE_FATAL;
			break;
		}
		if (n == 0)
			break;
		oci_hash_update(h, buf, (size_t)n);
		if (out_fd >= 0) {
			char copy[sizeof("temporary copy of ") + OCI_DIGEST_MAX];

			snprintf(copy, sizeof(copy), "temporary copy of %s",
				 b->digest.str);
			ret = oci_write_all(out_fd, buf, (size_t)n, copy,
					    c->err);
			if (ret)
				goto out;
		}
	}
	if (r != ARCHIVE_OK && r != ARCHIVE_EOF && r != ARCHIVE_WARN)
		what = strdup(plain_error(s, a) ? plain_error(s, a) :
						  "unreadable");
	/* the digest first: a corrupted blob is named as such */
	if (!s->failed && !oci_blob_finish(&s->r, &s->e)) {
		b->verified = true;
	} else {
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where, "%s", s->e.msg);
		ret = 1;
		goto out;
	}
	if (what || r == ARCHIVE_FATAL) {
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "layer %s cannot be decompressed: %s", b->digest.str,
			   what ? what : "out of memory");
		ret = 1;
		goto out;
	}
	oci_hash_final(h, &b->diff_id);
	b->have_diff_id = true;
out:
	if (s)
		c->res->bytes += s->r.size;
	free(what);
	if (s)
		imgfs_gunzip_stream_end(&s->gs);
	if (a)
		archive_read_free(a);
	if (h)
		oci_hash_free(h);
	if (s)
		oci_blob_close(&s->r);
	free(s);
	return ret;
}

struct fwd {
	struct oci_chk *c;
	struct chk_blob *b;
	unsigned int shown;
};

static void forward_problem(void *arg, const struct imgfs_check_problem *p)
{
	struct fwd *f = arg;

	if (p->severity == IMGFS_CHECK_NOTE)
		return;
	chk_report(f->c, f->b, p->severity, f->b->where,
		   "EROFS layer %s: %s%s%s (%s)", f->b->digest.str,
		   p->path ? p->path : "", p->path ? ": " : "", p->msg,
		   imgfs_check_area_name(p->area));
}

static void forward_difference(void *arg,
			       const struct imgfs_compare_difference *d)
{
	struct fwd *f = arg;
	unsigned int max = f->c->o->max_differences;

	if (max && f->shown >= max)
		return;
	f->shown++;
	chk_report(f->c, f->b, IMGFS_CHECK_ERROR, f->b->where,
		   "EROFS layer %s differs from its source %s: %s: %s: %s",
		   f->b->digest.str, f->b->source, d->path,
		   imgfs_compare_kind_name(d->kind), d->msg);
}

static void forward_warning(const char *msg, void *arg)
{
	struct fwd *f = arg;

	chk_report(f->c, f->b, IMGFS_CHECK_WARNING, f->b->where,
		   "source %s of layer %s: %s", f->b->source, f->b->digest.str,
		   msg);
}

/* Compare the image of @b with the source layer its annotation names. */
static int compare_source(struct oci_chk *c, struct chk_blob *b,
			  struct imgfs_image *img, struct json_object *desc)
{
	struct json_object *ann = NULL;
	struct imgfs_compare_options co;
	struct imgfs_error e = { 0 };
	struct oci_blob_reader r;
	struct fwd f = { .c = c, .b = b };
	const char *src;
	struct oci_digest sd;
	struct stat st;
	char *path;
	int ret;

	json_object_object_get_ex(desc, "annotations", &ann);
	src = oci_json_str(ann, ANN_SOURCE);
	if (!src) {
		chk_report(
			c, b, IMGFS_CHECK_ERROR, b->where,
			"EROFS layer %s has no %s annotation: no source layer to compare it with",
			b->digest.str, ANN_SOURCE);
		return 0;
	}
	if (oci_digest_parse(src, &sd, ANN_SOURCE, &e)) {
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "EROFS layer %s: %s", b->digest.str, e.msg);
		return 0;
	}
	path = oci_blob_path(c->o->compare_src, &sd);
	b->source = strdup(sd.str);
	if (!path || !b->source) {
		free(path);
		return imgfs_error_set(c->err, -ENOMEM, "out of memory");
	}
	if (stat(path, &st) || !S_ISREG(st.st_mode)) {
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "the source %s of EROFS layer %s is not in %s",
			   sd.str, b->digest.str, c->o->compare_src);
		free(path);
		return 0;
	}
	/* compared only once its bytes are known to be the source's */
	ret = oci_blob_open_path(path, &sd, (uint64_t)st.st_size, &r, &e);
	if (!ret)
		ret = oci_blob_finish(&r, &e);
	oci_blob_close(&r);
	if (ret) {
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "the source of EROFS layer %s in %s: %s",
			   b->digest.str, c->o->compare_src, e.msg);
		free(path);
		return ret == -ENOMEM ? ret : 0;
	}
	imgfs_compare_options_init(&co);
	co.report = forward_difference;
	co.report_arg = &f;
	co.warn = forward_warning;
	co.warn_arg = &f;
	ret = imgfs_compare_tar(img, path, &co, &b->compare, &e);
	free(path);
	if (ret == -ENOMEM)
		return imgfs_error_set(c->err, ret, "out of memory");
	if (ret) {
		chk_report(
			c, b, IMGFS_CHECK_ERROR, b->where,
			"EROFS layer %s could not be compared with its source %s: %s",
			b->digest.str, sd.str, e.msg);
		return 0;
	}
	b->compared = true;
	c->res->compared_layers++;
	c->res->differences += b->compare.differences;
	if (f.shown < b->compare.differences)
		chk_report(
			c, b, IMGFS_CHECK_ERROR, b->where,
			"EROFS layer %s: %llu differences from its source %s in all (%u shown)",
			b->digest.str,
			(unsigned long long)b->compare.differences, sd.str,
			f.shown);
	return 0;
}

/* The image checker on @fd, then the comparison. */
static int check_image(struct oci_chk *c, struct chk_blob *b, int fd,
		       struct json_object *desc)
{
	struct imgfs_check_options co;
	struct imgfs_error e = { 0 };
	struct fwd f = { .c = c, .b = b };
	struct imgfs_image *img;
	int ret;

	b->erofs = true;
	c->res->erofs_layers++;
	ret = imgfs_image_open_fd(fd, IMGFS_OPEN_IGNORE_CHECKSUM, &img, &e);
	if (ret) {
		if (ret == -ENOMEM)
			return imgfs_error_set(c->err, ret, "out of memory");
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "EROFS layer %s is no EROFS image: %s",
			   b->digest.str, e.msg);
		return 0;
	}
	imgfs_check_options_init(&co);
	co.report = forward_problem;
	co.report_arg = &f;
	ret = imgfs_check_image(img, &co, &b->check, &e);
	if (ret == -ENOMEM) {
		imgfs_image_close(img);
		return imgfs_error_set(c->err, ret, "out of memory");
	}
	if (!ret && imgfs_check_has_verity(img)) {
		struct imgfs_verity_check vchk;
		int vret;

		/* no root hash to compare with: the layout records none */
		vret = imgfs_check_verity(img, NULL, &vchk, &e);
		b->dm_verity = true;
		b->dm_verity_ok = !vret;
		if (vret == -ENOMEM) {
			imgfs_image_close(img);
			return imgfs_error_set(c->err, vret, "out of memory");
		}
		if (vret)
			chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
				   "EROFS layer %s: its dm-verity tree: %s",
				   b->digest.str, e.msg);
	}
	if (ret)
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "EROFS layer %s could not be checked: %s",
			   b->digest.str, e.msg);
	else if (c->o->compare_src && !b->check.errors)
		ret = compare_source(c, b, img, desc);
	else if (c->o->compare_src)
		chk_report(
			c, b, IMGFS_CHECK_ERROR, b->where,
			"EROFS layer %s is not compared with its source: the image has errors",
			b->digest.str);
	imgfs_image_close(img);
	return ret < 0 ? ret : 0;
}

int chk_layer(struct oci_chk *c, struct chk_blob *b, struct json_object *desc)
{
	enum imgfs_oci_layer_type t;
	struct json_object *ann = NULL;
	const char *want;
	bool erofs = b->media_type &&
		     !imgfs_oci_layer_type_parse(b->media_type, &t);
	int fd, ret;

	if (!erofs && oci_layer_kind(b->media_type) == OCI_LAYER_OTHER) {
		if (b->media_type)
			chk_report(
				c, b, IMGFS_CHECK_WARNING, b->where,
				"layer %s has the unknown media type %s (only its digest and size are checked)",
				b->digest.str, b->media_type);
		ret = chk_verify(c, b);
		return ret < 0 ? ret : 0;
	}
	if (erofs && t != IMGFS_OCI_LAYER_EROFS_ZSTD) {
		/* stored as it is: the blob is the image */
		ret = chk_verify(c, b);
		if (ret)
			return ret < 0 ? ret : 0;
		b->diff_id = b->digest;
		b->have_diff_id = true;
		fd = open(b->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return imgfs_error_set(c->err, -errno, "%s: %s",
					       b->path, strerror(errno));
		ret = check_image(c, b, fd, desc);
		close(fd);
		return ret;
	}
	fd = -1;
	if (erofs) {
		fd = imgfs_tmpfile_open(imgfs_tmpdir(NULL), "imgfs-oci-layer");
		if (fd < 0)
			return imgfs_error_set(c->err, -errno,
					       "temporary file in %s: %s",
					       imgfs_tmpdir(NULL),
					       strerror(errno));
	}
	ret = uncompress(c, b, fd);
	if (ret || !erofs) {
		if (fd >= 0)
			close(fd);
		return ret < 0 ? ret : 0;
	}
	json_object_object_get_ex(desc, "annotations", &ann);
	want = oci_json_str(ann, ANN_UNCOMPRESSED);
	if (!want)
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "zstd EROFS layer %s has no %s annotation",
			   b->digest.str, ANN_UNCOMPRESSED);
	else if (strcmp(want, b->diff_id.str))
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "zstd EROFS layer %s: %s is %s, the image has %s",
			   b->digest.str, ANN_UNCOMPRESSED, want,
			   b->diff_id.str);
	ret = check_image(c, b, fd, desc);
	close(fd);
	return ret;
}
