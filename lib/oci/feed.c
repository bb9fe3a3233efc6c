// SPDX-License-Identifier: MIT
/*
 * A source layer blob decoded once, on a thread of its own, into a ring
 * of chunks (source/readahead.h) that every reader of the layer shares:
 * the writer's tar reader and, when the conversion is verified, the
 * comparison's. The blob is checked against its digest and size as it
 * goes: decompressed (gzip and zstd by util/decoder.h, any other
 * compression libarchive detects; all sniffed, so Docker's unnamed ones
 * are too), or passed through as stored. The uncompressed bytes are
 * hashed for the diffID by one more reader of the ring on a thread of its
 * own: decoding a large gzip layer is a conversion's longest step, and
 * hashing what it decoded would double it. When the readers stop early the
 * thread still reads the blob to its end, so a corrupted blob is always
 * reported as corrupted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "oci/feed.h"
#include "source/readahead.h"
#include "source/tar.h"
#include "util/error.h"

/* the stored blob read ahead: 8 chunks of 128 KiB */
#define RAW_CHUNK (128u << 10)
#define RAW_SLOTS 8u
/* a multiple of the tar block; 16 of them shared by the readers */
#define FEED_CHUNK (64u << 10)
#define FEED_SLOTS 16u

/*
 * The raw ring's callback, on a thread of its own: the blob as stored,
 * hashed as it is read and checked whole at its end; -1 with f->raw_err
 * set when reading fails or the size or digest is not the blob's.
 */
static long raw_fill(void *arg, uint8_t *p, size_t chunk, bool *end)
{
	struct oci_feed *f = arg;
	size_t n = 0;

	while (n < chunk) {
		ssize_t got =
			oci_blob_read(&f->blob, p + n, chunk - n, &f->raw_err);

		if (got < 0)
			return -1;
		if (!got) {
			*end = true;
			break;
		}
		n += (size_t)got;
	}
	if (n && f->on_read)
		f->on_read(f->on_read_arg, f->blob.size);
	if (*end && oci_blob_finish(&f->blob, &f->raw_err))
		return -1;
	return (long)n;
}

/* The raw blob's error, once its ring failed, in f->err. */
static int raw_failed(struct oci_feed *f)
{
	if (f->raw_err.code)
		f->err = f->raw_err;
	else
		error_set(&f->err, -EIO, "blob %s: read failed",
			  f->blob.want.str);
	return f->err.code;
}

/*
 * The decoding is done with the raw blob: wait until it was read to its
 * end and checked. 0, or its error in f->err.
 */
static int raw_end(struct oci_feed *f)
{
	int ret;

	if (!f->raw)
		return 0;
	readahead_leave(f->raw, 0);
	ret = readahead_finish(f->raw);
	readahead_free(f->raw);
	f->raw = NULL;
	return ret ? raw_failed(f) : 0;
}

/*
 * The blob's next bytes as stored (those put back first): their count, 0
 * at the end, or -1 with f->err set.
 */
static ssize_t blob_next(struct oci_feed *f, const uint8_t **buf)
{
	size_t n = f->pend_len;
	bool end;

	if (n) {
		*buf = f->pend;
		f->pend_len = 0;
		return (ssize_t)n;
	}
	if (readahead_next(f->raw, 0, buf, &n, &end)) {
		raw_failed(f);
		return -1;
	}
	return (ssize_t)n;
}

static ssize_t blob_cb(struct archive *a, void *arg, const void **buf)
{
	struct oci_feed *f = arg;
	const uint8_t *p;
	ssize_t n = blob_next(f, &p);

	if (n < 0) {
		archive_set_error(a, EIO, "%s", f->err.msg);
		return -1;
	}
	*buf = p;
	return n;
}

static long blob_raw(void *arg, const uint8_t **buf)
{
	struct oci_feed *f = arg;
	ssize_t n = blob_next(f, buf);

	return n < 0 ? f->err.code : (long)n;
}

