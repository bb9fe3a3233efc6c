// SPDX-License-Identifier: MIT
/*
 * The compression engine (docs/format.md §9).
 *
 * A file is cut into segments of a fixed size derived from the pcluster
 * size only. Each segment is a job: a worker thread turns it into extents
 * (compressed pclusters of whole blocks, right-aligned after zero padding,
 * or raw PLAIN pclusters) in a private buffer. The writer's thread queues
 * jobs in file order and writes finished ones strictly in that order, so
 * block addresses, and the image, never depend on the number of workers
 * or on timing. Memory stays bounded whatever the number of workers:
 * encoder contexts (an lzma,9 one holds about 90 MB) are shared by the
 * workers and at most one per CPU the process may use is created, as no
 * more can run at once; the queue holds at most two segments per encoder
 * plus two, and reading waits for the oldest job when it is full.
 *
 * Per extent (§9.13): a pcluster whose compressed form does not save at
 * least one block is stored raw. Per segment: if compression saved no
 * block overall, the segment is stored raw; a file stored raw throughout
 * becomes FLAT_PLAIN (or FLAT_INLINE with an inline tail).
 *
 * With fragments (§9.11), the end of each file, up to a few pclusters'
 * worth of raw data (all of a small file), is not stored in pclusters of
 * its own but appended, as the writer's thread retires the file, to the
 * content of the packed inode, itself compressed in segments like any
 * other file: no block is left half empty. Files of one segment whose
 * content (SHA-256) was seen before then share the earlier file's
 * pclusters and fragment instead of storing them again; shared pclusters
 * are announced by the same superblock bit (DEDUPE, Linux 6.1).
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "imgfs/format.h"
#include "writer/compress.h"
#include "writer/compress_map.h"
#include "codec/codec.h"
#include "util/hashtab.h"
#include "util/vec.h"
#include "util/workpool.h"
#include "writer/internal.h"

#define PCLUSTER_MAX (1u << 20) /* kernel limit */
#define SEG_MIN (2u << 20)
#define SEG_MAX (8u << 20) /* below the kernel's 12 MiB per extent */
#define SEG_PCLUSTERS 32
#define JOBS_PER_WORKER 1024 /* small files are small jobs */
#define FRAG_PCLUSTERS 4 /* file ends up to this many raw pclusters */
#define LZ4_WINDOW_MIN (65536 + 64) /* input offered to fast LZ4 at least */

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
	uint8_t *pbuf; /* fragments not queued yet */
	size_t plen, pcap;
	uint64_t packed_len; /* fragment bytes so far: the next offset */
	uint64_t packed_queued; /* of which queued as jobs */
	uint64_t frag_reserved; /* packed_len + what queued jobs may add */
	/* files by content */
	struct imgfs_hashtab seen;
	struct zseen *all_seen;
};

static size_t div_up(size_t a, size_t b)
{
	return (a + b - 1) / b;
}

/* ---- worker side ---- */

static int out_reserve(struct zjob *j, size_t bytes)
{
	return IMGFS_VEC_RESERVE(j->out, j->out_cap, j->out_len + bytes,
				 j->len + j->p->bs);
}

static int add_ext(struct zjob *j, uint64_t lstart, size_t nblk, bool plain)
{
	struct imgfs_zext *x;

	if (IMGFS_VEC_RESERVE(j->ext, j->cap_ext, j->n_ext + 1, 16))
		return -ENOMEM;
	x = &j->ext[j->n_ext++];
	x->lstart = lstart;
	x->pblk = (uint32_t)(j->out_len >> j->p->bits);
	x->nblk = (uint16_t)nblk;
	x->plain = plain;
	return 0;
}

/* A stream right-aligned in whole blocks, zeros before it (§9.8). */
static int put_compressed(struct zjob *j, uint64_t s, const uint8_t *stream,
			  size_t clen)
{
	size_t nblk = div_up(clen, j->p->bs);
	size_t room = nblk << j->p->bits;

	if (out_reserve(j, room) || add_ext(j, s, nblk, false))
		return -ENOMEM;
	memset(j->out + j->out_len, 0, room - clen);
	memcpy(j->out + j->out_len + room - clen, stream, clen);
	j->out_len += room;
	return 0;
}

static int put_plain(struct zjob *j, uint64_t s, const uint8_t *data,
		     size_t len)
{
	size_t nblk = div_up(len, j->p->bs);
	size_t room = nblk << j->p->bits;

	if (out_reserve(j, room) || add_ext(j, s, nblk, true))
		return -ENOMEM;
	memcpy(j->out + j->out_len, data, len);
	memset(j->out + j->out_len + len, 0, room - len);
	j->out_len += room;
	return 0;
}

static int put_inline(struct zjob *j, uint64_t s, const uint8_t *data,
		      size_t len, bool plain)
{
	j->tail = malloc(len);
	if (!j->tail || add_ext(j, s, 0, plain))
		return -ENOMEM;
	memcpy(j->tail, data, len);
	j->tail_len = (uint32_t)len;
	return 0;
}

/* From @pos to the end of the job: the file's fragment. */
static int put_fragment(struct zjob *j, size_t pos)
{
	if (add_ext(j, j->off + pos, 0, false))
		return -ENOMEM;
	j->has_frag = true;
	j->frag_at = pos;
	return 0;
}

static bool goes_inline(const struct zjob *j, size_t piece, size_t avail)
{
	return j->last && piece == avail && avail <= j->tail_room;
}

