/* SPDX-License-Identifier: MIT */
/*
 * zdata.h - compressed file data on the reader side (not installed).
 *
 * lib/reader/zconfig.c sets up the per-image state at open (compression
 * configuration, packed inode); lib/reader/zmap.c maps file offsets to
 * pclusters (docs/format.md §9); lib/reader/zread.c reads the mapped
 * extents through a small LRU cache of decoded pclusters; the codecs
 * themselves, and the decoding of their configuration records, are in
 * lib/codec/ (codec/codec.h).
 */
#ifndef IMGFS_READER_ZDATA_H
#define IMGFS_READER_ZDATA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "util/hashtab.h"
#include "reader/internal.h"

/* Buffers and a decoder for one decode; pooled in struct imgfs_zstate. */
struct imgfs_zwork {
	struct imgfs_zwork *next; /* in the idle list */
	uint8_t *in;
	size_t in_cap;
	/* read-ahead: image bytes ra_pos..+ra_len held in ra; a window that
	 * doubles while pclusters are read one after the other */
	uint8_t *ra;
	size_t ra_cap;
	uint64_t ra_pos;
	size_t ra_len;
	size_t ra_win;
	uint64_t read_end; /* where the last read from the image ended */
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

/*
 * Work areas kept for reuse: one per thread decoding at the same time, up
 * to this many (beyond, they are freed after each decode).
 */
#define IMGFS_ZWORK_IDLE_MAX 16

/* Pclusters being decoded: a second reader of one waits for the first. */
#define IMGFS_ZBUSY_SLOTS 16

struct imgfs_zbusy {
	bool used;
	uint64_t pos;
	uint64_t plen;
};

/* A pcluster decoded without error (read_verify()), keyed by pos. */
struct imgfs_zverified {
	uint64_t plen;
	uint64_t outlen;
	unsigned int alg;
	bool partial;
};

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
	struct imgfs_zwork *idle; /* pooled work areas (a list), or NULL */
	unsigned int nr_idle;
	struct imgfs_zbusy busy[IMGFS_ZBUSY_SLOTS];
	pthread_cond_t busy_done; /* a busy slot was released */
	struct imgfs_u64map verified_at; /* pos -> index in verified */
	struct imgfs_zverified *verified;
	size_t nr_verified, verified_cap;
	uint64_t decoded; /* pclusters decoded so far (tests) */
};

/*
 * Byte range [*@start, *@end) of the map header and lcluster index of the
 * compressed @inode (the inline tail pcluster, if any, follows it; see
 * IMGFS_EXTENT_F_INLINE). For the checker's overlap accounting.
 */
int z_index_range(struct imgfs_image *img, const struct imgfs_inode *inode,
		  uint64_t *start, uint64_t *end, struct imgfs_error *err);

/* Decode and free helpers of lib/reader/zread.c. */
void zwork_free(struct imgfs_zwork *w);
void zcache_free(struct imgfs_zcache *c);

/*
 * Number of pclusters @img has decoded since it was opened (cache misses).
 * For tests: reading a file sequentially must decode each pcluster once.
 */
uint64_t z_decoded_count(struct imgfs_image *img);

#endif /* IMGFS_READER_ZDATA_H */
