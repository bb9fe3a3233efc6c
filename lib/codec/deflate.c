// SPDX-License-Identifier: MIT
/*
 * DEFLATE: one raw stream (no zlib header) per pcluster, window at most
 * 32 KiB (docs/format.md §9.14.3). zlib cannot stop at a given output size, so
 * the prefix is searched for.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "codec/codec.h"
#include "format/format.h"
#include "util/error.h"

static int deflate_cfg_parse(struct imgfs_zconfig *zc, const uint8_t *rec,
			     uint32_t len, unsigned int blkszbits, char *why,
			     size_t whylen)
{
	struct imgfs_deflate_cfg c;

	if (len < IMGFS_DEFLATE_CFGS_SIZE)
		return zread_corrupt(why, whylen,
				     "DEFLATE config record is %u bytes, not 6",
				     len);
	deflate_cfg_decode(rec, &c);
	if (c.windowbits > 15)
		return zread_corrupt(why, whylen,
				     "DEFLATE windowbits %u above 15",
				     c.windowbits);
	zc->deflate_windowbits = c.windowbits;
	return 0;
}

#ifdef HAVE_ZLIB
#include <zlib.h>

#define DEFLATE_WINDOW_MIN (1u << 9)
#define DEFLATE_WINDOW_MAX (1u << 15)

struct deflate_ctx {
	z_stream zs;
	uint8_t *scratch;
	size_t scratch_cap;
	struct imgfs_zprobe probe;
};

static unsigned int window_bits(uint32_t size)
{
	unsigned int l = 0;

	while (size >>= 1)
		l++;
	return l;
}

static int deflate_setup(struct imgfs_zcfg *cfg, struct imgfs_error *err)
{
	if (cfg->level < 0)
		cfg->level = 6; /* zlib's default */
	if (cfg->level < 1 || cfg->level > 9)
		return error_set(err, -EINVAL,
				 "deflate level %d out of range 1..9",
				 cfg->level);
	if (!cfg->dictsize)
		cfg->dictsize = DEFLATE_WINDOW_MAX;
	if (cfg->dictsize & (cfg->dictsize - 1) ||
	    cfg->dictsize < DEFLATE_WINDOW_MIN ||
	    cfg->dictsize > DEFLATE_WINDOW_MAX)
		return error_set(
			err, -EINVAL,
			"deflate window %u must be a power of two from %u to %u",
			cfg->dictsize, DEFLATE_WINDOW_MIN, DEFLATE_WINDOW_MAX);
	return 0;
}

static void deflate_ctx_free(void *ctx)
{
	struct deflate_ctx *c = ctx;

	deflateEnd(&c->zs);
	free(c->scratch);
	free(c);
}

