// SPDX-License-Identifier: MIT
/*
 * LZMA as MicroLZMA (docs/format.md §9.14.2; liblzma >= 5.3): liblzma's
 * MicroLZMA encoder fills a given output size with as much input as fits,
 * which is exactly the fixed-output mode EROFS needs; its decoder is the
 * kernel's LZMA pcluster format.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lzma.h>

#include "imgfs/format.h"
#include "codec/codec.h"
#include "format/format.h"
#include "util/error.h"

#define LZMA_DICT_MIN 4096u
#define LZMA_DICT_MAX (8u << 20)
#define LZMA_DICT_DEFAULT_MIN (32u << 10)

struct lzma_ctx {
	lzma_stream strm;
	lzma_options_lzma opt;
	struct imgfs_zprobe probe;
};

static int lzma_setup(struct imgfs_zcfg *cfg, struct imgfs_error *err)
{
	if (cfg->level < 0)
		cfg->level = 6;
	if (cfg->level > 9)
		return error_set(err, -EINVAL,
				 "lzma level %d out of range 0..9", cfg->level);
	if (!cfg->dictsize) {
		/* enough for what one pcluster usually decodes to */
		uint64_t d = 4ull * cfg->pclustersize;

		if (d < LZMA_DICT_DEFAULT_MIN)
			d = LZMA_DICT_DEFAULT_MIN;
		if (d > LZMA_DICT_MAX)
			d = LZMA_DICT_MAX;
		cfg->dictsize = (uint32_t)d;
	}
	if (cfg->dictsize < LZMA_DICT_MIN || cfg->dictsize > LZMA_DICT_MAX)
		return error_set(
			err, -EINVAL,
			"lzma dictionary size %u out of range %u..%u (kernel limits)",
			cfg->dictsize, LZMA_DICT_MIN, LZMA_DICT_MAX);
	return 0;
}

static void *lzma_ctx_new(const struct imgfs_zcfg *cfg)
{
	struct lzma_ctx *c = calloc(1, sizeof(*c));
	const lzma_stream init = LZMA_STREAM_INIT;

	if (!c)
		return NULL;
	c->strm = init;
	if (lzma_lzma_preset(&c->opt, (uint32_t)cfg->level)) {
		free(c);
		return NULL;
	}
	c->opt.dict_size = cfg->dictsize;
	return c;
}

static void lzma_ctx_free(void *ctx)
{
	struct lzma_ctx *c = ctx;

	lzma_end(&c->strm);
	free(c);
}

static ssize_t lzma_destsize(void *ctx, const uint8_t *src, size_t *srclen,
			     uint8_t *dst, size_t dstcap, const char **why)
{
	struct lzma_ctx *c = ctx;
	lzma_ret r;

	/*
	 * What a raw pcluster would hold does not compress: LZMA would
	 * spend as long on it as on text and fill the output with about as
	 * many bytes as it took. Say so, and the caller stores it raw.
	 */
	if (zprobe_raw(&c->probe, src, srclen, dstcap))
		return 0;
	/* a fresh encoder per pcluster; allocations are reused */
	r = lzma_microlzma_encoder(&c->strm, &c->opt);
	if (r != LZMA_OK) {
		*why = r == LZMA_MEM_ERROR ? "out of memory" :
					     "cannot start the MicroLZMA encoder";
		return r == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
	}
	c->strm.next_in = src;
	c->strm.avail_in = *srclen;
	c->strm.next_out = dst;
	c->strm.avail_out = dstcap;
	r = lzma_code(&c->strm, LZMA_FINISH);
	if (r != LZMA_STREAM_END) {
		*why = "MicroLZMA encoder failed";
		return r == LZMA_MEM_ERROR ? -ENOMEM : -EIO;
	}
	*srclen -= c->strm.avail_in;
	return (ssize_t)(dstcap - c->strm.avail_out);
}

static unsigned int lzma_cfg_record(const struct imgfs_zcfg *cfg, uint8_t *buf)
{
	struct imgfs_lzma_cfg rec = { .dict_size = cfg->dictsize };

	lzma_cfg_encode(&rec, buf);
	return IMGFS_LZMA_CFGS_SIZE;
}

