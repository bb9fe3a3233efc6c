// SPDX-License-Identifier: MIT
/*
 * Tar streams: the raw input (gzip and zstd decoded here, others through
 * libarchive's filters) and libarchive's tar reader over it, with the rules
 * every user of a layer shares: entries end at the end-of-archive marker,
 * the rest of the input is drained and checked, damage names the entry.
 * The writer and the comparison both read tars through this file.
 */
#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>

#include "imgfs/source.h"
#include "source/readahead.h"
#include "source/tar.h"
#include "util/fileio.h"
#include "util/decoder.h"
#include "util/error.h"

bool imgfs_source_is_dir(const char *path)
{
	struct stat st;

	return strcmp(path, "-") && !stat(path, &st) && S_ISDIR(st.st_mode);
}

/*
 * The raw input. gzip layers are decoded here (util/gunzip.c: ISA-L, or
 * zlib) rather than by libarchive's gzip filter, which does not check the
 * members' CRC-32 and length trailers: a corrupt layer must fail the
 * conversion. zstd layers are decoded here too (util/unzstd.c; both
 * through util/decoder.h), straight into the reader's buffers (see
 * plain_fill). Other compressions are decoded by libarchive's filters,
 * whose libraries verify their own checksums; their bytes are handed
 * through unchanged. All of this runs on the decoding thread
 * (source/readahead.c) once the stream is open.
 */
#define SRC_IN (256u * 1024u)
#define SRC_OUT (256u * 1024u)

struct stream_source {
	int fd;
	bool own_fd;
	bool eof; /* no more raw input */
	uint64_t raw_pos; /* raw bytes read from fd (read by progress) */
	uint64_t in_start; /* raw offset of in[0] */
	uint64_t handed; /* bytes handed to libarchive (decoded ones) */
	struct decoder dec; /* kind DECODER_NONE: plain, or libarchive's */
	const uint8_t *next_in; /* unused raw bytes in in[] */
	size_t avail_in;
	uint8_t in[SRC_IN];
	uint8_t out[SRC_OUT];
};

/* Up to @size raw bytes into @p: their count, 0 at the end, or -errno. */
static ssize_t raw_read(struct stream_source *g, uint8_t *p, size_t size)
{
	ssize_t n;
	int state;

	/* the decoding thread may be stopped here, and only here */
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &state);
	do
		n = read(g->fd, p, size);
	while (n < 0 && errno == EINTR);
	pthread_setcancelstate(state, NULL);
	if (n < 0)
		return -errno;
	g->eof = n == 0;
	__atomic_store_n(&g->raw_pos, g->raw_pos + (uint64_t)n,
			 __ATOMIC_RELAXED);
	return n;
}

static int src_fill_raw(struct stream_source *g)
{
	uint64_t at = g->raw_pos;
	ssize_t n = raw_read(g, g->in, sizeof(g->in));

	if (n < 0)
		return (int)n;
	g->avail_in = (size_t)n;
	if (!n)
		return 0; /* in[] keeps the last bytes, for messages */
	g->in_start = at;
	g->next_in = g->in;
	return 0;
}

static ssize_t src_fill(struct archive *a, struct stream_source *g)
{
	int ret;

	if (g->avail_in || g->eof)
		return 0;
	ret = src_fill_raw(g);
	if (ret) {
		archive_set_error(a, -ret, "read error: %s", strerror(-ret));
		return -1;
	}
	return (ssize_t)g->avail_in;
}

/* The decoder's raw input: the peeked bytes first. */
static long src_raw(void *arg, const uint8_t **buf)
{
	struct stream_source *g = arg;
	size_t n;
	int ret;

	if (!g->avail_in) {
		ret = src_fill_raw(g);
		if (ret)
			return ret;
	}
	*buf = g->next_in;
	n = g->avail_in;
	g->avail_in = 0;
	return (long)n;
}

/* Decoded bytes into @p: their count, 0 at the end, or -1 with @a's error. */
static long src_decode(struct archive *a, struct stream_source *g, uint8_t *p,
		       size_t size)
{
	char msg[160] = "";
	long n = decoder_read(&g->dec, p, size, msg, sizeof(msg));

	if (n >= 0)
		return n;
	if (msg[0])
		archive_set_error(a, EINVAL, "%s", msg);
	else
		archive_set_error(a, (int)-n, "read error: %s",
				  strerror((int)-n));
	return -1;
}