/*
 * Store @len bytes from @pos raw, one block per PLAIN pcluster: larger
 * PLAIN pclusters are valid, but kernels before 6.8 and erofs-utils 1.5
 * misread them, and mkfs.erofs never writes them.
 */
static int emit_raw(struct zjob *j, size_t pos, size_t len)
{
	while (len) {
		size_t piece = len < j->p->bs ? len : j->p->bs;
		uint64_t s = j->off + pos;
		int ret;

		if (j->frag && piece == j->len - pos && piece < j->p->bs)
			ret = put_fragment(j, pos);
		else if (goes_inline(j, piece, j->len - pos))
			ret = put_inline(j, s, j->in + pos, piece, true);
		else
			ret = put_plain(j, s, j->in + pos, piece);
		if (ret)
			return ret;
		pos += piece;
		len -= piece;
	}
	return 0;
}

/* Image bytes emit_raw(j, 0, j->len) would take: blocks and inline tail. */
static size_t raw_cost(const struct zjob *j)
{
	size_t rem = j->len & (j->p->bs - 1);

	/* whole blocks, and the partial last one inline if it fits */
	if (rem && goes_inline(j, rem, rem))
		return j->len;
	return div_up(j->len, j->p->bs) << j->p->bits;
}

/* The last bytes of the file, when they can sit inline after the map. */
static int try_inline(struct zjob *j, struct zworker *wk, size_t pos,
		      ssize_t clen, size_t in, bool *done)
{
	size_t avail = j->len - pos;

	*done = false;
	if (!j->last || in != avail || !j->tail_room)
		return 0;
	if (clen > 0 && (size_t)clen < avail && (size_t)clen <= j->tail_room) {
		*done = true;
		return put_inline(j, j->off + pos, wk->buf, (size_t)clen,
				  false);
	}
	if (avail <= j->tail_room) {
		*done = true;
		return put_inline(j, j->off + pos, j->in + pos, avail, true);
	}
	return 0;
}

/*
 * Fill one pcluster from @avail bytes. Some encoders scan all the input
 * they are offered when they find nothing to match: offer those about
 * twice what the previous pcluster took (*@est) and only widen the window
 * when it was swallowed whole.
 */
static ssize_t fill_pcluster(struct zjob *j, struct zworker *wk,
			     const uint8_t *src, size_t avail, size_t *in,
			     size_t *est)
{
	const struct zparams *p = j->p;
	size_t win = p->alg->windowed ? 2 * *est : avail;
	ssize_t clen;

	/*
	 * Fast LZ4 hashes an input under 64 KiB in a smaller table and finds
	 * worse matches (lz4hc does not, and would index it all for nothing)
	 */
	if (p->cfg.kind == IMGFS_COMPRESS_LZ4 && win < LZ4_WINDOW_MIN)
		win = LZ4_WINDOW_MIN;

	for (;;) {
		*in = win < avail ? win : avail;
		clen = p->alg->destsize(wk->ctx, src, in, wk->buf, p->pcluster,
					&j->why);
		if (clen < 0 || *in < win || win >= avail)
			break;
		win *= 4;
	}
	*est = *in > p->pcluster ? *in : p->pcluster;
	return clen;
}

static int emit_compressed(struct zjob *j, struct zworker *wk, bool *any)
{
	const struct zparams *p = j->p;
	size_t pos = 0, est = p->pcluster;

	*any = false;
	while (pos < j->len) {
		size_t avail = j->len - pos, in, run;
		uint64_t s = j->off + pos;
		ssize_t clen;
		bool done;
		int ret;

		/*
		 * What a pcluster would hold shares pclusters with others
		 * in the packed inode: no block is left half empty.
		 */
		if (j->frag && avail <= FRAG_PCLUSTERS * (size_t)p->pcluster)
			return put_fragment(j, pos);
		clen = fill_pcluster(j, wk, j->in + pos, avail, &in, &est);
		if (clen < 0)
			return (int)clen;
		/* the kernel finds the stream by its first non-zero byte */
		if (clen > 0 && !wk->buf[0])
			clen = 0;
		ret = try_inline(j, wk, pos, clen, in, &done);
		if (ret)
			return ret;
		if (done) {
			*any |= !j->ext[j->n_ext - 1].plain;
			break;
		}
		if (clen > 0 && div_up((size_t)clen, p->bs) < div_up(in, p->bs)) {
			ret = put_compressed(j, s, wk->buf, (size_t)clen);
			*any = true;
			pos += in;
		} else {
			/* what the encoder took, in whole blocks, goes raw */
			run = in >= p->bs ? in / p->bs * p->bs :
					    (avail < p->bs ? avail : p->bs);
			ret = emit_raw(j, pos, run);
			pos += run;
		}
		if (ret)
			return ret;
	}
	return 0;
}

static void job_reset_results(struct zjob *j)
{
	j->out_len = 0;
	j->n_ext = 0;
	free(j->tail);
	j->tail = NULL;
	j->tail_len = 0;
}

/*
 * Keep the compressed form only if it takes less room than the raw one,
 * counting inline bytes, and for a whole file its map: the same size
 * stored raw reads faster.
 */
static int compress_segment(struct zjob *j, struct zworker *wk)
{
	size_t cost;
	bool any;
	int ret;

	ret = emit_compressed(j, wk, &any);
	if (ret || j->frag)
		return ret;
	/*
	 * A whole file stored raw is flat: its tail room is the flat one.
	 * A later segment leaves that to commit time (raw_tail_fixup()).
	 */
	if (j->off) {
		if (!any)
			return 0;
	} else if (!any && j->tail_room == j->flat_room) {
		return 0;
	} else {
		j->tail_room = j->flat_room;
	}
	if (any) {
		cost = j->out_len + j->tail_len;
		if (!j->off && j->last)
			cost += imgfs_zmap_compact_size_max(
				div_up(j->len, j->p->bs));
		if (cost < raw_cost(j))
			return 0;
	}
	job_reset_results(j);
	return emit_raw(j, 0, j->len);
}

