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
	s->raw.in = in;
	s->raw.arg = arg;
	s->between = true;
	s->dctx = ZSTD_createDStream();
	return s->dctx ? 0 : -ENOMEM;
}

void unzstd_stream_end(struct imgfs_unzstd_stream *s)
{
	ZSTD_freeDStream(s->dctx);
	s->dctx = NULL;
}

long unzstd_read(struct imgfs_unzstd_stream *s, uint8_t *out, size_t size,
		 char *msg, size_t msglen)
{
	struct imgfs_raw_input *raw = &s->raw;

	while (!s->done) {
		ZSTD_outBuffer ob = { out, size, 0 };
		ZSTD_inBuffer ib;
		char hex[40];
		size_t r;
		int ret = raw_input_fill(raw);

		if (ret)
			return ret;
		if (!raw->avail && s->between) {
			s->done = true;
			break;
		}
		ib.src = raw->next;
		ib.size = raw->avail;
		ib.pos = 0;
		r = ZSTD_decompressStream(s->dctx, &ob, &ib);
		raw_input_used(raw, ib.pos);
		if (ZSTD_isError(r)) {
			/* what follows a whole frame is not another one */
			if (s->between && raw->pos &&
			    ZSTD_getErrorCode(r) == ZSTD_error_prefix_unknown) {
				hex_bytes(hex, sizeof(hex), raw->next,
					  raw->avail);
				snprintf(
					msg, msglen,
					"trailing garbage after the zstd data at byte %llu of the input: %s",
					(unsigned long long)raw->pos, hex);
			} else {
				snprintf(msg, msglen, "corrupt zstd data: %s",
					 ZSTD_getErrorName(r));
			}
			return -EINVAL;
		}
		/* 0: a frame ended and all it decoded is out */
		s->between = r == 0;
		if (ob.pos)
			return (long)ob.pos;
		/* the input ended and the decoder, asked, gave nothing more */
		if (!raw->avail && raw->eof && !s->between) {
			snprintf(msg, msglen, "truncated zstd input");
			return -EINVAL;
		}
	}
	return 0;
}