static int archive_failed(struct oci_feed *f)
{
	const char *msg = archive_error_string(f->a);

	return error_set(&f->err, -EBADMSG, "blob %s: %s", f->blob.want.str,
			 msg ? msg : "cannot decompress");
}

/* Peek at the blob and choose how it is decoded. */
static int begin(struct oci_feed *f)
{
	struct archive_entry *e;
	enum decoder_kind kind;
	ssize_t peek;
	int r;

	f->mode = FEED_RAW;
	peek = blob_next(f, &f->pend);
	if (peek < 0)
		return f->err.code;
	f->pend_len = (size_t)peek; /* put back */
	if (!f->decompress)
		return 0;
	kind = decoder_detect(f->pend, f->pend_len);
	if (kind != DECODER_NONE) {
		f->mode = FEED_DECODER;
		if (decoder_init(&f->dec, kind, blob_raw, f))
			return error_set(&f->err, -ENOMEM, "out of memory");
		return 0;
	}
	f->mode = FEED_ARCHIVE;
	f->a = archive_read_new();
	if (!f->a)
		return error_set(&f->err, -ENOMEM, "out of memory");
	archive_read_support_filter_all(f->a);
	archive_read_support_format_raw(f->a);
	archive_read_support_format_empty(f->a);
	r = archive_read_open(f->a, f, NULL, blob_cb, NULL);
	if (r == ARCHIVE_OK)
		r = archive_read_next_header(f->a, &e);
	if (r == ARCHIVE_EOF)
		f->mode = FEED_EMPTY;
	else if (r != ARCHIVE_OK)
		return archive_failed(f);
	return 0;
}

/* Up to @len plain bytes into @p: their count, 0 at the end, or -errno. */
static long more(struct oci_feed *f, uint8_t *p, size_t len)
{
	char msg[160] = "";
	long n;

	switch (f->mode) {
	case FEED_RAW:
		if (!f->pend_len) {
			const uint8_t *src;
			ssize_t got = blob_next(f, &src);

			if (got <= 0)
				return got < 0 ? f->err.code : 0;
			f->pend = src;
			f->pend_len = (size_t)got;
		}
		n = (long)(f->pend_len < len ? f->pend_len : len);
		memcpy(p, f->pend, (size_t)n);
		f->pend += n;
		f->pend_len -= (size_t)n;
		return n;
	case FEED_DECODER:
		n = decoder_read(&f->dec, p, len, msg, sizeof(msg));
		if (n < 0 && msg[0])
			return error_set(&f->err, -EBADMSG, "blob %s: %s",
					 f->blob.want.str, msg);
		return n; /* else the blob reader's error, in f->err */
	case FEED_ARCHIVE:
		n = (long)archive_read_data(f->a, p, len);
		return n < 0 ? archive_failed(f) : n;
	default:
		return 0; /* FEED_EMPTY */
	}
}

/*
 * The stream failed: the rest of the blob is read, and its size and
 * digest decide first what is named.
 */
static void failed(struct oci_feed *f, int ret)
{
	if (!f->err.code)
		error_set(&f->err, ret ? ret : -EIO, "blob %s: read failed",
			  f->blob.want.str);
	raw_end(f);
}

/* The readahead thread's callback: the next chunk of the plain stream. */
static long fill(void *arg, uint8_t *p, size_t chunk, bool *end)
{
	struct oci_feed *f = arg;
	size_t n = 0;
	long got;
	int ret;

	if (f->mode == FEED_START) {
		ret = begin(f);
		if (ret) {
			failed(f, ret);
			return -1;
		}
	}
	while (n < chunk) {
		got = more(f, p + n, chunk - n);
		if (got < 0) {
			failed(f, (int)got);
			return -1;
		}
		if (!got) {
			*end = true;
			break;
		}
		n += (size_t)got;
	}
	/* at the end, the whole blob: its size and digest */
	if (*end && raw_end(f))
		return -1;
	return (long)n;
}

