// SPDX-License-Identifier: MIT
/*
 * Checked gzip decoding, one member at a time (gunzip.h). ISA-L's inflate
 * is several times zlib's on x86, so it is used when the build found it;
 * zlib stays the fallback. Both verify the header, the CRC-32 and the
 * length (ISIZE) of every member.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/gunzip.h"

#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>

struct imgfs_gunzip {
	struct inflate_state st;
	uint8_t tail[8]; /* the last bytes consumed: the trailer at its end */
};

void gunzip_member(struct imgfs_gunzip *g)
{
	isal_inflate_reset(&g->st);
	g->st.crc_flag = ISAL_GZIP;
}

struct imgfs_gunzip *gunzip_new(void)
{
	struct imgfs_gunzip *g = calloc(1, sizeof(*g));

	if (g) {
		isal_inflate_init(&g->st);
		g->st.crc_flag = ISAL_GZIP;
	}
	return g;
}

void gunzip_free(struct imgfs_gunzip *g)
{
	free(g);
}

static void keep_tail(struct imgfs_gunzip *g, const uint8_t *p, size_t n)
{
	if (n >= sizeof(g->tail)) {
		memcpy(g->tail, p + n - sizeof(g->tail), sizeof(g->tail));
		return;
	}
	memmove(g->tail, g->tail + n, sizeof(g->tail) - n);
	memcpy(g->tail + sizeof(g->tail) - n, p, n);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* ISA-L has one code for both trailer fields: tell which one differs. */
static const char *checksum_why(const struct imgfs_gunzip *g)
{
	if (le32(g->tail) != g->st.crc)
		return "incorrect data check (CRC-32 trailer mismatch)";
	if (le32(g->tail + 4) != g->st.total_out)
		return "incorrect length check (ISIZE trailer mismatch)";
	return "incorrect data check";
}

static const char *isal_why(const struct imgfs_gunzip *g, int r)
{
	switch (r) {
	case ISAL_INVALID_BLOCK:
		return "invalid block";
	case ISAL_INVALID_SYMBOL:
		return "invalid code";
	case ISAL_INVALID_LOOKBACK:
		return "invalid distance too far back";
	case ISAL_INVALID_WRAPPER:
		return "incorrect header check";
	case ISAL_UNSUPPORTED_METHOD:
		return "unknown compression method";
	case ISAL_INCORRECT_CHECKSUM:
		return checksum_why(g);
	default:
		return "inflate failed";
	}
}

int gunzip_step(struct imgfs_gunzip *g, const uint8_t **in, size_t *in_len,
		uint8_t *out, size_t *out_len, const char **why)
{
	size_t room = *out_len;
	int r;

	/* avail_in is 32 bits wide */
	g->st.next_in = (uint8_t *)*in;
	g->st.avail_in = *in_len > UINT32_MAX ? UINT32_MAX : (uint32_t)*in_len;
	g->st.next_out = out;
	g->st.avail_out = room > UINT32_MAX ? UINT32_MAX : (uint32_t)room;
	r = isal_inflate(&g->st);
	keep_tail(g, *in, (size_t)(g->st.next_in - *in));
	*in_len -= (size_t)(g->st.next_in - *in);
	*in = g->st.next_in;
	*out_len = (size_t)(g->st.next_out - out);
	if (r < 0) {
		*why = isal_why(g, r);
		return -EINVAL;
	}
	return g->st.block_state == ISAL_BLOCK_FINISH;
}

#else /* zlib */
#include <zlib.h>

struct imgfs_gunzip {
	z_stream zs;
};

struct imgfs_gunzip *gunzip_new(void)
{
	struct imgfs_gunzip *g = calloc(1, sizeof(*g));

	/* 15 + 16: a gzip wrapper, trailer checked */
	if (g && inflateInit2(&g->zs, 15 + 16) != Z_OK) {
		free(g);
		return NULL;
	}
	return g;
}

void gunzip_free(struct imgfs_gunzip *g)
{
	if (!g)
		return;
	inflateEnd(&g->zs);
	free(g);
}

void gunzip_member(struct imgfs_gunzip *g)
{
	inflateReset(&g->zs);
}

int gunzip_step(struct imgfs_gunzip *g, const uint8_t **in, size_t *in_len,
		uint8_t *out, size_t *out_len, const char **why)
{
	size_t room = *out_len;
	int r;

	g->zs.next_in = (Bytef *)*in;
	g->zs.avail_in = *in_len > UINT_MAX ? UINT_MAX : (uInt)*in_len;
	g->zs.next_out = out;
	g->zs.avail_out = room > UINT_MAX ? UINT_MAX : (uInt)room;
	r = inflate(&g->zs, Z_NO_FLUSH);
	*in_len -= (size_t)(g->zs.next_in - *in);
	*in = g->zs.next_in;
	*out_len = (size_t)(g->zs.next_out - out);
	if (r == Z_STREAM_END)
		return 1;
	if (r != Z_OK && r != Z_BUF_ERROR) {
		*why = g->zs.msg ? g->zs.msg : "inflate failed";
		return -EINVAL;
	}
	return 0;
}
#endif

bool gunzip_magic(const uint8_t *p, size_t n)
{
	return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

void hex_bytes(char *out, size_t size, const uint8_t *p, size_t n)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && i < 8 && used + 4 < size; i++)
		used += (size_t)snprintf(out + used, size - used, "%s%02x",
					 i ? " " : "", p[i]);
}

