// SPDX-License-Identifier: MIT
/*
 * Compressed inode maps. The full form is written straight from the
 * extent list (docs/format.md §9.5); the compact form is derived
 * from it pack by pack, and every pack is checked against the way the
 * kernel recomputes block addresses, so a map that compact indexes cannot
 * express is reported instead of written wrong.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "writer/compress_map.h"

#define FULL_INDEX_START 16u /* header + 8 reserved bytes */
#define COMPACT_LOBITS 12u /* max(lclusterbits, 12) with L <= 4096 */

static void put_header(uint8_t *h, const struct imgfs_zmap_info *mi,
		       bool compact)
{
	struct imgfs_map_header mh = {
		.h_algorithmtype = (uint8_t)mi->alg,
		.h_clusterbits = 0, /* lclusters are one block */
	};

	if (compact)
		mh.h_advise |= IMGFS_ADVISE_COMPACTED_2B;
	if (mi->big)
		mh.h_advise |= IMGFS_ADVISE_BIG_PCLUSTER_1 |
			       IMGFS_ADVISE_BIG_PCLUSTER_2;
	if (mi->fragment) {
		mh.h_advise |= IMGFS_ADVISE_FRAGMENT_PCLUSTER;
		mh.h_fragmentoff = mi->fragoff;
	} else if (mi->idata_size) {
		mh.h_advise |= IMGFS_ADVISE_INLINE_PCLUSTER;
		mh.h_idata_size = mi->idata_size;
	}
	map_header_encode(&mh, h);
}

static void put_head(uint8_t *rec, unsigned int type, uint32_t ofs,
		     uint32_t blkaddr)
{
	struct imgfs_lcluster_index li = {
		.di_advise = (uint16_t)type,
		.di_clusterofs = (uint16_t)ofs,
		.di_blkaddr = blkaddr,
	};

	lcluster_index_encode(&li, rec);
}

static void put_nonhead(uint8_t *rec, uint32_t d0, uint32_t d1)
{
	struct imgfs_lcluster_index li = {
		.di_advise = IMGFS_LCLUSTER_NONHEAD,
		.di_delta = { (uint16_t)d0, (uint16_t)d1 },
	};

	lcluster_index_encode(&li, rec);
}

static uint32_t min_u32(uint64_t a, uint32_t b)
{
	return a < b ? (uint32_t)a : b;
}

/* Records of one extent: its head and the NONHEADs up to @stop. */
static int put_extent(const struct imgfs_zmap_info *mi, uint8_t *recs,
		      const struct imgfs_zext *x, uint64_t end, uint64_t nlc)
{
	unsigned int bits = mi->blkszbits;
	uint64_t h = x->lstart >> bits;
	uint64_t stop = end >> bits;

	if (stop > nlc)
		stop = nlc;
	if (x->nblk > IMGFS_ZMAP_MAX_DELTA || (x->nblk > 1 && !mi->big) ||
	    (x->nblk > 1 && stop < h + 2))
		return -EINVAL;
	/*
	 * A fragment's head must not be PLAIN (the kernel would compare its
	 * length with a pcluster it does not have); in the full form its
	 * address field holds the high half of the fragment offset: 0.
	 */
	if (!x->nblk && mi->fragment)
		put_head(recs + 8 * h, IMGFS_LCLUSTER_HEAD1,
			 (uint32_t)(x->lstart & ((1u << bits) - 1)), 0);
	else
		put_head(recs + 8 * h,
			 x->plain ? IMGFS_LCLUSTER_PLAIN : IMGFS_LCLUSTER_HEAD1,
			 (uint32_t)(x->lstart & ((1u << bits) - 1)), x->pblk);
	for (uint64_t j = h + 1; j < stop; j++) {
		uint32_t d0 = min_u32(j - h, IMGFS_ZMAP_MAX_DELTA);

		if (j == h + 1 && mi->big)
			d0 = IMGFS_LI_D0_CBLKCNT | (x->nblk ? x->nblk : 1u);
		put_nonhead(recs + 8 * j, d0,
			    min_u32(stop - j, IMGFS_ZMAP_MAX_DELTA));
	}
	return 0;
}