static la_ssize_t src_read(struct archive *a, void *arg, const void **buf)
{
	struct stream_source *g = arg;
	la_ssize_t n;

	if (g->dec.kind != DECODER_NONE) {
		n = src_decode(a, g, g->out, sizeof(g->out));
		*buf = g->out;
		if (n > 0)
			g->handed += (uint64_t)n;
		return n;
	}
	if (src_fill(a, g) < 0)
		return -1;
	*buf = g->next_in;
	n = (la_ssize_t)g->avail_in;
	g->avail_in = 0;
	g->handed += (uint64_t)n;
	return n;
}

/*
 * The source's next bytes straight into @p (at most @size), bypassing
 * libarchive: decoded when compressed. Their count, 0 at the end, or -1
 * with @a's error set.
 */
static long src_read_into(struct archive *a, struct stream_source *g,
			  uint8_t *p, size_t size)
{
	long n;

	if (g->dec.kind != DECODER_NONE)
		return src_decode(a, g, p, size);
	if (g->avail_in) {
		n = (long)(g->avail_in < size ? g->avail_in : size);
		memcpy(p, g->next_in, (size_t)n);
		g->next_in += n;
		g->avail_in -= (size_t)n;
		return n;
	}
	if (g->eof)
		return 0;
	n = raw_read(g, p, size);
	if (n >= 0)
		return n;
	archive_set_error(a, (int)-n, "read error: %s", strerror((int)-n));
	return -1;
}

static int src_close(struct archive *a, void *arg)
{
	struct stream_source *g = arg;

	(void)a;
	decoder_end(&g->dec);
	if (g->own_fd)
		close(g->fd);
	free(g);
	return ARCHIVE_OK;
}

static struct stream_source *src_new(int fd, bool own_fd, const char *path,
				     struct imgfs_error *err)
{
	struct stream_source *g = calloc(1, sizeof(*g));
	enum decoder_kind kind;
	int ret;

