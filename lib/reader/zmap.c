// SPDX-License-Identifier: MIT
/*
 * zmap.c - compressed layouts (COMPRESSED_FULL / COMPRESSED_COMPACT):
 * mapping of file offsets to pclusters through the map header and the
 * lcluster indexes (docs/format.md §9). The per-image configuration it checks
 * against is set up in lib/reader/zconfig.c.
 *
 * Images are hostile: every index value is bounds-checked, look-back chains
 * and forward scans are capped by the largest extent the kernel accepts
 * (12 MiB), and a mapping that does not contain the requested offset is
 * reported as corruption rather than trusted.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/zdata.h"
#include "util/error.h"

/* Index bytes are read through a window of this size. */
#define WIN_SIZE 4096u

/* Lowest number of lo bits in a compact entry (CBLKCNT needs 12). */
#define COMPACT_MIN_LOBITS 12u

/* One compressed inode being mapped: its header and an index window. */
struct zmap {
	struct imgfs_image *img;
	const struct imgfs_inode *inode;
	const struct imgfs_zstate *zs;
	struct imgfs_error *err;
	uint64_t hpos; /* map header */
	bool whole_fragment;
	uint16_t advise;
	uint8_t alg[2]; /* HEAD1, HEAD2 */
	unsigned int lbits; /* lclusterbits */
	uint64_t nlcl; /* lclusters of the file */
	uint64_t nidx; /* index entries on disk */
	uint64_t fragoff;
	unsigned int idata_size; /* inline tail pcluster, 0 if none */
	/* End of the extent as the kernel measures it when reading its last
	 * lcluster: not clamped to EOF unless a head bounds it. */
	uint64_t kend;
	bool fragment;
	/* compact layout */
	uint64_t ebase;
	uint64_t c4init;
	uint64_t c2;
	/* window of index bytes */
	uint64_t win_pos;
	size_t win_len;
	uint8_t win[WIN_SIZE];
};

/* One decoded lcluster record. */
struct zrec {
	unsigned int type;
	unsigned int ofs; /* head: clusterofs */
	unsigned int d0; /* NONHEAD: look-back distance (1 for CBLKCNT) */
	unsigned int d1; /* NONHEAD: look-ahead distance to the next head */
	bool cblk; /* NONHEAD holding CBLKCNT */
	unsigned int cblkcnt;
	uint64_t pblk; /* head: first block of the pcluster */
	bool partial; /* head: PARTIAL_REF */
	uint64_t end; /* byte after the record (after its pack if compact) */
};

static bool is_head(unsigned int type)
{
	return type != IMGFS_LCLUSTER_NONHEAD;
}

