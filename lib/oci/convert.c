// SPDX-License-Identifier: MIT
/*
 * One work unit: a source tar layer (one diffID) into one EROFS layer
 * blob. The compressed blob is streamed once (feed.c) into the writer,
 * its digest and the diffID of its uncompressed bytes checked on the
 * way; unless verification is off, the same stream is read by the
 * comparison too, and the finished image is checked and compared with
 * what it read; only then is the layer blob published under its digest,
 * followed by the unit record (cache.c).
 *
 * Images are made as containerd's converter makes them, reproducibly:
 * overlayfs whiteouts, no inline data, 4096-byte blocks (unless the
 * options say otherwise), UUID = UUIDv5(URL, "erofs:blobs/" + diffID),
 * build time 0 unless -T gives one, file mtimes kept.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, O_TMPFILE, pipe2 */
#endif
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

#include "imgfs/check.h"
#include "imgfs/compare.h"
#include "imgfs/reader.h"
#include "imgfs/source.h"
#include "imgfs/writer.h"
#include "oci/feed.h"
#include "oci/internal.h"
#include "util/error.h"
#include "util/fileio.h"

/* The one place a unit's event reaches the caller (oci.c's jobs too). */
void oci_progress(const struct oci_run *run, const struct oci_unit *u,
		  enum imgfs_oci_event ev, uint64_t bytes_read,
		  const char *msg)
{
	const struct imgfs_oci_options *o = run->o;
	bool done = ev == IMGFS_OCI_UNIT_CONVERTED ||
		    ev == IMGFS_OCI_UNIT_REUSED;
	struct imgfs_oci_progress p = {
		.event = ev,
		.index = u->index,
		.total = u->total,
		.diff_id = u->diff_id.str,
		.blob = u->blob.str,
		.blob_size = u->blob_size,
		.bytes_read = bytes_read,
		.digest = done ? u->out.str : NULL,
		.dm_verity_root_hash =
			done && u->verity_root[0] ? u->verity_root : NULL,
		.dm_verity_hash_offset = done ? u->verity_offset : 0,
		.msg = msg,
	};

	if (o->event && done)
		o->event(ev, u->diff_id.str, u->out.str, o->event_arg);
	if (!o->progress)
		return;
	if (run->progress_lock)
		pthread_mutex_lock(run->progress_lock);
	o->progress(&p, o->progress_arg);
	if (run->progress_lock)
		pthread_mutex_unlock(run->progress_lock);
}

static void unit_mkfs_options(const struct oci_run *run,
			      const struct oci_unit *u,
			      struct imgfs_mkfs_options *m)
{
	char name[OCI_DIGEST_MAX + 16];

	oci_mkfs_of(run->o, m);
	snprintf(name, sizeof(name), "erofs:blobs/%s", u->diff_id.str);
	oci_uuid5_url(name, m->uuid);
	m->have_uuid = true;
	if (!m->have_build_time) {
		m->have_build_time = true;
		m->build_time = 0;
	}
	m->progress = NULL;
	m->dm_verity_no_sidecar = true;
	/* layers in parallel share the CPUs: compression workers per layer
	 * so that jobs x workers stays about the CPU count (the bytes do not
	 * depend on it); none without compression, where they do nothing
	 * and the writer would warn of an option the user did not give */
	if (!m->workers && m->compress != IMGFS_COMPRESS_NONE) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		unsigned int jobs =
			run->o->jobs ? run->o->jobs
				     : (unsigned int)(cpus > 0 ? cpus : 1);

		m->workers = cpus > (long)jobs ? (unsigned int)(cpus / jobs)
					       : 1;
		if (m->workers > IMGFS_MAX_WORKERS)
			m->workers = IMGFS_MAX_WORKERS;
	}
	m->warn = run->o->warn;
	m->warn_arg = run->o->warn_arg;
}

struct read_ctx {
	const struct oci_run *run;
	const struct oci_unit *u;
};

static void on_read(void *arg, uint64_t bytes)
{
	struct read_ctx *rc = arg;

	oci_progress(rc->run, rc->u, IMGFS_OCI_UNIT_READ, bytes, NULL);
}

