// SPDX-License-Identifier: MIT
/*
 * ocicheck/layer.c - one layer blob of a layout being checked: its
 * digest, the SHA-256 of its uncompressed content (its diff_id), and for
 * an EROFS layer the image checker and, when a source layout is given,
 * the comparison with the source layer it was converted from. Compressed
 * blobs are decompressed as they stream through the verifying reader (a
 * +zstd EROFS layer into an unnamed temporary file, for the checker, no
 * larger than the image its superblock describes can be).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <archive.h>

#include "format/format.h"
#include "imgfs/format.h"
#include "ocicheck/check.h"
#include "util/decoder.h"
#include "util/tmpfile.h"
#include "util/error.h"

/* Annotations a converted layer carries (docs/oci.md). */
#define ANN_UNCOMPRESSED "org.erofs.uncompressed-digest"
#define ANN_SOURCE "org.imgfs.source.digest"

/*
 * The verifying reader, its bytes decoded by util/decoder.h when they are
 * gzip or zstd, else by libarchive's filters.
 */
struct chk_stream {
	struct oci_blob_reader r;
	struct imgfs_error e;
	bool failed;
	size_t pending; /* peeked bytes at the start of buf */
	struct decoder dec; /* DECODER_NONE: libarchive decodes */
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

/* Bytes of a +zstd layer's image read before its size is bounded. */
#define HEAD_BYTES (64u << 10)
/* a dm-verity tree's superblock and partial blocks (one per level) */
#define TREE_SLACK (32ull * 4096)

/*
 * The most bytes an EROFS image starting with the @len bytes @head can
 * take, a dm-verity tree after it included: its blocks (or the end of the
 * extra devices its device table maps into it), rounded up to the tree's
 * 4096-byte alignment, plus the largest tree over that (32 bytes per
 * 512-byte data block and the levels above: under a 15th; a 4096-byte
 * block per level, and the tree's superblock). 0: no EROFS superblock.
 */
static uint64_t image_bound(const uint8_t *head, size_t len)
{
	struct imgfs_super_block d;
	bool is48;
	uint64_t end;

	if (len < IMGFS_SUPER_OFFSET + IMGFS_SUPER_BASE_SIZE)
		return 0;
	super_block_decode(head + IMGFS_SUPER_OFFSET, &d);
	if (d.magic != IMGFS_SUPER_MAGIC || d.blkszbits < 9 || d.blkszbits > 16)
		return 0;
	is48 = d.feature_incompat & IMGFS_FEATURE_INCOMPAT_48BIT;
	end = d.blocks_lo;
	if (is48 && d.root_nid_64)
		end |= (uint64_t)d.root_nid << 32;
	for (unsigned int i = 0;
	     (d.feature_incompat & IMGFS_FEATURE_INCOMPAT_DEVICE_TABLE) &&
	     i < d.extra_devices;
	     i++) {
		/* a table beyond the head maps nothing here */
		size_t pos =
			((size_t)d.devt_slotoff + i) * IMGFS_DEVICE_SLOT_SIZE;
		struct imgfs_device_slot slot;
		uint64_t blocks, base;

		if (pos + IMGFS_DEVICE_SLOT_SIZE > len)
			break;
		device_slot_decode(head + pos, &slot);
		blocks = device_slot_blocks(&slot, is48);
		base = device_slot_uniaddr(&slot, is48);
		if (base && base + blocks > end)
			end = base + blocks;
	}
	end = ((end << d.blkszbits) + 4095) / 4096 * 4096;
	return end + end / 15 + TREE_SLACK;
}

/* The first bytes of a +zstd layer's image, and how many there may be. */
struct head {
	uint8_t buf[HEAD_BYTES];
	size_t len;
	uint64_t written;
	uint64_t bound; /* 0: not known yet */
};

/*
 * @n more bytes @p of the image of @b: 0, or 1 when they go past what its
 * superblock accounts for (reported: the rest is not decompressed).
 */
static int bounded(struct oci_chk *c, struct chk_blob *b, struct head *h,
		   const void *p, size_t n)
{
	if (h->len < HEAD_BYTES) {
		size_t k = n < HEAD_BYTES - h->len ? n : HEAD_BYTES - h->len;

		memcpy(h->buf + h->len, p, k);
		h->len += k;
		if (h->len == HEAD_BYTES)
			h->bound = image_bound(h->buf, h->len);
		if (h->len == HEAD_BYTES && !h->bound) {
			chk_report(
				c, b, IMGFS_CHECK_ERROR, b->where,
				"zstd EROFS layer %s does not start with an EROFS superblock (not decompressed further, its digest not checked)",
				b->digest.str);
			return 1;
		}
	}
	h->written += n;
	if (h->bound && h->written > h->bound) {
		chk_report(
			c, b, IMGFS_CHECK_ERROR, b->where,
			"zstd EROFS layer %s holds more than the %llu bytes its EROFS superblock accounts for (the image and a dm-verity tree after it): not decompressed further, its digest not checked",
			b->digest.str, (unsigned long long)h->bound);
		return 1;
	}
	return 0;
}

static long dec_raw(void *arg, const uint8_t **buf)
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
	enum decoder_kind kind;
	int r;

