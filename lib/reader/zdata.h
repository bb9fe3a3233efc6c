/* SPDX-License-Identifier: MIT */
/*
 * decompress.h - compressed file data on the reader side (not installed).
 *
 * lib/reader/zconfig.c sets up the per-image state at open (compression
 * configuration, packed inode); lib/reader/zmap.c maps file offsets to
 * pclusters (docs/format.md §9); lib/reader/zread.c reads the mapped
 * extents through a small LRU cache of decoded pclusters; the codecs
 * themselves are in lib/codec/decode.c.
 */
#ifndef IMGFS_DECOMPRESS_H
#define IMGFS_DECOMPRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/internal.h"

/* Compression settings of an image (docs/format.md §3.5). */
struct imgfs_zconfig {
	uint16_t algs; /* algorithms inodes may use (bit n = id n) */
	bool zero_padding; /* LZ4_0PADDING: streams are right-aligned */
	unsigned int lz4_max_pclusterblks;
	uint32_t lzma_dict_size;
	unsigned int deflate_windowbits;
	unsigned int zstd_windowlog; /* log2 of the window in bytes */
};

/* Reusable decoder state; used by one thread at a time. */
struct imgfs_zdecoder;

struct imgfs_zdecoder *imgfs_zdecoder_new(void);
void imgfs_zdecoder_free(struct imgfs_zdecoder *d);

/* Name of algorithm @alg ("lz4", ...), "?" if unknown. */
const char *imgfs_zalg_name(unsigned int alg);

/*
 * Decode the @inlen-byte stream at @in, compressed with @alg, into @out.
 * The stream must produce exactly @outlen bytes, or at least @outlen bytes
 * when @partial (only the first @outlen are produced then). @exact_input
 * false means the stream may be followed by garbage (LZ4 without zero
 * padding). Returns 0, -IMGFS_EFSCORRUPTED with the reason in @why,
 * -EOPNOTSUPP if the algorithm is not built in, -ENOMEM.
 */
int imgfs_zdecode(struct imgfs_zdecoder *d, const struct imgfs_zconfig *cfg,
		  unsigned int alg, const uint8_t *in, size_t inlen,
		  uint8_t *out, size_t outlen, bool partial, bool exact_input,
		  char *why, size_t whylen);

/* Buffers and a decoder for one decode; pooled in struct imgfs_zstate. */
struct imgfs_zwork {
	uint8_t *in;
	size_t in_cap;
	uint8_t *out;
	size_t out_cap;
	struct imgfs_zdecoder *dec;
};

/*
 * Decoded pclusters kept per image, keyed by everything their output
 * depends on. Several, so that files whose tails share packed-inode
 * pclusters can be read in another order than the one they were packed in
 * (a checker walks names sorted, a tar was packed in archive order) without
 * decoding the same pcluster again and again. Bounded in count and bytes.
 */
#define IMGFS_ZCACHE_SLOTS 8
#define IMGFS_ZCACHE_BYTES (16u << 20)

struct imgfs_zcache {
	bool valid;
	uint64_t used; /* LRU clock value of the last hit */
	uint64_t pos; /* image byte offset of the pcluster */
	uint64_t plen;
	uint64_t outlen;
	unsigned int alg;
	bool partial;
	uint8_t *buf;
	size_t cap;
};

/* Per-image state, img->zpriv. */
struct imgfs_zstate {
	struct imgfs_zconfig cfg;
	/* A bad configuration does not fail the open: every compressed
	 * access fails with this instead, so the checker can go on. */
	int cfg_err;
	char cfg_msg[256];
	/* The packed inode (fragments), loaded at open. */
	bool have_packed;
	struct imgfs_inode packed;
	int packed_err;
	char packed_msg[256];

	pthread_mutex_t lock; /* protects what follows */
	/* The last extent mapped: small sequential reads map it once. */
	bool map_valid;
	uint64_t map_nid;
	uint64_t map_size;
	struct imgfs_extent map_ext;
	struct imgfs_zcache cache[IMGFS_ZCACHE_SLOTS];
	uint64_t clock;
	struct imgfs_zwork *idle; /* one pooled work area, or NULL */
	uint64_t decoded; /* pclusters decoded so far (tests) */
};

/*
 * Byte range [*@start, *@end) of the map header and lcluster index of the
 * compressed @inode (the inline tail pcluster, if any, follows it; see
 * IMGFS_EXTENT_F_INLINE). For the checker's overlap accounting.
 */
int imgfs_z_index_range(struct imgfs_image *img,
			const struct imgfs_inode *inode, uint64_t *start,
			uint64_t *end, struct imgfs_error *err);

/* Decode and free helpers of lib/reader/zread.c. */
void imgfs_zwork_free(struct imgfs_zwork *w);
void imgfs_zcache_free(struct imgfs_zcache *c);

/*
 * Number of pclusters @img has decoded since it was opened (cache misses).
 * For tests: reading a file sequentially must decode each pcluster once.
 */
uint64_t imgfs_z_decoded_count(struct imgfs_image *img);

#endif /* IMGFS_DECOMPRESS_H */