static int lzma_cfg_parse(struct imgfs_zconfig *zc, const uint8_t *rec,
			  uint32_t len, unsigned int blkszbits, char *why,
			  size_t whylen)
{
	struct imgfs_lzma_cfg c;
	uint32_t dict;

	if (len < IMGFS_LZMA_CFGS_SIZE)
		return zread_corrupt(why, whylen,
				     "LZMA config record is %u bytes, not 14",
				     len);
	lzma_cfg_decode(rec, &c);
	dict = c.dict_size;
	if (c.format)
		return zread_corrupt(why, whylen,
				     "LZMA config format %u (must be 0)",
				     c.format);
	if (dict < LZMA_DICT_MIN || dict > LZMA_DICT_MAX)
		return zread_corrupt(
			why, whylen,
			"LZMA dictionary size %u outside 4 KiB..8 MiB", dict);
	zc->lzma_dict_size = dict;
	return 0;
}

static const char *lzma_ret_str(lzma_ret r)
{
	switch (r) {
	case LZMA_MEM_ERROR:
		return "out of memory";
	case LZMA_OPTIONS_ERROR:
		return "unsupported properties";
	case LZMA_DATA_ERROR:
		return "corrupt data";
	case LZMA_BUF_ERROR:
		return "truncated stream";
	default:
		return "decoder error";
	}
}

/* One stream for every pcluster: liblzma keeps its window allocated. */
static lzma_stream *lzma_dstream(void **dctx)
{
	const lzma_stream init = LZMA_STREAM_INIT;
	lzma_stream *s = *dctx;

	if (!s) {
		s = malloc(sizeof(*s));
		if (s)
			*s = init;
		*dctx = s;
	}
	return s;
}

static void lzma_dctx_free(void *dctx)
{
	lzma_stream *s = dctx;

	if (!s)
		return;
	lzma_end(s);
	free(s);
}

static int lzma_decode(void **dctx, const struct imgfs_zconfig *zc,
		       const uint8_t *in, size_t inlen, uint8_t *out,
		       size_t outlen, bool partial, bool exact_input, char *why,
		       size_t whylen)
{
	lzma_stream *s = lzma_dstream(dctx);
	lzma_ret r;
	int i;

	if (!s)
		return -ENOMEM;
	r = lzma_microlzma_decoder(s, inlen, outlen, !partial,
				   zc->lzma_dict_size);
	if (r == LZMA_MEM_ERROR)
		return -ENOMEM;
	if (r != LZMA_OK)
		return zread_corrupt(why, whylen, "MicroLZMA decoder setup: %s",
				     lzma_ret_str(r));
	s->next_in = in;
	s->avail_in = inlen;
	s->next_out = out;
	s->avail_out = outlen;
	/* All input is there: a few calls settle it (liblzma reports
	 * LZMA_BUF_ERROR once no progress is possible). */
	for (i = 0; i < 4 && r == LZMA_OK; i++)
		r = lzma_code(s, LZMA_RUN);
	if (r == LZMA_MEM_ERROR)
		return -ENOMEM;
	if (r != LZMA_OK && r != LZMA_STREAM_END)
		return zread_corrupt(
			why, whylen,
			"MicroLZMA stream (%zu bytes): %s after %llu of %zu bytes",
			inlen, lzma_ret_str(r),
			(unsigned long long)s->total_out, outlen);
	if (s->total_out != outlen)
		return zread_corrupt(
			why, whylen,
			"MicroLZMA stream (%zu bytes) ends after %llu bytes instead of %zu",
			inlen, (unsigned long long)s->total_out, outlen);
	if (!partial && r != LZMA_STREAM_END)
		return zread_corrupt(
			why, whylen,
			"MicroLZMA stream (%zu bytes) does not end with the extent",
			inlen);
	return 0;
}

const struct imgfs_zalg zalg_lzma = {
	.name = "lzma",
	.alg = IMGFS_COMPR_LZMA,
	.setup = lzma_setup,
	.ctx_new = lzma_ctx_new,
	.ctx_free = lzma_ctx_free,
	.destsize = lzma_destsize,
	.cfg_record = lzma_cfg_record,
	.cfg_parse = lzma_cfg_parse,
	.decode = lzma_decode,
	.dctx_free = lzma_dctx_free,
};
