// SPDX-License-Identifier: MIT
/*
 * LZMA as MicroLZMA (docs/format.md §9.14.2): liblzma's MicroLZMA encoder
 * fills a given output size with as much input as fits, which is exactly
 * the fixed-output mode EROFS needs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lzma.h>

#include "imgfs/format.h"
#include "codec/codec.h"

#define LZMA_DICT_MIN 4096u
#define LZMA_DICT_MAX (8u << 20)
#define LZMA_DICT_DEFAULT_MIN (32u << 10)

struct lzma_ctx {
	lzma_stream strm;
	lzma_options_lzma opt;
};

static int lzma_setup(struct imgfs_zcfg *cfg, struct imgfs_error *err)
{
	if (cfg->level < 0)
		cfg->level = 6;
	if (cfg->level > 9)
		return imgfs_error_set(err, -EINVAL,
				       "lzma level %d out of range 0..9",
				       cfg->level);
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
		return imgfs_error_set(err, -EINVAL,
				       "lzma dictionary size %u out of range %u..%u (kernel limits)",
				       cfg->dictsize, LZMA_DICT_MIN,
				       LZMA_DICT_MAX);
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
	memset(buf, 0, sizeof(struct imgfs_lzma_cfgs));
	imgfs_put_le32(buf, cfg->dictsize);
	return sizeof(struct imgfs_lzma_cfgs);
}

const struct imgfs_zalg imgfs_zalg_lzma = {
	.name = "lzma",
	.alg = IMGFS_COMPR_LZMA,
	.setup = lzma_setup,
	.ctx_new = lzma_ctx_new,
	.ctx_free = lzma_ctx_free,
	.destsize = lzma_destsize,
	.cfg_record = lzma_cfg_record,
};
