/* SPDX-License-Identifier: MIT */
/*
 * compress_int.h - the compression engine's own types and the calls
 * between its files (not seen outside lib/writer/compress*.c):
 *
 *   compress.c           set-up, the superblock's part, compact maps
 *   compress_feed.c      a file's data in, cut into segments (jobs)
 *   compress_queue.c     the ordered job queue; retiring jobs in order
 *   compress_pool.c      encoder contexts; what a worker does for a job
 *   compress_segment.c   a segment to extents (on a worker thread)
 *   compress_commit.c    a finished job written, a finished file laid out
 *   compress_fragments.c the packed inode's content queued as jobs
 *   compress_dedupe.c    files by content, sharing an earlier copy
 *
 * Calls go down that list (feed and fragments use the queue, the queue
 * commits and dedupes, commit fixes up segments), never back up.
 */
#ifndef IMGFS_WRITER_COMPRESS_INT_H
#define IMGFS_WRITER_COMPRESS_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codec/codec.h"
#include "util/hashtab.h"
#include "util/spill.h"
#include "util/workpool.h"
#include "writer/compress.h"

/* Settings the workers read; never written after creation. */
struct zparams {
	struct imgfs_zcfg cfg;
	const struct imgfs_zalg *alg;
	unsigned int bits;
	uint32_t bs;
	uint32_t pcluster;
};

/* A file being compressed: its extents with their final addresses. */
struct zfile {
	struct imgfs_node *inode;
	char *path;
	struct imgfs_zext *ext;
	size_t n_ext, cap_ext;
	uint64_t blocks;
	uint8_t *tail; /* inline tail (ztailpacking) */
	uint32_t tail_len;
	uint32_t tail_room; /* inline tail of a compressed file (ztailpacking) */
	uint32_t flat_room; /* inline tail of a file stored raw (inline data) */
	bool any_z; /* a compressed pcluster was committed */
	unsigned int pending; /* queued jobs */
	bool aborted;
	bool frag; /* its end goes to the packed inode */
	bool frag_used;
	uint32_t frag_off; /* where, in the packed inode */
};

struct zworker;

/* Encoder contexts shared by the worker threads, created on demand. */
struct zctxs {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	struct zworker *free; /* idle contexts */
	unsigned int created, max;
};

struct zjob {
	struct imgfs_work work; /* first member: the pool hands it back */
	struct zjob *next;
	const struct zparams *p;
	struct zctxs *ctxs;
	struct zfile *file;
	uint64_t off; /* file offset of in[0] */
	uint8_t *in;
	size_t len, filled;
	bool last; /* holds the end of the file */
	bool frag; /* its end goes to the packed inode */
	uint32_t tail_room; /* the file's, in its last job */
	uint32_t flat_room; /* likewise */
	/* results, written by the worker */
	int err;
	const char *why;
	uint8_t *out; /* whole blocks */
	size_t out_len, out_cap;
	struct imgfs_zext *ext; /* pblk relative to out */
	size_t n_ext, cap_ext;
	uint8_t *tail;
	uint32_t tail_len;
	bool has_frag;
	size_t frag_at; /* in[frag_at..len) is the fragment */
	bool digest_ok; /* the whole file is in this job: digest is set */
	uint8_t digest[32]; /* SHA-256 of the content */
};

/* The first file seen with a given content. */
struct zseen {
	struct imgfs_hnode hnode; /* by content: digest and size */
	struct zseen *next_all; /* for freeing */
	uint64_t size;
	uint8_t digest[32];
	struct imgfs_node *inode;
};

struct zworker {
	const struct imgfs_zalg *alg;
	void *ctx;
	uint8_t *buf; /* one pcluster */
	struct zworker *next; /* in the idle list */
};

