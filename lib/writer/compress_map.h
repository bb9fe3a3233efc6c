/* SPDX-License-Identifier: MIT */
/*
 * compress_map.h - encoding the map of a compressed inode (docs/format.md
 * §9.2, §9.5, §9.6): the 8-byte header and the lcluster indexes, full or
 * compact.
 *
 * The writer first produces the full form, which depends on nothing but
 * the file; the compact form also depends on where the map lands
 * (ebase mod 32), known only at layout, and is derived from the full one.
 * Logical clusters are always one block (docs/format.md §9.1).
 */
#ifndef IMGFS_COMPRESS_MAP_H
#define IMGFS_COMPRESS_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest delta or block count one index entry holds (11 bits). */
#define IMGFS_ZMAP_MAX_DELTA 2047u

/* One extent of a compressed file, in file order. */
struct imgfs_zext {
	uint64_t lstart; /* file offset of its first byte */
	uint32_t pblk; /* first block of its pcluster (inline: unused) */
	uint16_t nblk; /* pcluster size in blocks; 0: inline tail */
	uint8_t plain; /* stored uncompressed (PLAIN lcluster) */
};

struct imgfs_zmap_info {
	uint64_t size; /* file size */
	unsigned int blkszbits;
	unsigned int alg; /* enum imgfs_compr_alg */
	bool big; /* big pcluster advise (CBLKCNT after each head) */
	uint16_t idata_size; /* inline tail pcluster bytes; 0: none */
	bool fragment; /* the last extent is in the packed inode... */
	uint32_t fragoff; /* ...at this offset */
};

/*
 * Build the full map (header, 8 reserved bytes, one 8-byte record per
 * lcluster) of a file made of extents @ext[0..@n) into a malloc'd buffer.
 * Extents must start at offset 0, be increasing, at most one per lcluster,
 * multi-block pclusters must cover the lcluster after their head, and
 * only the last one may be outside the blocks (nblk 0): inline, or a
 * fragment when mi->fragment. Returns 0, -EINVAL when the extents break
 * those rules, or -ENOMEM.
 */
int zmap_build_full(const struct imgfs_zmap_info *mi,
		    const struct imgfs_zext *ext, size_t n, uint8_t **map,
		    uint32_t *len);

/*
 * The 16-byte map of a file stored whole in the packed inode at @off
 * (docs/format.md §9.2, bit 63 of the header), for layout COMPRESSED_FULL.
 * Returns 0 or -ENOMEM.
 */
int zmap_whole_fragment(uint64_t off, uint8_t **map, uint32_t *len);

/* Bytes of a compact map (header included) for @nlc lclusters whose
 * index area starts at an offset with @ebase_mod = ebase % 32. */
uint32_t zmap_compact_size(uint64_t nlc, unsigned int ebase_mod);

/* The largest compact map size for @nlc lclusters over all placements. */
uint32_t zmap_compact_size_max(uint64_t nlc);

/*
 * Convert a full map made by zmap_build_full() for a file of @size
 * bytes into the compact form for an index area at ebase % 32 ==
 * @ebase_mod. Returns 0 with a malloc'd map, -EINVAL when compact
 * indexes cannot express this map, or -ENOMEM.
 */
int zmap_to_compact(const uint8_t *full, uint32_t full_len, uint64_t size,
		    unsigned int blkszbits, unsigned int ebase_mod,
		    uint8_t **map, uint32_t *len);

#endif /* IMGFS_COMPRESS_MAP_H */
