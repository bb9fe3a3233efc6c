// SPDX-License-Identifier: MIT
/*
 * data.c - file data: extents inside the image, no overlaps between
 * inodes, data and metadata, every byte readable, optional SHA-256.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

#include "check/internal.h"
#include "util/sha256.h"
#include "util/vec.h"
#include "util/error.h"

/*
 * Zeros hashed for the holes of one sparse file, and for a whole check,
 * before giving up on digests (hashing zeros runs at about 1.5 GB/s, and a
 * tiny hostile image can describe exabytes of holes).
 */
#define HOLE_DIGEST_MAX (64ull << 30)
#define HOLE_DIGEST_TOTAL (64ull << 30)
/* Overlap findings reported one by one before only counting them. */
#define MAX_OVERLAP_REPORTS 50u

int imgfs_sha256(const void *buf, size_t len, uint8_t out[IMGFS_SHA256_SIZE])
{
	return sha256_join(buf, len, NULL, 0, out);
}

int check_add_range(struct check_ctx *c, uint64_t start, uint64_t len,
		    uint64_t nid, unsigned int kind)
{
	struct check_range *r;

	if (!len)
		return 0;
	if (IMGFS_VEC_RESERVE(c->ranges, c->ranges_cap, c->nr_ranges + 1,
			      1024)) {
		c->fatal = error_set(c->err, -ENOMEM, "out of memory");
		return c->fatal;
	}
	r = &c->ranges[c->nr_ranges++];
	r->start = start;
	r->end = start + len < start ? UINT64_MAX : start + len;
	r->nid = nid;
	r->kind = (uint8_t)kind;
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct check_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

static const char *range_kind(unsigned int kind)
{
	switch (kind) {
	case CHECK_RANGE_META:
		return "metadata";
	case CHECK_RANGE_SHARED_XATTR:
		return "shared xattr";
	default:
		return "data";
	}
}

static const char *range_owner(struct check_ctx *c,
			       const struct check_range *r, char *buf,
			       size_t size)
{
	if (r->nid == IMGFS_CHECK_NO_NID)
		return r->kind == CHECK_RANGE_SHARED_XATTR ? "shared xattr area" :
							     "superblock";
	return check_node_path(c, r->nid, buf, size);
}

/* Two ranges overlap: decide whether the format allows it. */
static void judge_overlap(struct check_ctx *c, const struct check_range *a,
			  const struct check_range *b, uint64_t *shared,
			  uint64_t *bad)
{
	const char *owner;
	char pa[4096];

	if (a->kind == CHECK_RANGE_CHUNK && b->kind == CHECK_RANGE_CHUNK) {
		(*shared)++;
		return;
	}
	if (a->kind == CHECK_RANGE_SHARED_XATTR &&
	    b->kind == CHECK_RANGE_SHARED_XATTR && a->start == b->start &&
	    a->end == b->end)
		return;
	if (a->nid == b->nid && a->kind == CHECK_RANGE_META &&
	    b->kind == CHECK_RANGE_META)
		return;
	if (++*bad > MAX_OVERLAP_REPORTS)
		return;
	owner = range_owner(c, a, pa, sizeof(pa));
	check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_LAYOUT, b->nid,
		     "%s at bytes %llu..%llu overlaps %s of %s (nid %lld) at %llu..%llu",
		     range_kind(b->kind), (unsigned long long)b->start,
		     (unsigned long long)b->end, range_kind(a->kind), owner,
		     a->nid == IMGFS_CHECK_NO_NID ? -1LL : (long long)a->nid,
		     (unsigned long long)a->start, (unsigned long long)a->end);
}

/* Image bytes holding file data, each counted once (ranges sorted). */
static uint64_t data_union(const struct check_range *ranges, size_t n)
{
	uint64_t total = 0, end = 0;

	for (size_t i = 0; i < n; i++) {
		const struct check_range *r = &ranges[i];
		uint64_t from = r->start > end ? r->start : end;

		if (r->kind != CHECK_RANGE_DATA && r->kind != CHECK_RANGE_CHUNK)
			continue;
		if (r->end > from)
			total += r->end - from;
		if (r->end > end)
			end = r->end;
	}
	return total;
}