int zmap_build_full(const struct imgfs_zmap_info *mi,
		    const struct imgfs_zext *ext, size_t n, uint8_t **map,
		    uint32_t *len)
{
	unsigned int bits = mi->blkszbits;
	uint32_t lmask = (1u << bits) - 1;
	uint64_t nlc = (mi->size + lmask) >> bits;
	uint8_t *buf, *recs;
	int ret = -EINVAL;

	if (!n || ext[0].lstart || !mi->size ||
	    nlc > (UINT32_MAX - FULL_INDEX_START) / 8)
		return -EINVAL;
	buf = calloc(1, FULL_INDEX_START + 8 * nlc);
	if (!buf)
		return -ENOMEM;
	put_header(buf, mi, false);
	recs = buf + FULL_INDEX_START;
	for (size_t i = 0; i < n; i++) {
		uint64_t end = i + 1 < n ? ext[i + 1].lstart : mi->size;

		if (end <= ext[i].lstart || end > mi->size ||
		    (!ext[i].nblk && i + 1 != n) ||
		    (i && ext[i].lstart >> bits == ext[i - 1].lstart >> bits))
			goto bad;
		if (put_extent(mi, recs, &ext[i], end, nlc))
			goto bad;
	}
	/* an EOF head terminates the last extent inside lcluster N-1 */
	if ((mi->size & lmask) && ext[n - 1].lstart >> bits < nlc - 1)
		put_head(recs + 8 * (nlc - 1), IMGFS_LCLUSTER_PLAIN,
			 (uint32_t)(mi->size & lmask), 0);
	*map = buf;
	*len = (uint32_t)(FULL_INDEX_START + 8 * nlc);
	return 0;
bad:
	free(buf);
	return ret;
}

int zmap_whole_fragment(uint64_t off, uint8_t **map, uint32_t *len)
{
	struct imgfs_map_header mh = { .fragment_inode = true,
				       .fragment_off = off };
	uint8_t *buf = calloc(1, FULL_INDEX_START);

	if (!buf)
		return -ENOMEM;
	map_header_encode(&mh, buf);
	*map = buf;
	*len = FULL_INDEX_START;
	return 0;
}

/* Entries in the leading 4-byte packs that align the 2-byte region. */
static unsigned int initial_4b(unsigned int ebase_mod)
{
	return ((32 - ebase_mod % 32) / 4) & 7;
}

struct regions {
	uint64_t c4i, c2, c4tail; /* entries in each region */
};

static struct regions split(uint64_t nlc, unsigned int ebase_mod)
{
	struct regions r = { 0 };

	r.c4i = initial_4b(ebase_mod);
	if (r.c4i >= nlc) {
		r.c4i = nlc;
		return r;
	}
	r.c2 = (nlc - r.c4i) / 16 * 16;
	r.c4tail = nlc - r.c4i - r.c2;
	return r;
}

uint32_t zmap_compact_size(uint64_t nlc, unsigned int ebase_mod)
{
	struct regions r = split(nlc, ebase_mod);

	return (uint32_t)(8 + 8 * ((r.c4i + 1) / 2) + 2 * r.c2 +
			  8 * ((r.c4tail + 1) / 2));
}

uint32_t zmap_compact_size_max(uint64_t nlc)
{
	uint32_t max = 0;

	for (unsigned int m = 0; m < 32; m += 8) {
		uint32_t s = zmap_compact_size(nlc, m);

		if (s > max)
			max = s;
	}
	return max;
}

/* One lcluster as the compact encoder sees it. */
struct centry {
	uint8_t type;
	uint16_t d0; /* head: clusterofs; NONHEAD: delta0 or CBLKCNT */
	uint16_t d1;
	uint32_t pblk;
	uint64_t head; /* index of the head whose extent covers it */
	bool addr_used; /* a head whose block address is read */
};

