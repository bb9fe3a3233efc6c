// SPDX-License-Identifier: MIT
/*
 * Checked zstd decoding (unzstd.h), straight into the caller's buffer.
 * libzstd verifies each frame's checksum and refuses windows over its
 * default limit (128 MiB), which bounds the memory a hostile input costs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <zstd.h>
#include <zstd_errors.h>

#include "util/unzstd.h"

bool unzstd_magic(const uint8_t *p, size_t n)
{
	return n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f &&
	       p[3] == 0xfd;
}

int unzstd_stream_init(struct imgfs_unzstd_stream *s, imgfs_gunzip_in_fn in,
		       void *arg)
{
	memset(s, 0, sizeof(*s));
	s->in = in;
	s->arg = arg;
	s->between = true;
	s->dctx = ZSTD_createDStream();
	return s->dctx ? 0 : -ENOMEM;
}

void unzstd_stream_end(struct imgfs_unzstd_stream *s)
{
	ZSTD_freeDStream(s->dctx);
	s->dctx = NULL;
}

/* Raw bytes when none are left: 0, or -errno from the callback. */
static int stream_fill(struct imgfs_unzstd_stream *s)
{
	long n;

	if (s->avail || s->eof)
		return 0;
	n = s->in(s->arg, &s->next);
	if (n < 0)
		return (int)n;
	s->avail = (size_t)n;
	s->eof = n == 0;
	return 0;
}

long unzstd_read(struct imgfs_unzstd_stream *s, uint8_t *out, size_t size,
		 char *msg, size_t msglen)
{
	while (!s->done) {
		ZSTD_outBuffer ob = { out, size, 0 };
		ZSTD_inBuffer ib;
		char hex[40];
		size_t r;
		int ret = stream_fill(s);

		if (ret)
			return ret;
		if (!s->avail && s->between) {
			s->done = true;
			break;
		}
		ib.src = s->next;
		ib.size = s->avail;
		ib.pos = 0;
		r = ZSTD_decompressStream(s->dctx, &ob, &ib);
		s->next += ib.pos;
		s->avail -= ib.pos;
		if (ZSTD_isError(r)) {
			/* what follows a whole frame is not another one */
			if (s->between && s->pos &&
			    ZSTD_getErrorCode(r) == ZSTD_error_prefix_unknown) {
				hex_bytes(hex, sizeof(hex), s->next, s->avail);
				snprintf(
					msg, msglen,
					"trailing garbage after the zstd data at byte %llu of the input: %s",
					(unsigned long long)s->pos, hex);
			} else {
				snprintf(msg, msglen, "corrupt zstd data: %s",
					 ZSTD_getErrorName(r));
			}
			return -EINVAL;
		}
		s->pos += ib.pos;
		/* 0: a frame ended and all it decoded is out */
		s->between = r == 0;
		if (ob.pos)
			return (long)ob.pos;
		/* the input ended and the decoder, asked, gave nothing more */
		if (!s->avail && s->eof && !s->between) {
			snprintf(msg, msglen, "truncated zstd input");
			return -EINVAL;
		}
	}
	return 0;
}