static void report_amplification(struct check_ctx *c)
{
	struct imgfs_check_result *res = c->res;

	res->physical_bytes = data_union(c->ranges, c->nr_ranges) +
			      c->inline_bytes;
	if (res->logical_bytes / IMGFS_CHECK_AMPLIFICATION_MAX <=
	    res->physical_bytes)
		return;
	check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_DATA,
		     IMGFS_CHECK_NO_NID,
		     "file data amplified: %llu bytes of file data come from %llu bytes of the image (more than %u times): extracting or hashing it costs far more than the image size",
		     (unsigned long long)res->logical_bytes,
		     (unsigned long long)res->physical_bytes,
		     IMGFS_CHECK_AMPLIFICATION_MAX);
}

/* Drop the ranges data jobs mapped past a read error. */
static void drop_dead_ranges(struct check_ctx *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nr_ranges; i++)
		if (c->ranges[i].kind != CHECK_RANGE_DEAD)
			c->ranges[n++] = c->ranges[i];
	c->nr_ranges = n;
}

void check_ranges(struct check_ctx *c)
{
	uint64_t shared = 0, bad = 0;
	size_t i, cur = 0;

	drop_dead_ranges(c);
	qsort(c->ranges, c->nr_ranges, sizeof(*c->ranges), range_cmp);
	report_amplification(c);
	if (c->nr_ranges < 2)
		return;
	for (i = 1; i < c->nr_ranges; i++) {
		const struct check_range *m = &c->ranges[cur];
		const struct check_range *r = &c->ranges[i];

		if (r->start < m->end)
			judge_overlap(c, m, r, &shared, &bad);
		if (r->end > m->end)
			cur = i;
	}
	if (bad > MAX_OVERLAP_REPORTS)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_LAYOUT,
			     IMGFS_CHECK_NO_NID,
			     "%llu more overlapping ranges not listed",
			     (unsigned long long)(bad - MAX_OVERLAP_REPORTS));
	if (shared)
		check_report(c, IMGFS_CHECK_NOTE, IMGFS_CHECK_LAYOUT,
			     IMGFS_CHECK_NO_NID,
			     "%llu chunk ranges are shared between or within chunk-based files (deduplicated chunks)",
			     (unsigned long long)shared);
}

struct data_scan {
	struct check_ctx *c;
	const struct imgfs_inode *inode;
	bool reg;
	bool read;
	EVP_MD_CTX *md;
	uint64_t hole_bytes;
	bool no_digest;
	bool amplified; /* no digest: see check_file_amplification */
	/* zeros hashed by the whole check, NULL on a worker (counted when
	 * its job is finished, in order) */
	uint64_t *hole_total;
	bool skip_holes; /* a worker's: the whole check's budget is spent */
	uint8_t *buf; /* read buffer of the calling thread */
	size_t bufsz;
	struct imgfs_error e;
};

/* Count @len zeros of a hole against the budgets: false when over. */
static bool hole_budget(uint64_t *file, uint64_t *total, uint64_t len)
{
	*file += len;
	if (total)
		*total += len;
	return *file <= HOLE_DIGEST_MAX &&
	       (!total || *total <= HOLE_DIGEST_TOTAL);
}

static int hash_zeros(struct data_scan *s, uint64_t len)
{
	if (s->skip_holes || !hole_budget(&s->hole_bytes, s->hole_total, len)) {
		s->no_digest = true;
		return 0;
	}
	memset(s->buf, 0, len < s->bufsz ? len : s->bufsz);
	while (len) {
		size_t n = len < s->bufsz ? (size_t)len : s->bufsz;

		EVP_DigestUpdate(s->md, s->buf, n);
		len -= n;
	}
	return 0;
}