struct pack {
	const struct centry *e; /* first entry; entries beyond nlc absent */
	uint64_t first; /* global index of e[0] */
	unsigned int vcnt; /* entries per pack: 2 or 16 */
	unsigned int avail; /* entries present (<= vcnt) */
};

static bool is_cblkcnt(const struct centry *x)
{
	return x->type == IMGFS_LCLUSTER_NONHEAD &&
	       (x->d0 & IMGFS_LI_D0_CBLKCNT);
}

/* The 12-bit value stored for entry @i of @p, or -1 if not expressible. */
static int entry_lo(const struct pack *p, unsigned int i, bool big)
{
	const struct centry *x = &p->e[i];
	uint64_t k = p->first + i;
	unsigned int derived;

	if (x->type != IMGFS_LCLUSTER_NONHEAD || is_cblkcnt(x))
		return x->d0;
	if (i + 1 != p->vcnt) {
		if (!x->d0 || x->d0 > IMGFS_ZMAP_MAX_DELTA ||
		    x->d0 > k - x->head || (big && x->d0 <= 1))
			return -1;
		return x->d0;
	}
	/* the last entry stores delta1; delta0 is derived from entry i-1 */
	if (p->e[i - 1].type != IMGFS_LCLUSTER_NONHEAD)
		derived = 1;
	else if (is_cblkcnt(&p->e[i - 1]))
		derived = 2;
	else
		derived = p->e[i - 1].d0 + 1u;
	if (derived > k - x->head || (big && derived <= 1))
		return -1;
	return x->d1 > IMGFS_ZMAP_MAX_DELTA ? IMGFS_ZMAP_MAX_DELTA : x->d1;
}

/*
 * Blocks the kernel adds to the pack base for the head at entry @i: it
 * walks back over the entries before @i (docs/format.md §9.6).
 */
static long pack_nblk(const int *lo, const uint8_t *type, int i, bool big)
{
	long nblk = big ? 0 : 1;

	while (i > 0) {
		--i;
		if (!big) {
			if (type[i] == IMGFS_LCLUSTER_NONHEAD)
				i -= lo[i];
			if (i >= 0)
				++nblk;
			continue;
		}
		if (type[i] != IMGFS_LCLUSTER_NONHEAD) {
			++nblk;
			continue;
		}
		if (lo[i] & IMGFS_LI_D0_CBLKCNT) {
			--i;
			nblk += lo[i + 1] & ~IMGFS_LI_D0_CBLKCNT;
			continue;
		}
		if (lo[i] <= 1)
			return -1;
		i -= lo[i] - 2;
	}
	return nblk;
}

static int encode_pack(const struct pack *p, bool big, uint32_t *base,
		       uint8_t *out)
{
	unsigned int bytes = p->vcnt == 2 ? 8 : 32;
	unsigned int ebits = (bytes - 4) * 8 / p->vcnt;
	int lo[16];
	uint8_t type[16];
	bool have_base = false;

	memset(out, 0, bytes + 4);
	for (unsigned int i = 0; i < p->vcnt; i++) {
		lo[i] = 0;
		type[i] = 0;
		if (i >= p->avail)
			continue;
		lo[i] = entry_lo(p, i, big);
		if (lo[i] < 0)
			return -EINVAL;
		type[i] = p->e[i].type;
		compact_entry_encode(out, ebits, COMPACT_LOBITS, i,
				     (unsigned int)lo[i], type[i]);
	}
	for (unsigned int i = 0; i < p->avail; i++) {
		long nblk;

		if (!p->e[i].addr_used)
			continue;
		nblk = pack_nblk(lo, type, (int)i, big);
		if (nblk < 0 || nblk > p->e[i].pblk)
			return -EINVAL;
		if (!have_base) {
			*base = p->e[i].pblk - (uint32_t)nblk;
			have_base = true;
		} else if (*base + (uint32_t)nblk != p->e[i].pblk) {
			return -EINVAL; /* not consecutive inside the pack */
		}
	}
	compact_blkaddr_encode(out, bytes, *base);
	return 0;
}