	if (n < 0)
		return ARCHIVE_FATAL;
	s->pending = (size_t)n;
	kind = decoder_detect((const uint8_t *)s->buf, s->pending);
	if (kind != DECODER_NONE)
		return decoder_init(&s->dec, kind, dec_raw, s) ? ARCHIVE_FATAL
							       : ARCHIVE_OK;
	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	archive_read_support_format_empty(a);
	r = archive_read_open(a, s, NULL, stream_read, NULL);
	if (r == ARCHIVE_OK)
		r = archive_read_next_header(a, &ae);
	return r;
}

static la_ssize_t read_plain(struct chk_stream *s, struct archive *a, char *buf,
			     size_t size)
{
	if (s->dec.kind == DECODER_NONE)
		return archive_read_data(a, buf, size);
	return decoder_read(&s->dec, (uint8_t *)buf, size, s->msg,
			    sizeof(s->msg));
}

static const char *plain_error(struct chk_stream *s, struct archive *a)
{
	if (s->dec.kind != DECODER_NONE)
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
	struct head *hd = out_fd >= 0 ? calloc(1, sizeof(*hd)) : NULL;
	struct oci_hash *h = oci_hash_new();
	struct archive *a = archive_read_new();
	char *what = NULL;
	int ret = 0, r;

	if (!s || !h || !a || (out_fd >= 0 && !hd)) {
		ret = error_set(c->err, -ENOMEM, "out of memory");
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

			ret = bounded(c, b, hd, buf, (size_t)n);
			if (ret)
				goto out;

			snprintf(copy, sizeof(copy), "temporary copy of %s",
				 b->digest.str);
			ret = oci_write_all(out_fd, buf, (size_t)n, copy,
					    c->err);
			if (ret)
				goto out;
		}
	}
	if (r != ARCHIVE_OK && r != ARCHIVE_EOF && r != ARCHIVE_WARN)
		what = strdup(plain_error(s, a) ? plain_error(s, a)
						: "unreadable");
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
	free(hd);
	if (s)
		decoder_end(&s->dec);
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
	const char *src; /* the source layer compared with */
	const char *where;
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
	chk_report(f->c, f->b, IMGFS_CHECK_ERROR, f->where,
		   "EROFS layer %s differs from its source %s: %s: %s: %s",
		   f->b->digest.str, f->src, d->path,
		   imgfs_compare_kind_name(d->kind), d->msg);
}

static void forward_warning(const char *msg, void *arg)
{
	struct fwd *f = arg;

	chk_report(f->c, f->b, IMGFS_CHECK_WARNING, f->where,
		   "source %s of layer %s: %s", f->src, f->b->digest.str, msg);
}