static int read_pieces(struct data_scan *s, const struct imgfs_extent *ext,
		       uint64_t from, uint64_t to)
{
	struct check_ctx *c = s->c;
	uint64_t done = from;

	while (done < to) {
		uint64_t left = to - done;
		size_t n = left < s->bufsz ? (size_t)left : s->bufsz;
		ssize_t got;

		if (ext->kind == IMGFS_EXTENT_PLAIN ||
		    ext->kind == IMGFS_EXTENT_INLINE) {
			int ret = img_read(c->img, s->buf, n, ext->pos + done,
					   "file data", s->inode->nid, &s->e);

			if (ret)
				return ret;
			got = (ssize_t)n;
		} else {
			/* without a digest the bytes are not needed: shared
			 * pclusters (packed tails) are decoded once */
			got = s->md && !s->no_digest
				      ? imgfs_read(c->img, s->inode,
						   ext->logical + done, s->buf,
						   n, &s->e)
				      : read_verify(c->img, s->inode,
						    ext->logical + done, s->buf,
						    n, &s->e);
			if (got < 0)
				return (int)got;
			if ((size_t)got != n)
				return error_set(
					&s->e, -IMGFS_EFSCORRUPTED,
					"short read at %llu",
					(unsigned long long)(ext->logical +
							     done));
		}
		if (s->md && !s->no_digest)
			EVP_DigestUpdate(s->md, s->buf, (size_t)got);
		done += (uint64_t)got;
	}
	return 0;
}

/* The read map is shared by the worker threads: bits are set atomically
 * (a block two threads read at once is only read twice). */
static bool block_read(const struct check_ctx *c, uint64_t blk)
{
	return __atomic_load_n(&c->readmap[blk >> 3], __ATOMIC_RELAXED) &
	       (1u << (blk & 7));
}

/* The first block of [@blk, @end) read already, or @end. */
static uint64_t next_read(const struct check_ctx *c, uint64_t blk,
			  uint64_t end)
{
	while (blk < end) {
		uint8_t m = __atomic_load_n(&c->readmap[blk >> 3],
					    __ATOMIC_RELAXED) >>
			    (blk & 7);

		if (m)
			return blk + (uint64_t)__builtin_ctz(m) < end ?
				       blk + (uint64_t)__builtin_ctz(m) :
				       end;
		blk = (blk | 7) + 1; /* the rest of this byte is unread */
	}
	return end;
}

/* Mark blocks [@blk, @end) read: one atomic operation per byte. */
static void blocks_set_read(struct check_ctx *c, uint64_t blk, uint64_t end)
{
	while (blk < end) {
		unsigned int lo = blk & 7;
		unsigned int n = end - blk < 8 - lo ? (unsigned int)(end - blk) :
						      8 - lo;

		__atomic_fetch_or(&c->readmap[blk >> 3],
				  (uint8_t)(((1u << n) - 1) << lo),
				  __ATOMIC_RELAXED);
		blk += n;
	}
}

/* Made before any worker starts, as it is shared. */
static int readmap_alloc(struct check_ctx *c, struct imgfs_error *e)
{
	if (c->readmap)
		return 0;
	c->readmap = calloc(((c->img->size >> c->img->blkszbits) >> 3) + 1, 1);
	if (!c->readmap)
		return error_set(e, -ENOMEM, "out of memory");
	return 0;
}

/*
 * Without a digest, plain blocks shared by several files (chunks, or a
 * corrupt image where many inodes claim the same blocks) are read once:
 * the work stays bounded by the image size.
 */
