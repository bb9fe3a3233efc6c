// SPDX-License-Identifier: MIT
/*
 * zread.c - reading extents of compressed inodes (docs/format.md
 * §9.8, §9.9); fragments (§9.11) are bytes of the packed inode, read by
 * lib/reader/data.c.
 *
 * Decoded pclusters go through a small LRU cache in the image handle, so a
 * file read sequentially in small pieces decodes each pcluster once. The
 * cache is filled outside the lock: concurrent readers of one handle decode
 * in parallel, each with its own buffers (pooled for reuse); a reader that
 * needs a pcluster another one is decoding waits for it rather than
 * decoding it again (tails packed together are wanted by many files).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader/zdata.h"
#include "util/bigbuf.h"
#include "util/vec.h"
#include "util/error.h"

/* First size of the buffers, which then double: no realloc per pcluster
 * size. */
#define BUF_STEP (64u * 1024u)

void zwork_free(struct imgfs_zwork *w)
{
	if (!w)
		return;
	free(w->in);
	free(w->ra);
	bigbuf_free(w->out, w->out_cap);
	zdecoder_free(w->dec);
	free(w);
}

void zcache_free(struct imgfs_zcache *c)
{
	bigbuf_free(c->buf, c->cap);
	memset(c, 0, sizeof(*c));
}

uint64_t z_decoded_count(struct imgfs_image *img)
{
	struct imgfs_zstate *zs = img->zpriv;
	uint64_t n;

	if (!zs)
		return 0;
	pthread_mutex_lock(&zs->lock);
	n = zs->decoded;
	pthread_mutex_unlock(&zs->lock);
	return n;
}

static bool cache_match(const struct imgfs_zcache *c,
			const struct imgfs_extent *ext)
{
	return c->valid && c->pos == ext->pos && c->plen == ext->plen &&
	       c->outlen == ext->length && c->alg == ext->algorithm &&
	       c->partial == !!(ext->flags & IMGFS_EXTENT_F_PARTIAL);
}

/* The slot holding @ext, or NULL. Called with the lock held. */
static struct imgfs_zcache *cache_find(struct imgfs_zstate *zs,
				       const struct imgfs_extent *ext)
{
	for (unsigned int i = 0; i < IMGFS_ZCACHE_SLOTS; i++)
		if (cache_match(&zs->cache[i], ext))
			return &zs->cache[i];
	return NULL;
}

/*
 * The slot a new pcluster of @len decoded bytes goes to: a free one, else
 * the least recently used. Older entries are dropped (their buffers freed)
 * while the cache would hold more than IMGFS_ZCACHE_BYTES. Lock held.
 */
static struct imgfs_zcache *cache_victim(struct imgfs_zstate *zs, size_t len)
{
	struct imgfs_zcache *v = NULL;
	size_t total = len;

	for (unsigned int i = 0; i < IMGFS_ZCACHE_SLOTS; i++) {
		struct imgfs_zcache *c = &zs->cache[i];

		if (!v || !c->valid || (v->valid && c->used < v->used))
			v = c;
	}
	for (unsigned int i = 0; i < IMGFS_ZCACHE_SLOTS; i++)
		if (zs->cache[i].valid && &zs->cache[i] != v)
			total += zs->cache[i].cap;
	while (total > IMGFS_ZCACHE_BYTES) {
		struct imgfs_zcache *old = NULL;

		for (unsigned int i = 0; i < IMGFS_ZCACHE_SLOTS; i++) {
			struct imgfs_zcache *c = &zs->cache[i];

			if (c != v && c->valid && (!old || c->used < old->used))
				old = c;
		}
		if (!old)
			break;
		total -= old->cap;
		zcache_free(old);
	}
	return v;
}

/* Does @w's read-ahead window hold image bytes [@pos, @pos + @len)? */
static bool ra_holds(const struct imgfs_zwork *w, uint64_t pos, size_t len)
{
	return w->ra_len && len <= w->ra_len && pos >= w->ra_pos &&
	       pos - w->ra_pos <= w->ra_len - len;
}

/* Does @w's read-ahead hold @pos, or end there? */
static bool work_follows(const struct imgfs_zwork *w, uint64_t pos)
{
	return pos == w->read_end || ra_holds(w, pos, 1);
}

/*
 * Take a pooled work area, or make one. Readers share the pool, so the one
 * whose read-ahead goes on at @pos is taken first: a reader reading on
 * where it stopped keeps its window even when others took turns.
 */
static struct imgfs_zwork *work_get(struct imgfs_zstate *zs, uint64_t pos)
{
	struct imgfs_zwork **p, *w;