int gunzip_stream_init(struct imgfs_gunzip_stream *s, imgfs_gunzip_in_fn in,
		       void *arg)
{
	memset(s, 0, sizeof(*s));
	s->raw.in = in;
	s->raw.arg = arg;
	s->in_member = true;
	s->gz = gunzip_new();
	return s->gz ? 0 : -ENOMEM;
}

void gunzip_stream_end(struct imgfs_gunzip_stream *s)
{
	gunzip_free(s->gz);
	s->gz = NULL;
}

int raw_input_fill(struct imgfs_raw_input *r)
{
	long n;

	if (r->avail || r->eof)
		return 0;
	n = r->in(r->arg, &r->next);
	if (n < 0)
		return (int)n;
	r->avail = (size_t)n;
	r->eof = n == 0;
	return 0;
}

/* Between members: only another gzip member (or the end) may follow. */
static int stream_next_member(struct imgfs_gunzip_stream *s, char *msg,
			      size_t msglen)
{
	struct imgfs_raw_input *raw = &s->raw;
	char hex[40];
	int ret = raw_input_fill(raw);

	if (ret)
		return ret;
	if (!raw->avail) {
		s->done = true;
		return 0;
	}
	if (raw->next[0] != 0x1f) {
		hex_bytes(hex, sizeof(hex), raw->next, raw->avail);
		snprintf(msg, msglen,
			 "trailing garbage after the gzip data at byte %llu of the input: %s",
			 (unsigned long long)raw->pos, hex);
		return -EINVAL;
	}
	gunzip_member(s->gz);
	s->in_member = true;
	return 0;
}

long gunzip_read(struct imgfs_gunzip_stream *s, uint8_t *out, size_t size,
		 char *msg, size_t msglen)
{
	struct imgfs_raw_input *raw = &s->raw;

	while (!s->done) {
		const char *why;
		const uint8_t *in;
		size_t len = size, in_len;
		int r;

		r = s->in_member ? raw_input_fill(raw) :
				   stream_next_member(s, msg, msglen);
		if (r)
			return r;
		if (!s->in_member)
			continue;
		in = raw->next;
		in_len = raw->avail;
		r = gunzip_step(s->gz, &in, &in_len, out, &len, &why);
		raw_input_used(raw, raw->avail - in_len);
		if (r < 0) {
			snprintf(msg, msglen, "corrupt gzip data: %s", why);
			return r;
		}
		if (r)
			s->in_member = false;
		if (len)
			return (long)len;
		/* the decoder may hold input back: ask it before saying so */
		if (!r && !raw->avail && raw->eof) {
			snprintf(msg, msglen, "truncated gzip input");
			return -EINVAL;
		}
	}
	return 0;
}
