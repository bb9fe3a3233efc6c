// SPDX-License-Identifier: MIT
/*
 * A source layer blob decoded once, on a thread of its own, into a ring
 * of chunks (source/readahead.h) that every reader of the layer shares:
 * the writer's tar reader and, when the conversion is verified, the
 * comparison's. The blob is checked against its digest and size as it
 * goes: decompressed (gzip and zstd by util/decoder.h, any other
 * compression libarchive detects; all sniffed, so Docker's unnamed ones
 * are too) with the uncompressed bytes hashed for the diffID, or passed
 * through as stored. When the readers stop early the thread still reads
 * the blob to its end, so a corrupted blob is always reported as
 * corrupted.
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

#define FEED_BUF (128u << 10)
/* a multiple of the tar block; 16 of them shared by the readers */
#define FEED_CHUNK (64u << 10)
#define FEED_SLOTS 16u

/*
 * The blob's next bytes (the peeked ones first), or -1 with f->err set;
 * told to the progress callback whichever decoder asks.
 */
static ssize_t blob_next(struct oci_feed *f, const char **buf)
{
	ssize_t n = (ssize_t)f->pending;

	*buf = f->inbuf + f->pending_at;
	f->pending = 0;
	f->pending_at = 0;
	if (!n) {
		n = oci_blob_read(&f->blob, f->inbuf, FEED_BUF, &f->err);
		*buf = f->inbuf;
	}
	if (n > 0 && f->on_read)
		f->on_read(f->on_read_arg, f->blob.size);
	return n;
}

static ssize_t blob_cb(struct archive *a, void *arg, const void **buf)
{
	struct oci_feed *f = arg;
	const char *p;
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
	const char *p;
	ssize_t n = blob_next(f, &p);

	*buf = (const uint8_t *)p;
	return n < 0 ? (f->err.code ? f->err.code : -EIO) : (long)n;
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
	if (!f->decompress)
		return 0;
	peek = oci_blob_read(&f->blob, f->inbuf, FEED_BUF, &f->err);
	if (peek < 0)
		return f->err.code ? f->err.code : -EIO;
	f->pending = (size_t)peek;
	kind = decoder_detect((const uint8_t *)f->inbuf, f->pending);
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
		if (f->pending) {
			n = (long)(f->pending < len ? f->pending : len);
			memcpy(p, f->inbuf + f->pending_at, (size_t)n);
			f->pending -= (size_t)n;
			f->pending_at = f->pending ? f->pending_at + (size_t)n
						   : 0;
			return n;
		}
		n = oci_blob_read(&f->blob, p, len, &f->err);
		if (n > 0 && f->on_read)
			f->on_read(f->on_read_arg, f->blob.size);
		return n < 0 ? (f->err.code ? f->err.code : -EIO) : n;
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

/* The stream failed: the blob's digest decides first what is named. */
static void failed(struct oci_feed *f, int ret)
{
	struct imgfs_error fin;

	if (!f->err.code)
		error_set(&f->err, ret ? ret : -EIO, "blob %s: read failed",
			  f->blob.want.str);
	imgfs_error_clear(&fin);
	if (!f->blob.failed && oci_blob_finish(&f->blob, &fin))
		f->err = fin;
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
	if (f->plain)
		oci_hash_update(f->plain, p, n);
	f->plain_size += n;
	if (!*end)
		return (long)n;
	/* the whole blob, its size and digest */
	if (oci_blob_finish(&f->blob, &f->err))
		return -1;
	if (f->plain)
		oci_hash_final(f->plain, &f->plain_digest);
	f->finished = true;
	return (long)n;
}

int oci_feed_start(struct oci_feed *f, const char *root,
		   const struct oci_digest *d, uint64_t size, bool decompress,
		   unsigned int readers, void (*on_read)(void *, uint64_t),
		   void *arg, struct imgfs_error *err)
{
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
	f->inbuf = malloc(FEED_BUF);
	if (decompress)
		f->plain = oci_hash_new();
	if (!f->inbuf || (decompress && !f->plain)) {
		oci_feed_end(f, NULL);
		return error_set(err, -ENOMEM, "out of memory");
	}
	f->ra = readahead_start(fill, f, FEED_CHUNK, FEED_SLOTS, readers);
	if (!f->ra) {
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
		if (readahead_finish(f->ra)) {
			ret = f->err.code ? f->err.code : -EIO;
			if (err) {
				imgfs_error_clear(err);
				error_set(err, ret, "%s", f->err.msg);
			}
		}
		readahead_free(f->ra);
		f->ra = NULL;
	}
	if (f->a)
		archive_read_free(f->a);
	f->a = NULL;
	decoder_end(&f->dec);
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