	pthread_mutex_lock(&zs->lock);
	for (p = &zs->idle; *p && !work_follows(*p, pos); p = &(*p)->next)
		;
	if (!*p)
		p = &zs->idle;
	w = *p;
	if (w) {
		*p = w->next;
		zs->nr_idle--;
	}
	pthread_mutex_unlock(&zs->lock);
	if (w)
		return w;
	w = calloc(1, sizeof(*w));
	if (w && !(w->dec = zdecoder_new())) {
		free(w);
		w = NULL;
	}
	return w;
}

/* Return @w to the pool (caller holds the lock). */
static void work_put_locked(struct imgfs_zstate *zs, struct imgfs_zwork *w)
{
	if (zs->nr_idle >= IMGFS_ZWORK_IDLE_MAX) {
		zwork_free(w);
		return;
	}
	w->next = zs->idle;
	zs->idle = w;
	zs->nr_idle++;
}

static void work_put(struct imgfs_zstate *zs, struct imgfs_zwork *w)
{
	pthread_mutex_lock(&zs->lock);
	work_put_locked(zs, w);
	pthread_mutex_unlock(&zs->lock);
}

static int zerr(struct imgfs_error *err, int code,
		const struct imgfs_inode *inode, const struct imgfs_extent *ext,
		const char *why)
{
	return error_set(
		err, code,
		"nid %llu: file bytes %llu..%llu: %s%s pcluster at byte %llu (%llu bytes): %s",
		(unsigned long long)inode->nid,
		(unsigned long long)ext->logical,
		(unsigned long long)(ext->logical + ext->length),
		(ext->flags & IMGFS_EXTENT_F_INLINE) ? "inline " : "",
		zalg_name(ext->algorithm), (unsigned long long)ext->pos,
		(unsigned long long)ext->plen, why);
}

/*
 * The stream starts at the first non-zero byte, searched only within the
 * first block as the kernel does (docs/format.md §9.8). LZ4 without zero
 * padding is left-aligned instead.
 */
static int stream_start(const struct imgfs_image *img,
			const struct imgfs_zstate *zs,
			const struct imgfs_extent *ext, const uint8_t *in,
			size_t *skip, bool *exact)
{
	size_t lim = img->blksz - (size_t)(ext->pos & (img->blksz - 1));

	*skip = 0;
	*exact = ext->algorithm != IMGFS_COMPR_LZ4 || zs->cfg.zero_padding;
	if (!*exact)
		return 0;
	if (lim > ext->plen)
		lim = (size_t)ext->plen;
	while (*skip < lim && !in[*skip])
		++*skip;
	return *skip < lim ? 0 : -IMGFS_EFSCORRUPTED;
}

/*
 * The compressed bytes of @ext, in *@in. Pclusters read one after the
 * other (a file's, or files written in the order they are read) come from
 * a window read ahead that doubles up to RA_MAX: one system call for many
 * small pclusters. A read elsewhere drops the window back to nothing.
 */
#define RA_MAX (256u * 1024u)

static int read_pcluster(struct imgfs_image *img, struct imgfs_zwork *w,
			 const struct imgfs_inode *inode,
			 const struct imgfs_extent *ext, const uint8_t **in,
			 struct imgfs_error *err)
{
	uint64_t pos = ext->pos, avail;
	size_t plen = (size_t)ext->plen, n;
	int ret;

	if (ra_holds(w, pos, plen)) {
		*in = w->ra + (pos - w->ra_pos);
		return 0;
	}
	if (pos == w->read_end) {
		w->ra_win = w->ra_win * 2 > 2 * plen ? w->ra_win * 2 : 2 * plen;
		if (w->ra_win > RA_MAX)
			w->ra_win = RA_MAX;
	} else {
		w->ra_win = 0;
	}
	w->ra_len = 0;
	avail = pos < img->size ? img->size - pos : 0;
	n = w->ra_win < avail ? w->ra_win : (size_t)avail;
	if (n <= plen) {
		ret = img_read(img, w->in, plen, pos, "compressed data",
			       inode->nid, err);
		if (ret)
			return ret;
		w->read_end = pos + plen;
		*in = w->in;
		return 0;
	}
	if (IMGFS_VEC_RESERVE(w->ra, w->ra_cap, n, BUF_STEP))
		return error_set(err, -ENOMEM, "out of memory");
	ret = img_read(img, w->ra, n, pos, "compressed data", inode->nid, err);
	if (ret)
		return ret;
	w->ra_pos = pos;
	w->ra_len = n;
	w->read_end = pos + n;
	*in = w->ra;
	return 0;
}