static int read_plain_once(struct data_scan *s, const struct imgfs_extent *ext)
{
	struct check_ctx *c = s->c;
	unsigned int bits = c->img->blkszbits;
	uint64_t off = 0, from, blk, run, end;
	int ret;

	ret = readmap_alloc(c, &s->e);
	if (ret)
		return ret;
	/* blocks [blk, end) of the extent; its position is block-aligned */
	end = (ext->pos + ext->length + (1u << bits) - 1) >> bits;
	while (off < ext->length) {
		/* skip blocks read already, then read the run of unread ones
		 * in one go (one block per call costs a system call each) */
		blk = (ext->pos + off) >> bits;
		if (block_read(c, blk)) {
			off = ((blk + 1) << bits) - ext->pos;
			continue;
		}
		/* blk is taken even if another worker read it meanwhile: the
		 * run is never empty */
		run = next_read(c, blk + 1, end);
		from = off;
		off = (run << bits) - ext->pos;
		if (off > ext->length)
			off = ext->length;
		ret = read_pieces(s, ext, from, off);
		if (ret)
			return ret;
		blocks_set_read(c, blk, run);
	}
	return 0;
}

static int read_extent(struct data_scan *s, const struct imgfs_extent *ext)
{
	if (ext->kind == IMGFS_EXTENT_HOLE)
		return s->md && !s->no_digest ? hash_zeros(s, ext->length) : 0;
	if (ext->kind == IMGFS_EXTENT_PLAIN && (!s->md || s->no_digest) &&
	    !(ext->pos & (s->c->img->blksz - 1)))
		return read_plain_once(s, ext);
	return read_pieces(s, ext, 0, ext->length);
}

/*
 * What the check notes about an extent besides its range, in file order:
 * counts, storage past the end of the image, tar-index bounds.
 */
static void extent_note(struct check_ctx *c, bool reg, uint64_t nid,
			const struct imgfs_extent *ext)
{
	if (reg && ext->kind != IMGFS_EXTENT_HOLE)
		c->res->logical_bytes += ext->length;
	if (reg && ext->kind == IMGFS_EXTENT_INLINE)
		c->inline_bytes += ext->length;
	if (ext->kind != IMGFS_EXTENT_PLAIN &&
	    ext->kind != IMGFS_EXTENT_COMPRESSED)
		return;
	if (ext->pos + ext->plen > c->img->size)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_DATA, nid,
			     "last block of bytes %llu..%llu extends past the end of the image",
			     (unsigned long long)ext->logical,
			     (unsigned long long)(ext->logical + ext->length));
	if (ext->device)
		check_tarindex_extent(c, nid, ext);
}

/* The range of the image an extent owns: its index, or SIZE_MAX. */
static size_t extent_range(struct check_ctx *c, uint64_t nid,
			   const struct imgfs_extent *ext)
{
	size_t at = c->nr_ranges;
	uint64_t end;

	switch (ext->kind) {
	case IMGFS_EXTENT_PLAIN:
	case IMGFS_EXTENT_COMPRESSED:
		end = ext->pos + ext->plen;
		if (end > c->img->size)
			end = c->img->size;
		check_add_range(c, ext->pos, end - ext->pos, nid,
				(ext->flags & IMGFS_EXTENT_F_SHARED) ?
					CHECK_RANGE_CHUNK : CHECK_RANGE_DATA);
		break;
	case IMGFS_EXTENT_INLINE:
		check_add_range(c, ext->pos, ext->length, nid,
				CHECK_RANGE_META);
		break;
	default:
		break;
	}
	return c->nr_ranges > at ? at : SIZE_MAX;
}

static int extent_cb(void *arg, const struct imgfs_extent *ext)
{
	struct data_scan *s = arg;
	struct check_ctx *c = s->c;

	extent_note(c, s->reg, s->inode->nid, ext);
	extent_range(c, s->inode->nid, ext);
	return s->read ? read_extent(s, ext) : 0;
}

