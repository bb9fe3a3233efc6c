// SPDX-License-Identifier: MIT
/*
 * Compressed inode maps: random extent lists are encoded in full form and
 * converted to compact form at every placement (ebase % 32); both are then
 * decoded by an independent reader written from docs/format.md §9.5-§9.7
 * and §9.12 (the kernel's procedure), which must find every extent, its
 * pcluster address and size again.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "imgfs/format.h"
#include "writer/compress_map.h"
#include "../unit/unit.h"

struct rec {
	int type;
	unsigned int lo; /* head: clusterofs; NONHEAD: delta0 */
	unsigned int d1; /* NONHEAD: lclusters to the next head */
	unsigned int cblkcnt; /* NONHEAD with bit 11: the count */
	uint32_t pblk;
};

struct zmap {
	const uint8_t *buf; /* starts with the 8-byte header */
	bool compact;
	unsigned int bits;
	unsigned int ebase_mod;
	uint64_t size, nlc;
	uint16_t advise;
};

static unsigned int bitfield(const uint8_t *in, unsigned int pos,
			     unsigned int n)
{
	uint32_t v = (uint32_t)in[pos / 8] | (uint32_t)in[pos / 8 + 1] << 8 |
		     (uint32_t)in[pos / 8 + 2] << 16;

	return (v >> (pos & 7)) & ((1u << n) - 1);
}

static struct rec load_full(const struct zmap *m, uint64_t k)
{
	const uint8_t *r = m->buf + 16 + 8 * k;
	struct rec x = { 0 };

	x.type = imgfs_get_le16(r) & 3;
	if (x.type == IMGFS_LCLUSTER_NONHEAD) {
		x.lo = imgfs_get_le16(r + 4);
		x.d1 = imgfs_get_le16(r + 6);
		if (x.lo & 0x800) {
			x.cblkcnt = x.lo & 0x7ff;
			x.lo = 1;
		}
	} else {
		x.lo = imgfs_get_le16(r + 2);
		x.pblk = imgfs_get_le32(r + 4);
	}
	return x;
}

/* Entry @i of the pack at @pack: type and 12-bit value. */
static unsigned int entry(const uint8_t *pack, unsigned int vcnt,
			  unsigned int i, int *type)
{
	unsigned int ebits = vcnt == 2 ? 16 : 14;
	unsigned int v = bitfield(pack, i * ebits, ebits);

	*type = (v >> 12) & 3;
	return v & 0xfff;
}

static struct rec load_compact(const struct zmap *m, uint64_t k)
{
	uint64_t c4 = ((32 - m->ebase_mod) / 4) & 7, c2 = 0, off = 0, idx;
	unsigned int vcnt = 2, bytes = 8, i, lo;
	bool big = m->advise & IMGFS_ADVISE_BIG_PCLUSTER_1;
	const uint8_t *pack;
	struct rec x = { 0 };
	long n;
	int t;

	if (c4 < m->nlc)
		c2 = (m->nlc - c4) / 16 * 16;
	if (k < c4) {
		idx = k;
	} else if (k - c4 < c2) {
		off = c4 * 4;
		idx = k - c4;
		vcnt = 16;
		bytes = 32;
	} else {
		off = c4 * 4 + c2 * 2;
		idx = k - c4 - c2;
	}
	pack = m->buf + 8 + off + idx / vcnt * bytes;
	i = (unsigned int)(idx % vcnt);
	lo = entry(pack, vcnt, i, &x.type);
	if (x.type == IMGFS_LCLUSTER_NONHEAD) {
		/* delta1: NONHEADs up to a head or the pack end, plus the
		 * distance the last entry of the pack stores */
		unsigned int last = 0;

		for (unsigned int j = i; j < vcnt; j++) {
			last = entry(pack, vcnt, j, &t);
			if (t != IMGFS_LCLUSTER_NONHEAD)
				break;
			x.d1++;
			if (j + 1 == vcnt && !(last & 0x800))
				x.d1 += last - 1;
		}
		if (lo & 0x800) {
			x.cblkcnt = lo & 0x7ff;
			x.lo = 1;
		} else if (i + 1 < vcnt) {
			x.lo = lo;
		} else {
			/* last entry: delta0 follows from the previous one */
			lo = entry(pack, vcnt, i - 1, &t);
			x.lo = t != IMGFS_LCLUSTER_NONHEAD ? 1 :
			       (lo & 0x800)		   ? 2 :
							     lo + 1;
		}
		return x;
	}
	x.lo = lo;
	/* block address: pack base plus what the entries before add */
	n = big ? 0 : 1;
	for (int j = (int)i - 1; j >= 0; j--) {
		lo = entry(pack, vcnt, (unsigned int)j, &t);
		if (!big) {
			if (t == IMGFS_LCLUSTER_NONHEAD)
				j -= (int)lo;
			if (j >= 0)
				n++;
		} else if (t != IMGFS_LCLUSTER_NONHEAD) {
			n++;
		} else if (lo & 0x800) {
			n += lo & 0x7ff;
			j--;
		} else {
			CHECK(lo > 1);
			j -= (int)lo - 2;
		}
	}
	x.pblk = imgfs_get_le32(pack + bytes - 4) + (uint32_t)n;
	return x;
}

