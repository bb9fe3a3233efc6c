/* SPDX-License-Identifier: MIT */
/*
 * compressor.h - the compression algorithms behind the writer's engine.
 *
 * EROFS wants fixed-size OUTPUT: each physical cluster is filled with as
 * much input as its compressed form fits in (docs/format.md §9.1). Every
 * backend therefore offers one operation, "destsize": compress the longest
 * prefix of the input that fits in a given number of bytes.
 *
 * Contexts belong to one thread. Their output must depend only on the
 * configuration and the input of the current call (never on what the
 * context compressed before), so images do not depend on which worker
 * thread compressed what.
 */
#ifndef IMGFS_COMPRESSOR_H
#define IMGFS_COMPRESSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "imgfs/error.h"
#include "imgfs/writer.h"

/* Validated settings shared by the engine and the backends. */
struct imgfs_zcfg {
	enum imgfs_compr_kind kind;
	unsigned int alg; /* on-disk algorithm id (enum imgfs_compr_alg) */
	int level;
	uint32_t dictsize; /* lzma dictionary / zstd or deflate window */
	uint32_t pclustersize; /* bytes, a multiple of the block size */
	unsigned int blkszbits;
};

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
	 */
	ssize_t (*destsize)(void *ctx, const uint8_t *src, size_t *srclen,
			    uint8_t *dst, size_t dstcap, const char **why);
	/*
	 * The configuration record payload (docs/format.md §3.5) into @buf;
	 * returns its length.
	 */
	unsigned int (*cfg_record)(const struct imgfs_zcfg *cfg, uint8_t *buf);
};

extern const struct imgfs_zalg imgfs_zalg_lz4;
extern const struct imgfs_zalg imgfs_zalg_lz4hc;
extern const struct imgfs_zalg imgfs_zalg_lzma;
extern const struct imgfs_zalg imgfs_zalg_deflate;
extern const struct imgfs_zalg imgfs_zalg_zstd;

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
ssize_t imgfs_zsearch_destsize(void *ctx, imgfs_zoneshot_fn compress,
			       const uint8_t *src, size_t *srclen,
			       uint8_t *dst, size_t dstcap, uint8_t *scratch,
			       size_t scratch_cap, const char **why);

#endif /* IMGFS_COMPRESSOR_H */