/* Each difference: error_set() keeps the first for the error message. */
static void compare_report(void *arg, const struct imgfs_compare_difference *d)
{
	error_set(arg, -EUCLEAN, "%s: %s: %s", imgfs_compare_kind_name(d->kind),
		  d->path, d->msg);
}

/* A comparison with the rules @m converts with (@img may come later). */
static int compare_new(const struct imgfs_mkfs_options *m,
		       struct imgfs_image *img, struct imgfs_error *first,
		       struct imgfs_compare **c, struct imgfs_error *err)
{
	struct imgfs_compare_options co;

	imgfs_compare_options_init(&co);
	imgfs_compare_options_set_rules(&co, m);
	/* the image was made here, from bytes nobody saw the key of */
	co.flags |= IMGFS_COMPARE_F_FAST_CONTENT;
	imgfs_error_clear(first);
	co.report = compare_report;
	co.report_arg = first;
	return imgfs_compare_new(img, &co, c, err);
}

/* The comparison's own reading of the stream the writer reads. */
struct tee_read {
	struct imgfs_compare *c;
	struct imgfs_tar *t;
	const char *name;
	int ret;
	struct imgfs_error err;
};

static void *tee_read_thread(void *arg)
{
	struct tee_read *tr = arg;

	imgfs_error_clear(&tr->err);
	tr->ret =
		imgfs_compare_read_tar_stream(tr->c, tr->t, tr->name, &tr->err);
	/* whatever happened, the feed must not wait for this reader */
	imgfs_tar_close(tr->t);
	tr->t = NULL;
	return NULL;
}

/*
 * The blob decoded once for the writer and, unless @cmp is NULL, for the
 * comparison's reading of the tar on a thread of its own: what the
 * image should hold is known when the image is, without a second read
 * or decompression of the blob, and the two read the same decoded bytes.
 */
static int build(const struct oci_run *run, struct oci_unit *u,
		 const struct imgfs_mkfs_options *m, int fd,
		 struct imgfs_mkfs_stats *st, struct imgfs_compare *cmp,
		 struct imgfs_error *err)
{
	struct imgfs_writer *w = NULL;
	struct imgfs_tar *t = NULL;
	struct oci_feed f;
	struct read_ctx rc = { run, u };
	struct tee_read tr = { .c = cmp };
	pthread_t tee_thread;
	bool tee_running = false;
	char name[OCI_DIGEST_MAX + 8];
	int ret;

	snprintf(name, sizeof(name), "blob %s", u->blob.str);
	ret = oci_feed_start(&f, run->src, &u->blob, u->blob_size, true,
			     cmp ? 2 : 1, on_read, &rc, err);
	if (ret)
		return ret;
	if (cmp) {
		tr.name = name;
		tr.t = oci_feed_tar(&f, 1, name, err);
		if (!tr.t)
			goto fail_tee;
		if (pthread_create(&tee_thread, NULL, tee_read_thread, &tr)) {
			imgfs_tar_close(tr.t);
			error_set(err, -EAGAIN, "cannot start a thread");
			goto fail_tee;
		}
		tee_running = true;
	}
	t = oci_feed_tar(&f, 0, name, err);
	ret = t ? 0 : err->code;
	if (!ret) {
		w = imgfs_writer_create(m, fd, err);
		ret = w ? 0 : err->code;
	}
	if (!ret)
		ret = imgfs_writer_add_tar(w, t, err);
	if (!ret)
		ret = imgfs_writer_finish(w, st, err);
	imgfs_writer_destroy(w);
	/* the writer reads no more: the comparison's reading goes on alone */
	imgfs_tar_close(t);
	if (tee_running)
		pthread_join(tee_thread, NULL);
	/* a corrupted blob is the cause of whatever the readers found */
	if (oci_feed_end(&f, err))
		return err->code;
	/* say which layer the entry is in */
	if (ret && !strstr(err->msg, u->blob.str))
		error_prefix(err, ret, "layer %s (diffID %s)", u->blob.str,
			     u->diff_id.str);
	if (ret)
		return ret;
	ret = oci_feed_check_diff_id(&f, &u->blob, &u->diff_id, err);
	if (ret)
		return ret;
	if (tr.ret)
		return error_set(
			err, tr.ret,
			"layer %s: the comparison could not read its tar: %s",
			u->blob.str, tr.err.msg);
	return 0;
fail_tee:
	oci_feed_end(&f, err);
	return err->code;
}

