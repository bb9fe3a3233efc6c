// SPDX-License-Identifier: MIT
/*
 * LZ4: one raw LZ4 block per pcluster (docs/format.md §9.14.1). The
 * encoders (LZ4 and LZ4HC) use liblz4's native destsize functions; both
 * write the same configuration record and share one decoder.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <lz4hc.h>

#include "imgfs/format.h"
#include "codec/codec.h"
#include "format/format.h"
#include "util/error.h"

/* LZ4 matches reach back at most 64 KiB - 1 bytes. */
#define LZ4_MATCH_DISTANCE 65535u

static unsigned int lz4_cfg_record(const struct imgfs_zcfg *cfg, uint8_t *buf)
{
	struct imgfs_lz4_cfg rec = {
		.max_distance = LZ4_MATCH_DISTANCE,
		.max_pclusterblks =
			(uint16_t)(cfg->pclustersize >> cfg->blkszbits),
	};

	lz4_cfg_encode(&rec, buf);
	return IMGFS_LZ4_CFGS_SIZE;
}

static int lz4_cfg_parse(struct imgfs_zconfig *zc, const uint8_t *rec,
			 uint32_t len, unsigned int blkszbits, char *why,
			 size_t whylen)
{
	struct imgfs_lz4_cfg c;
	unsigned int blks;

	if (len < IMGFS_LZ4_CFGS_SIZE)
		return zread_corrupt(why, whylen,
				     "LZ4 config record is %u bytes, not 14",
				     len);
	lz4_cfg_decode(rec, &c);
	blks = c.max_pclusterblks;
	if (blks > IMGFS_MAX_PCLUSTER_SIZE >> blkszbits)
		return zread_corrupt(why, whylen,
				     "LZ4 max_pclusterblks %u exceeds 1 MiB",
				     blks);
	zc->lz4_max_pclusterblks = blks ? blks : 1;
	return 0;
}

/*
 * With zero padding the stream is exactly the pcluster's tail and must
 * decode to exactly the extent (LZ4_decompress_safe); without it the
 * stream is left-aligned and followed by garbage, so only a prefix decode
 * is possible, as in the kernel. No state to keep between calls.
 */
static int lz4_decode(void **dctx, const struct imgfs_zconfig *zc,
		      const uint8_t *in, size_t inlen, uint8_t *out,
		      size_t outlen, bool partial, bool exact_input, char *why,
		      size_t whylen)
{
	int n;

	if (partial || !exact_input)
		n = LZ4_decompress_safe_partial((const char *)in, (char *)out,
						(int)inlen, (int)outlen,
						(int)outlen);
	else
		n = LZ4_decompress_safe((const char *)in, (char *)out,
					(int)inlen, (int)outlen);
	if (n < 0)
		return zread_corrupt(
			why, whylen,
			"corrupt LZ4 stream (%zu bytes), or it decodes to more than %zu bytes",
			inlen, outlen);
	if ((size_t)n != outlen)
		return zread_corrupt(
			why, whylen,
			"LZ4 stream decodes to %d bytes instead of %zu", n,
			outlen);
	return 0;
}

/*
 * The kernel checks max_pclusterblks while the superblock still has its
 * page-sized block size (6.18: "too large lz4 pclusterblks" for 2047
 * blocks of 512 bytes), so LZ4 pclusters stay within 1 MiB of 4 KiB
 * units: 256 blocks whatever the block size.
 */
static void lz4_cap_pcluster(struct imgfs_zcfg *cfg)
{
	uint32_t max = (1u << 20) >> 12 << cfg->blkszbits;

	if (cfg->pclustersize > max)
		cfg->pclustersize = max;
}

static int lz4_setup(struct imgfs_zcfg *cfg, struct imgfs_error *err)
{
	lz4_cap_pcluster(cfg);
	if (cfg->level >= 0)
		return error_set(err, -EINVAL,
				 "lz4 takes no level (use lz4hc,LEVEL)");
	if (cfg->dictsize)
		return error_set(err, -EINVAL, "lz4 takes no dictionary size");
	return 0;
}