	if (!g) {
		if (own_fd)
			close(fd);
		error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	g->fd = fd;
	g->own_fd = own_fd;
	/* peek at the first bytes: gzip, zstd or else */
	ret = src_fill_raw(g);
	if (ret) {
		error_set(err, ret, "%s: %s", path, strerror(-ret));
		src_close(NULL, g);
		return NULL;
	}
	kind = decoder_detect(g->in, g->avail_in);
	if (kind != DECODER_NONE && decoder_init(&g->dec, kind, src_raw, g)) {
		src_close(NULL, g);
		error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	return g;
}

/*
 * A tar stream is read by two libarchive handles: @outer detects and
 * decodes the compression (its "raw" format yields the plain stream), and
 * @a parses that stream as tar. The plain stream passes through two
 * buffers whose lengths are multiples of the tar block, so a block is
 * always whole in one of them: the last two stay readable, which is what
 * telling the end-of-archive marker from the end of the input needs
 * (libarchive reports ARCHIVE_EOF for both), and the rest of the stream
 * can be drained and examined after the marker.
 */
#define TAR_BLOCK 512u
#define FEED_SIZE (128u * TAR_BLOCK)
/* chunks decoded ahead: 1 MiB */
#define RA_SLOTS 16u

enum tar_state { TAR_READING, TAR_DONE, TAR_FAILED };

struct imgfs_tar {
	char *path;
	struct stream_source *src; /* owned by @outer once it is open */
	struct archive *outer;
	struct readahead *ra; /* decodes @outer ahead: compressed input */
	/* reading a stream someone else decodes (tar_open_shared): @ra is
	 * theirs, this is reader @ra_reader of it, and @ra_err says why it
	 * failed; there is no @outer then */
	bool ra_shared;
	unsigned int ra_reader;
	const struct imgfs_error *ra_err;
	bool compressed; /* the input is compressed */
	bool direct; /* libarchive decodes nothing: see plain_fill */
	uint64_t from_outer; /* plain bytes read through @outer */
	struct archive *a; /* NULL for an empty plain stream */
	const uint8_t *buf[2]; /* the last two chunks read */
	uint8_t *own[2]; /* without @ra: where they are read to */
	size_t len[2];
	uint64_t start[2]; /* plain-stream offset of buf[i][0] */
	unsigned int cur; /* buffer handed out last */
	bool primed; /* buf[cur] filled but not handed out yet */
	bool plain_end; /* @outer has no more plain bytes */
	uint64_t delivered; /* plain bytes read from @outer */
	enum tar_state state;
	unsigned long long entries;
	char *last; /* path of the last entry, for messages */
	int copy_fd; /* plain bytes also go here at their offsets; -1: no */
	int copy_err; /* first error writing them (negative errno) */
	locale_t utf8; /* (locale_t)0 when the system has none */
	/* the header blocks of the entry being read, from the plain stream:
	 * its names are taken from them as archived (source/rawname.c) */
	uint8_t *hdr;
	size_t hdr_len, hdr_cap;
	bool tapping; /* plain bytes handed out go to @hdr too */
	bool hdr_lost; /* @hdr misses bytes: they cannot be taken */
};

/* libarchive refuses metadata headers over 1 MiB and nests at most 32 */
#define HDR_MAX (40u << 20)

static void tap_add(struct imgfs_tar *t, const uint8_t *p, size_t n)
{
	if (!t->tapping || t->hdr_lost || !n)
		return;
	if (t->hdr_len + n > HDR_MAX) {
		t->hdr_lost = true;
		return;
	}
	if (t->hdr_len + n > t->hdr_cap) {
		size_t cap = (t->hdr_len + n) * 2;
		uint8_t *b = realloc(t->hdr, cap);

		if (!b) {
			t->hdr_lost = true;
			return;
		}
		t->hdr = b;
		t->hdr_cap = cap;
	}
	memcpy(t->hdr + t->hdr_len, p, n);
	t->hdr_len += n;
}

/* Keep what is still buffered from @before on, and what comes next. */
static void tap_start(struct imgfs_tar *t, uint64_t before)
{
	unsigned int first = t->start[0] <= t->start[1] ? 0 : 1;
	uint64_t at = before;

	t->hdr_len = 0;
	t->hdr_lost = false;
	t->tapping = true;
	for (unsigned int k = 0; k < 2; k++) {
		unsigned int i = first ^ k;
		uint64_t s = t->start[i], e = s + t->len[i];

		if (at >= s && at < e) {
			tap_add(t, t->buf[i] + (at - s), (size_t)(e - at));
			at = e;
		}
	}
	if (at != t->delivered)
		t->hdr_lost = true;
}

/* Keep the plain bytes [@off, @off + @n) in the copy, if one is asked for. */
static int copy_plain(struct imgfs_tar *t, const uint8_t *p, size_t n,
		      uint64_t off)
{
	if (t->copy_fd >= 0 && !t->copy_err && n)
		t->copy_err = pwrite_full(t->copy_fd, p, n, off);
	return t->copy_err;
}

/*
 * The next @chunk plain bytes into @p, fewer at the end (*@end set): the
 * length, or -1 with @outer's error set. Where libarchive found no
 * compression of its own (plain tar, or gzip and zstd, which src_read
 * decodes), it only copies: once the bytes it was handed while it probed
 * the stream are taken back, the rest comes straight from the source, one
 * copy fewer.
 */
static long plain_fill(void *arg, uint8_t *p, size_t chunk, bool *end)
{
	struct imgfs_tar *t = arg;
	size_t n = 0;

	while (n < chunk) {
		size_t want = chunk - n;
		long got;

		if (!t->direct || t->from_outer < t->src->handed) {
			if (t->direct && want > t->src->handed - t->from_outer)
				want = (size_t)(t->src->handed - t->from_outer);
			got = (long)archive_read_data(t->outer, p + n, want);
			if (got > 0)
				t->from_outer += (uint64_t)got;
		} else {
			got = src_read_into(t->outer, t->src, p + n, want);
		}
		if (got < 0)
			return -1;
		if (!got) {
			*end = true;
			break;
		}
		n += (size_t)got;
	}
	return (long)n;
}

/* buf[@i] becomes the next FEED_SIZE plain bytes (fewer at the end). */
static int plain_take(struct imgfs_tar *t, unsigned int i)
{
	size_t n = 0;
	long got;

	if (t->plain_end) {
		t->buf[i] = NULL;
	} else if (t->ra) {
		if (readahead_next(t->ra, t->ra_reader, &t->buf[i], &n,
				   &t->plain_end))
			return -1;
	} else {
		got = plain_fill(t, t->own[i], FEED_SIZE, &t->plain_end);
		if (got < 0)
			return -1;
		t->buf[i] = t->own[i];
		n = (size_t)got;
	}
	t->start[i] = t->delivered;
	t->len[i] = n;
	t->delivered += n;
	t->cur = i;
	return 0;
}

/* Why the plain stream failed, and its errno. */
static const char *stream_error(const struct imgfs_tar *t, int *code)
{
	const char *msg;

	if (t->ra_shared) {
		*code = t->ra_err && t->ra_err->code ? -t->ra_err->code : EIO;
		return t->ra_err && t->ra_err->msg[0] ? t->ra_err->msg
						      : "read error";
	}
	msg = archive_error_string(t->outer);
	*code = archive_errno(t->outer) ? archive_errno(t->outer) : EIO;
	return msg ? msg : "read error";
}

static int feed_fill(struct imgfs_tar *t, unsigned int i)
{
	if (plain_take(t, i))
		return -1;
	tap_add(t, t->buf[i], t->len[i]);
	return copy_plain(t, t->buf[i], t->len[i], t->start[i]) ? -1 : 0;
}

static la_ssize_t feed_read(struct archive *a, void *arg, const void **buf)
{
	struct imgfs_tar *t = arg;

	if (!t->primed && feed_fill(t, t->cur ^ 1)) {
		const char *msg;
		int code;

		if (t->copy_err) {
			archive_set_error(a, -t->copy_err,
					  "keeping a copy of the tar: %s",
					  strerror(-t->copy_err));
			return -1;
		}
		msg = stream_error(t, &code);
		archive_set_error(a, code, "%s", msg);
		return -1;
	}
	t->primed = false;
	*buf = t->buf[t->cur];
	return (la_ssize_t)t->len[t->cur];
}

/*
 * Whether the plain bytes [@off, @off + @n) are all zeros; -1 when they are
 * no longer (or not yet) in the buffers.
 */
static int plain_is_zero(const struct imgfs_tar *t, uint64_t off, size_t n)
{
	size_t found = 0;

	for (unsigned int i = 0; i < 2; i++) {
		uint64_t s = t->start[i], e = s + t->len[i];
		uint64_t lo = off > s ? off : s, hi = off + n < e ? off + n : e;

		for (uint64_t p = lo; p < hi; p++) {
			if (t->buf[i][p - s])
				return 0;
			found++;
		}
	}
	return found == n ? 1 : -1;
}

static void tar_free(struct imgfs_tar *t)
{
	if (t->a)
		archive_read_free(t->a);
	if (t->ra_shared)
		readahead_leave(t->ra, t->ra_reader);
	else
		readahead_free(t->ra);
	if (t->outer)
		archive_read_free(t->outer);
	else if (t->src)
		src_close(NULL, t->src);
	free(t->own[0]);
	free(t->own[1]);
	free(t->last);
	free(t->path);
	free(t->hdr);
	if (t->utf8)
		freelocale(t->utf8);
	free(t);
}

/* The plain stream: decoded by @outer, its start read into buf[0]. */
static int open_outer(struct imgfs_tar *t, struct imgfs_error *err)
{
	struct archive_entry *oe;
	const char *msg;
	int r;

	t->outer = archive_read_new();
	if (!t->outer)
		return error_set(err, -ENOMEM, "out of memory");
	archive_read_support_filter_all(t->outer);
	archive_read_support_format_raw(t->outer);
	/* compressed empty input then reads as no bytes */
	archive_read_support_format_empty(t->outer);
	r = archive_read_open(t->outer, t->src, NULL, src_read, src_close);
	if (r != ARCHIVE_OK) {
		t->src = NULL; /* libarchive has closed it */
		goto fail;
	}
	/* the empty format also wins when decoding fails at once */
	if (archive_format(t->outer) == ARCHIVE_FORMAT_EMPTY &&
	    archive_errno(t->outer))
		goto fail;
	t->compressed = t->src->dec.kind != DECODER_NONE ||
			archive_filter_count(t->outer) > 1;
	t->direct = archive_filter_count(t->outer) == 1;
	r = archive_read_next_header(t->outer, &oe);
	if (r == ARCHIVE_EOF)
		t->plain_end = true;
	else if (r != ARCHIVE_OK)
		goto fail;
	if (t->compressed && !t->plain_end) {
		t->ra = readahead_start(plain_fill, t, FEED_SIZE, RA_SLOTS, 1);
		if (!t->ra)
			return error_set(err, -errno, "%s: %s", t->path,
					 strerror(errno));
	} else if (!(t->own[0] = malloc(FEED_SIZE)) ||
		   !(t->own[1] = malloc(FEED_SIZE))) {
		return error_set(err, -ENOMEM, "out of memory");
	}
	if (feed_fill(t, 0))
		goto fail;
	t->primed = true;
	return 0;
fail:
	msg = archive_error_string(t->outer);
	return error_set(err, -EIO, "%s: %s", t->path,
			 msg ? msg : "cannot open");
}

static int open_inner(struct imgfs_tar *t, struct imgfs_error *err)
{
	const char *msg;

	t->a = archive_read_new();
	if (!t->a)
		return error_set(err, -ENOMEM, "out of memory");
	/* tar only: a stray zip or cpio file must not pass as a layer */
	archive_read_support_format_tar(t->a);
	archive_read_support_format_gnutar(t->a);
	if (archive_read_open(t->a, t, NULL, feed_read, NULL) == ARCHIVE_OK)
		return 0;
	msg = archive_error_string(t->a);
	return error_set(err, -EIO, "%s: %s", t->path,
			 msg ? msg : "cannot open");
}

/* A reader named @path with nothing to read yet, or NULL (-ENOMEM). */
static struct imgfs_tar *tar_new(const char *path, struct imgfs_error *err)
{
	struct imgfs_tar *t = calloc(1, sizeof(*t));

	if (!t || !(t->path = strdup(path))) {
		free(t);
		error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	t->copy_fd = -1;
	/* pax names are UTF-8: read in the "C" locale, libarchive reports
	 * every non-ASCII one as unconvertible (see tar_next) */
	t->utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	return t;
}

/* Read the tar stream on @fd, closed with the reader when @own_fd. */
static struct imgfs_tar *tar_open(int fd, bool own_fd, const char *path,
				  struct imgfs_error *err)
{
	struct imgfs_tar *t = tar_new(path, err);

	if (!t) {
		if (own_fd)
			close(fd);
		return NULL;
	}
	t->src = src_new(fd, own_fd, path, err);
	if (!t->src || open_outer(t, err))
		goto fail;
	/* an empty plain stream is not tar at all: tar_next decides */
	if (t->len[0] && open_inner(t, err))
		goto fail;
	return t;
fail:
	tar_free(t);
	return NULL;
}

struct imgfs_tar *imgfs_tar_open(const char *path, struct imgfs_error *err)
{
	int fd = 0;

	if (strcmp(path, "-")) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			error_set(err, -errno, "%s: %s", path, strerror(errno));
			return NULL;
		}
	}
	return tar_open(fd, fd != 0, path, err);
}

struct imgfs_tar *imgfs_tar_open_fd(int fd, const char *name,
				    struct imgfs_error *err)
{
	return tar_open(fd, false, name ? name : "-", err);
}

struct imgfs_tar *tar_open_shared(struct readahead *ra, unsigned int reader,
				  bool compressed, const char *name,
				  const struct imgfs_error *why,
				  struct imgfs_error *err)
{
	struct imgfs_tar *t = tar_new(name, err);
	int code;

