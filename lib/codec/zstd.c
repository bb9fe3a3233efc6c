// SPDX-License-Identifier: MIT
/*
 * Zstandard: one frame per pcluster (docs/format.md §9.14.4), window no larger
 * than the configuration record announces (at most 1 MiB for the kernel),
 * which the decoder enforces. libzstd has no fixed-output mode, so the
 * encoder searches for the prefix.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "codec/codec.h"
#include "format/format.h"
#include "util/error.h"

#define ZSTD_WINDOW_MIN (1u << 10)
#define ZSTD_WINDOW_MAX (1u << 20)
/* probe for incompressible data only in pclusters smaller than this */
#define ZSTD_PROBE_BELOW (32u << 10)

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
	struct imgfs_zstd_cfg rec = {
		.windowlog = (uint8_t)(ilog2_u32(cfg->dictsize) - 10),
	};

	zstd_cfg_encode(&rec, buf);
	return IMGFS_ZSTD_CFGS_SIZE;
}

static int zstd_cfg_parse(struct imgfs_zconfig *zc, const uint8_t *rec,
			  uint32_t len, unsigned int blkszbits, char *why,
			  size_t whylen)
{
	struct imgfs_zstd_cfg c;

	if (len < IMGFS_ZSTD_CFGS_SIZE)
		return zread_corrupt(
			why, whylen,
			"Zstandard config record is %u bytes, not 6", len);
	zstd_cfg_decode(rec, &c);
	if (c.format)
		return zread_corrupt(why, whylen,
				     "Zstandard config format %u (must be 0)",
				     c.format);
	if (c.windowlog > 10)
		return zread_corrupt(why, whylen,
				     "Zstandard window log %u above 1 MiB",
				     c.windowlog + 10);
	zc->zstd_windowlog = c.windowlog + 10u;
	return 0;
}

#ifdef HAVE_ZSTD
#include <zstd.h>
#include <zstd_errors.h>

struct zstd_ctx {
	ZSTD_CCtx *cctx;
	uint8_t *scratch;
	size_t scratch_cap;
	struct imgfs_zprobe probe;
};

static int zstd_setup(struct imgfs_zcfg *cfg, struct imgfs_error *err)
{
	if (cfg->level < 0)
		cfg->level = ZSTD_CLEVEL_DEFAULT;
	if (cfg->level < 1 || cfg->level > ZSTD_maxCLevel())
		return error_set(err, -EINVAL,
				 "zstd level %d out of range 1..%d", cfg->level,
				 ZSTD_maxCLevel());
	if (!cfg->dictsize) {
		uint64_t d = 8ull * cfg->pclustersize;

		if (d > ZSTD_WINDOW_MAX)
			d = ZSTD_WINDOW_MAX;
		cfg->dictsize = 1u << ilog2_u32((uint32_t)d);
	}
	if (cfg->dictsize & (cfg->dictsize - 1) ||
	    cfg->dictsize < ZSTD_WINDOW_MIN || cfg->dictsize > ZSTD_WINDOW_MAX)
		return error_set(
			err, -EINVAL,
			"zstd window %u must be a power of two from %u to %u (kernel limit)",
			cfg->dictsize, ZSTD_WINDOW_MIN, ZSTD_WINDOW_MAX);
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

	/*
	 * Each try of the search below would come back full. libzstd
	 * rejects an incompressible block faster than the probe looks at
	 * it, but from 32 KiB down its set-up per try costs more.
	 */
	if (dstcap < ZSTD_PROBE_BELOW &&
	    zprobe_raw(&c->probe, src, srclen, dstcap))
		return 0;
	return zsearch_destsize(ctx, zstd_oneshot, src, srclen, dst, dstcap,
				c->scratch, c->scratch_cap, why);
}

/* After a full output buffer: does the frame end without more output? */
static int zstd_more(ZSTD_DCtx *dc, ZSTD_inBuffer *ib)
{
	uint8_t extra;
	int i;

	/* Each call consumes input or produces output, so this terminates
	 * quickly; the bound is only a guard. */
	for (i = 0; i < 64; i++) {
		ZSTD_outBuffer ob = { &extra, 1, 0 };
		size_t r = ZSTD_decompressStream(dc, &ob, ib);

		if (ZSTD_isError(r) || ob.pos)
			return 1;
		if (!r)
			return 0;
		if (ib->pos == ib->size)
			return 1;
	}
	return 1;
}

static void zstd_dctx_free(void *dctx)
{
	ZSTD_freeDCtx(dctx);
}

static int zstd_decode(void **dctx, const struct imgfs_zconfig *zc,
		       const uint8_t *in, size_t inlen, uint8_t *out,
		       size_t outlen, bool partial, bool exact_input, char *why,
		       size_t whylen)
{
	ZSTD_inBuffer ib = { in, inlen, 0 };
	ZSTD_outBuffer ob = { out, outlen, 0 };
	ZSTD_DCtx *dc = *dctx;
	size_t r = 1;

	if (!dc) {
		dc = ZSTD_createDCtx();
		if (!dc)
			return -ENOMEM;
		*dctx = dc;
	}
	ZSTD_DCtx_reset(dc, ZSTD_reset_session_and_parameters);
	r = ZSTD_DCtx_setParameter(dc, ZSTD_d_windowLogMax,
				   (int)zc->zstd_windowlog);
	if (ZSTD_isError(r))
		return zread_corrupt(why, whylen, "zstd window log %u: %s",
				     zc->zstd_windowlog, ZSTD_getErrorName(r));
	while (ob.pos < ob.size) {
		size_t before = ib.pos + ob.pos;

		r = ZSTD_decompressStream(dc, &ob, &ib);
		if (ZSTD_isError(r))
			return zread_corrupt(
				why, whylen,
				"Zstandard frame (%zu bytes): %s after %zu of %zu bytes",
				inlen, ZSTD_getErrorName(r), ob.pos, outlen);
		if (!r || ib.pos + ob.pos == before)
			break;
	}
	if (ob.pos != outlen)
		return zread_corrupt(
			why, whylen,
			"Zstandard frame (%zu bytes) ends after %zu bytes instead of %zu",
			inlen, ob.pos, outlen);
	if (!partial && r && zstd_more(dc, &ib))
		return zread_corrupt(
			why, whylen,
			"Zstandard frame (%zu bytes) does not end with the extent (%zu bytes)",
			inlen, outlen);
	return 0;
}

const struct imgfs_zalg zalg_zstd = {
	.name = "zstd",
	.alg = IMGFS_COMPR_ZSTD,
	.setup = zstd_setup,
	.ctx_new = zstd_ctx_new,
	.ctx_free = zstd_ctx_free,
	.destsize = zstd_destsize,
	.cfg_record = zstd_cfg_record,
	.cfg_parse = zstd_cfg_parse,
	.decode = zstd_decode,
	.dctx_free = zstd_dctx_free,
};
#else
static int zstd_setup(struct imgfs_zcfg *cfg, struct imgfs_error *err)
{
	return error_set(
		err, -EOPNOTSUPP,
		"zstd support not built in (install libzstd-dev and rebuild)");
}

const struct imgfs_zalg zalg_zstd = {
	.name = "zstd",
	.alg = IMGFS_COMPR_ZSTD,
	.setup = zstd_setup,
	.cfg_record = zstd_cfg_record,
	.cfg_parse = zstd_cfg_parse,
};
#endif