/* The diffID: every chunk of the stream, read as its last reader. */
static void *hasher_thread(void *arg)
{
	struct oci_feed *f = arg;
	const uint8_t *buf;
	size_t len;
	bool end = false;

	while (!end && !readahead_next(f->ra, f->readers, &buf, &len, &end)) {
		oci_hash_update(f->plain, buf, len);
		if (end)
			oci_hash_final(f->plain, &f->plain_digest);
	}
	readahead_leave(f->ra, f->readers);
	return NULL;
}

int oci_feed_start(struct oci_feed *f, const char *root,
		   const struct oci_digest *d, uint64_t size, bool decompress,
		   unsigned int readers, void (*on_read)(void *, uint64_t),
		   void *arg, struct imgfs_error *err)
{
	bool started;

	memset(f, 0, sizeof(*f));
	imgfs_error_clear(&f->err);
	f->on_read = on_read;
	f->on_read_arg = arg;
	f->decompress = decompress;
	f->readers = readers;
	if (readers > OCI_FEED_READERS)
		return error_set(err, -EINVAL, "too many readers of a blob");
	if (oci_blob_open(root, d, size, &f->blob, err))
		return err->code;
	imgfs_error_clear(&f->raw_err);
	if (decompress) {
		f->plain = oci_hash_new();
		if (!f->plain) {
			oci_feed_end(f, NULL);
			return error_set(err, -ENOMEM, "out of memory");
		}
	}
	/* three threads: reading (and hashing) the blob, decoding it, and
	 * hashing what was decoded; a blob only checked as stored needs the
	 * first alone. Once decoding runs it may end and drop f->raw at any
	 * time, so what started is kept apart. */
	f->raw = readahead_start(raw_fill, f, RAW_CHUNK, RAW_SLOTS, 1);
	started = f->raw != NULL;
	if (started && (decompress || readers)) {
		f->ra = readahead_start(fill, f, FEED_CHUNK, FEED_SLOTS,
					readers + (decompress ? 1 : 0));
		started = f->ra != NULL;
	}
	if (started && decompress) {
		f->hasher_running =
			!pthread_create(&f->hasher, NULL, hasher_thread, f);
		if (!f->hasher_running)
			readahead_leave(f->ra, readers);
		started = f->hasher_running;
	}
	if (!started) {
		oci_feed_end(f, NULL);
		return error_set(err, -EAGAIN, "cannot start a thread");
	}
	return 0;
}

struct imgfs_tar *oci_feed_tar(struct oci_feed *f, unsigned int reader,
			       const char *name, struct imgfs_error *err)
{
	if (reader >= f->readers || f->handed[reader]) {
		error_set(err, -EINVAL, "%s: no such reader", name);
		return NULL;
	}
	f->handed[reader] = true;
	return tar_open_shared(f->ra, reader, f->decompress, name, &f->err,
			       err);
}

int oci_feed_end(struct oci_feed *f, struct imgfs_error *err)
{
	int ret = 0;

	if (f->ra) {
		/* readers never handed out read nothing */
		for (unsigned int i = 0; i < f->readers; i++)
			if (!f->handed[i])
				readahead_leave(f->ra, i);
		if (f->hasher_running)
			pthread_join(f->hasher, NULL);
		f->hasher_running = false;
		if (readahead_finish(f->ra))
			ret = f->err.code ? f->err.code : -EIO;
		readahead_free(f->ra);
		f->ra = NULL;
	}
	/* the decoding left the raw ring already, unless there was none
	 * or it never started */
	if (raw_end(f) && !ret)
		ret = f->err.code;
	if (ret && err) {
		imgfs_error_clear(err);
		error_set(err, ret, "%s", f->err.msg);
	}
	if (f->a)
		archive_read_free(f->a);
	f->a = NULL;
	decoder_end(&f->dec);
	oci_blob_close(&f->blob);
	oci_hash_free(f->plain);
	f->plain = NULL;
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