static void *lz4_ctx_new(const struct imgfs_zcfg *cfg)
{
	/* LZ4_compress_destSize keeps its state on the stack */
	return malloc(1);
}

static void lz4_ctx_free(void *ctx)
{
	free(ctx);
}

static ssize_t lz4_destsize(void *ctx, const uint8_t *src, size_t *srclen,
			    uint8_t *dst, size_t dstcap, const char **why)
{
	int in = *srclen > LZ4_MAX_INPUT_SIZE ? LZ4_MAX_INPUT_SIZE :
						(int)*srclen;
	int out = LZ4_compress_destSize((const char *)src, (char *)dst, &in,
					(int)dstcap);

	if (out <= 0) {
		*srclen = 0;
		return 0;
	}
	*srclen = (size_t)in;
	return out;
}

const struct imgfs_zalg zalg_lz4 = {
	.name = "lz4",
	.alg = IMGFS_COMPR_LZ4,
	.windowed = true,
	.setup = lz4_setup,
	.ctx_new = lz4_ctx_new,
	.ctx_free = lz4_ctx_free,
	.destsize = lz4_destsize,
	.cfg_record = lz4_cfg_record,
	.cfg_parse = lz4_cfg_parse,
	.decode = lz4_decode,
};

struct lz4hc_ctx {
	LZ4_streamHC_t *stream;
	int level;
	struct imgfs_zprobe probe;
};

static int lz4hc_setup(struct imgfs_zcfg *cfg, struct imgfs_error *err)
{
	lz4_cap_pcluster(cfg);
	if (cfg->level < 0)
		cfg->level = LZ4HC_CLEVEL_DEFAULT;
	if (cfg->level < 1 || cfg->level > LZ4HC_CLEVEL_MAX)
		return error_set(err, -EINVAL,
				 "lz4hc level %d out of range 1..%d",
				 cfg->level, LZ4HC_CLEVEL_MAX);
	if (cfg->dictsize)
		return error_set(err, -EINVAL,
				 "lz4hc takes no dictionary size");
	return 0;
}

static void *lz4hc_ctx_new(const struct imgfs_zcfg *cfg)
{
	struct lz4hc_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->stream = LZ4_createStreamHC();
	if (!c->stream) {
		free(c);
		return NULL;
	}
	c->level = cfg->level;
	return c;
}

static void lz4hc_ctx_free(void *ctx)
{
	struct lz4hc_ctx *c = ctx;

	LZ4_freeStreamHC(c->stream);
	free(c);
}

/*
 * A full reset per pcluster: the result then depends on nothing but this
 * input, and clearing the tables measured no slower than the fast reset.
 */
static ssize_t lz4hc_destsize(void *ctx, const uint8_t *src, size_t *srclen,
			      uint8_t *dst, size_t dstcap, const char **why)
{
	struct lz4hc_ctx *c = ctx;
	int in = *srclen > LZ4_MAX_INPUT_SIZE ? LZ4_MAX_INPUT_SIZE :
						(int)*srclen;
	int out;

	/* no matches to find: LZ4HC would search hard and store it raw */
	if (zprobe_raw(&c->probe, src, srclen, dstcap))
		return 0;
	LZ4_initStreamHC(c->stream, sizeof(*c->stream));
	LZ4_resetStreamHC_fast(c->stream, c->level);
	out = LZ4_compress_HC_continue_destSize(c->stream, (const char *)src,
						(char *)dst, &in, (int)dstcap);
	if (out <= 0) {
		*srclen = 0;
		return 0;
	}
	*srclen = (size_t)in;
	return out;
}

const struct imgfs_zalg zalg_lz4hc = {
	.name = "lz4hc",
	.alg = IMGFS_COMPR_LZ4,
	.windowed = true,
	.setup = lz4hc_setup,
	.ctx_new = lz4hc_ctx_new,
	.ctx_free = lz4hc_ctx_free,
	.destsize = lz4hc_destsize,
	.cfg_record = lz4_cfg_record,
	.cfg_parse = lz4_cfg_parse,
	.decode = lz4_decode,
};