/* Read the full records back into per-lcluster entries. */
static struct centry *parse_full(const uint8_t *full, uint64_t nlc,
				 uint64_t size, unsigned int bits, bool tail)
{
	struct centry *e = calloc(nlc, sizeof(*e));
	uint32_t lmask = (1u << bits) - 1;
	uint64_t head = 0, last_real = 0;

	if (!e)
		return NULL;
	for (uint64_t k = 0; k < nlc; k++) {
		struct imgfs_lcluster_index li;

		lcluster_index_decode(full + FULL_INDEX_START + 8 * k, &li);
		e[k].type = li.di_advise & IMGFS_LI_TYPE_MASK;
		if (e[k].type == IMGFS_LCLUSTER_NONHEAD) {
			e[k].d0 = li.di_delta[0];
			e[k].d1 = li.di_delta[1];
			e[k].head = head;
			continue;
		}
		e[k].d0 = li.di_clusterofs;
		e[k].pblk = li.di_blkaddr;
		e[k].head = head = k;
		/* the EOF terminator starts at i_size: never read */
		if (k == nlc - 1 && (size & lmask) && e[k].d0 == (size & lmask))
			continue;
		e[k].addr_used = true;
		last_real = k;
	}
	/* an inline or fragment tail has no block address */
	if (tail)
		e[last_real].addr_used = false;
	return e;
}

static int encode_region(const struct centry *e, uint64_t first,
			 uint64_t count, uint64_t nlc, unsigned int vcnt,
			 bool big, uint32_t *base, uint8_t **out)
{
	unsigned int bytes = vcnt == 2 ? 8 : 32;

	for (uint64_t k = first; k < first + count; k += vcnt) {
		struct pack p = { e + k, k, vcnt, vcnt };
		uint8_t buf[36];

		if (k + vcnt > nlc)
			p.avail = (unsigned int)(nlc - k);
		if (encode_pack(&p, big, base, buf))
			return -EINVAL;
		memcpy(*out, buf, bytes);
		*out += bytes;
	}
	return 0;
}

int zmap_to_compact(const uint8_t *full, uint32_t full_len, uint64_t size,
		    unsigned int blkszbits, unsigned int ebase_mod,
		    uint8_t **map, uint32_t *len)
{
	uint64_t nlc = (size + (1u << blkszbits) - 1) >> blkszbits;
	struct imgfs_map_header mh;
	uint16_t advise;
	bool big;
	struct regions r = split(nlc, ebase_mod);
	uint32_t base = 0, total;
	struct centry *e;
	uint8_t *buf, *p;
	int ret;

	map_header_decode(full, &mh);
	advise = mh.h_advise;
	big = advise & IMGFS_ADVISE_BIG_PCLUSTER_1;
	if (blkszbits > 12 || !nlc || mh.fragment_inode ||
	    full_len != FULL_INDEX_START + 8 * nlc)
		return -EINVAL;
	e = parse_full(full, nlc, size, blkszbits,
		       advise & (IMGFS_ADVISE_INLINE_PCLUSTER |
				 IMGFS_ADVISE_FRAGMENT_PCLUSTER));
	total = zmap_compact_size(nlc, ebase_mod);
	buf = calloc(1, total + 4);
	if (!e || !buf) {
		free(e);
		free(buf);
		return -ENOMEM;
	}
	mh.h_advise = advise | IMGFS_ADVISE_COMPACTED_2B;
	map_header_encode(&mh, buf);
	p = buf + 8;
	ret = encode_region(e, 0, r.c4i, nlc, 2, big, &base, &p);
	if (!ret)
		ret = encode_region(e, r.c4i, r.c2, nlc, 16, big, &base, &p);
	if (!ret)
		ret = encode_region(e, r.c4i + r.c2, r.c4tail, nlc, 2, big,
				    &base, &p);
	free(e);
	if (ret) {
		free(buf);
		return ret;
	}
	*map = buf;
	*len = total;
	return 0;
}