/*
 * For a unit found, not converted: its source streamed (the diffID
 * checked again on the way) into the comparison @c.
 */
static int compare_streamed(const struct oci_run *run, const struct oci_unit *u,
			    struct imgfs_compare *c,
			    struct imgfs_compare_result *cres,
			    struct imgfs_error *err)
{
	struct imgfs_tar *t;
	struct oci_feed f;
	char name[OCI_DIGEST_MAX + 8];
	int ret;

	snprintf(name, sizeof(name), "blob %s", u->blob.str);
	ret = oci_feed_start(&f, run->src, &u->blob, u->blob_size, true, 1,
			     NULL, NULL, err);
	if (ret)
		return ret;
	t = oci_feed_tar(&f, 0, name, err);
	ret = t ? imgfs_compare_read_tar_stream(c, t, name, err) : err->code;
	imgfs_tar_close(t);
	if (!ret)
		ret = imgfs_compare_run(c, NULL, cres, err);
	if (oci_feed_end(&f, err))
		return err->code;
	return ret ? ret
		   : oci_feed_check_diff_id(&f, &u->blob, &u->diff_id, err);
}

/*
 * The image against the checker and the source, in one read of the
 * image data: the checker maps it (extents inside the image, no
 * overlaps) and the comparison reads and hashes it, every file of a
 * passing image in full. @cmp has read the source already (build()), or
 * is NULL: the source is streamed here.
 */
static int verify(const struct oci_run *run, const struct oci_unit *u,
		  const struct imgfs_mkfs_options *m, int fd,
		  struct imgfs_compare *cmp, struct imgfs_error *first,
		  struct imgfs_error *err)
{
	struct imgfs_compare_result cres;
	struct imgfs_check_options ck;
	struct imgfs_check_result res;
	struct imgfs_verity_check vchk;
	struct imgfs_compare *own = NULL;
	struct imgfs_error ownfirst;
	struct imgfs_image *img;
	int ret;

	ret = imgfs_image_open_fd(
		fd, IMGFS_OPEN_IGNORE_CHECKSUM | IMGFS_OPEN_IGNORE_FEATURES,
		&img, err);
	if (ret)
		return ret;
	if (cmp) {
		ret = imgfs_compare_set_image(cmp, img, err);
	} else {
		first = &ownfirst;
		ret = compare_new(m, img, first, &own, err);
		cmp = own;
	}
	if (ret)
		goto out;
	imgfs_check_options_init(&ck);
	ck.flags = IMGFS_CHECK_F_NO_DATA;
	ret = imgfs_check_image(img, &ck, &res, err);
	if (!ret && m->dm_verity)
		ret = imgfs_check_verity(img, NULL, &vchk, err);
	if (!ret && res.errors)
		ret = error_set(err, -EUCLEAN,
				"layer %s: the checker found %" PRIu64
				" errors in its image",
				u->blob.str, res.errors);
	if (ret)
		goto out;
	ret = own ? compare_streamed(run, u, cmp, &cres, err)
		  : imgfs_compare_run(cmp, NULL, &cres, err);
	if (!ret && cres.differences)
		ret = error_set(
			err, -EUCLEAN,
			"layer %s: its image differs from the tar in %" PRIu64
			" places, first %s",
			u->blob.str, cres.differences, first->msg);
out:
	imgfs_compare_free(own);
	imgfs_image_close(img);
	return ret;
}

/* SHA-256 of the whole file @fd. */
static int hash_fd(int fd, struct oci_digest *d, uint64_t *size,
		   struct imgfs_error *err)
{
	struct oci_hash *h = oci_hash_new();
	char *buf = malloc(1u << 20);
	uint64_t off = 0;
	int ret = 0;

	if (!h || !buf) {
		ret = error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t n = pread_full(fd, buf, 1u << 20, off);

		if (n < 0) {
			ret = error_set(err, (int)n, "image: %s",
					strerror((int)-n));
			goto out;
		}
		if (!n)
			break;
		oci_hash_update(h, buf, (size_t)n);
		off += (uint64_t)n;
	}
	oci_hash_final(h, d);
	*size = off;
out:
	oci_hash_free(h);
	free(buf);
	return ret;
}