static void zworker_free(void *local)
{
	struct zworker *wk = local;

	if (wk->ctx)
		wk->alg->ctx_free(wk->ctx);
	free(wk->buf);
	free(wk);
}

static struct zworker *zworker_new(const struct zparams *p)
{
	struct zworker *wk = calloc(1, sizeof(*wk));

	if (!wk)
		return NULL;
	wk->alg = p->alg;
	wk->buf = malloc(p->pcluster);
	wk->ctx = p->alg->ctx_new(&p->cfg);
	if (!wk->buf || !wk->ctx) {
		zworker_free(wk);
		return NULL;
	}
	return wk;
}

/* An idle context, a new one while fewer than max exist, or wait. */
static struct zworker *ctx_get(struct zctxs *cs, const struct zparams *p)
{
	struct zworker *wk;

	pthread_mutex_lock(&cs->lock);
	while (!cs->free && cs->created >= cs->max)
		pthread_cond_wait(&cs->freed, &cs->lock);
	wk = cs->free;
	if (wk) {
		cs->free = wk->next;
		pthread_mutex_unlock(&cs->lock);
		return wk;
	}
	cs->created++;
	pthread_mutex_unlock(&cs->lock);
	wk = zworker_new(p);
	if (!wk) {
		pthread_mutex_lock(&cs->lock);
		cs->created--;
		pthread_cond_signal(&cs->freed);
		pthread_mutex_unlock(&cs->lock);
	}
	return wk;
}

static void ctx_put(struct zctxs *cs, struct zworker *wk)
{
	pthread_mutex_lock(&cs->lock);
	wk->next = cs->free;
	cs->free = wk;
	pthread_cond_signal(&cs->freed);
	pthread_mutex_unlock(&cs->lock);
}

static void job_run(struct imgfs_work *work, void **local)
{
	struct zjob *j = (struct zjob *)work;
	struct zworker *wk;

	(void)local;
	wk = ctx_get(j->ctxs, j->p);
	if (!wk) {
		j->err = -ENOMEM;
		j->why = "out of memory for a compressor";
		return;
	}
	j->err = compress_segment(j, wk);
	ctx_put(j->ctxs, wk);
	/* a whole file: its digest finds earlier copies */
	if (!j->err && !j->off && j->last && j->frag)
		j->digest_ok = EVP_Digest(j->in, j->len, j->digest, NULL,
					  EVP_sha256(), NULL) == 1;
	if (j->err && !j->why)
		j->why = j->err == -ENOMEM ? "out of memory" :
					     "compressor failed";
}

/* ---- writer side ---- */

static void job_free(struct zjob *j)
{
	free(j->in);
	free(j->out);
	free(j->ext);
	free(j->tail);
	free(j);
}

static void file_free(struct zfile *f)
{
	free(f->path);
	free(f->ext);
	free(f->tail);
	free(f);
}

static int file_add_exts(struct zfile *f, const struct zjob *j, uint64_t blk)
{
	if (IMGFS_VEC_RESERVE(f->ext, f->cap_ext, f->n_ext + j->n_ext, 16))
		return -ENOMEM;
	for (size_t i = 0; i < j->n_ext; i++) {
		f->ext[f->n_ext] = j->ext[i];
		f->ext[f->n_ext].pblk += (uint32_t)blk;
		f->n_ext++;
	}
	return 0;
}

static int packed_append(struct imgfs_compressor *c, const uint8_t *p,
			 size_t n)
{
	if (IMGFS_VEC_RESERVE(c->pbuf, c->pcap, c->plen + n, 1u << 20))
		return -ENOMEM;
	memcpy(c->pbuf + c->plen, p, n);
	c->plen += n;
	c->packed_len += n;
	return 0;
}

/*
 * The last job of a file stored in several jobs could not know whether
 * the earlier ones stored it raw throughout, making it flat: if so, its
 * last partial block goes inline when the flat room allows, and back to
 * a block when it does not, as one job would have placed it.
 */
static int raw_tail_fixup(struct zfile *f, struct zjob *j)
{
	uint32_t bs = j->p->bs;
	size_t rem = (size_t)((j->off + j->len) & (bs - 1));
	struct imgfs_zext *x;

	if (!j->last || !j->off || f->any_z || !rem || !j->n_ext ||
	    j->has_frag)
		return 0;
	for (size_t i = 0; i < j->n_ext; i++)
		if (!j->ext[i].plain)
			return 0;
	x = &j->ext[j->n_ext - 1];
	if (x->lstart != j->off + j->len - rem)
		return 0;
	if (j->tail && j->tail_len > f->flat_room) {
		if (out_reserve(j, bs))
			return -ENOMEM;
		memcpy(j->out + j->out_len, j->tail, rem);
		memset(j->out + j->out_len + rem, 0, bs - rem);
		x->pblk = (uint32_t)(j->out_len >> j->p->bits);
		x->nblk = 1;
		j->out_len += bs;
		free(j->tail);
		j->tail = NULL;
		j->tail_len = 0;
	} else if (!j->tail && rem <= f->flat_room && x->nblk == 1) {
		j->tail = malloc(rem);
		if (!j->tail)
			return -ENOMEM;
		memcpy(j->tail, j->in + j->len - rem, rem);
		j->tail_len = (uint32_t)rem;
		x->nblk = 0;
		j->out_len -= bs;
	}
	return 0;
}