/* Metadata that follows the inline xattrs, by layout. */
static void add_layout_meta(struct check_ctx *c,
			    const struct imgfs_inode *inode)
{
	uint64_t pos, len, nr;
	unsigned int recsz;

	switch (inode->layout) {
	case IMGFS_LAYOUT_CHUNK_BASED:
		recsz = (inode->chunk_format & IMGFS_CHUNK_FORMAT_INDEXES) ? 8 :
									     4;
		pos = (inode->data_pos + recsz - 1) & ~(uint64_t)(recsz - 1);
		nr = (inode->size + (1ull << inode->chunkbits) - 1) >>
		     inode->chunkbits;
		len = nr * recsz;
		if (img_range_ok(c->img, pos, len))
			check_add_range(c, inode->data_pos,
					pos + len - inode->data_pos,
					inode->nid, CHECK_RANGE_META);
		break;
	case IMGFS_LAYOUT_COMPRESSED_FULL:
	case IMGFS_LAYOUT_COMPRESSED_COMPACT:
		pos = (inode->data_pos + 7) & ~7ull;
		check_add_range(c, inode->data_pos,
				pos + IMGFS_MAP_HEADER_SIZE - inode->data_pos,
				inode->nid, CHECK_RANGE_META);
		break;
	}
}

static void report_data_error(struct check_ctx *c,
			      const struct imgfs_inode *inode, int ret,
			      const struct imgfs_error *e)
{
	if (ret == -ENOMEM) {
		c->fatal = error_set(c->err, ret, "out of memory");
		return;
	}
	if (ret == -EOPNOTSUPP) {
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_DATA,
			     inode->nid, "data not verified: %s", e->msg);
		return;
	}
	check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DATA, inode->nid, "%s",
		     e->code ? e->msg : strerror(-ret));
}

static void check_symlink(struct check_ctx *c, const struct imgfs_inode *inode)
{
	struct imgfs_error e = { 0 };
	char target[IMGFS_SYMLINK_MAX + 1];
	ssize_t n;

	if (!inode->size || inode->size > IMGFS_SYMLINK_MAX)
		return; /* reported with the inode fields */
	n = imgfs_readlink(c->img, inode, target, sizeof(target), &e);
	if (n < 0)
		report_data_error(c, inode, (int)n, &e);
}

struct phys_scan {
	struct check_range *r; /* start/end only */
	size_t n, cap;
	uint64_t logical;
};

/* The packed inode's storage, for the physical side of amplification. */
static int packed_cb(void *arg, const struct imgfs_extent *ext)
{
	uint64_t *bytes = arg;

	if (ext->kind == IMGFS_EXTENT_INLINE)
		*bytes += ext->length;
	else if (ext->kind != IMGFS_EXTENT_HOLE)
		*bytes += ext->plen;
	return 0;
}

void check_packed_storage(struct check_ctx *c, const struct imgfs_inode *in)
{
	struct imgfs_error e = { 0 };
	uint64_t bytes = 0;

	/* its map errors are not checked here: fragments report them */
	if (imgfs_extent_iterate(c->img, in, packed_cb, &bytes, &e) >= 0)
		c->inline_bytes += bytes;
}

static int phys_cb(void *arg, const struct imgfs_extent *ext)
{
	struct phys_scan *p = arg;

	if (ext->kind == IMGFS_EXTENT_HOLE)
		return 0;
	p->logical += ext->length;
	if (ext->kind == IMGFS_EXTENT_FRAGMENT)
		return 0;
	if (IMGFS_VEC_RESERVE(p->r, p->cap, p->n + 1, 256))
		return -ENOMEM;
	p->r[p->n].start = ext->pos;
	p->r[p->n].end = ext->pos + (ext->kind == IMGFS_EXTENT_INLINE ?
					     ext->length : ext->plen);
	p->r[p->n].kind = CHECK_RANGE_DATA;
	p->n++;
	return 0;
}

/*
 * A file large enough to exceed the amplification limit: map it first
 * (no data read) and, when its data comes from far fewer image bytes,
 * warn and do not hash it: its blocks are then read once, like without
 * a digest. Returns non-zero on an operational failure (already set).
 */
static int check_file_amplification(struct check_ctx *c,
				    const struct imgfs_inode *inode,
				    struct data_scan *s)
{
	struct phys_scan p = { 0 };
	struct imgfs_error e = { 0 };
	uint64_t phys;
	int ret;

