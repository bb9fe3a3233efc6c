// SPDX-License-Identifier: MIT
/*
 * A source layer blob streamed once into a pipe by a thread of its own,
 * checked against its digest and size as it goes: decompressed (gzip and
 * zstd by util/decoder.h, any other compression libarchive detects; all
 * sniffed, so Docker's unnamed ones are too) with the uncompressed bytes
 * hashed for the diffID, or passed
 * through as stored. The reading end is an ordinary descriptor for the
 * tar reader. If the reader stops early the thread still reads the blob
 * to its end, so a corrupted blob is always reported as corrupted.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, O_TMPFILE, pipe2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "oci/feed.h"
#include "util/decoder.h"
#include "util/error.h"

#define FEED_BUF (128u << 10)
#define FEED_PIPE (1u << 20)

/*
 * The blob's next bytes (the peeked ones first), or -1 with f->err set;
 * told to the progress callback whichever decoder asks.
 */
static ssize_t blob_next(struct oci_feed *f)
{
	ssize_t n = (ssize_t)f->pending;

	f->pending = 0;
	if (!n)
		n = oci_blob_read(&f->blob, f->inbuf, FEED_BUF, &f->err);
	if (n > 0 && f->on_read)
		f->on_read(f->on_read_arg, f->blob.size);
	return n;
}

static ssize_t blob_cb(struct archive *a, void *arg, const void **buf)
{
	struct oci_feed *f = arg;
	ssize_t n = blob_next(f);

	if (n < 0) {
		archive_set_error(a, EIO, "%s", f->err.msg);
		return -1;
	}
	*buf = f->inbuf;
	return n;
}

/* Write to one pipe; once its reader has gone, nothing. */
static int sink_to(struct oci_feed *f, int fd, bool *closed, const char *p,
		   size_t len)
{
	while (len && !*closed) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE) {
			*closed = true;
			break;
		}
		if (n < 0)
			return error_set(&f->err, -errno, "blob %s: %s",
					 f->blob.want.str, strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Hash, count, and write to the pipe and to the tee's. */
static int sink(struct oci_feed *f, const void *buf, size_t len)
{
	if (f->plain)
		oci_hash_update(f->plain, buf, len);
	f->plain_size += len;
	if (sink_to(f, f->wfd, &f->sink_closed, buf, len))
		return f->err.code;
	if (f->tee_wfd >= 0 && sink_to(f, f->tee_wfd, &f->tee_closed, buf, len))
		return f->err.code;
	return 0;
}

static long blob_raw(void *arg, const uint8_t **buf)
{
	struct oci_feed *f = arg;
	ssize_t n = blob_next(f);

	*buf = (const uint8_t *)f->inbuf;
	return n < 0 ? (f->err.code ? f->err.code : -EIO) : (long)n;
}

/* gzip and zstd: decoded and checked by util/decoder.h. */
static int run_decoder(struct oci_feed *f, enum decoder_kind kind, char *out)
{
	struct decoder d;
	char msg[160] = "";
	long n = 0;
	int ret = 0;

	if (decoder_init(&d, kind, blob_raw, f))
		return error_set(&f->err, -ENOMEM, "out of memory");
	while (!ret && (n = decoder_read(&d, (uint8_t *)out, FEED_BUF, msg,
					 sizeof(msg))) > 0)
		ret = sink(f, out, (size_t)n);
	if (!ret && n < 0)
		ret = msg[0] ? error_set(&f->err, -EBADMSG, "blob %s: %s",
					 f->blob.want.str, msg)
			     : (int)n; /* the blob reader's error, in f->err */
	decoder_end(&d);
	return ret;
}

static int run_decompress(struct oci_feed *f)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	char *out = malloc(FEED_BUF);
	enum decoder_kind kind;
	ssize_t peek;
	int ret = 0, r;

	if (!a || !out) {
		ret = error_set(&f->err, -ENOMEM, "out of memory");
		goto out;
	}
	peek = oci_blob_read(&f->blob, f->inbuf, FEED_BUF, &f->err);
	if (peek < 0) {
		ret = f->err.code ? f->err.code : -EIO;
		goto out;
	}
	f->pending = (size_t)peek;
	kind = decoder_detect((const uint8_t *)f->inbuf, f->pending);
	if (kind != DECODER_NONE) {
		ret = run_decoder(f, kind, out);
		goto out;
	}
	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	archive_read_support_format_empty(a);
	r = archive_read_open(a, f, NULL, blob_cb, NULL);
	if (r == ARCHIVE_OK)
		r = archive_read_next_header(a, &e);
	if (r == ARCHIVE_EOF)
		goto out; /* an empty blob */
	if (r != ARCHIVE_OK)
		goto fail;
	for (;;) {
		la_ssize_t n = archive_read_data(a, out, FEED_BUF);

		if (n == 0)
			break;
		if (n < 0)
			goto fail;
		ret = sink(f, out, (size_t)n);
		if (ret)
			goto out;
	}
	goto out;
fail:
	ret = error_set(&f->err, -EBADMSG, "blob %s: %s", f->blob.want.str,
			archive_error_string(a) ? archive_error_string(a)
						: "cannot decompress");
out:
	if (a)
		archive_read_free(a);
	free(out);
	return ret;
}