/* Write a finished job's blocks and give its extents their addresses. */
static int commit_job(struct imgfs_writer *w, struct imgfs_compressor *c,
		      struct zjob *j, struct imgfs_error *err)
{
	struct zfile *f = j->file;
	uint64_t blk = imgfs_blkout_blk(&w->out);
	uint64_t nblk;
	int ret;

	if (raw_tail_fixup(f, j))
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	nblk = j->out_len >> j->p->bits;
	if (blk + nblk >= IMGFS_NULL_ADDR)
		return imgfs_error_set(err, -EFBIG,
				       "%s: image exceeds 2^32 blocks", f->path);
	for (size_t i = 0; i < j->n_ext; i++)
		f->any_z |= !j->ext[i].plain;
	if (file_add_exts(f, j, blk))
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	if (j->out_len) {
		ret = imgfs_blkout_write(&w->out, j->out, j->out_len, err);
		if (ret)
			return ret;
	}
	f->blocks += nblk;
	if (j->frag)
		c->frag_reserved -= j->len;
	if (j->has_frag) {
		f->frag_used = true;
		f->frag_off = (uint32_t)c->packed_len;
		if (packed_append(c, j->in + j->frag_at, j->len - j->frag_at))
			return imgfs_error_set(err, -ENOMEM, "out of memory");
		c->frag_reserved += j->len - j->frag_at;
	}
	if (j->tail) {
		f->tail = j->tail;
		f->tail_len = j->tail_len;
		j->tail = NULL;
	}
	return 0;
}

/*
 * Raw throughout, blocks in file order and any inline tail being the last
 * partial block: that is a flat file, which reads without a map.
 */
static bool store_flat(const struct zparams *p, struct zfile *f)
{
	struct imgfs_node *inode = f->inode;
	uint32_t pblk0 = f->ext[0].pblk;

	if (f->frag_used)
		return false;
	for (size_t i = 0; i < f->n_ext; i++) {
		const struct imgfs_zext *x = &f->ext[i];

		if (!x->plain ||
		    x->lstart != (uint64_t)(x->pblk - pblk0) << p->bits)
			return false;
		if (!x->nblk && (x->lstart & (p->bs - 1) ||
				 x->lstart + f->tail_len != inode->size))
			return false;
	}
	inode->layout = f->tail ? IMGFS_LAYOUT_FLAT_INLINE :
				  IMGFS_LAYOUT_FLAT_PLAIN;
	inode->startblk = f->blocks ? pblk0 : IMGFS_NULL_ADDR;
	return true;
}

static int finish_file(struct imgfs_compressor *c, struct zfile *f,
		       struct imgfs_error *err)
{
	struct imgfs_node *inode = f->inode;
	struct imgfs_zmap_info mi = {
		.size = inode->size,
		.blkszbits = c->p.bits,
		.alg = c->p.alg->alg,
		.big = c->big,
		.idata_size = (uint16_t)(f->tail ? f->tail_len : 0),
		.fragment = f->frag_used,
		.fragoff = f->frag_off,
	};
	uint8_t *map;
	uint32_t len;
	int ret;

	if (!store_flat(&c->p, f)) {
		if (f->frag_used && f->n_ext == 1)
			ret = imgfs_zmap_whole_fragment(f->frag_off, &map, &len);
		else
			ret = imgfs_zmap_build_full(&mi, f->ext, f->n_ext, &map,
						    &len);
		if (ret)
			return imgfs_error_set(err, ret,
					       "%s: internal: compressed extents cannot be indexed",
					       f->path);
		inode->layout = IMGFS_LAYOUT_COMPRESSED_FULL;
		inode->extra = map;
		inode->extra_len = len;
		inode->extra_align = 8;
		inode->i_u = (uint32_t)f->blocks;
		inode->i_u_set = true;
		if (f->tail)
			c->used_inline = true;
	}
	if (f->tail) {
		inode->tail = f->tail;
		inode->tail_len = f->tail_len;
		f->tail = NULL;
	}
	return 0;
}

static uint64_t seen_hash(uint64_t size, const uint8_t *digest)
{
	uint64_t h;

	memcpy(&h, digest, sizeof(h));
	return h ^ size;
}

static struct zseen *seen_find(const struct imgfs_compressor *c,
			       uint64_t size, const uint8_t *digest)
{
	struct imgfs_hnode *n = imgfs_hashtab_first(&c->seen,
						    seen_hash(size, digest));

	for (; n; n = imgfs_hashtab_next(n)) {
		struct zseen *e = imgfs_container_of(n, struct zseen, hnode);

		if (e->size == size && !memcmp(e->digest, digest, 32))
			return e;
	}
	return NULL;
}