	ret = imgfs_extent_iterate(c->img, inode, phys_cb, &p, &e);
	if (ret == -ENOMEM) {
		free(p.r);
		c->fatal = error_set(c->err, ret, "out of memory");
		return ret;
	}
	if (ret < 0) {
		free(p.r); /* the main pass reports it */
		return 0;
	}
	qsort(p.r, p.n, sizeof(*p.r), range_cmp);
	phys = data_union(p.r, p.n);
	free(p.r);
	if (p.logical / IMGFS_CHECK_AMPLIFICATION_MAX <= phys)
		return 0;
	check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_DATA, inode->nid,
		     "data amplified: %llu bytes of data come from %llu bytes of the image (more than %u times)%s",
		     (unsigned long long)p.logical, (unsigned long long)phys,
		     IMGFS_CHECK_AMPLIFICATION_MAX,
		     (c->opts.flags & IMGFS_CHECK_F_DIGEST) ?
			     "; its digest is not computed" :
			     "");
	s->no_digest = true;
	s->amplified = true;
	return 0;
}

/* ---- data jobs: a regular file's content read on a worker thread */

static void job_run(struct check_job *job, void **local);
static void job_finish(struct check_ctx *c, struct check_job *job);
static void job_free(struct check_job *job);

static const struct check_job_ops job_ops = {
	.run = job_run,
	.finish = job_finish,
	.free = job_free,
};


static int job_map_cb(void *arg, const struct imgfs_extent *ext)
{
	struct check_job *job = arg;
	struct check_job_ext *e = job->nr_ext ? &job->ext[job->nr_ext - 1] : NULL;

	/* hole chunks in a row are one hole: memory follows the data */
	if (e && ext->kind == IMGFS_EXTENT_HOLE &&
	    e->ext.kind == IMGFS_EXTENT_HOLE &&
	    e->ext.logical + e->ext.length == ext->logical) {
		e->ext.length += ext->length;
		return 0;
	}
	if (IMGFS_VEC_RESERVE(job->ext, job->ext_cap, job->nr_ext + 1, 16))
		return error_set(&job->map_err, -ENOMEM, "out of memory");
	e = &job->ext[job->nr_ext++];
	e->ext = *ext;
	if (!job->where && ext->kind != IMGFS_EXTENT_HOLE)
		job->where = ext->pos;
	e->range = extent_range(job->c, job->inode.nid, ext);
	return 0;
}

/*
 * Map @inode now (its ranges go in at their place in the walk's order) and
 * hand the reading to a worker.
 */
static void submit_job(struct check_ctx *c, const struct imgfs_inode *inode,
		       struct check_node *n, const struct data_scan *s)
{
	struct check_job *job = calloc(1, sizeof(*job));
	struct imgfs_error e = { 0 };

	if (!job || readmap_alloc(c, &e)) {
		free(job);
		c->fatal = error_set(c->err, -ENOMEM, "out of memory");
		return;
	}
	job->ops = &job_ops;
	job->c = c;
	job->inode = *inode;
	job->n = n;
	job->digest = c->opts.flags & IMGFS_CHECK_F_DIGEST;
	job->amplified = s->amplified;
	/* spent already: any hole of this file would spend it again */
	job->skip_holes = c->hole_hashed > HOLE_DIGEST_TOTAL;
	job->map_ret = imgfs_extent_iterate(c->img, inode, job_map_cb, job,
					    &job->map_err);
	if (check_queue_job(c, job))
		job_free(job);
}

static void job_free(struct check_job *job)
{
	if (!job)
		return;
	free(job->ext);
	free(job);
}

static void job_read(struct check_job *job, struct data_scan *s)
{
	for (size_t i = 0; i < job->nr_ext; i++) {
		int ret = read_extent(s, &job->ext[i].ext);

		if (ret) {
			job->read_ret = ret;
			job->read_err = s->e;
			return;
		}
		job->nr_read++;
	}
}