static struct rec load(const struct zmap *m, uint64_t k)
{
	return m->compact ? load_compact(m, k) : load_full(m, k);
}

/* The extent's length the way FIEMAP and readahead find it. */
static uint64_t extent_len(const struct zmap *m, uint64_t head, uint64_t la)
{
	uint64_t k = head;
	struct rec r;

	for (;;) {
		if (k << m->bits >= m->size)
			return m->size - la;
		r = load(m, k);
		if (r.type != IMGFS_LCLUSTER_NONHEAD) {
			if (k != head)
				return (k << m->bits) + r.lo - la;
			k++;
			continue;
		}
		CHECK(r.d1 > 0);
		k += r.d1 ? r.d1 : 1;
	}
}

struct found {
	uint64_t la; /* extent start */
	uint64_t len; /* extent length, found through delta1 */
	uint64_t head;
	uint32_t pblk;
	unsigned int nblk; /* 0: inline */
	bool plain;
};

/* Map byte @x as docs/format.md §9.12 describes. */
static bool map_byte(const struct zmap *m, uint64_t x, uint64_t tail_head,
		     struct found *f)
{
	uint64_t k = x >> m->bits;
	unsigned int o = x & ((1u << m->bits) - 1);
	struct rec r = load(m, k);
	unsigned int d;

	if (r.type != IMGFS_LCLUSTER_NONHEAD && o >= r.lo) {
		d = 0;
	} else if (r.type != IMGFS_LCLUSTER_NONHEAD) {
		if (!k)
			return false;
		d = 1;
	} else {
		d = r.lo;
	}
	while (d) {
		if (!d || d > k)
			return false;
		k -= d;
		r = load(m, k);
		d = r.type == IMGFS_LCLUSTER_NONHEAD ? r.lo : 0;
	}
	f->head = k;
	f->la = (k << m->bits) + r.lo;
	f->len = extent_len(m, k, f->la);
	f->pblk = r.pblk;
	f->plain = r.type == IMGFS_LCLUSTER_PLAIN;
	if ((m->advise & (IMGFS_ADVISE_INLINE_PCLUSTER |
			  IMGFS_ADVISE_FRAGMENT_PCLUSTER)) &&
	    k == tail_head) {
		f->nblk = 0;
		return true;
	}
	f->nblk = 1;
	if ((m->advise & IMGFS_ADVISE_BIG_PCLUSTER_1) &&
	    (k + 1) << m->bits < m->size) {
		r = load(m, k + 1);
		if (r.type == IMGFS_LCLUSTER_NONHEAD) {
			if (r.lo != 1)
				return false;
			if (r.cblkcnt)
				f->nblk = r.cblkcnt;
		}
	}
	return true;
}