static int run_raw(struct oci_feed *f)
{
	for (;;) {
		ssize_t n =
			oci_blob_read(&f->blob, f->inbuf, FEED_BUF, &f->err);

		if (n <= 0)
			return (int)n;
		if (f->on_read)
			f->on_read(f->on_read_arg, f->blob.size);
		if (sink(f, f->inbuf, (size_t)n))
			return f->err.code;
	}
}

static void *feed_thread(void *arg)
{
	struct oci_feed *f = arg;
	struct imgfs_error fin;
	sigset_t set;
	int ret;

	/* a reader that stops early must give EPIPE here, not kill us */
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	ret = f->decompress ? run_decompress(f) : run_raw(f);
	close(f->wfd);
	f->wfd = -1;
	if (f->tee_wfd >= 0)
		close(f->tee_wfd);
	f->tee_wfd = -1;
	/* the digest decides first: a corrupted blob is named as such */
	imgfs_error_clear(&fin);
	if (!f->blob.failed && oci_blob_finish(&f->blob, &fin)) {
		f->err = fin;
		ret = fin.code;
	} else if (f->blob.failed && !ret) {
		ret = f->err.code ? f->err.code : -EIO;
	}
	if (!ret && f->plain)
		oci_hash_final(f->plain, &f->plain_digest);
	f->ret = ret;
	return NULL;
}

int oci_feed_start(struct oci_feed *f, const char *root,
		   const struct oci_digest *d, uint64_t size, bool decompress,
		   struct imgfs_error *err)
{
	return oci_feed_start_cb(f, root, d, size, decompress, false, NULL,
				 NULL, err);
}

/*
 * A pipe for the stream. Its reader runs apart from the writer (and from
 * the other reader of a tee), so a larger buffer spares switches; the
 * size is a hint the system may refuse.
 */
static int feed_pipe(int p[2], struct imgfs_error *err)
{
	if (pipe2(p, O_CLOEXEC)) {
		int e = errno;

		return error_set(err, -e, "pipe: %s", strerror(e));
	}
	(void)fcntl(p[1], F_SETPIPE_SZ, FEED_PIPE);
	return 0;
}

int oci_feed_start_cb(struct oci_feed *f, const char *root,
		      const struct oci_digest *d, uint64_t size,
		      bool decompress, bool tee,
		      void (*on_read)(void *, uint64_t), void *arg,
		      struct imgfs_error *err)
{
	int p[2];

	memset(f, 0, sizeof(*f));
	f->on_read = on_read;
	f->on_read_arg = arg;
	f->wfd = f->rfd = f->tee_wfd = f->tee_rfd = -1;
	imgfs_error_clear(&f->err);
	f->decompress = decompress;
	if (oci_blob_open(root, d, size, &f->blob, err))
		return err->code;
	f->inbuf = malloc(FEED_BUF);
	if (decompress)
		f->plain = oci_hash_new();
	if (!f->inbuf || (decompress && !f->plain)) {
		oci_feed_end(f, NULL);
		return error_set(err, -ENOMEM, "out of memory");
	}
	if (feed_pipe(p, err)) {
		oci_feed_end(f, NULL);
		return err->code;
	}
	f->rfd = p[0];
	f->wfd = p[1];
	if (tee) {
		if (feed_pipe(p, err)) {
			oci_feed_end(f, NULL);
			return err->code;
		}
		f->tee_rfd = p[0];
		f->tee_wfd = p[1];
	}
	if (pthread_create(&f->thread, NULL, feed_thread, f)) {
		oci_feed_end(f, NULL);
		return error_set(err, -EAGAIN, "cannot start a thread");
	}
	f->running = true;
	return 0;
}

void oci_feed_close_reader(struct oci_feed *f)
{
	if (f->rfd >= 0)
		close(f->rfd);
	f->rfd = -1;
}

int oci_feed_end(struct oci_feed *f, struct imgfs_error *err)
{
	int ret = 0;

	/* the readers are done: the thread sees EPIPE and drains the blob */
	oci_feed_close_reader(f);
	if (f->tee_rfd >= 0)
		close(f->tee_rfd);
	f->tee_rfd = -1;
	if (f->running) {
		pthread_join(f->thread, NULL);
		f->running = false;
		ret = f->ret;
		if (ret && err) {
			imgfs_error_clear(err);
			error_set(err, ret, "%s", f->err.msg);
		}
	}
	if (f->wfd >= 0)
		close(f->wfd);
	f->wfd = -1;
	if (f->tee_wfd >= 0)
		close(f->tee_wfd);
	f->tee_wfd = -1;
	oci_blob_close(&f->blob);
	oci_hash_free(f->plain);
	f->plain = NULL;
	free(f->inbuf);
	f->inbuf = NULL;
	return ret;
}

int oci_feed_check_diff_id(const struct oci_feed *f,
			   const struct oci_digest *blob,
			   const struct oci_digest *diff_id,
			   struct imgfs_error *err)
{
	if (!strcmp(f->plain_digest.str, diff_id->str))
		return 0;
	return error_set(
		err, -EBADMSG,
		"layer %s: its uncompressed content has digest %s, not the diffID %s its config gives",
		blob->str, f->plain_digest.str, diff_id->str);
}