/* Compare the image of @b with the source layer @sd, verified first. */
static int compare_source(struct oci_chk *c, struct chk_blob *b,
			  struct imgfs_image *img, const struct oci_digest *sd,
			  const char *rules, const char *where)
{
	struct imgfs_compare_options co;
	struct imgfs_compare_result cr;
	struct imgfs_error e = { 0 };
	struct oci_blob_reader r;
	struct fwd f = { .c = c, .b = b, .src = sd->str, .where = where };
	struct stat st;
	char rel[96], path[PATH_MAX];
	int ret, sfd;

	/* the source layout is opened as the checked one is: no link */
	snprintf(rel, sizeof(rel), "blobs/sha256/%s", oci_digest_hex(sd));
	sfd = oci_open_file(c->o->compare_src, rel, &e);
	if (sfd >= 0 && fstat(sfd, &st))
		st.st_size = -1;
	if (sfd >= 0)
		close(sfd);
	if (sfd < 0 || st.st_size < 0) {
		chk_report(c, b, IMGFS_CHECK_ERROR, where,
			   "the source %s of EROFS layer %s is not in %s",
			   sd->str, b->digest.str, c->o->compare_src);
		return 0;
	}
	/* compared only once its bytes are known to be the source's */
	ret = oci_blob_open_at(c->o->compare_src, rel, sd, (uint64_t)st.st_size,
			       &r, &e);
	if (!ret)
		ret = oci_blob_finish(&r, &e);
	oci_blob_close(&r);
	if (ret) {
		chk_report(c, b, IMGFS_CHECK_ERROR, where,
			   "the source of EROFS layer %s in %s: %s",
			   b->digest.str, c->o->compare_src, e.msg);
		return ret == -ENOMEM ? ret : 0;
	}
	snprintf(path, sizeof(path), "%s/%s", c->o->compare_src, rel);
	imgfs_compare_options_init(&co);
	/* the rules the layer was made with; none recorded: the defaults */
	if (rules && oci_rules_parse(rules, &co)) {
		chk_report(
			c, b, IMGFS_CHECK_ERROR, where,
			"EROFS layer %s is not compared with its source %s: its %s annotation has a rule this version cannot replay",
			b->digest.str, sd->str, OCI_ANN_RULES);
		return 0;
	}
	co.report = forward_difference;
	co.report_arg = &f;
	co.warn = forward_warning;
	co.warn_arg = &f;
	ret = imgfs_compare_tar(img, path, &co, &cr, &e);
	if (ret == -ENOMEM)
		return error_set(c->err, ret, "out of memory");
	if (ret) {
		chk_report(
			c, b, IMGFS_CHECK_ERROR, where,
			"EROFS layer %s could not be compared with its source %s: %s",
			b->digest.str, sd->str, e.msg);
		return 0;
	}
	if (!b->compared) {
		b->compare = cr;
		c->res->compared_layers++;
	} else {
		b->compare.differences += cr.differences;
	}
	b->compared = true;
	c->res->differences += cr.differences;
	if (f.shown < cr.differences)
		chk_report(
			c, b, IMGFS_CHECK_ERROR, where,
			"EROFS layer %s: %llu differences from its source %s in all (%u shown)",
			b->digest.str, (unsigned long long)cr.differences,
			sd->str, f.shown);
	return 0;
}

/*
 * @src, the source layer at @b's place, parsed into @sd: 1 when @b was
 * paired with it already, 0 when not (now it is), or -errno.
 */
static int source_seen(struct oci_chk *c, struct chk_blob *b,
		       struct json_object *src, struct oci_digest *sd,
		       const char **smt, const char *where)
{
	struct imgfs_error e = { 0 };
	struct oci_digest *v;
	uint64_t size;

	if (oci_desc_get(src, sd, &size, smt, where, &e)) {
		chk_report(c, b, IMGFS_CHECK_ERROR, where, "source: %s", e.msg);
		return 1;
	}
	for (size_t i = 0; i < b->nr_sources; i++)
		if (!strcmp(b->sources[i].str, sd->str))
			return 1;
	v = realloc(b->sources, (b->nr_sources + 1) * sizeof(*v));
	if (!v)
		return error_set(c->err, -ENOMEM, "out of memory");
	b->sources = v;
	b->sources[b->nr_sources++] = *sd;
	if (!b->source && !(b->source = strdup(sd->str)))
		return error_set(c->err, -ENOMEM, "out of memory");
	return 0;
}

/*
 * @b at @where against the layer @sd (of type @smt) at the same place
 * in the source manifest: a tar layer must have become an EROFS layer
 * whose image (@img, NULL when it has errors) holds what the tar does;
 * any other layer is kept as it is.
 */