static void job_run(struct check_job *job, void **local)
{
	struct check_ctx *c = job->c;
	struct data_scan s = {
		.c = c,
		.inode = &job->inode,
		.reg = true,
		.read = true,
		.no_digest = job->amplified,
		.amplified = job->amplified,
		.skip_holes = job->skip_holes,
		.bufsz = c->bufsz,
	};
	unsigned int len = 0;

	if (!*local)
		*local = malloc(c->bufsz);
	s.buf = *local;
	if (job->digest) {
		s.md = sha256_new();
	}
	if (!s.buf || (job->digest && !s.md)) {
		job->read_ret =
			error_set(&job->read_err, -ENOMEM, "out of memory");
		EVP_MD_CTX_free(s.md);
		return;
	}
	job_read(job, &s);
	if (!job->read_ret && !job->map_ret && s.md && !s.no_digest)
		job->have_sha = EVP_DigestFinal_ex(s.md, job->sha256, &len);
	EVP_MD_CTX_free(s.md);
}

/* ---- the packed inode decoded ahead */

struct check_prefetch {
	struct imgfs_work work;
	struct check_ctx *c;
	uint64_t logical; /* a byte of the pcluster, in the packed inode */
};

static void prefetch_work(struct imgfs_work *work, void **local)
{
	struct check_prefetch *p = (struct check_prefetch *)work;
	struct check_ctx *c = p->c;
	struct imgfs_error e = { 0 };

	if (!*local)
		*local = malloc(c->bufsz);
	/* one byte decodes the pcluster; errors are the files' to report */
	if (*local)
		read_verify(c->img, &c->packed, p->logical, *local, 1, &e);
}

static int prefetch_cb(void *arg, const struct imgfs_extent *ext)
{
	struct check_ctx *c = arg;

	if (ext->kind != IMGFS_EXTENT_COMPRESSED ||
	    (ext->flags & IMGFS_EXTENT_F_RAW))
		return 0;
	if (IMGFS_VEC_RESERVE(c->prefetch, c->prefetch_cap,
			      c->nr_prefetch + 1, 64))
		return -ENOMEM;
	memset(&c->prefetch[c->nr_prefetch], 0, sizeof(*c->prefetch));
	c->prefetch[c->nr_prefetch].c = c;
	c->prefetch[c->nr_prefetch].logical = ext->logical;
	c->prefetch[c->nr_prefetch].work.run = prefetch_work;
	c->nr_prefetch++;
	return 0;
}

void check_prefetch_packed(struct check_ctx *c)
{
	struct imgfs_error e = { 0 };

	if (c->threads < 2 ||
	    (c->opts.flags & (IMGFS_CHECK_F_DIGEST | IMGFS_CHECK_F_NO_DATA)) ||
	    !(c->sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_FRAGMENTS) ||
	    !c->sb->packed_nid ||
	    imgfs_inode_read(c->img, c->sb->packed_nid, &c->packed, &e) ||
	    !imgfs_inode_is_reg(&c->packed))
		return;
	/* the array is not resized once work is queued from it */
	if (imgfs_extent_iterate(c->img, &c->packed, prefetch_cb, c, &e) < 0 ||
	    !c->nr_prefetch || !check_pool(c)) {
		c->nr_prefetch = 0;
		return;
	}
	for (size_t i = 0; i < c->nr_prefetch; i++)
		workpool_submit(c->pool, &c->prefetch[i].work);
}

void check_prefetch_free(struct check_ctx *c)
{
	for (size_t i = 0; i < c->nr_prefetch; i++)
		workpool_wait(c->pool, &c->prefetch[i].work);
	free(c->prefetch);
	c->prefetch = NULL;
	c->nr_prefetch = 0;
}

/*
 * In walk order: what extent_cb() and check_data() do around the reads,
 * for the extents the sequential check reaches (up to the first that
 * fails to read); ranges mapped beyond it are dropped.
 */