static int seen_add(struct imgfs_compressor *c, struct imgfs_node *inode,
		    const uint8_t *digest)
{
	struct zseen *e = malloc(sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->size = inode->size;
	memcpy(e->digest, digest, 32);
	e->inode = inode;
	if (imgfs_hashtab_insert(&c->seen, &e->hnode,
				 seen_hash(inode->size, digest))) {
		free(e);
		return -ENOMEM;
	}
	e->next_all = c->all_seen;
	c->all_seen = e;
	return 0;
}

static void *memdup(const void *p, size_t n)
{
	void *q = n ? malloc(n) : NULL;

	if (q)
		memcpy(q, p, n);
	return q;
}

/*
 * @f has the same content as @orig, whose layout is final: use its
 * pclusters and fragment. Flat files keep their own blocks (checkers take
 * blocks of two flat inodes for a corrupt allocation).
 */
static int share_data(struct imgfs_compressor *c, struct zfile *f,
		      const struct imgfs_node *orig, bool *shared)
{
	struct imgfs_node *inode = f->inode;

	*shared = false;
	if (!c->fragments || (orig->layout != IMGFS_LAYOUT_COMPRESSED_FULL &&
			      orig->layout != IMGFS_LAYOUT_COMPRESSED_COMPACT))
		return 0;
	/* an inline tail must fit behind this inode's own xattrs */
	if (orig->tail_len > f->tail_room)
		return 0;
	inode->extra = memdup(orig->extra, orig->extra_len);
	inode->tail = memdup(orig->tail, orig->tail_len);
	if ((orig->extra_len && !inode->extra) ||
	    (orig->tail_len && !inode->tail))
		return -ENOMEM;
	inode->layout = orig->layout;
	inode->startblk = orig->startblk;
	inode->i_u = orig->i_u;
	inode->i_u_set = orig->i_u_set;
	inode->extra_len = orig->extra_len;
	inode->extra_align = orig->extra_align;
	inode->tail_len = orig->tail_len;
	*shared = true;
	return 0;
}

/* A whole file in one job: store it, or point it at an earlier copy. */
static int retire_whole(struct imgfs_writer *w, struct imgfs_compressor *c,
			struct zjob *j, struct imgfs_error *err)
{
	struct zfile *f = j->file;
	struct zseen *e = seen_find(c, f->inode->size, j->digest);
	bool shared = false;
	int ret;

	if (e && share_data(c, f, e->inode, &shared))
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	if (shared) {
		if (j->frag)
			c->frag_reserved -= j->len;
		return 0;
	}
	ret = commit_job(w, c, j, err);
	if (!ret)
		ret = finish_file(c, f, err);
	if (!ret && !e && seen_add(c, f->inode, j->digest))
		ret = imgfs_error_set(err, -ENOMEM, "out of memory");
	return ret;
}

static int retire_head(struct imgfs_writer *w, struct imgfs_compressor *c,
		       struct imgfs_error *err)
{
	struct zjob *j = c->head;
	struct zfile *f = j->file;
	bool last = j->last;
	int ret;

	imgfs_workpool_wait(c->pool, &j->work);
	c->head = j->next;
	if (!c->head)
		c->tail = NULL;
	c->queued_bytes -= j->len;
	c->queued_jobs--;
	f->pending--;
	if (j->err)
		ret = imgfs_error_set(err, j->err,
				      "%s: compressing data at offset %llu: %s",
				      f->path, (unsigned long long)j->off,
				      j->why ? j->why : "failed");
	else if (j->digest_ok && f != c->packed)
		ret = retire_whole(w, c, j, err);
	else
		ret = commit_job(w, c, j, err);
	if (!ret && last && !(j->digest_ok && f != c->packed))
		ret = finish_file(c, f, err);
	job_free(j);
	if (ret)
		f->aborted = true;
	if (!f->pending && (last || f->aborted)) {
		if (f == c->packed)
			c->packed = NULL;
		file_free(f);
	}
	return ret;
}

/* Write what is done already, without waiting. */
static int retire_done(struct imgfs_writer *w, struct imgfs_compressor *c,
		       struct imgfs_error *err)
{
	int ret = 0;

	while (!ret && c->head && imgfs_workpool_done(c->pool, &c->head->work))
		ret = retire_head(w, c, err);
	return ret;
}

/* The file being read and the segment being filled. */
struct feeder {
	struct imgfs_writer *w;
	struct imgfs_compressor *c;
	struct zfile *f;
	struct zjob *cur;
	uint64_t pos; /* file bytes placed so far */
};

/* Bounded memory: wait for the oldest jobs while the queue is full. */
static int make_room(struct imgfs_writer *w, struct imgfs_compressor *c,
		     size_t len, struct imgfs_error *err)
{
	int ret;

	while (c->head && (c->queued_bytes + len > c->max_bytes ||
			   c->queued_jobs >= c->max_jobs)) {
		ret = retire_head(w, c, err);
		if (ret)
			return ret;
	}
	return 0;
}

static struct zjob *job_new(struct imgfs_compressor *c, struct zfile *f,
			    uint64_t off, size_t len)
{
	struct zjob *j = calloc(1, sizeof(*j));

	if (j)
		j->in = malloc(len);
	if (!j || !j->in) {
		free(j);
		return NULL;
	}
	j->work.run = job_run;
	j->p = &c->p;
	j->ctxs = &c->ctxs;
	j->file = f;
	j->off = off;
	j->len = len;
	return j;
}

static void job_queue(struct imgfs_compressor *c, struct zjob *j)
{
	if (c->tail)
		c->tail->next = j;
	else
		c->head = j;
	c->tail = j;
	c->queued_bytes += j->len;
	c->queued_jobs++;
	j->file->pending++;
	imgfs_workpool_submit(c->pool, &j->work);
}

/* Queue @j after @after, or first when NULL; returns @j. */
static struct zjob *job_queue_front(struct imgfs_compressor *c,
				    struct zjob *j, struct zjob *after)
{
	struct zjob **at = after ? &after->next : &c->head;

	j->next = *at;
	*at = j;
	if (!j->next)
		c->tail = j;
	c->queued_bytes += j->len;
	c->queued_jobs++;
	j->file->pending++;
	imgfs_workpool_submit(c->pool, &j->work);
	return j;
}

static int start_job(struct feeder *fd, struct imgfs_error *err)
{
	struct imgfs_compressor *c = fd->c;
	uint64_t left = fd->f->inode->size - fd->pos;
	size_t len = left < c->seg_size ? (size_t)left : c->seg_size;
	int ret = make_room(fd->w, c, len, err);

	if (ret)
		return ret;
	fd->cur = job_new(c, fd->f, fd->pos, len);
	if (!fd->cur)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

static int submit_job(struct feeder *fd, struct imgfs_error *err)
{
	struct imgfs_compressor *c = fd->c;
	struct zjob *j = fd->cur;

	fd->cur = NULL;
	j->last = fd->pos == fd->f->inode->size;
	j->tail_room = j->last ? fd->f->tail_room : 0;
	j->flat_room = j->last ? fd->f->flat_room : 0;
	/* fragment offsets are 32-bit in compact maps: stay below 4 GiB */
	if (j->last && fd->f->frag &&
	    c->frag_reserved + j->len < UINT32_MAX) {
		j->frag = true;
		c->frag_reserved += j->len;
	}
	job_queue(c, j);
	return retire_done(fd->w, c, err);
}

/*
 * Queue the packed inode's content in segments as fragments accumulate;
 * with @final (no file left to give one), all of it, ending the file.
 * A non-final call keeps some bytes back so that the final call always
 * has a last segment to queue.
 *
 * Non-final segments are queued when a retired job has just filled the
 * buffer, and go to the front of the queue, so they are written right
 * after that job's blocks: where they land depends on the input alone,
 * never on how far the workers had got, or how many there are.
 */
static int packed_queue(struct imgfs_writer *w, struct imgfs_compressor *c,
			bool final, struct imgfs_error *err)
{
	struct zjob *after = NULL; /* the last segment put in front */

	while (c->plen > c->seg_size || (final && c->plen)) {
		size_t n = c->plen < c->seg_size ? c->plen : c->seg_size;
		struct zjob *j;
		int ret = final ? make_room(w, c, n, err) : 0;

		if (ret)
			return ret;
		if (!c->packed) {
			c->packed = calloc(1, sizeof(*c->packed));
			c->packed_inode = imgfs_node_new(&w->tree);
			if (!c->packed || !c->packed_inode ||
			    !(c->packed->path = strdup("(packed inode)")))
				return imgfs_error_set(err, -ENOMEM,
						       "out of memory");
			c->packed->inode = c->packed_inode;
			c->packed_inode->mode = 0100644;
			c->packed_inode->nlink = 1;
			c->packed_inode->mtime = w->build_time;
		}
		j = job_new(c, c->packed, c->packed_queued, n);
		if (!j)
			return imgfs_error_set(err, -ENOMEM, "out of memory");
		memcpy(j->in, c->pbuf, n);
		memmove(c->pbuf, c->pbuf + n, c->plen - n);
		c->plen -= n;
		c->packed_queued += n;
		j->last = final && !c->plen;
		if (j->last)
			c->packed_inode->size = c->packed_queued;
		if (final)
			job_queue(c, j);
		else
			after = job_queue_front(c, j, after);
	}
	return 0;
}

int imgfs_compressor_flush(struct imgfs_writer *w, struct imgfs_error *err)
{
	struct imgfs_compressor *c = w->compressor;
	int ret = 0;

	while (!ret && c && c->head)
		ret = retire_head(w, c, err);
	return ret;
}

int imgfs_compressor_finish(struct imgfs_writer *w, struct imgfs_error *err)
{
	struct imgfs_compressor *c = w->compressor;
	int ret = imgfs_compressor_flush(w, err);

	/* every file is written: the fragments are all there */
	if (!ret && c && c->plen)
		ret = packed_queue(w, c, true, err);
	if (!ret)
		ret = imgfs_compressor_flush(w, err);
	return ret;
}

struct imgfs_node *imgfs_compressor_packed_inode(struct imgfs_compressor *c)
{
	return c ? c->packed_inode : NULL;
}

/* Place @n bytes of file data (zeros when @src is NULL). */
static int feed(struct feeder *fd, const uint8_t *src, uint64_t n,
		struct imgfs_error *err)
{
	int ret;

	while (n) {
		struct zjob *j;
		size_t k;

		if (!fd->cur) {
			ret = start_job(fd, err);
			if (ret)
				return ret;
		}
		j = fd->cur;
		k = j->len - j->filled;
		if (k > n)
			k = (size_t)n;
		if (src) {
			memcpy(j->in + j->filled, src, k);
			src += k;
		} else {
			memset(j->in + j->filled, 0, k);
		}
		j->filled += k;
		fd->pos += k;
		n -= k;
		if (j->filled == j->len) {
			ret = submit_job(fd, err);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * Room for an inline tail such that the inode, its largest possible
 * xattr area (nothing shared), the alignment padding and the map fit in
 * front of it within one block: the layout can then always place it, at
 * the start of a block if need be.
 */
static uint32_t tail_room(const struct imgfs_compressor *c,
			  const struct imgfs_node *inode)
{
	uint64_t nlc = div_up(inode->size, c->p.bs);
	uint64_t need = IMGFS_INODE_EXTENDED_SIZE + 4;
	const struct imgfs_node_xattrs *x = &inode->xattrs;

	if (!c->ztailpacking || nlc > c->p.bs)
		return 0;
	if (x->count)
		need += IMGFS_XATTR_IBODY_HEADER_SIZE;
	for (uint32_t i = 0; i < x->count; i++)
		need += imgfs_xattr_entry_size(x->items[i]->name_len,
					       x->items[i]->value_len);
	need += imgfs_zmap_compact_size_max(nlc);
	return need < c->p.bs ? (uint32_t)(c->p.bs - need) : 0;
}

/* A file being fed to the compressors (see imgfs_compress_begin()). */
struct imgfs_compress_stream {
	struct feeder fd;
	/* once its last job is queued, the file belongs to the jobs and
	 * may be gone: only its size is looked at here */
	uint64_t size;
};

int imgfs_compress_begin(struct imgfs_writer *w, struct imgfs_node *inode,
			 const char *path, uint32_t inline_room,
			 struct imgfs_compress_stream **out,
			 struct imgfs_error *err)
{
	struct imgfs_compressor *c = w->compressor;
	struct imgfs_compress_stream *s = calloc(1, sizeof(*s));

	if (s)
		s->fd.f = calloc(1, sizeof(*s->fd.f));
	if (s && s->fd.f)
		s->fd.f->path = strdup(path);
	if (!s || !s->fd.f || !s->fd.f->path) {
		if (s)
			free(s->fd.f);
		free(s);
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	}
	s->fd.w = w;
	s->fd.c = c;
	s->fd.f->inode = inode;
	s->size = inode->size;
	s->fd.f->frag = c->fragments;
	if (!c->fragments) {
		s->fd.f->tail_room = tail_room(c, inode);
		/* a flat file has no map: all of @inline_room is there */
		s->fd.f->flat_room = c->inline_data ? inline_room : 0;
	}
	*out = s;
	return 0;
}

int imgfs_compress_put(struct imgfs_compress_stream *s, const void *buf,
		       uint64_t len, struct imgfs_error *err)
{
	return feed(&s->fd, buf, len, err);
}

int imgfs_compress_end(struct imgfs_compress_stream *s,
		       struct imgfs_error *err)
{
	int ret = feed(&s->fd, NULL, s->size - s->fd.pos, err);

	if (ret) {
		imgfs_compress_abort(s);
		return ret;
	}
	/* the file now belongs to its jobs */
	free(s);
	return 0;
}

void imgfs_compress_abort(struct imgfs_compress_stream *s)
{
	if (!s)
		return;
	if (s->fd.pos == s->size && s->size) {
		free(s); /* every job is queued: they own the file */
		return;
	}
	if (s->fd.cur)
		job_free(s->fd.cur);
	s->fd.f->aborted = true;
	if (!s->fd.f->pending)
		file_free(s->fd.f);
	free(s);
}

int imgfs_compress_layout_inode(struct imgfs_compressor *c,
				struct imgfs_node *inode,
				struct imgfs_error *err)
{
	unsigned int ebase_mod;
	uint8_t *map;
	uint32_t len;
	int ret;

	if (!c || inode->layout != IMGFS_LAYOUT_COMPRESSED_FULL ||
	    !inode->extra)
		return 0;
	/* inodes are 32-byte aligned and 32 or 64 bytes long (§4.8) */
	ebase_mod = (((inode->xattr_isize + 7) & ~7u) + 8) % 32;
	ret = imgfs_zmap_to_compact(inode->extra, inode->extra_len, inode->size,
				    c->p.bits, ebase_mod, &map, &len);
	if (ret == -ENOMEM)
		return imgfs_error_set(err, ret, "out of memory");
	if (ret) {
		/* the inline tail was sized for a compact map */
		if (inode->tail_len)
			return imgfs_error_set(err, -EINVAL,
					       "internal: compact index refused for an inode with an inline tail");
		return 0;
	}
	free(inode->extra);
	inode->extra = map;
	inode->extra_len = len;
	inode->layout = IMGFS_LAYOUT_COMPRESSED_COMPACT;
	return 0;
}

int imgfs_compressor_super(struct imgfs_compressor *c,
			   struct imgfs_sb_layout *sbl, struct imgfs_error *err)
{
	unsigned int len;

	sbl->feature_incompat |= IMGFS_FEATURE_INCOMPAT_ZERO_PADDING;
	if (c->used_inline)
		sbl->feature_incompat |= IMGFS_FEATURE_INCOMPAT_ZTAILPACKING;
	if (c->packed_inode)
		sbl->feature_incompat |= IMGFS_FEATURE_INCOMPAT_FRAGMENTS;
	if (c->p.alg->alg == IMGFS_COMPR_LZ4 && !c->big) {
		/* the original form: u1 is the LZ4 match distance */
		sbl->u1 = 65535;
		return 0;
	}
	sbl->feature_incompat |= IMGFS_FEATURE_INCOMPAT_COMPR_CFGS;
	sbl->u1 = (uint16_t)(1u << c->p.alg->alg);
	len = c->p.alg->cfg_record(&c->p.cfg, c->cfgs + 2);
	imgfs_put_le16(c->cfgs, (uint16_t)len);
	sbl->compr_cfgs = c->cfgs;
	sbl->compr_cfgs_len = 2 + len;
	return 0;
}

static int setup_params(struct zparams *p,
			const struct imgfs_mkfs_options *opts,
			unsigned int blkszbits, struct imgfs_error *err)
{
	uint32_t bs = 1u << blkszbits;
	uint32_t pcl = opts->pcluster_size ? opts->pcluster_size : bs;
	void *ctx;
	int ret;

	p->alg = imgfs_zalg_by_kind(opts->compress);
	if (!p->alg)
		return imgfs_error_set(err, -EINVAL,
				       "unknown compression algorithm %d",
				       (int)opts->compress);
	if (pcl < bs || pcl % bs || pcl > PCLUSTER_MAX)
		return imgfs_error_set(err, -EINVAL,
				       "pcluster size %u must be a multiple of the block size (%u) up to 1 MiB",
				       pcl, bs);
	/* CBLKCNT has 11 bits: 1 MiB of 512-byte blocks is one too many */
	if (pcl >> blkszbits > IMGFS_ZMAP_MAX_DELTA)
		pcl = IMGFS_ZMAP_MAX_DELTA << blkszbits;
	p->bits = blkszbits;
	p->bs = bs;
	p->pcluster = pcl;
	p->cfg.kind = opts->compress;
	p->cfg.alg = p->alg->alg;
	p->cfg.level = opts->compress_level;
	p->cfg.dictsize = opts->compress_dictsize;
	p->cfg.pclustersize = pcl;
	p->cfg.blkszbits = blkszbits;
	ret = p->alg->setup(&p->cfg, err);
	if (ret)
		return ret;
	p->pcluster = p->cfg.pclustersize; /* the algorithm may lower it */
	ctx = p->alg->ctx_new(&p->cfg);
	if (!ctx)
		return imgfs_error_set(err, -ENOMEM,
				       "cannot set up the %s compressor",
				       p->alg->name);
	p->alg->ctx_free(ctx);
	return 0;
}

/* CPUs this process may run on (its affinity mask), at least one. */
static long usable_cpus(void)
{
	cpu_set_t set;
	long n = 0;

	if (!sched_getaffinity(0, sizeof(set), &set))
		n = CPU_COUNT(&set);
	if (n < 1)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n;
}

int imgfs_compress_check_options(const struct imgfs_mkfs_options *opts,
				 unsigned int blkszbits,
				 struct imgfs_error *err)
{
	struct zparams p;

	return setup_params(&p, opts, blkszbits, err);
}

struct imgfs_compressor *
imgfs_compressor_create(const struct imgfs_mkfs_options *opts,
			unsigned int blkszbits, struct imgfs_error *err)
{
	struct imgfs_compressor *c = calloc(1, sizeof(*c));
	long cpus;

	if (!c) {
		imgfs_error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	if (setup_params(&c->p, opts, blkszbits, err)) {
		free(c);
		return NULL;
	}
	c->big = c->p.pcluster > c->p.bs;
	c->ztailpacking = opts->ztailpacking;
	c->inline_data = opts->inline_data;
	c->fragments = opts->fragments;
	cpus = usable_cpus();
	c->workers = opts->workers;
	if (!c->workers)
		c->workers = cpus < IMGFS_MAX_WORKERS ? (unsigned int)cpus :
							IMGFS_MAX_WORKERS;
	if (c->workers > IMGFS_MAX_WORKERS) {
		imgfs_error_set(err, -EINVAL,
				"%u compression workers: the range is 1 to %u",
				c->workers, IMGFS_MAX_WORKERS);
		free(c);
		return NULL;
	}
	/* no more encoders than can run at once: memory is not set by -w */
	c->encoders = c->workers < (unsigned long)cpus ? c->workers :
							 (unsigned int)cpus;
	/* the cut depends on the pcluster size only, never on the workers */
	c->seg_size = (size_t)SEG_PCLUSTERS * c->p.pcluster;
	if (c->seg_size < SEG_MIN)
		c->seg_size = SEG_MIN;
	if (c->seg_size > SEG_MAX)
		c->seg_size = SEG_MAX;
	c->max_bytes = (2 * (size_t)c->encoders + 2) * c->seg_size;
	c->max_jobs = JOBS_PER_WORKER * c->encoders;
	c->ctxs.max = c->encoders;
	if (pthread_mutex_init(&c->ctxs.lock, NULL)) {
		free(c);
		imgfs_error_set(err, -ENOMEM, "cannot create a lock");
		return NULL;
	}
	if (pthread_cond_init(&c->ctxs.freed, NULL)) {
		pthread_mutex_destroy(&c->ctxs.lock);
		free(c);
		imgfs_error_set(err, -ENOMEM, "cannot create a condition");
		return NULL;
	}
	c->pool = imgfs_workpool_create(c->workers, NULL, err);
	if (!c->pool) {
		pthread_cond_destroy(&c->ctxs.freed);
		pthread_mutex_destroy(&c->ctxs.lock);
		free(c);
		return NULL;
	}
	return c;
}

void imgfs_compressor_destroy(struct imgfs_compressor *c)
{
	if (!c)
		return;
	imgfs_workpool_destroy(c->pool);
	while (c->ctxs.free) {
		struct zworker *wk = c->ctxs.free;

		c->ctxs.free = wk->next;
		zworker_free(wk);
	}
	pthread_cond_destroy(&c->ctxs.freed);
	pthread_mutex_destroy(&c->ctxs.lock);
	if (c->packed && !c->packed->pending)
		file_free(c->packed);
	while (c->head) {
		struct zjob *j = c->head;
		struct zfile *f = j->file;

		c->head = j->next;
		job_free(j);
		if (!--f->pending)
			file_free(f);
	}
	while (c->all_seen) {
		struct zseen *e = c->all_seen;

		c->all_seen = e->next_all;
		free(e);
	}
	imgfs_hashtab_free(&c->seen);
	free(c->pbuf);
	free(c);
}