static int zcorrupt(struct zmap *zm, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Report index corruption of the inode being mapped. */
static int zcorrupt(struct zmap *zm, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_set(zm->err, -IMGFS_EFSCORRUPTED,
			 "nid %llu: compressed index: %s",
			 (unsigned long long)zm->inode->nid, msg);
}

/* Point *@p at @len (<= 64) index bytes at image offset @pos. */
static int zfetch(struct zmap *zm, uint64_t pos, size_t len,
		  const uint8_t **p)
{
	uint64_t start;
	size_t n;
	int ret;

	if (zm->win_len && pos >= zm->win_pos &&
	    pos - zm->win_pos + len <= zm->win_len) {
		*p = zm->win + (pos - zm->win_pos);
		return 0;
	}
	if (!img_range_ok(zm->img, pos, len))
		return zcorrupt(zm, "index bytes at %llu are beyond the end of the image",
				(unsigned long long)pos);
	/*
	 * Up to half a window, not past the 4 KiB unit: the image's small-read
	 * cache (cache.c) serves that, and the walk that mapped the file has
	 * just read the same unit. Only an index straddling two units takes a
	 * whole window straight from the file.
	 */
	start = pos & ~63ull;
	n = (size_t)(((start | 4095u) + 1) - start);
	if (n > WIN_SIZE / 2)
		n = WIN_SIZE / 2;
	if (pos + len > start + n)
		n = WIN_SIZE;
	if (zm->img->size - start < n)
		n = (size_t)(zm->img->size - start);
	zm->win_len = 0;
	ret = img_read(zm->img, zm->win, n, start, "compressed index",
		       zm->inode->nid, zm->err);
	if (ret)
		return ret;
	zm->win_pos = start;
	zm->win_len = n;
	*p = zm->win + (pos - start);
	return 0;
}

/* ---- full indexes (docs/format.md §9.5) */

static int load_full(struct zmap *zm, uint64_t lcn, struct zrec *r)
{
	uint64_t pos = zm->hpos + 16 + lcn * IMGFS_LCLUSTER_INDEX_SIZE;
	struct imgfs_lcluster_index li;
	const uint8_t *p;
	unsigned int adv;
	int ret;

	ret = zfetch(zm, pos, IMGFS_LCLUSTER_INDEX_SIZE, &p);
	if (ret)
		return ret;
	lcluster_index_decode(p, &li);
	adv = li.di_advise;
	r->type = adv & IMGFS_LI_TYPE_MASK;
	r->end = pos + IMGFS_LCLUSTER_INDEX_SIZE;
	if (r->type == IMGFS_LCLUSTER_NONHEAD) {
		r->d0 = li.di_delta[0];
		r->d1 = li.di_delta[1];
		if (!(r->d0 & IMGFS_LI_D0_CBLKCNT))
			return 0;
		if (!(zm->advise & (IMGFS_ADVISE_BIG_PCLUSTER_1 |
				    IMGFS_ADVISE_BIG_PCLUSTER_2)))
			return zcorrupt(zm, "lcluster %llu holds CBLKCNT but big pclusters are off",
					(unsigned long long)lcn);
		r->cblk = true;
		r->cblkcnt = r->d0 & ~IMGFS_LI_D0_CBLKCNT;
		r->d0 = 1;
		return 0;
	}
	r->partial = adv & IMGFS_LI_PARTIAL_REF;
	r->ofs = li.di_clusterofs;
	r->pblk = li.di_blkaddr;
	return 0;
}

/* ---- compact indexes (docs/format.md §9.6) */

/* Entry @i of a pack: the lo bits, and its type in *@type. */
static unsigned int pack_entry(const uint8_t *pack, unsigned int ebits,
			       unsigned int lobits, unsigned int i,
			       unsigned int *type)
{
	return compact_entry_decode(pack, ebits, lobits, i, type);
}

/* Block of head entry @i: the pack's base plus what precedes it. */
static int pack_pblk(struct zmap *zm, const uint8_t *pack, unsigned int psz,
		     unsigned int ebits, unsigned int lobits, unsigned int i,
		     uint64_t *pblk)
{
	bool big = zm->advise & IMGFS_ADVISE_BIG_PCLUSTER_1;
	uint64_t nblk = big ? 0 : 1;
	unsigned int j, type, ntype, lo;

	for (j = 0; j < i; j++) {
		lo = pack_entry(pack, ebits, lobits, j, &type);
		if (!big) {
			nblk += is_head(type);
			continue;
		}
		if (is_head(type)) {
			/* a head followed by CBLKCNT is counted there */
			lo = pack_entry(pack, ebits, lobits, j + 1, &ntype);
			nblk += !(ntype == IMGFS_LCLUSTER_NONHEAD &&
				  (lo & IMGFS_LI_D0_CBLKCNT));
		} else if (lo & IMGFS_LI_D0_CBLKCNT) {
			nblk += lo & ~IMGFS_LI_D0_CBLKCNT;
		} else if (lo <= 1) {
			return zcorrupt(zm, "non-head entry with distance %u in a big-pcluster pack",
					lo);
		}
	}
	*pblk = compact_blkaddr_decode(pack, psz) + nblk;
	return 0;
}

/*
 * delta1 of NONHEAD entry @i: the entries up to the next head in the pack,
 * or to the pack's end plus what its last entry stores (docs/format.md §9.6).
 */
static unsigned int pack_delta1(const uint8_t *pack, unsigned int vcnt,
				unsigned int ebits, unsigned int lobits,
				unsigned int i)
{
	unsigned int k, lo = 0, type;

	for (k = i; k < vcnt; k++) {
		lo = pack_entry(pack, ebits, lobits, k, &type);
		if (is_head(type))
			return k - i;
	}
	if (lo & IMGFS_LI_D0_CBLKCNT)
		return vcnt - i;
	return lo ? vcnt - i + lo - 1 : vcnt - i - 1;
}

static int load_compact(struct zmap *zm, uint64_t lcn, struct zrec *r)
{
	unsigned int shift = 2, vcnt, psz, ebits, lobits, i, lo, type;
	uint64_t pos = zm->ebase, n = lcn;
	const uint8_t *pack;
	int ret;

	if (n >= zm->c4init) {
		pos += zm->c4init * 4;
		n -= zm->c4init;
		if (n < zm->c2) {
			shift = 1;
		} else {
			pos += zm->c2 * 2;
			n -= zm->c2;
		}
	}
	pos += n << shift;
	vcnt = shift == 2 ? 2 : 16;
	if (shift == 1 && zm->lbits > 12)
		return error_set(
			zm->err, -EOPNOTSUPP,
			"nid %llu: 2-byte compact indexes with lclusterbits %u",
			(unsigned long long)zm->inode->nid, zm->lbits);
	psz = vcnt << shift;
	ret = zfetch(zm, pos & ~(uint64_t)(psz - 1), psz, &pack);
	if (ret)
		return ret;
	r->end = (pos & ~(uint64_t)(psz - 1)) + psz;
	ebits = (psz - 4) * 8 / vcnt;
	lobits = zm->lbits > COMPACT_MIN_LOBITS ? zm->lbits : COMPACT_MIN_LOBITS;
	i = (unsigned int)(pos & (psz - 1)) >> shift;
	lo = pack_entry(pack, ebits, lobits, i, &r->type);
	if (is_head(r->type)) {
		r->ofs = lo;
		return pack_pblk(zm, pack, psz, ebits, lobits, i, &r->pblk);
	}
	r->d1 = pack_delta1(pack, vcnt, ebits, lobits, i);
	if (lo & IMGFS_LI_D0_CBLKCNT) {
		if (!(zm->advise & IMGFS_ADVISE_BIG_PCLUSTER_1))
			return zcorrupt(zm, "lcluster %llu holds CBLKCNT but big pclusters are off",
					(unsigned long long)lcn);
		r->cblk = true;
		r->cblkcnt = lo & ~IMGFS_LI_D0_CBLKCNT;
		r->d0 = 1;
		return 0;
	}
	if (i + 1 != vcnt) {
		r->d0 = lo;
		return 0;
	}
	/* The last entry of a pack holds delta1: derive delta0. */
	lo = pack_entry(pack, ebits, lobits, i - 1, &type);
	if (is_head(type))
		r->d0 = 1;
	else if (lo & IMGFS_LI_D0_CBLKCNT)
		r->d0 = 2;
	else
		r->d0 = lo + 1;
	return 0;
}

static int load_rec(struct zmap *zm, uint64_t lcn, struct zrec *r)
{
	int ret;

	memset(r, 0, sizeof(*r));
	if (lcn >= zm->nidx)
		return zcorrupt(zm, "lcluster %llu is past the %llu index entries",
				(unsigned long long)lcn,
				(unsigned long long)zm->nidx);
	if (zm->inode->layout == IMGFS_LAYOUT_COMPRESSED_FULL)
		ret = load_full(zm, lcn, r);
	else
		ret = load_compact(zm, lcn, r);
	if (ret)
		return ret;
	if (is_head(r->type) && r->ofs >> zm->lbits)
		return zcorrupt(zm, "lcluster %llu: clusterofs %u is not below the lcluster size %u",
				(unsigned long long)lcn, r->ofs,
				1u << zm->lbits);
	return 0;
}

/* ---- header (docs/format.md §9.2, §9.3) */

static int setup_compact(struct zmap *zm)
{
	if (zm->lbits > 14)
		return error_set(
			zm->err, -EOPNOTSUPP,
			"nid %llu: compact indexes with lclusterbits %u",
			(unsigned long long)zm->inode->nid, zm->lbits);
	if (!(zm->advise & IMGFS_ADVISE_BIG_PCLUSTER_1) !=
	    !(zm->advise & IMGFS_ADVISE_BIG_PCLUSTER_2))
		return zcorrupt(zm, "BIG_PCLUSTER_1 and _2 differ (advise 0x%x)",
				zm->advise);
	zm->nidx = (zm->inode->size + zm->img->blksz - 1) >> zm->img->blkszbits;
	zm->ebase = zm->hpos + IMGFS_MAP_HEADER_SIZE;
	zm->c4init = ((32 - zm->ebase % 32) / 4) & 7;
	zm->c2 = 0;
	if ((zm->advise & IMGFS_ADVISE_COMPACTED_2B) && zm->c4init < zm->nidx)
		zm->c2 = (zm->nidx - zm->c4init) & ~15ull;
	return 0;
}

static int setup_header(struct zmap *zm, const struct imgfs_map_header *h)
{
	const struct imgfs_sb_info *sb = &zm->img->sb;

	zm->advise = h->h_advise;
	zm->alg[0] = h->h_algorithmtype & 15;
	zm->alg[1] = h->h_algorithmtype >> 4;
	zm->lbits = zm->img->blkszbits + (h->h_clusterbits & 15);
	if (zm->inode->layout == IMGFS_LAYOUT_COMPRESSED_FULL &&
	    (zm->advise & IMGFS_ADVISE_EXTENTS))
		return error_set(
			zm->err, -EOPNOTSUPP,
			"nid %llu: 48-bit encoded extents are not supported",
			(unsigned long long)zm->inode->nid);
	if (zm->advise & IMGFS_ADVISE_FRAGMENT_PCLUSTER) {
		zm->fragment = true;
		zm->fragoff = h->h_fragmentoff;
	} else if (zm->advise & IMGFS_ADVISE_INLINE_PCLUSTER) {
		zm->idata_size = h->h_idata_size;
	}
	if (!(sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_BIG_PCLUSTER) &&
	    (zm->advise & (IMGFS_ADVISE_BIG_PCLUSTER_1 |
			   IMGFS_ADVISE_BIG_PCLUSTER_2)))
		return zcorrupt(zm, "big pcluster advise 0x%x without the superblock feature",
				zm->advise);
	zm->nlcl = ((zm->inode->size - 1) >> zm->lbits) + 1;
	if (zm->inode->layout == IMGFS_LAYOUT_COMPRESSED_COMPACT)
		return setup_compact(zm);
	zm->nidx = zm->nlcl;
	return 0;
}

static int zmap_setup(struct zmap *zm, struct imgfs_image *img,
		      const struct imgfs_inode *inode, struct imgfs_error *err)
{
	const struct imgfs_zstate *zs = img->zpriv;
	struct imgfs_map_header mh;
	const uint8_t *h;
	int ret;

	zm->img = img;
	zm->inode = inode;
	zm->zs = zs;
	zm->err = err;
	zm->win_len = 0;
	if (!zs)
		return error_set(err, -EINVAL,
				 "nid %llu: compression state missing",
				 (unsigned long long)inode->nid);
	if (zs->cfg_err)
		return error_set(err, zs->cfg_err, "nid %llu: %s",
				 (unsigned long long)inode->nid, zs->cfg_msg);
	zm->hpos = (inode->data_pos + 7) & ~7ull;
	ret = zfetch(zm, zm->hpos, IMGFS_MAP_HEADER_SIZE, &h);
	if (ret)
		return ret;
	map_header_decode(h, &mh);
	if (mh.fragment_inode) {
		zm->whole_fragment = true;
		zm->fragoff = mh.fragment_off;
		zm->nlcl = zm->nidx = 0;
	} else {
		ret = setup_header(zm, &mh);
		if (ret)
			return ret;
	}
	if ((zm->whole_fragment || zm->fragment) &&
	    (img->sb.feature_incompat & IMGFS_FEATURE_INCOMPAT_FRAGMENTS) &&
	    inode->nid == img->sb.packed_nid)
		return zcorrupt(zm, "the packed inode refers to a fragment");
	return 0;
}

/* ---- extents (docs/format.md §9.12) */

/* Longest distance in lclusters an extent of at most 12 MiB can span. */
static uint64_t max_span(const struct zmap *zm)
{
	return ((uint64_t)IMGFS_MAX_EXTENT_SIZE >> zm->lbits) + 1;
}

/* Find the head record of the extent containing @offset. */
static int find_head(struct zmap *zm, uint64_t offset, uint64_t *head,
		     struct zrec *r)
{
	uint64_t lcn = offset >> zm->lbits, walked = 0;
	unsigned int o = (unsigned int)(offset & ((1ull << zm->lbits) - 1));
	unsigned int d;
	int ret;

	ret = load_rec(zm, lcn, r);
	if (ret)
		return ret;
	if (is_head(r->type) && o >= r->ofs) {
		*head = lcn;
		return 0;
	}
	if (is_head(r->type) && !lcn)
		return zcorrupt(zm, "lcluster 0 starts at %u, not 0", r->ofs);
	d = is_head(r->type) ? 1 : r->d0;
	for (;;) {
		if (!d || d > lcn)
			return zcorrupt(zm, "bogus look-back distance %u at lcluster %llu",
					d, (unsigned long long)lcn);
		walked += d;
		if (walked > max_span(zm))
			return zcorrupt(zm, "look-back from byte %llu passes %llu lclusters (extent over 12 MiB)",
					(unsigned long long)offset,
					(unsigned long long)walked);
		lcn -= d;
		ret = load_rec(zm, lcn, r);
		if (ret)
			return ret;
		if (is_head(r->type))
			break;
		d = r->d0;
	}
	*head = lcn;
	return 0;
}

/*
 * End of the extent whose head is @head: the next head's start, or EOF.
 * The NONHEAD records on the way are checked as the kernel would use them
 * from any offset: delta0 must lead back to @head without passing it (the
 * records between are checked already, so one step suffices), delta1 must
 * not jump over the next head (it sizes read-ahead).
 */
static int find_end(struct zmap *zm, uint64_t head, uint64_t *end)
{
	uint64_t size = zm->inode->size, lcn, reach = 0, from = 0;
	struct zrec r;
	int ret;

	for (lcn = head + 1; lcn < zm->nlcl; lcn++) {
		if (lcn - head > max_span(zm))
			return zcorrupt(zm, "extent at lcluster %llu has no end within 12 MiB",
					(unsigned long long)head);
		ret = load_rec(zm, lcn, &r);
		if (ret)
			return ret;
		if (is_head(r.type)) {
			if (reach > lcn)
				return zcorrupt(zm, "delta1 of lcluster %llu jumps over the head at lcluster %llu",
						(unsigned long long)from,
						(unsigned long long)lcn);
			zm->kend = (lcn << zm->lbits) + r.ofs;
			*end = zm->kend < size ? zm->kend : size;
			return 0;
		}
		if (!r.d0 || r.d0 > lcn - head)
			return zcorrupt(zm, "bogus look-back distance %u at lcluster %llu (extent head at %llu)",
					r.d0, (unsigned long long)lcn,
					(unsigned long long)head);
		if (lcn + (r.d1 ? r.d1 : 1) > reach) {
			reach = lcn + (r.d1 ? r.d1 : 1);
			from = lcn;
		}
	}
	*end = size;
	zm->kend = zm->nlcl << zm->lbits;
	if (zm->idata_size && head + 1 == zm->nlcl)
		zm->kend = size;
	return 0;
}

static int fragment_extent(struct zmap *zm, struct imgfs_extent *ext)
{
	const struct imgfs_zstate *zs = zm->zs;
	const struct imgfs_sb_info *sb = &zm->img->sb;

	ext->kind = IMGFS_EXTENT_FRAGMENT;
	ext->pos = zm->fragoff;
	ext->plen = ext->length;
	if (!(sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_FRAGMENTS) ||
	    !sb->packed_nid)
		return zcorrupt(zm, "bytes %llu..%llu are a fragment but the image has no packed inode",
				(unsigned long long)ext->logical,
				(unsigned long long)(ext->logical + ext->length));
	if (!zs->have_packed)
		return error_set(
			zm->err,
			zs->packed_err ? zs->packed_err : -IMGFS_EFSCORRUPTED,
			"nid %llu: fragment in packed inode %llu: %s",
			(unsigned long long)zm->inode->nid,
			(unsigned long long)sb->packed_nid, zs->packed_msg);
	if (ext->pos > zs->packed.size ||
	    ext->length > zs->packed.size - ext->pos)
		return zcorrupt(zm, "fragment %llu+%llu is beyond the packed inode (%llu bytes)",
				(unsigned long long)ext->pos,
				(unsigned long long)ext->length,
				(unsigned long long)zs->packed.size);
	return 0;
}

/* The inline tail pcluster sits right after the last lcluster's record. */
static int inline_extent(struct zmap *zm, struct imgfs_extent *ext)
{
	uint32_t bs = zm->img->blksz;
	struct zrec r;
	int ret;

	ret = load_rec(zm, zm->nlcl - 1, &r);
	if (ret)
		return ret;
	ext->pos = r.end;
	ext->plen = zm->idata_size;
	ext->flags |= IMGFS_EXTENT_F_INLINE;
	if ((ext->pos & (bs - 1)) + ext->plen > bs)
		return zcorrupt(zm, "inline pcluster (%u bytes at %llu) crosses a block boundary",
				zm->idata_size, (unsigned long long)ext->pos);
	if (!img_range_ok(zm->img, ext->pos, ext->plen))
		return zcorrupt(zm, "inline pcluster at %llu is beyond the end of the image",
				(unsigned long long)ext->pos);
	return 0;
}

/* Pcluster size in blocks of the head at @head (docs/format.md §9.7). */
static int pcluster_blocks(struct zmap *zm, uint64_t head,
			   const struct zrec *hr, uint64_t *nblk)
{
	uint16_t flag = hr->type == IMGFS_LCLUSTER_HEAD1 ?
				IMGFS_ADVISE_BIG_PCLUSTER_1 :
				IMGFS_ADVISE_BIG_PCLUSTER_2;
	struct zrec r;
	int ret;

	*nblk = 1;
	if (!(zm->advise & flag) ||
	    ((head + 1) << zm->lbits) >= zm->inode->size)
		return 0;
	ret = load_rec(zm, head + 1, &r);
	if (ret)
		return ret;
	if (r.type == IMGFS_LCLUSTER_NONHEAD && r.d0 != 1)
		return zcorrupt(zm, "bogus CBLKCNT at lcluster %llu (distance %u)",
				(unsigned long long)(head + 1), r.d0);
	if (r.cblk && r.cblkcnt)
		*nblk = r.cblkcnt;
	return 0;
}

static int block_extent(struct zmap *zm, uint64_t head, const struct zrec *hr,
			struct imgfs_extent *ext)
{
	const struct imgfs_zconfig *cfg = &zm->zs->cfg;
	uint64_t nblk;
	int ret;

	ret = pcluster_blocks(zm, head, hr, &nblk);
	if (ret)
		return ret;
	ext->pos = hr->pblk << zm->img->blkszbits;
	ext->plen = nblk << zm->img->blkszbits;
	if (ext->plen > IMGFS_MAX_PCLUSTER_SIZE)
		return zcorrupt(zm, "pcluster at block %llu is %llu blocks (over 1 MiB)",
				(unsigned long long)hr->pblk,
				(unsigned long long)nblk);
	if (ext->algorithm == IMGFS_COMPR_LZ4 &&
	    !(ext->flags & IMGFS_EXTENT_F_RAW) &&
	    nblk > cfg->lz4_max_pclusterblks)
		return zcorrupt(zm, "LZ4 pcluster at block %llu is %llu blocks, the image allows %u",
				(unsigned long long)hr->pblk,
				(unsigned long long)nblk,
				cfg->lz4_max_pclusterblks);
	if (!img_range_ok(zm->img, ext->pos, ext->plen))
		return zcorrupt(zm, "pcluster at block %llu (%llu blocks) is beyond the end of the image",
				(unsigned long long)hr->pblk,
				(unsigned long long)nblk);
	return 0;
}

/* Algorithm of a head record, checked against the image's set. */
static int head_algorithm(struct zmap *zm, const struct zrec *hr,
			  struct imgfs_extent *ext)
{
	unsigned int alg;

	if (hr->type == IMGFS_LCLUSTER_PLAIN) {
		ext->flags |= IMGFS_EXTENT_F_RAW;
		if (zm->advise & IMGFS_ADVISE_INTERLACED_PCLUSTER)
			ext->flags |= IMGFS_EXTENT_F_INTERLACED;
		return 0;
	}
	alg = zm->alg[hr->type == IMGFS_LCLUSTER_HEAD2];
	ext->algorithm = alg;
	if (hr->partial)
		ext->flags |= IMGFS_EXTENT_F_PARTIAL;
	if (alg >= IMGFS_COMPR_MAX)
		return error_set(zm->err, -EOPNOTSUPP,
				 "nid %llu: unknown compression algorithm %u",
				 (unsigned long long)zm->inode->nid, alg);
	if (!(zm->zs->cfg.algs & (1u << alg)))
		return zcorrupt(zm,
				"algorithm %s is not enabled in the superblock",
				zalg_name(alg));
	if (zm->kend - ext->logical > IMGFS_MAX_EXTENT_SIZE)
		return zcorrupt(zm, "extent at byte %llu spans %llu bytes (over 12 MiB)",
				(unsigned long long)ext->logical,
				(unsigned long long)(zm->kend - ext->logical));
	return 0;
}

static int map_physical(struct zmap *zm, uint64_t head, const struct zrec *hr,
			struct imgfs_extent *ext)
{
	bool tail = ext->logical + ext->length == zm->inode->size;
	int ret;

	if (zm->fragment && tail) {
		zm->fragoff |= zm->inode->layout == IMGFS_LAYOUT_COMPRESSED_FULL ?
				       hr->pblk << 32 : 0;
		return fragment_extent(zm, ext);
	}
	ext->kind = IMGFS_EXTENT_COMPRESSED;
	ret = head_algorithm(zm, hr, ext);
	if (ret)
		return ret;
	if (zm->idata_size && tail) {
		ret = inline_extent(zm, ext);
		/* an inline tail is never interlaced: it has no block */
		ext->flags &= ~IMGFS_EXTENT_F_INTERLACED;
	} else {
		ret = block_extent(zm, head, hr, ext);
	}
	if (ret)
		return ret;
	/*
	 * The kernel sizes a PLAIN extent up to the end of the lcluster it
	 * reads in, even past EOF, unless the next head bounds it.
	 */
	if ((ext->flags & IMGFS_EXTENT_F_RAW) &&
	    zm->kend - ext->logical > ext->plen)
		return zcorrupt(zm, "uncompressed extent at byte %llu spans %llu bytes, more than its pcluster (%llu bytes)",
				(unsigned long long)ext->logical,
				(unsigned long long)(zm->kend - ext->logical),
				(unsigned long long)ext->plen);
	if (zm->img->sb.feature_incompat & IMGFS_FEATURE_INCOMPAT_DEDUPE)
		ext->flags |= IMGFS_EXTENT_F_SHARED;
	return 0;
}

static int map_offset(struct zmap *zm, uint64_t offset,
		      struct imgfs_extent *ext)
{
	uint64_t head = 0, end = 0;
	struct zrec hr;
	int ret;

	if (zm->whole_fragment) {
		ext->logical = 0;
		ext->length = zm->inode->size;
		return fragment_extent(zm, ext);
	}
	ret = find_head(zm, offset, &head, &hr);
	if (!ret)
		ret = find_end(zm, head, &end);
	if (ret)
		return ret;
	ext->logical = (head << zm->lbits) + hr.ofs;
	if (end <= offset)
		return zcorrupt(zm, "byte %llu maps to the extent %llu..%llu, which does not contain it",
				(unsigned long long)offset,
				(unsigned long long)ext->logical,
				(unsigned long long)end);
	ext->length = end - ext->logical;
	return map_physical(zm, head, &hr, ext);
}

/* The mapping of an inode never changes: remember the last extent. */
static bool map_cached(struct imgfs_zstate *zs, const struct imgfs_inode *inode,
		       uint64_t offset, struct imgfs_extent *ext)
{
	bool hit;

	pthread_mutex_lock(&zs->lock);
	hit = zs->map_valid && zs->map_nid == inode->nid &&
	      zs->map_size == inode->size && offset >= zs->map_ext.logical &&
	      offset - zs->map_ext.logical < zs->map_ext.length;
	if (hit)
		*ext = zs->map_ext;
	pthread_mutex_unlock(&zs->lock);
	return hit;
}

static void map_remember(struct imgfs_zstate *zs,
			 const struct imgfs_inode *inode,
			 const struct imgfs_extent *ext)
{
	pthread_mutex_lock(&zs->lock);
	zs->map_valid = true;
	zs->map_nid = inode->nid;
	zs->map_size = inode->size;
	zs->map_ext = *ext;
	pthread_mutex_unlock(&zs->lock);
}

int z_map(struct imgfs_image *img, const struct imgfs_inode *inode,
	  uint64_t offset, struct imgfs_extent *ext, struct imgfs_error *err)
{
	struct imgfs_zstate *zs = img->zpriv;
	struct zmap *zm;
	int ret;

	memset(ext, 0, sizeof(*ext));
	if (zs && map_cached(zs, inode, offset, ext))
		return 0;
	zm = calloc(1, sizeof(*zm));
	if (!zm)
		return error_set(err, -ENOMEM, "out of memory");
	ret = zmap_setup(zm, img, inode, err);
	if (!ret)
		ret = map_offset(zm, offset, ext);
	if (!ret)
		map_remember(zs, inode, ext);
	free(zm);
	return ret;
}

int z_index_range(struct imgfs_image *img, const struct imgfs_inode *inode,
		  uint64_t *start, uint64_t *end, struct imgfs_error *err)
{
	struct zmap *zm = calloc(1, sizeof(*zm));
	struct zrec r;
	int ret;

	if (!zm)
		return error_set(err, -ENOMEM, "out of memory");
	ret = zmap_setup(zm, img, inode, err);
	if (ret)
		goto out;
	*start = zm->hpos;
	if (zm->whole_fragment) {
		*end = zm->hpos + 16;
	} else if (!inode->size) {
		*end = zm->hpos + IMGFS_MAP_HEADER_SIZE;
	} else {
		ret = load_rec(zm, zm->nidx - 1, &r);
		*end = r.end;
	}
out:
	free(zm);
	return ret;
}