static void job_finish(struct check_ctx *c, struct check_job *job)
{
	size_t upto = job->read_ret ? job->nr_read + 1 : job->nr_ext;
	const struct imgfs_inode *inode = &job->inode;
	bool no_digest = job->amplified;
	uint64_t holes = 0;

	for (size_t i = 0; i < job->nr_ext; i++) {
		const struct imgfs_extent *ext = &job->ext[i].ext;

		if (i >= upto) {
			if (job->ext[i].range != SIZE_MAX)
				c->ranges[job->ext[i].range].kind =
					CHECK_RANGE_DEAD;
			continue;
		}
		extent_note(c, true, inode->nid, ext);
		if (ext->kind == IMGFS_EXTENT_HOLE && job->digest &&
		    !no_digest &&
		    !hole_budget(&holes, &c->hole_hashed, ext->length))
			no_digest = true;
	}
	if (job->read_ret || job->map_ret < 0) {
		report_data_error(c, inode, job->read_ret ? job->read_ret :
							    job->map_ret,
				  job->read_ret ? &job->read_err :
						  &job->map_err);
		return;
	}
	c->res->data_bytes += inode->size;
	if (job->digest) {
		job->n->have_digest = !no_digest && job->have_sha;
		memcpy(job->n->sha256, job->sha256, IMGFS_SHA256_SIZE);
		if (no_digest && !job->amplified)
			check_report(c, IMGFS_CHECK_NOTE, IMGFS_CHECK_DATA,
				     inode->nid,
				     "digest not computed: sparse areas exceed %llu bytes",
				     HOLE_DIGEST_MAX);
	}
	job->n->data_ok = true;
}

void check_data(struct check_ctx *c, const struct imgfs_inode *inode,
		struct check_node *n)
{
	struct data_scan s = { .c = c, .inode = inode, .buf = c->buf,
			       .bufsz = c->bufsz,
			       .hole_total = &c->hole_hashed };
	bool reg = imgfs_inode_is_reg(inode);
	int ret;

	add_layout_meta(c, inode);
	if (!inode->size)
		goto done;
	s.reg = reg;
	s.read = reg && !(c->opts.flags & IMGFS_CHECK_F_NO_DATA);
	if (reg && inode->size / IMGFS_CHECK_AMPLIFICATION_MAX >=
			   c->img->blksz) {
		ret = check_file_amplification(c, inode, &s);
		if (ret)
			return;
	}
	if (s.read && c->threads > 1) {
		submit_job(c, inode, n, &s);
		return;
	}
	if (s.read && (c->opts.flags & IMGFS_CHECK_F_DIGEST)) {
		s.md = sha256_new();
		if (!s.md) {
			c->fatal = error_set(c->err, -ENOMEM,
					     "cannot set up SHA-256");
			return;
		}
	}
	ret = imgfs_extent_iterate(c->img, inode, extent_cb, &s, &s.e);
	if (ret < 0) {
		report_data_error(c, inode, ret, &s.e);
		EVP_MD_CTX_free(s.md);
		return;
	}
	if (s.read)
		c->res->data_bytes += inode->size;
	if (s.md) {
		unsigned int len = 0;

		n->have_digest = !s.no_digest &&
				 EVP_DigestFinal_ex(s.md, n->sha256, &len);
		if (s.no_digest && !s.amplified)
			check_report(c, IMGFS_CHECK_NOTE, IMGFS_CHECK_DATA,
				     inode->nid,
				     "digest not computed: sparse areas exceed %llu bytes",
				     HOLE_DIGEST_MAX);
		EVP_MD_CTX_free(s.md);
	}
	if (imgfs_inode_is_symlink(inode))
		check_symlink(c, inode);
done:
	if (reg && !inode->size && (c->opts.flags & IMGFS_CHECK_F_DIGEST))
		n->have_digest = !imgfs_sha256("", 0, n->sha256);
	n->data_ok = true;
}
