// SPDX-License-Identifier: MIT
/*
 * compress_segment.c - one segment of a file to extents (docs/format.md
 * §9): compressed pclusters of whole blocks, right-aligned after zero
 * padding, raw PLAIN pclusters, an inline tail or the start of the file's
 * fragment, all in the job's private buffer. Runs on a worker thread,
 * except the fix-up of a raw tail, which the writer's thread does when it
 * knows how the earlier segments were stored.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"
#include "writer/compress_int.h"
#include "writer/compress_map.h"

#define FRAG_PCLUSTERS 4 /* file ends up to this many raw pclusters */
#define LZ4_WINDOW_MIN (65536 + 64) /* input offered to fast LZ4 at least */

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
	size_t nblk = zdiv_up(clen, j->p->bs);
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
	size_t nblk = zdiv_up(len, j->p->bs);
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
	return zdiv_up(j->len, j->p->bs) << j->p->bits;
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
		if (clen > 0 && zdiv_up((size_t)clen, p->bs) < zdiv_up(in, p->bs)) {
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
int zseg_compress(struct zjob *j, struct zworker *wk)
{
	size_t cost;
	bool any;
	int ret;

	ret = emit_compressed(j, wk, &any);
	if (ret || j->frag)
		return ret;
	/*
	 * A whole file stored raw is flat: its tail room is the flat one.
	 * A later segment leaves that to commit time (zseg_raw_tail_fixup()).
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
			cost += zmap_compact_size_max(
				zdiv_up(j->len, j->p->bs));
		if (cost < raw_cost(j))
			return 0;
	}
	job_reset_results(j);
	return emit_raw(j, 0, j->len);
}

/*
 * The last job of a file stored in several jobs could not know whether
 * the earlier ones stored it raw throughout, making it flat: if so, its
 * last partial block goes inline when the flat room allows, and back to
 * a block when it does not, as one job would have placed it.
 */
int zseg_raw_tail_fixup(struct zfile *f, struct zjob *j)
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