static int pair_source(struct oci_chk *c, struct chk_blob *b,
		       struct imgfs_image *img, struct json_object *desc,
		       const struct oci_digest *sd, const char *smt,
		       const char *where)
{
	struct json_object *ann = NULL;
	const char *named;

	if (oci_layer_kind(smt) != OCI_LAYER_TAR) {
		if (strcmp(sd->str, b->digest.str))
			chk_report(
				c, b, IMGFS_CHECK_ERROR, where,
				"layer %s is not the layer %s of the source manifest (which is kept as it is)",
				b->digest.str, sd->str);
		return 0;
	}
	if (!b->erofs) {
		chk_report(
			c, b, IMGFS_CHECK_ERROR, where,
			"layer %s is no EROFS layer, but its source %s is a tar layer",
			b->digest.str, sd->str);
		return 0;
	}
	json_object_object_get_ex(desc, "annotations", &ann);
	named = oci_json_str(ann, ANN_SOURCE);
	if (!named)
		chk_report(
			c, b, IMGFS_CHECK_ERROR, where,
			"EROFS layer %s has no %s annotation (its source at its place in the source manifest is %s)",
			b->digest.str, ANN_SOURCE, sd->str);
	else if (strcmp(named, sd->str))
		chk_report(
			c, b, IMGFS_CHECK_ERROR, where,
			"EROFS layer %s: its %s is %s, but the source manifest has %s at its place",
			b->digest.str, ANN_SOURCE, named, sd->str);
	if (img)
		return compare_source(c, b, img, sd,
				      oci_json_str(ann, OCI_ANN_RULES), where);
	chk_report(
		c, b, IMGFS_CHECK_ERROR, where,
		"EROFS layer %s is not compared with its source %s: the image has errors",
		b->digest.str, sd->str);
	return 0;
}

/* @b paired with @src (NULL: none) unless it was already. */
static int paired(struct oci_chk *c, struct chk_blob *b,
		  struct imgfs_image *img, struct json_object *desc,
		  struct json_object *src, const char *where)
{
	struct oci_digest sd;
	const char *smt = NULL;
	int ret;

	if (!c->o->compare_src || !src)
		return 0;
	ret = source_seen(c, b, src, &sd, &smt, where);
	if (ret)
		return ret < 0 ? ret : 0;
	return pair_source(c, b, img, desc, &sd, smt, where);
}

/* The image checker on @fd, then the comparison with @src. */
static int check_image(struct oci_chk *c, struct chk_blob *b, int fd,
		       struct json_object *desc, struct json_object *src,
		       const char *where)
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
			return error_set(c->err, ret, "out of memory");
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "EROFS layer %s is no EROFS image: %s",
			   b->digest.str, e.msg);
		b->check.errors++;
		return paired(c, b, NULL, desc, src, where);
	}
	imgfs_check_options_init(&co);
	co.report = forward_problem;
	co.report_arg = &f;
	ret = imgfs_check_image(img, &co, &b->check, &e);
	if (ret == -ENOMEM) {
		imgfs_image_close(img);
		return error_set(c->err, ret, "out of memory");
	}
	if (!ret && imgfs_check_has_verity(img)) {
		struct imgfs_verity_check vchk;
		int vret;

		vret = imgfs_check_verity(img, NULL, &vchk, &e);
		b->dm_verity = true;
		b->dm_verity_ok = !vret;
		if (vret == -ENOMEM) {
			imgfs_image_close(img);
			return error_set(c->err, vret, "out of memory");
		}
		if (vret)
			chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
				   "EROFS layer %s: its dm-verity tree: %s",
				   b->digest.str, e.msg);
		chk_verity_annotations(c, b, desc, vret ? NULL : &vchk.info);
	} else if (!ret) {
		chk_verity_annotations(c, b, desc, NULL);
	}
	if (ret) {
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "EROFS layer %s could not be checked: %s",
			   b->digest.str, e.msg);
		b->check.errors++;
	}
	ret = paired(c, b, ret || b->check.errors ? NULL : img, desc, src,
		     where);
	imgfs_image_close(img);
	return ret;
}

/*
 * The image of the EROFS layer @b (of type @t) in *@fd: the blob itself,
 * or a +zstd one decompressed into a temporary file (its diff_id then
 * computed). 0, 1 when reported, or -errno.
 */
static int layer_image(struct oci_chk *c, struct chk_blob *b,
		       enum imgfs_oci_layer_type t, int *fd)
{
	char rel[96];
	int ret;

