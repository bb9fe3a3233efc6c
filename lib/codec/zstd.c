// SPDX-License-Identifier: MIT
/*
 * Zstandard: one frame per pcluster (docs/format.md §9.14.4), window no larger
 * than the configuration record announces (at most 1 MiB for the kernel).
 * libzstd has no fixed-output mode, so the prefix is searched for.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "codec/codec.h"

#define ZSTD_WINDOW_MIN (1u << 10)
#define ZSTD_WINDOW_MAX (1u << 20)

static unsigned int ilog2_u32(uint32_t v)
{
	unsigned int l = 0;

	while (v >>= 1)
		l++;
	return l;
}

static unsigned int zstd_cfg_record(const struct imgfs_zcfg *cfg,
				    uint8_t *buf)
{
	memset(buf, 0, sizeof(struct imgfs_zstd_cfgs));
	buf[1] = (uint8_t)(ilog2_u32(cfg->dictsize) - 10);
	return sizeof(struct imgfs_zstd_cfgs);
}

#ifdef HAVE_ZSTD
#include <zstd.h>
#include <zstd_errors.h>

struct zstd_ctx {
	ZSTD_CCtx *cctx;
	uint8_t *scratch;
	size_t scratch_cap;
};

static int zstd_setup(struct imgfs_zcfg *cfg, struct imgfs_error *err)
{
	if (cfg->level < 0)
		cfg->level = ZSTD_CLEVEL_DEFAULT;
	if (cfg->level < 1 || cfg->level > ZSTD_maxCLevel())
		return imgfs_error_set(err, -EINVAL,
				       "zstd level %d out of range 1..%d",
				       cfg->level, ZSTD_maxCLevel());
	if (!cfg->dictsize) {
		uint64_t d = 8ull * cfg->pclustersize;

		if (d > ZSTD_WINDOW_MAX)
			d = ZSTD_WINDOW_MAX;
		cfg->dictsize = 1u << ilog2_u32((uint32_t)d);
	}
	if (cfg->dictsize & (cfg->dictsize - 1) ||
	    cfg->dictsize < ZSTD_WINDOW_MIN || cfg->dictsize > ZSTD_WINDOW_MAX)
		return imgfs_error_set(err, -EINVAL,
				       "zstd window %u must be a power of two from %u to %u (kernel limit)",
				       cfg->dictsize, ZSTD_WINDOW_MIN,
				       ZSTD_WINDOW_MAX);
	return 0;
}

static void zstd_ctx_free(void *ctx)
{
	struct zstd_ctx *c = ctx;

	ZSTD_freeCCtx(c->cctx);
	free(c->scratch);
	free(c);
}

static void *zstd_ctx_new(const struct imgfs_zcfg *cfg)
{
	struct zstd_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cctx = ZSTD_createCCtx();
	c->scratch_cap = cfg->pclustersize;
	c->scratch = malloc(c->scratch_cap);
	if (!c->cctx || !c->scratch ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx,
						ZSTD_c_compressionLevel,
						cfg->level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_windowLog,
						(int)ilog2_u32(cfg->dictsize))) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag,
						0))) {
		zstd_ctx_free(c);
		return NULL;
	}
	return c;
}

static ssize_t zstd_oneshot(void *ctx, const uint8_t *src, size_t len,
			    uint8_t *dst, size_t cap, const char **why)
{
	struct zstd_ctx *c = ctx;
	size_t r = ZSTD_compress2(c->cctx, dst, cap, src, len);

	if (!ZSTD_isError(r))
		return (ssize_t)r;
	if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall)
		return -ENOSPC;
	*why = ZSTD_getErrorName(r);
	return ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? -ENOMEM :
								      -EIO;
}

static ssize_t zstd_destsize(void *ctx, const uint8_t *src, size_t *srclen,
			     uint8_t *dst, size_t dstcap, const char **why)
{
	struct zstd_ctx *c = ctx;

	return imgfs_zsearch_destsize(ctx, zstd_oneshot, src, srclen, dst,
				      dstcap, c->scratch, c->scratch_cap, why);
}

const struct imgfs_zalg imgfs_zalg_zstd = {
	.name = "zstd",
	.alg = IMGFS_COMPR_ZSTD,
	.setup = zstd_setup,
	.ctx_new = zstd_ctx_new,
	.ctx_free = zstd_ctx_free,
	.destsize = zstd_destsize,
	.cfg_record = zstd_cfg_record,
};
#else
static int zstd_setup(struct imgfs_zcfg *cfg, struct imgfs_error *err)
{
	return imgfs_error_set(err, -EOPNOTSUPP,
			       "zstd support not built in (install libzstd-dev and rebuild)");
}

const struct imgfs_zalg imgfs_zalg_zstd = {
	.name = "zstd",
	.alg = IMGFS_COMPR_ZSTD,
	.setup = zstd_setup,
	.cfg_record = zstd_cfg_record,
};
#endif