static uint32_t rnd(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* A random extent list obeying the writer's rules; returns its count. */
static size_t make_extents(uint32_t *seed, unsigned int bits, bool big,
			   bool inl, uint64_t size, struct imgfs_zext *x,
			   size_t cap)
{
	uint64_t L = 1ull << bits, s = 0;
	uint32_t blk = 100;
	size_t n = 0;

	while (s < size && n < cap) {
		uint64_t len, e, h = s >> bits;
		unsigned int kind = rnd(seed) % 8;

		if (kind == 0)
			len = L - (s & (L - 1)); /* to the next boundary */
		else if (kind < 3)
			len = L + 1 + rnd(seed) % (4 * L);
		else
			len = L + 1 + rnd(seed) % (3000 * L);
		if (len >= size - s || n + 1 == cap)
			len = size - s;
		e = s + len;
		x[n].lstart = s;
		x[n].plain = rnd(seed) % 3 == 0;
		x[n].nblk = 1;
		if (big && e >= (h + 2) * L)
			x[n].nblk = (uint16_t)(1 + rnd(seed) % 40);
		if (inl && e == size && (rnd(seed) & 1))
			x[n].nblk = 0;
		x[n].pblk = blk;
		blk += x[n].nblk;
		n++;
		s = e;
		/* the next extent must start in a later lcluster */
		if (s < size && (s >> bits) == h) {
			uint64_t grow = L - (s & (L - 1));

			if (grow > size - s)
				grow = size - s;
			s += grow;
		}
	}
	return n;
}

static size_t find_ext(const struct imgfs_zext *x, size_t n, uint64_t off)
{
	size_t i = 0;

	while (i + 1 < n && x[i + 1].lstart <= off)
		i++;
	return i;
}

static void verify(const struct zmap *m, const struct imgfs_zext *x,
		   size_t n)
{
	uint64_t tail_head = x[n - 1].lstart >> m->bits;
	uint64_t probes[4];

	for (uint64_t k = 0; k < m->nlc; k++) {
		probes[0] = k << m->bits;
		probes[1] = probes[0] + (1u << m->bits) - 1;
		probes[2] = probes[0] + 517 % (1u << m->bits);
		probes[3] = probes[0] + (k * 7919) % (1u << m->bits);
		for (int p = 0; p < 4; p++) {
			uint64_t off = probes[p] < m->size ? probes[p] :
							     m->size - 1;
			size_t i = find_ext(x, n, off);
			struct found f;
			bool ok = map_byte(m, off, tail_head, &f);

			CHECK(ok);
			if (!ok)
				return;
			CHECK(f.la == x[i].lstart);
			CHECK(f.len == (i + 1 < n ? x[i + 1].lstart : m->size) -
					       x[i].lstart);
			/* a fragment's head is never PLAIN */
			CHECK(f.plain == (x[i].plain && (x[i].nblk ||
					  !(m->advise & IMGFS_ADVISE_FRAGMENT_PCLUSTER))));
			CHECK(f.nblk == x[i].nblk);
			if (x[i].nblk)
				CHECK(f.pblk == x[i].pblk);
			if (unit_failures > 20)
				exit(1);
		}
	}
}

/* @tail: 0 none, 1 inline, 2 fragment (when the last extent allows) */
static void one_case(uint32_t seed, unsigned int bits, bool big, int tail,
		     uint64_t size)
{
	struct imgfs_zext x[512];
	struct imgfs_zmap_info mi = { size, bits, IMGFS_COMPR_LZMA, big, 0 };
	size_t n = make_extents(&seed, bits, big, tail, size, x, 512);
	struct zmap m = { .bits = bits, .size = size };
	uint8_t *full, *compact;
	uint32_t flen, clen;

	if (!x[n - 1].nblk && tail == 1)
		mi.idata_size = 100;
	if (!x[n - 1].nblk && tail == 2) {
		mi.fragment = true;
		mi.fragoff = seed * 977;
	}
	CHECK(zmap_build_full(&mi, x, n, &full, &flen) == 0);
	if (mi.fragment) {
		const uint8_t *r = full + 16 + 8 * (x[n - 1].lstart >> bits);

		CHECK(imgfs_get_le32(full) == mi.fragoff);
		CHECK((imgfs_get_le16(r) & 3) == IMGFS_LCLUSTER_HEAD1);
		CHECK(imgfs_get_le32(r + 4) == 0); /* high offset bits */
	}
	m.nlc = (size + (1u << bits) - 1) >> bits;
	m.buf = full;
	m.advise = imgfs_get_le16(full + 4);
	CHECK(flen == 16 + 8 * m.nlc);
	CHECK(!(m.advise & IMGFS_ADVISE_COMPACTED_2B));
	verify(&m, x, n);
	for (unsigned int mod = 0; mod < 32; mod += 8) {
		CHECK(zmap_to_compact(full, flen, size, bits, mod, &compact,
				      &clen) == 0);
		CHECK(clen == zmap_compact_size(m.nlc, mod));
		CHECK(clen <= zmap_compact_size_max(m.nlc));
		m.compact = true;
		m.buf = compact;
		m.ebase_mod = mod;
		m.advise = imgfs_get_le16(compact + 4);
		CHECK(m.advise & IMGFS_ADVISE_COMPACTED_2B);
		CHECK(!memcmp(compact + 6, full + 6, 2));
		verify(&m, x, n);
		free(compact);
		m.compact = false;
		m.buf = full;
	}
	free(full);
}

/* The worked example of docs/format.md §9.5 (4 KiB, big pclusters, full). */
static void format_example(void)
{
	struct imgfs_zext x[2] = { { 0, 68, 4, 0 }, { 34761, 72, 3, 0 } };
	struct imgfs_zmap_info mi = { 51262, 12, IMGFS_COMPR_LZ4, true, 0 };
	uint8_t *full;
	uint32_t len;

	CHECK(zmap_build_full(&mi, x, 2, &full, &len) == 0);
	CHECK(len == 16 + 13 * 8);
	/* record 1: CBLKCNT 4, delta1 7; record 12: EOF terminator */
	CHECK(imgfs_get_le16(full + 16 + 8 + 4) == 0x0804);
	CHECK(imgfs_get_le16(full + 16 + 8 + 6) == 7);
	CHECK(imgfs_get_le16(full + 16 + 8 * 8 + 2) == 1993);
	CHECK(imgfs_get_le32(full + 16 + 8 * 8 + 4) == 72);
	CHECK(imgfs_get_le16(full + 16 + 8 * 12) == IMGFS_LCLUSTER_PLAIN);
	CHECK(imgfs_get_le16(full + 16 + 8 * 12 + 2) == 2110);
	free(full);
}

static void whole_fragment(void)
{
	uint8_t *map;
	uint32_t len;

	CHECK(zmap_whole_fragment(269335, &map, &len) == 0);
	CHECK(len == 16);
	/* docs/format.md §9.2: 17 1c 04 00 00 00 00 80, then 8 zero bytes */
	CHECK(imgfs_get_le64(map) == (269335ull | 1ull << 63));
	CHECK(imgfs_get_le64(map + 8) == 0);
	CHECK(zmap_to_compact(map, len, 5000, 12, 0, &map, &len) == -EINVAL);
	free(map);
}

static void rejects(void)
{
	/* two extents starting in one lcluster cannot be indexed */
	struct imgfs_zext x[2] = { { 0, 1, 1, 0 }, { 100, 2, 1, 0 } };
	struct imgfs_zmap_info mi = { 10000, 12, IMGFS_COMPR_LZ4, false, 0 };
	uint8_t *map;
	uint32_t len;

	CHECK(zmap_build_full(&mi, x, 2, &map, &len) == -EINVAL);
	/* a 2-block pcluster whose extent ends inside the next lcluster */
	x[1].lstart = 5000;
	x[0].nblk = 2;
	mi.big = true;
	CHECK(zmap_build_full(&mi, x, 2, &map, &len) == -EINVAL);
}

int main(void)
{
	format_example();
	whole_fragment();
	rejects();
	for (uint32_t seed = 1; seed <= 150; seed++) {
		unsigned int bits = seed % 2 ? 12 : 9;
		uint64_t size = 1 + (seed * 2654435761u) % (3000u << bits);

		one_case(seed, bits, seed % 3 != 0, seed % 3, size);
		one_case(seed + 1000, bits, false, seed % 5 == 0 ? 1 : 2,
			 1 + seed % 70000);
	}
	return unit_done("test_zmap");
}