	*fd = -1;
	if (t != IMGFS_OCI_LAYER_EROFS_ZSTD) {
		/* stored as it is: the blob is the image */
		ret = chk_verify(c, b);
		if (ret)
			return ret;
		b->diff_id = b->digest;
		b->have_diff_id = true;
		snprintf(rel, sizeof(rel), "blobs/sha256/%s",
			 oci_digest_hex(&b->digest));
		*fd = oci_open_file(c->root, rel, c->err);
		return *fd < 0 ? *fd : 0;
	}
	*fd = tmpfile_open(temp_dir(NULL), "imgfs-oci-layer");
	if (*fd < 0)
		return error_set(c->err, -errno, "temporary file in %s: %s",
				 temp_dir(NULL), strerror(errno));
	ret = uncompress(c, b, *fd);
	if (ret) {
		close(*fd);
		*fd = -1;
	}
	return ret;
}

int chk_layer(struct oci_chk *c, struct chk_blob *b, struct json_object *desc,
	      struct json_object *src, const char *where)
{
	enum imgfs_oci_layer_type t;
	struct json_object *ann = NULL;
	const char *want;
	bool erofs = b->media_type &&
		     !imgfs_oci_layer_type_parse(b->media_type, &t);
	int fd, ret;

	if (!erofs) {
		if (oci_layer_kind(b->media_type) != OCI_LAYER_OTHER) {
			ret = uncompress(c, b, -1);
		} else {
			if (b->media_type)
				chk_report(
					c, b, IMGFS_CHECK_WARNING, b->where,
					"layer %s has the unknown media type %s (only its digest and size are checked)",
					b->digest.str, b->media_type);
			ret = chk_verify(c, b);
		}
		if (!ret)
			ret = paired(c, b, NULL, desc, src, where);
		return ret < 0 ? ret : 0;
	}
	ret = layer_image(c, b, t, &fd);
	if (ret)
		return ret < 0 ? ret : 0;
	if (t == IMGFS_OCI_LAYER_EROFS_ZSTD) {
		json_object_object_get_ex(desc, "annotations", &ann);
		want = oci_json_str(ann, ANN_UNCOMPRESSED);
		if (!want)
			chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
				   "zstd EROFS layer %s has no %s annotation",
				   b->digest.str, ANN_UNCOMPRESSED);
		else if (strcmp(want, b->diff_id.str))
			chk_report(
				c, b, IMGFS_CHECK_ERROR, b->where,
				"zstd EROFS layer %s: %s is %s, the image has %s",
				b->digest.str, ANN_UNCOMPRESSED, want,
				b->diff_id.str);
	}
	ret = check_image(c, b, fd, desc, src, where);
	close(fd);
	return ret;
}

int chk_layer_again(struct oci_chk *c, struct chk_blob *b,
		    struct json_object *desc, struct json_object *src,
		    const char *where)
{
	enum imgfs_oci_layer_type t;
	struct imgfs_error e = { 0 };
	struct imgfs_image *img;
	struct oci_digest sd;
	const char *smt = NULL;
	int fd, ret;

	if (!c->o->compare_src || !src || !b->verified)
		return 0;
	ret = source_seen(c, b, src, &sd, &smt, where);
	if (ret)
		return ret < 0 ? ret : 0;
	if (!b->erofs || b->check.errors ||
	    oci_layer_kind(smt) != OCI_LAYER_TAR ||
	    imgfs_oci_layer_type_parse(b->media_type, &t))
		return pair_source(c, b, NULL, desc, &sd, smt, where);
	/* the image again, for another source */
	ret = layer_image(c, b, t, &fd);
	if (ret)
		return ret < 0 ? ret : 0;
	ret = imgfs_image_open_fd(fd, IMGFS_OPEN_IGNORE_CHECKSUM, &img, &e);
	if (!ret) {
		ret = pair_source(c, b, img, desc, &sd, smt, where);
		imgfs_image_close(img);
	} else if (ret != -ENOMEM) {
		chk_report(c, b, IMGFS_CHECK_ERROR, where,
			   "EROFS layer %s is no EROFS image: %s",
			   b->digest.str, e.msg);
		ret = 0;
	} else {
		ret = error_set(c->err, ret, "out of memory");
	}
	close(fd);
	return ret;
}