	if (!t) {
		readahead_leave(ra, reader);
		return NULL;
	}
	t->ra = ra;
	t->ra_shared = true;
	t->ra_reader = reader;
	t->ra_err = why;
	t->compressed = compressed;
	if (feed_fill(t, 0)) {
		error_set(err, -EIO, "%s: %s", t->path, stream_error(t, &code));
		goto fail;
	}
	t->primed = true;
	if (t->len[0] && open_inner(t, err))
		goto fail;
	return t;
fail:
	tar_free(t);
	return NULL;
}

struct archive *tar_archive(struct imgfs_tar *t)
{
	return t->a;
}

int tar_copy_to(struct imgfs_tar *t, int fd, struct imgfs_error *err)
{
	/* only the opening read may have happened: it is in buf[0] */
	if (t->copy_fd >= 0 || t->delivered != t->len[0] || t->start[0] ||
	    t->entries || t->state != TAR_READING)
		return error_set(
			err, -EINVAL,
			"%s: the tar stream is already being read: it cannot be copied whole",
			t->path);
	t->copy_fd = fd;
	if (copy_plain(t, t->buf[0], t->len[0], 0))
		return error_set(err, t->copy_err,
				 "%s: keeping a copy of the tar: %s", t->path,
				 strerror(-t->copy_err));
	return 0;
}

uint64_t tar_plain_bytes(const struct imgfs_tar *t)
{
	return t->delivered;
}

uint64_t tar_input_bytes(const struct imgfs_tar *t, uint64_t *size)
{
	struct stat st;

	*size = 0;
	if (!t->src)
		return 0;
	/* only a regular file has a size to measure progress against */
	if (!fstat(t->src->fd, &st) && S_ISREG(st.st_mode))
		*size = (uint64_t)st.st_size;
	return __atomic_load_n(&t->src->raw_pos, __ATOMIC_RELAXED);
}

unsigned long long imgfs_tar_entries(const struct imgfs_tar *t)
{
	return t->entries;
}

void imgfs_tar_close(struct imgfs_tar *t)
{
	if (t)
		tar_free(t);
}

static void warnf(const struct imgfs_tar_options *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warnf(const struct imgfs_tar_options *o, const char *fmt, ...)
{
	char msg[IMGFS_ERROR_MSG_MAX];
	va_list ap;

	if (!o->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->warn(msg, o->warn_arg);
}

/* "after entry 12 ("usr/bin/x")" or "before the first entry" */
static const char *where(const struct imgfs_tar *t, char *buf, size_t size)
{
	if (!t->entries)
		snprintf(buf, size, "before the first entry");
	else
		snprintf(buf, size, "after entry %llu (\"%s\")", t->entries,
			 t->last ? t->last : "?");
	return buf;
}

/*
 * After the decoder reported the end of its data, nothing may follow in
 * the raw input: gzip and zstd are checked as they are decoded, the others
 * here (the bzip2 and lz4 decoders stop quietly before bytes that do not
 * start another stream).
 */
static int check_raw_end(struct imgfs_tar *t, struct imgfs_error *err)
{
	struct stream_source *g = t->src;
	int64_t used = t->outer ? archive_filter_bytes(t->outer, -1) : -1;
	const uint8_t *p = NULL;
	size_t avail = 0;
	char hex[40];
	int ret;

	if (!g || g->dec.kind != DECODER_NONE ||
	    archive_filter_count(t->outer) < 2 || used < 0)
		return 0;
	if (g->handed > (uint64_t)used) {
		if ((uint64_t)used >= g->in_start) {
			p = g->in + ((uint64_t)used - g->in_start);
			avail = (size_t)(g->handed - (uint64_t)used);
		}
	} else {
		ret = src_fill_raw(g);
		if (ret)
			return error_set(err, ret, "%s: %s", t->path,
					 strerror(-ret));
		if (!g->avail_in)
			return 0;
		p = g->in;
		avail = g->avail_in;
	}
	hex[0] = '\0';
	if (p)
		hex_bytes(hex, sizeof(hex), p, avail);
	return error_set(
		err, -EINVAL,
		"%s: trailing garbage after the %s data at byte %lld of the input%s%s",
		t->path, archive_filter_name(t->outer, 0), (long long)used,
		p ? ": " : "", hex);
}

/*
 * Read the plain stream from @off to its end: compression trailers get
 * checked, and non-zero bytes after the marker are reported.
 */
static int drain(struct imgfs_tar *t, const struct imgfs_tar_options *o,
		 uint64_t off, struct imgfs_error *err)
{
	uint64_t nonzero = UINT64_MAX, total = t->delivered - off;
	const char *msg;
	int code;

	for (uint64_t p = off; p < t->delivered && nonzero == UINT64_MAX;
	     p++)
		if (plain_is_zero(t, p, 1) == 0)
			nonzero = p;
	while (!t->plain_end) {
		unsigned int i = t->cur ^ 1;

		if (plain_take(t, i)) {
			msg = stream_error(t, &code);
			return error_set(err, -EIO, "%s: %s", t->path, msg);
		}
		if (copy_plain(t, t->buf[i], t->len[i], t->start[i]))
			return error_set(err, t->copy_err,
					 "%s: keeping a copy of the tar: %s",
					 t->path, strerror(-t->copy_err));
		for (size_t k = 0; k < t->len[i] && nonzero == UINT64_MAX; k++)
			if (t->buf[i][k])
				nonzero = t->start[i] + k;
		total += t->len[i];
	}
	t->len[0] = t->len[1] = 0;
	if (check_raw_end(t, err))
		return err->code;
	if (nonzero != UINT64_MAX)
		warnf(o, "%s: %llu bytes follow the end-of-archive marker (which ends at byte %llu) and are not all zeros (the first non-zero one is at byte %llu): they were not read as entries (another archive appended?)",
		      t->path, (unsigned long long)total,
		      (unsigned long long)off, (unsigned long long)nonzero);
	return 0;
}

/* The input ended at an entry boundary (or held nothing at all). */
static int missing_end(struct imgfs_tar *t, const struct imgfs_tar_options *o,
		       struct imgfs_error *err)
{
	char at[IMGFS_ERROR_MSG_MAX / 2];

	if (!t->delivered) {
		const char *how = t->compressed ? " once decompressed" : "";

		if (!o->allow_missing_end)
			return error_set(
				err, -EINVAL,
				"%s: empty input (0 bytes%s) is not a tar archive (--allow-missing-end accepts it as an empty layer)",
				t->path, how);
		warnf(o, "%s: empty input (0 bytes%s) read as an empty layer",
		      t->path, how);
		return 0;
	}
	/* some producers end there: GNU tar, bsdtar and Go read it */
	where(t, at, sizeof(at));
	if (o->require_end && !o->allow_missing_end)
		return error_set(
			err, -EINVAL,
			"%s: the input ends %s without an end-of-archive marker: truncated? (refused: --require-end)",
			t->path, at);
	warnf(o, "%s: the input ends %s without an end-of-archive marker: truncated?",
	      t->path, at);
	return 0;
}

/*
 * libarchive reported ARCHIVE_EOF, which the marker and the end of the
 * input both give: what it consumed since @before tells them apart.
 */
static int tar_end(struct imgfs_tar *t, const struct imgfs_tar_options *o,
		   uint64_t before, struct imgfs_error *err)
{
	int64_t end = archive_filter_bytes(t->a, 0);
	char at[IMGFS_ERROR_MSG_MAX / 2];
	int ret = 0;

	if (end < 0 || (uint64_t)end < before)
		return error_set(err, -EIO, "%s: lost track of the tar stream",
				 t->path);
	if ((uint64_t)end == before)
		ret = missing_end(t, o, err);
	else if ((uint64_t)end - before < TAR_BLOCK ||
		 plain_is_zero(t, (uint64_t)end - TAR_BLOCK, TAR_BLOCK) != 1)
		/* headers (pax, long name) and then the end of the input */
		ret = error_set(
			err, -EIO,
			"%s: the input ends inside the headers of the entry %s: truncated",
			t->path, where(t, at, sizeof(at)));
	return ret ? ret : drain(t, o, (uint64_t)end, err);
}

static int header_error(struct imgfs_tar *t, int r, struct archive_entry *e,
			uint64_t before, struct imgfs_error *err)
{
	const char *msg = archive_error_string(t->a);
	const char *name = r == ARCHIVE_WARN && e ? archive_entry_pathname(e) :
						     NULL;
	char at[IMGFS_ERROR_MSG_MAX / 2];

	if (!msg)
		msg = "unknown error";
	where(t, at, sizeof(at));
	/* a warning means libarchive dropped or could not convert part of
	 * the entry: taking it as it is would store something else */
	if (r == ARCHIVE_WARN && name)
		return error_set(
			err, -EINVAL,
			"%s: entry %llu cannot be read as archived: %s", name,
			t->entries + 1, msg);
	if (r == ARCHIVE_WARN)
		return error_set(
			err, -EINVAL,
			"entry %llu (%s) cannot be read as archived: %s",
			t->entries + 1, at, msg);
	if (r == ARCHIVE_RETRY)
		return error_set(
			err, -EIO,
			"damaged tar header at byte %llu of the tar stream, %s: %s",
			(unsigned long long)before, at, msg);
	return error_set(err, -EIO, "reading the archive %s: %s", at, msg);
}

static int remember(struct imgfs_tar *t, struct archive_entry *e,
		    struct imgfs_error *err)
{
	const char *p = archive_entry_pathname(e);

	free(t->last);
	t->last = strdup(p ? p : "?");
	if (!t->last) {
		t->state = TAR_FAILED;
		return error_set(err, -ENOMEM, "out of memory");
	}
	t->entries++;
	return 1;
}

/*
 * Header fields are decoded under a UTF-8 locale, so that libarchive
 * reports a pax name that is not UTF-8 (against the pax rules) and takes
 * the others; it also composes them (NFC), so the pax names are then taken
 * again from the header blocks, as archived. The locale is per thread and
 * restored at once, so the caller's settings are left alone.
 */
static int next_header(struct imgfs_tar *t, uint64_t before,
		       struct archive_entry **e)
{
	locale_t old = t->utf8 ? uselocale(t->utf8) : (locale_t)0;
	int r;

	tap_start(t, before);
	r = archive_read_next_header(t->a, e);
	t->tapping = false;
	if (old)
		uselocale(old);
	/* some decoding failures (a malformed pax ACL) only leave their
	 * message behind: they count as the warning they are */
	if (r == ARCHIVE_OK && archive_error_string(t->a))
		r = ARCHIVE_WARN;
	return r;
}

/* The entry's pax names as archived: 0 or a negative errno (-EIO, -ENOMEM). */
static int raw_names(struct imgfs_tar *t, uint64_t before,
		     struct archive_entry *e, struct imgfs_error *err)
{
	int64_t end = archive_filter_bytes(t->a, 0);
	int ret;

	if (t->hdr_lost || end < 0 || (uint64_t)end < before ||
	    (uint64_t)end - before > t->hdr_len)
		return error_set(
			err, -EIO,
			"%s: entry %llu: its header blocks cannot be read again for its names",
			t->path, t->entries + 1);
	t->hdr_len = (size_t)((uint64_t)end - before);
	ret = tar_raw_pax_names(t->hdr, t->hdr_len, e);
	return ret ? error_set(err, -ENOMEM, "out of memory") : 0;
}

const uint8_t *tar_entry_headers(const struct imgfs_tar *t, size_t *len)
{
	*len = t->hdr_len;
	return t->hdr_lost || !t->hdr_len ? NULL : t->hdr;
}

int tar_next(struct imgfs_tar *t, const struct imgfs_tar_options *o,
	     struct archive_entry **e, struct imgfs_error *err)
{
	uint64_t before;
	int r;

	*e = NULL;
	if (t->state == TAR_DONE)
		return 0;
	if (t->state == TAR_FAILED)
		return error_set(err, -EINVAL, "%s: reading already failed",
				 t->path);
	if (!t->a) {
		r = missing_end(t, o, err);
		if (!r)
			r = drain(t, o, 0, err);
	} else if (t->entries && archive_read_data_skip(t->a) != ARCHIVE_OK) {
		/* the rest of the previous entry, padding included: the
		 * position below is then where the next header starts */
		r = error_set(err, -EIO, "%s: reading data: %s", t->last,
			      archive_error_string(t->a));
	} else {
		before = (uint64_t)archive_filter_bytes(t->a, 0);
		r = next_header(t, before, e);
		if (r == ARCHIVE_OK)
			r = raw_names(t, before, *e, err);
		if (r == ARCHIVE_OK)
			return remember(t, *e, err);
		if (r == ARCHIVE_EOF)
			r = tar_end(t, o, before, err);
		else if (r != -EIO && r != -ENOMEM)
			r = header_error(t, r, *e, before, err);
		*e = NULL;
	}
	t->state = r ? TAR_FAILED : TAR_DONE;
	return r;
}
