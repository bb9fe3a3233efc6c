/* SPDX-License-Identifier: MIT */
/*
 * codec.h - the compression algorithms, one file each (lib/codec/<alg>.c):
 * the writer's encoder, the reader's decoder and both sides of the
 * algorithm's configuration record (docs/format.md §3.5, §9.14).
 *
 * EROFS wants fixed-size OUTPUT: each physical cluster is filled with as
 * much input as its compressed form fits in (docs/format.md §9.1). Every
 * encoder therefore offers one operation, "destsize": compress the longest
 * prefix of the input that fits in a given number of bytes.
 *
 * Encoder contexts belong to one thread. Their output must depend only on
 * the configuration and the input of the current call (never on what the
 * context compressed before), so images do not depend on which worker
 * thread compressed what.
 *
 * Decoders check that a stream produces exactly the extent's bytes, as the
 * kernel does when it reads a whole extent, so that the checker can rely
 * on "decodes without error" meaning "the kernel reads it the same".
 */
#ifndef IMGFS_CODEC_H
#define IMGFS_CODEC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "imgfs/error.h"
#include "imgfs/format.h"
#include "imgfs/reader.h"
#include "imgfs/writer.h"

/* Validated settings shared by the writer's engine and the encoders. */
struct imgfs_zcfg {
	enum imgfs_compr_kind kind;
	unsigned int alg; /* on-disk algorithm id (enum imgfs_compr_alg) */
	int level;
	uint32_t dictsize; /* lzma dictionary / zstd or deflate window */
	uint32_t pclustersize; /* bytes, a multiple of the block size */
	unsigned int blkszbits;
};

/* Compression settings of an image as the reader decodes them (§3.5). */
struct imgfs_zconfig {
	uint16_t algs; /* algorithms inodes may use (bit n = id n) */
	bool zero_padding; /* LZ4_0PADDING: streams are right-aligned */
	unsigned int lz4_max_pclusterblks;
	uint32_t lzma_dict_size;
	unsigned int deflate_windowbits;
	unsigned int zstd_windowlog; /* log2 of the window in bytes */
};

/*
 * One algorithm: its encoder (one table per encoder, so lz4 and lz4hc
 * each have one) and its decoder (the same for every encoder of an
 * on-disk algorithm id). A member is NULL when the library was built
 * without what it needs.
 */
struct imgfs_zalg {
	const char *name;
	unsigned int alg;
	/*
	 * The encoder reads all the input it is offered even when the
	 * output fills up early (LZ4 looking for matches): offer it a
	 * window sized from the ratio seen so far instead.
	 */
	bool windowed;
	/*
	 * Check the level and dictionary size in @cfg (level -1 and
	 * dictsize 0 mean "default" and are replaced); may lower the
	 * pcluster size to what the kernel accepts for the algorithm.
	 * Returns 0 or a negative errno with @err set.
	 */
	int (*setup)(struct imgfs_zcfg *cfg, struct imgfs_error *err);
	/* A new context for @cfg, or NULL on no memory. */
	void *(*ctx_new)(const struct imgfs_zcfg *cfg);
	void (*ctx_free)(void *ctx);
	/*
	 * Compress the longest prefix of @src (*@srclen bytes) whose stream
	 * fits in @dstcap bytes at @dst. On return *@srclen is the prefix
	 * length. Returns the stream length (0 when nothing fits) or a
	 * negative errno; a static description of a failure goes to *@why.
	 * A return of 0 with *@srclen > 0 means "these bytes do not
	 * compress, store them raw" (see zprobe_incompressible()).
	 */
	ssize_t (*destsize)(void *ctx, const uint8_t *src, size_t *srclen,
			    uint8_t *dst, size_t dstcap, const char **why);
	/*
	 * The configuration record payload (docs/format.md §3.5) into @buf;
	 * returns its length.
	 */
	unsigned int (*cfg_record)(const struct imgfs_zcfg *cfg, uint8_t *buf);