/* The image's digest, taken on a thread of its own. */
struct image_digest {
	int fd;
	struct oci_digest d;
	uint64_t size;
	int ret;
	struct imgfs_error err;
};

static void *image_digest_thread(void *arg)
{
	struct image_digest *h = arg;

	imgfs_error_clear(&h->err);
	h->ret = hash_fd(h->fd, &h->d, &h->size, &h->err);
	return NULL;
}

/*
 * The finished image verified (unless @cmp is NULL) and its digest
 * taken: both only read it, so the digest is taken beside the
 * verification instead of after it, on the layer's critical path.
 */
static int verify_and_hash(const struct oci_run *run, struct oci_unit *u,
			   const struct imgfs_mkfs_options *m, int fd,
			   struct imgfs_compare *cmp, struct imgfs_error *first,
			   struct imgfs_error *err)
{
	struct image_digest h = { .fd = fd };
	pthread_t th;
	bool apart;
	int ret;

	if (!cmp)
		return hash_fd(fd, &u->out_diff_id, &u->out_size, err);
	apart = !pthread_create(&th, NULL, image_digest_thread, &h);
	ret = verify(run, u, m, fd, cmp, first, err);
	if (apart) {
		pthread_join(th, NULL);
	} else if (!ret) {
		imgfs_error_clear(&h.err);
		h.ret = hash_fd(fd, &h.d, &h.size, &h.err);
	}
	if (ret)
		return ret;
	if (h.ret)
		return error_set(err, h.ret, "%s", h.err.msg);
	u->out_diff_id = h.d;
	u->out_size = h.size;
	return 0;
}