struct imgfs_compressor {
	struct zparams p;
	struct imgfs_workpool *pool;
	struct zctxs ctxs;
	unsigned int workers;
	unsigned int encoders; /* contexts that may exist at once */
	bool big;
	bool ztailpacking;
	bool inline_data; /* raw file tails inline (FLAT_INLINE) */
	bool used_inline;
	size_t seg_size;
	size_t max_bytes; /* segment bytes queued at most */
	unsigned int max_jobs;
	struct zjob *head, *tail; /* queue, oldest first */
	size_t queued_bytes;
	unsigned int queued_jobs;
	uint8_t cfgs[32];
	/* fragments */
	bool fragments;
	struct zfile *packed; /* the packed inode's file while unfinished */
	struct imgfs_node *packed_inode;
	/* fragments not queued yet: the oldest in the spill file (from
	 * pspill_read on), the newest in pbuf */
	uint8_t *pbuf;
	size_t plen, pcap;
	struct imgfs_spill pspill;
	uint64_t pspill_read;
	uint64_t packed_len; /* fragment bytes so far: the next offset */
	uint64_t packed_queued; /* of which queued as jobs */
	uint64_t frag_reserved; /* packed_len + what queued jobs may add */
	/* files by content */
	struct imgfs_hashtab seen;
	struct zseen *all_seen;
};

static inline size_t zdiv_up(size_t a, size_t b)
{
	return (a + b - 1) / b;
}

/* compress_segment.c */
int zseg_compress(struct zjob *j, struct zworker *wk);
/*
 * The last job of a file stored in several jobs, once the earlier ones
 * are committed: its raw tail placed as one job would have placed it.
 */
int zseg_raw_tail_fixup(struct zfile *f, struct zjob *j);

/* compress_pool.c */
int zctxs_init(struct zctxs *cs, unsigned int max, struct imgfs_error *err);
void zctxs_destroy(struct zctxs *cs);
/* The work of a job on a worker thread (its imgfs_work's run). */
void zjob_run(struct imgfs_work *work, void **local);

/* compress_dedupe.c */
struct zseen *zseen_find(const struct imgfs_compressor *c, uint64_t size,
			 const uint8_t *digest);
int zseen_add(struct imgfs_compressor *c, struct imgfs_node *inode,
	      const uint8_t *digest);
int zseen_share(struct imgfs_compressor *c, struct zfile *f,
		const struct imgfs_node *orig, bool *shared);
void zseen_free_all(struct imgfs_compressor *c);

/* compress_commit.c */
int zpacked_append(struct imgfs_compressor *c, const uint8_t *p, size_t n,
		   struct imgfs_error *err);
/* Fragment bytes not queued yet. */
uint64_t zpacked_pending(const struct imgfs_compressor *c);
/* Take the oldest @n of them into @out. */
int zpacked_take(struct imgfs_compressor *c, uint8_t *out, size_t n,
		 struct imgfs_error *err);
int zjob_commit(struct imgfs_writer *w, struct imgfs_compressor *c,
		struct zjob *j, struct imgfs_error *err);
int zfile_finish(struct imgfs_compressor *c, struct zfile *f,
		 struct imgfs_error *err);

/* compress_queue.c */
struct zjob *zjob_new(struct imgfs_compressor *c, struct zfile *f,
		      uint64_t off, size_t len);
void zjob_free(struct zjob *j);
void zfile_free(struct zfile *f);
void zjob_queue(struct imgfs_compressor *c, struct zjob *j);
/* Wait for the oldest job and retire it. */
int zq_retire_head(struct imgfs_writer *w, struct imgfs_compressor *c,
		   struct imgfs_error *err);
/* Write what is done already, without waiting. */
int zq_retire_done(struct imgfs_writer *w, struct imgfs_compressor *c,
		   struct imgfs_error *err);
/* Bounded memory: wait for the oldest jobs while the queue is full. */
int zq_make_room(struct imgfs_writer *w, struct imgfs_compressor *c,
		 size_t len, struct imgfs_error *err);
void zq_drop(struct imgfs_compressor *c);

#endif /* IMGFS_WRITER_COMPRESS_INT_H */