static int decode(struct imgfs_image *img, struct imgfs_zstate *zs,
		  struct imgfs_zwork *w, const struct imgfs_inode *inode,
		  const struct imgfs_extent *ext, struct imgfs_error *err)
{
	const uint8_t *in = NULL;
	char why[256];
	bool exact;
	size_t skip;
	int ret;

	if (ext->plen > IMGFS_MAX_PCLUSTER_SIZE || !ext->plen ||
	    ext->length > IMGFS_MAX_EXTENT_SIZE)
		return zerr(err, -IMGFS_EFSCORRUPTED, inode, ext,
			    "pcluster or extent size out of bounds");
	/* decoded pclusters can be megabytes: util/bigbuf.h */
	if (IMGFS_VEC_RESERVE(w->in, w->in_cap, (size_t)ext->plen, BUF_STEP) ||
	    bigbuf_reserve(&w->out, &w->out_cap, (size_t)ext->length))
		return error_set(err, -ENOMEM, "out of memory");
	ret = read_pcluster(img, w, inode, ext, &in, err);
	if (ret)
		return ret;
	if (stream_start(img, zs, ext, in, &skip, &exact))
		return zerr(err, -IMGFS_EFSCORRUPTED, inode, ext,
			    "compressed data start not found (the first block is all zeros)");
	ret = zdecode(w->dec, &zs->cfg, ext->algorithm, in + skip,
		      (size_t)ext->plen - skip, w->out, (size_t)ext->length,
		      ext->flags & IMGFS_EXTENT_F_PARTIAL, exact, why,
		      sizeof(why));
	if (ret == -ENOMEM)
		return error_set(err, ret, "out of memory");
	if (ret)
		return zerr(err, ret, inode, ext, why);
	return 0;
}

/* Did @ext decode without error before? Lock held. */
static bool verified_has(const struct imgfs_zstate *zs,
			 const struct imgfs_extent *ext)
{
	const struct imgfs_zverified *v;
	uint64_t i;

	if (!u64map_get(&zs->verified_at, ext->pos, &i))
		return false;
	v = &zs->verified[i];
	return v->plen == ext->plen && v->outlen == ext->length &&
	       v->alg == ext->algorithm &&
	       v->partial == !!(ext->flags & IMGFS_EXTENT_F_PARTIAL);
}

/* Remember that @ext decoded; no memory only means it may be decoded
 * again. Lock held. */
static void verified_add(struct imgfs_zstate *zs,
			 const struct imgfs_extent *ext)
{
	struct imgfs_zverified *v;

	if (u64map_get(&zs->verified_at, ext->pos, NULL) ||
	    IMGFS_VEC_RESERVE(zs->verified, zs->verified_cap,
			      zs->nr_verified + 1, 256) ||
	    u64map_add(&zs->verified_at, ext->pos, zs->nr_verified) != 1)
		return;
	v = &zs->verified[zs->nr_verified++];
	v->plen = ext->plen;
	v->outlen = ext->length;
	v->alg = ext->algorithm;
	v->partial = ext->flags & IMGFS_EXTENT_F_PARTIAL;
}

/* The busy slot of the pcluster at @ext->pos, or NULL. Lock held. */
static struct imgfs_zbusy *busy_find(struct imgfs_zstate *zs,
				     const struct imgfs_extent *ext)
{
	for (unsigned int i = 0; i < IMGFS_ZBUSY_SLOTS; i++)
		if (zs->busy[i].used && zs->busy[i].pos == ext->pos &&
		    zs->busy[i].plen == ext->plen)
			return &zs->busy[i];
	return NULL;
}

/*
 * Find @ext in the cache (copying @n bytes at @offset into @buf), or with
 * @verify among the pclusters verified, waiting while another reader
 * decodes it. Else mark it busy (when a slot is free)
 * and return 0: the caller decodes it. Lock held.
 */
static bool cache_get_or_claim(struct imgfs_zstate *zs,
			       const struct imgfs_extent *ext,
			       uint64_t offset, void *buf, size_t n, bool verify,
			       struct imgfs_zbusy **claimed)
{
	struct imgfs_zcache *c;

	*claimed = NULL;
	for (;;) {
		if (verify && verified_has(zs, ext))
			return true;
		c = cache_find(zs, ext);
		if (c) {
			c->used = ++zs->clock;
			memcpy(buf, c->buf + (offset - ext->logical), n);
			return true;
		}
		if (!busy_find(zs, ext))
			break;
		pthread_cond_wait(&zs->busy_done, &zs->lock);
	}
	for (unsigned int i = 0; i < IMGFS_ZBUSY_SLOTS; i++) {
		if (zs->busy[i].used)
			continue;
		zs->busy[i].used = true;
		zs->busy[i].pos = ext->pos;
		zs->busy[i].plen = ext->plen;
		*claimed = &zs->busy[i];
		break;
	}
	return false;
}

/* The decode of a claimed pcluster ended (published or failed). */
static void busy_release(struct imgfs_zstate *zs, struct imgfs_zbusy *b)
{
	if (!b)
		return;
	b->used = false;
	pthread_cond_broadcast(&zs->busy_done);
}