static void *deflate_ctx_new(const struct imgfs_zcfg *cfg)
{
	struct deflate_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->scratch_cap = cfg->pclustersize;
	c->scratch = malloc(c->scratch_cap);
	/* negative window bits: raw deflate, no zlib header or trailer */
	if (!c->scratch ||
	    deflateInit2(&c->zs, cfg->level, Z_DEFLATED,
			 -(int)window_bits(cfg->dictsize), 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(c->scratch);
		free(c);
		return NULL;
	}
	return c;
}

/*
 * With @first_alone the first byte is a block of its own, which zlib can
 * only encode with fixed codes (a stored block would cost more): a stream
 * must not start with a zero byte (the kernel takes leading zeros for
 * padding, docs/format.md §9.8), and a non-final stored block starts with one.
 */
static int run_deflate(struct deflate_ctx *c, const uint8_t *src, size_t len,
		       uint8_t *dst, size_t cap, bool first_alone)
{
	if (deflateReset(&c->zs) != Z_OK)
		return Z_STREAM_ERROR;
	c->zs.next_in = (Bytef *)src;
	c->zs.avail_in = (uInt)len;
	c->zs.next_out = dst;
	c->zs.avail_out = (uInt)cap;
	if (first_alone && len > 1) {
		c->zs.avail_in = 1;
		if (deflate(&c->zs, Z_BLOCK) != Z_OK)
			return Z_BUF_ERROR;
		c->zs.avail_in = (uInt)(len - 1);
	}
	return deflate(&c->zs, Z_FINISH);
}

static ssize_t deflate_oneshot(void *ctx, const uint8_t *src, size_t len,
			       uint8_t *dst, size_t cap, const char **why)
{
	struct deflate_ctx *c = ctx;
	int r = run_deflate(c, src, len, dst, cap, false);

	if (r == Z_STREAM_END && !dst[0])
		r = run_deflate(c, src, len, dst, cap, true);
	if (r == Z_STREAM_END)
		return (ssize_t)(cap - c->zs.avail_out);
	if (r == Z_OK || r == Z_BUF_ERROR)
		return -ENOSPC;
	*why = c->zs.msg ? c->zs.msg : "zlib deflate failed";
	return -EIO;
}

static ssize_t deflate_destsize(void *ctx, const uint8_t *src, size_t *srclen,
				uint8_t *dst, size_t dstcap, const char **why)
{
	struct deflate_ctx *c = ctx;

	/* each try of the search below would come back full */
	if (zprobe_raw(&c->probe, src, srclen, dstcap))
		return 0;
	if (*srclen > UINT32_MAX / 2)
		*srclen = UINT32_MAX / 2;
	return zsearch_destsize(ctx, deflate_oneshot, src, srclen, dst, dstcap,
				c->scratch, c->scratch_cap, why);
}

static unsigned int deflate_cfg_record(const struct imgfs_zcfg *cfg,
				       uint8_t *buf)
{
	struct imgfs_deflate_cfg rec = {
		.windowbits = (uint8_t)window_bits(cfg->dictsize),
	};

	deflate_cfg_encode(&rec, buf);
	return IMGFS_DEFLATE_CFGS_SIZE;
}

/* The inflate state, set up once and reset per pcluster. */
static z_stream *inflate_stream(void **dctx, char *why, size_t whylen,
				int *ret)
{
	z_stream *z = *dctx;
	int r;

	*ret = 0;
	if (z) {
		if (inflateReset(z) != Z_OK)
			*ret = zread_corrupt(why, whylen, "zlib reset failed");
		return *ret ? NULL : z;
	}
	z = calloc(1, sizeof(*z));
	if (!z) {
		*ret = -ENOMEM;
		return NULL;
	}
	r = inflateInit2(z, -15);
	if (r != Z_OK) {
		free(z);
		*ret = r == Z_MEM_ERROR
			       ? -ENOMEM
			       : zread_corrupt(why, whylen,
					       "zlib setup failed (%d)", r);
		return NULL;
	}
	*dctx = z;
	return z;
}

static void inflate_free(void *dctx)
{
	z_stream *z = dctx;

	if (!z)
		return;
	inflateEnd(z);
	free(z);
}

/* Is the stream finished once @outlen bytes are out? Probe for one more. */
static int inflate_more(z_stream *z)
{
	uint8_t extra;
	int r;

	z->next_out = &extra;
	z->avail_out = 1;
	r = inflate(z, Z_SYNC_FLUSH);
	if (r == Z_STREAM_END && z->avail_out)
		return 0;
	return 1;
}

/* Raw DEFLATE; the kernel always inflates with a 32 KiB window. */
static int deflate_decode(void **dctx, const struct imgfs_zconfig *zc,
			  const uint8_t *in, size_t inlen, uint8_t *out,
			  size_t outlen, bool partial, bool exact_input,
			  char *why, size_t whylen)
{
	z_stream *z;
	int r;

	z = inflate_stream(dctx, why, whylen, &r);
	if (!z)
		return r;
	z->next_in = (uint8_t *)in;
	z->avail_in = (uInt)inlen;
	z->next_out = out;
	z->avail_out = (uInt)outlen;
	r = inflate(z, Z_SYNC_FLUSH);
	if (r == Z_MEM_ERROR)
		return -ENOMEM;
	if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR)
		return zread_corrupt(why, whylen,
				     "corrupt DEFLATE stream (%zu bytes): %s",
				     inlen, z->msg ? z->msg : "inflate error");
	if (z->total_out != outlen)
		return zread_corrupt(
			why, whylen,
			"DEFLATE stream (%zu bytes) ends after %lu bytes instead of %zu",
			inlen, (unsigned long)z->total_out, outlen);
	if (!partial && r != Z_STREAM_END && inflate_more(z))
		return zread_corrupt(
			why, whylen,
			"DEFLATE stream (%zu bytes) does not end with the extent (%zu bytes)",
			inlen, outlen);
	return 0;
}

const struct imgfs_zalg zalg_deflate = {
	.name = "deflate",
	.alg = IMGFS_COMPR_DEFLATE,
	.setup = deflate_setup,
	.ctx_new = deflate_ctx_new,
	.ctx_free = deflate_ctx_free,
	.destsize = deflate_destsize,
	.cfg_record = deflate_cfg_record,
	.cfg_parse = deflate_cfg_parse,
	.decode = deflate_decode,
	.dctx_free = inflate_free,
};
#else
static int deflate_setup(struct imgfs_zcfg *cfg, struct imgfs_error *err)
{
	return error_set(
		err, -EOPNOTSUPP,
		"deflate support not built in (install zlib1g-dev and rebuild)");
}

const struct imgfs_zalg zalg_deflate = {
	.name = "deflate",
	.alg = IMGFS_COMPR_DEFLATE,
	.setup = deflate_setup,
	.cfg_parse = deflate_cfg_parse,
};
#endif