#ifdef HAVE_ZSTD
/* @in compressed with zstd into @out (level 3: containerd's default). */
static int zstd_fd(int in, int out, struct imgfs_error *err)
{
	size_t ilen = ZSTD_CStreamInSize(), olen = ZSTD_CStreamOutSize();
	char *ibuf = malloc(ilen), *obuf = malloc(olen);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	uint64_t off = 0, woff = 0;
	int ret = 0;

	if (!ibuf || !obuf || !c) {
		ret = error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	for (;;) {
		ssize_t n = pread_full(in, ibuf, ilen, off);
		ZSTD_EndDirective mode = n > 0 ? ZSTD_e_continue : ZSTD_e_end;
		ZSTD_inBuffer ib = { ibuf, n > 0 ? (size_t)n : 0, 0 };
		size_t left;

		if (n < 0) {
			ret = error_set(err, (int)n, "image: %s",
					strerror((int)-n));
			goto out;
		}
		off += (uint64_t)(n > 0 ? n : 0);
		do {
			ZSTD_outBuffer ob = { obuf, olen, 0 };

			left = ZSTD_compressStream2(c, &ob, &ib, mode);
			if (ZSTD_isError(left)) {
				ret = error_set(err, -EIO, "zstd: %s",
						ZSTD_getErrorName(left));
				goto out;
			}
			if (pwrite_full(out, obuf, ob.pos, woff)) {
				ret = error_set(err, -EIO,
						"layer blob: write failed");
				goto out;
			}
			woff += ob.pos;
		} while (mode == ZSTD_e_end ? left != 0 : ib.pos < ib.size);
		if (mode == ZSTD_e_end)
			break;
	}
out:
	ZSTD_freeCCtx(c);
	free(ibuf);
	free(obuf);
	return ret;
}
#endif

/* containerd's cache layout: the image and its .dmverity sidecar. */
static int cache_publish(const struct oci_run *run, struct oci_unit *u, int fd,
			 const struct imgfs_mkfs_stats *st,
			 struct imgfs_error *err)
{
	const char *dir = run->o->cache_dir;
	struct oci_tmpfile t;
	char path[96], *slash, name[160];
	int ret;

	oci_cache_image_rel(&u->diff_id, path);
	slash = strrchr(path, '/');
	*slash = '\0';
	ret = oci_tmpfile_open(dir, path, &t, err);
	if (!ret) {
		uint64_t off = 0;
		char buf[65536];
		ssize_t n;

		while ((n = pread_full(fd, buf, sizeof(buf), off)) > 0) {
			if (pwrite_full(t.fd, buf, (size_t)n, off)) {
				ret = error_set(err, -EIO, "%s: write failed",
						path);
				break;
			}
			off += (uint64_t)n;
		}
		if (!ret)
			ret = oci_tmpfile_publish(&t, slash + 1, true,
						  run->sync, err);
		oci_tmpfile_close(&t);
	}
	if (!ret && run->o->mkfs && run->o->mkfs->dm_verity) {
		char json[256];
		int n = imgfs_verity_sidecar_json(&st->dm_verity, json,
						  sizeof(json));

		snprintf(name, sizeof(name), "%s.dmverity", slash + 1);
		ret = n < 0 ? error_set(err, n, "dm-verity sidecar")
			    : oci_file_write(dir, path, name, json, (size_t)n,
					     run->sync, err);
	}
	return ret;
}

int oci_unit_verify(const struct oci_run *run, struct oci_unit *u, int fd,
		    struct imgfs_error *err)
{
	struct imgfs_mkfs_options m;
	int ret;

	unit_mkfs_options(run, u, &m);
	ret = verify(run, u, &m, fd, NULL, NULL, err);
	if (!ret)
		u->src_checked = true;
	return ret;
}

int oci_unit_convert(const struct oci_run *run, struct oci_unit *u,
		     struct imgfs_error *err)
{
	struct imgfs_mkfs_options m;
	struct imgfs_mkfs_stats st;
	struct oci_tmpfile img, z;
	const char *mt = imgfs_oci_layer_media_type(run->o->layer_type);
	struct imgfs_compare *cmp = NULL;
	struct imgfs_error first;
	int ret;

	memset(&z, 0, sizeof(z));
	z.fd = -1;
	unit_mkfs_options(run, u, &m);
	ret = oci_tmpfile_open(run->dst, "blobs/sha256", &img, err);
	if (ret)
		return ret;
	if (!run->o->no_verify)
		ret = compare_new(&m, NULL, &first, &cmp, err);
	if (!ret)
		ret = build(run, u, &m, img.fd, &st, cmp, err);
	u->verity_root[0] = '\0';
	if (!ret && m.dm_verity) {
		snprintf(u->verity_root, sizeof(u->verity_root), "%s",
			 st.dm_verity.root_hex);
		u->verity_offset = st.dm_verity.hash_offset;
	}
	if (!ret)
		ret = verify_and_hash(run, u, &m, img.fd, cmp, &first, err);
	imgfs_compare_free(cmp);
	u->out = u->out_diff_id;
	if (!ret && run->o->layer_type == IMGFS_OCI_LAYER_EROFS_ZSTD) {
#ifdef HAVE_ZSTD
		ret = oci_tmpfile_open(run->dst, "blobs/sha256", &z, err);
		if (!ret)
			ret = zstd_fd(img.fd, z.fd, err);
		if (!ret)
			ret = hash_fd(z.fd, &u->out, &u->out_size, err);
		if (!ret)
			ret = oci_tmpfile_publish(&z, oci_digest_hex(&u->out),
						  false, run->sync, err);
#else
		ret = error_set(err, -ENOTSUP,
				"built without zstd: %s is not available", mt);
#endif
	} else if (!ret) {
		ret = oci_tmpfile_publish(&img, oci_digest_hex(&u->out), false,
					  run->sync, err);
	}
	if (!ret && run->o->cache_dir)
		ret = cache_publish(run, u, img.fd, &st, err);
	if (!ret) {
		free(u->out_media_type);
		u->out_media_type = strdup(mt);
		if (!u->out_media_type)
			ret = error_set(err, -ENOMEM, "out of memory");
	}
	if (!ret) {
		u->have = true;
		u->converted_now = true;
		u->src_checked = true;
		u->verified = !run->o->no_verify;
		ret = oci_record_store(run->dst, &run->opts_digest, u,
				       run->sync, err);
	}
	if (!ret && run->o->cache_dir)
		ret = oci_record_store(run->o->cache_dir, &run->opts_digest, u,
				       run->sync, err);
	if (z.dir)
		oci_tmpfile_close(&z);
	oci_tmpfile_close(&img);
	return ret;
}