static ssize_t read_decoded(struct imgfs_image *img,
			    const struct imgfs_inode *inode,
			    const struct imgfs_extent *ext, uint64_t offset,
			    void *buf, size_t n, bool verify,
			    struct imgfs_error *err)
{
	struct imgfs_zstate *zs = img->zpriv;
	struct imgfs_zbusy *claimed;
	struct imgfs_zcache *c;
	struct imgfs_zwork *w;
	uint8_t *tmp;
	size_t tcap;
	int ret;

	pthread_mutex_lock(&zs->lock);
	if (cache_get_or_claim(zs, ext, offset, buf, n, verify, &claimed)) {
		pthread_mutex_unlock(&zs->lock);
		return (ssize_t)n;
	}
	pthread_mutex_unlock(&zs->lock);

	w = work_get(zs, ext->pos);
	if (!w) {
		ret = error_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	ret = decode(img, zs, w, inode, ext, err);
	if (ret) {
		work_put(zs, w);
		goto fail;
	}
	memcpy(buf, w->out + (offset - ext->logical), n);

	/* Publish the result: the fresh buffer becomes the cache's (unless
	 * another reader published the same pcluster meanwhile). */
	pthread_mutex_lock(&zs->lock);
	c = cache_find(zs, ext);
	if (!c)
		c = cache_victim(zs, w->out_cap);
	tmp = c->buf;
	tcap = c->cap;
	c->buf = w->out;
	c->cap = w->out_cap;
	w->out = tmp;
	w->out_cap = tcap;
	c->valid = true;
	c->pos = ext->pos;
	c->plen = ext->plen;
	c->outlen = ext->length;
	c->alg = ext->algorithm;
	c->partial = ext->flags & IMGFS_EXTENT_F_PARTIAL;
	c->used = ++zs->clock;
	zs->decoded++;
	if (verify)
		verified_add(zs, ext);
	work_put_locked(zs, w);
	busy_release(zs, claimed);
	pthread_mutex_unlock(&zs->lock);
	return (ssize_t)n;
fail:
	pthread_mutex_lock(&zs->lock);
	busy_release(zs, claimed);
	pthread_mutex_unlock(&zs->lock);
	return ret;
}

/*
 * Uncompressed pcluster. Shifted: extent byte j is pcluster byte j.
 * Interlaced: it is pcluster byte (c + j) mod plen, c being the extent's
 * offset inside its block, so every byte keeps its in-block position.
 */
static ssize_t read_raw(struct imgfs_image *img,
			const struct imgfs_inode *inode,
			const struct imgfs_extent *ext, uint64_t offset,
			void *buf, size_t n, struct imgfs_error *err)
{
	uint64_t j = offset - ext->logical, c, start;
	size_t first;
	int ret;

	if (!(ext->flags & IMGFS_EXTENT_F_INTERLACED)) {
		ret = img_read(img, buf, n, ext->pos + j, "file data",
			       inode->nid, err);
		return ret ? ret : (ssize_t)n;
	}
	c = ext->logical & (img->blksz - 1);
	if (!ext->plen || c >= ext->plen || ext->length > ext->plen)
		return zerr(err, -IMGFS_EFSCORRUPTED, inode, ext,
			    "interlaced pcluster smaller than its extent");
	start = (c + j) % ext->plen;
	first = ext->plen - start < n ? (size_t)(ext->plen - start) : n;
	ret = img_read(img, buf, first, ext->pos + start, "file data",
		       inode->nid, err);
	if (!ret && first < n)
		ret = img_read(img, (uint8_t *)buf + first, n - first, ext->pos,
			       "file data", inode->nid, err);
	return ret ? ret : (ssize_t)n;
}

ssize_t z_read(struct imgfs_image *img, const struct imgfs_inode *inode,
	       const struct imgfs_extent *ext, uint64_t offset, void *buf,
	       size_t len, bool verify, struct imgfs_error *err)
{
	uint64_t avail;
	size_t n;

	if (!img->zpriv || offset < ext->logical ||
	    offset - ext->logical >= ext->length)
		return error_set(
			err, -EINVAL,
			"nid %llu: offset %llu is outside the extent given",
			(unsigned long long)inode->nid,
			(unsigned long long)offset);
	avail = ext->logical + ext->length - offset;
	n = avail < len ? (size_t)avail : len;
	if (ext->kind != IMGFS_EXTENT_COMPRESSED)
		return error_set(
			err, -EINVAL,
			"nid %llu: extent kind %u is not compressed data",
			(unsigned long long)inode->nid, ext->kind);
	if (ext->flags & IMGFS_EXTENT_F_RAW)
		return read_raw(img, inode, ext, offset, buf, n, err);
	return read_decoded(img, inode, ext, offset, buf, n, verify, err);
}