	/*
	 * Decode the payload of a configuration record of @len bytes, whose
	 * first 16 bytes (zero-filled past @len) are at @rec, for an image
	 * of 2^@blkszbits-byte blocks into @zc. Returns 0, or
	 * -IMGFS_EFSCORRUPTED with the reason in @why.
	 */
	int (*cfg_parse)(struct imgfs_zconfig *zc, const uint8_t *rec,
			 uint32_t len, unsigned int blkszbits, char *why,
			 size_t whylen);
	/*
	 * Decode the @inlen-byte stream at @in into @out, as zdecode()
	 * describes. *@dctx is this algorithm's reusable decoder state: NULL
	 * the first time, set up by the call, released by dctx_free().
	 */
	int (*decode)(void **dctx, const struct imgfs_zconfig *zc,
		      const uint8_t *in, size_t inlen, uint8_t *out,
		      size_t outlen, bool partial, bool exact_input, char *why,
		      size_t whylen);
	void (*dctx_free)(void *dctx);
};

extern const struct imgfs_zalg zalg_lz4;
extern const struct imgfs_zalg zalg_lz4hc;
extern const struct imgfs_zalg zalg_lzma;
extern const struct imgfs_zalg zalg_deflate;
extern const struct imgfs_zalg zalg_zstd;

/*
 * Shared helper for libraries without a native destsize mode: search for
 * the longest prefix whose one-shot stream fits, guided by the ratio seen
 * so far. @compress writes the stream of @len bytes of @src to @dst (at
 * most @cap bytes) and returns its length, -ENOSPC when it does not fit,
 * or another negative errno.
 */
typedef ssize_t (*imgfs_zoneshot_fn)(void *ctx, const uint8_t *src,
				     size_t len, uint8_t *dst, size_t cap,
				     const char **why);
ssize_t zsearch_destsize(void *ctx, imgfs_zoneshot_fn compress,
			 const uint8_t *src, size_t *srclen, uint8_t *dst,
			 size_t dstcap, uint8_t *scratch, size_t scratch_cap,
			 const char **why);

/*
 * Whether @len bytes at @src (at most IMGFS_ZPROBE_MAX are looked at) are
 * not worth an expensive encoder's time: too few repeats and too flat a
 * byte distribution to save 1/128 of them (lib/codec/probe.c). Short
 * inputs are never called incompressible. @pr is scratch space of the
 * calling encoder context.
 */
#define IMGFS_ZPROBE_BITS 14
#define IMGFS_ZPROBE_MAX (1u << 20)
struct imgfs_zprobe {
	uint32_t pos[1u << IMGFS_ZPROBE_BITS];
};

bool zprobe_incompressible(struct imgfs_zprobe *pr, const uint8_t *src,
			   size_t len);

/*
 * For a destsize function: true when the @dstcap bytes a raw pcluster
 * holds do not compress, with *@srclen cut to the first half of them (to
 * be stored raw; the next call looks at the rest again, with what
 * follows); the encoder then returns 0 without running.
 */
bool zprobe_raw(struct imgfs_zprobe *pr, const uint8_t *src, size_t *srclen,
		size_t dstcap);

/* The table holding the decoder of on-disk algorithm @alg, or NULL. */
const struct imgfs_zalg *zalg_by_id(unsigned int alg);
/* The encoder of a writer's compressor (kinds.c); NULL for none. */
const struct imgfs_zalg *zalg_by_kind(enum imgfs_compr_kind kind);

/* Name of algorithm @alg ("lz4", ...), "?" if unknown. */
const char *zalg_name(unsigned int alg);

/* Reusable decoder state of every algorithm; one thread at a time. */
struct imgfs_zdecoder;

struct imgfs_zdecoder *zdecoder_new(void);
void zdecoder_free(struct imgfs_zdecoder *d);

/*
 * Decode the @inlen-byte stream at @in, compressed with @alg, into @out.
 * The stream must produce exactly @outlen bytes, or at least @outlen bytes
 * when @partial (only the first @outlen are produced then). @exact_input
 * false means the stream may be followed by garbage (LZ4 without zero
 * padding). Returns 0, -IMGFS_EFSCORRUPTED with the reason in @why,
 * -EOPNOTSUPP if the algorithm is not built in, -ENOMEM.
 */
int zdecode(struct imgfs_zdecoder *d, const struct imgfs_zconfig *cfg,
	    unsigned int alg, const uint8_t *in, size_t inlen, uint8_t *out,
	    size_t outlen, bool partial, bool exact_input, char *why,
	    size_t whylen);

/* Decoders' failures: the reason into @why, -IMGFS_EFSCORRUPTED back. */
static inline int zread_corrupt(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline int zread_corrupt(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -IMGFS_EFSCORRUPTED;
}

#endif /* IMGFS_CODEC_H */
