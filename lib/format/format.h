/* SPDX-License-Identifier: MIT */
/*
 * format/format.h - the on-disk structures, one encoder and one decoder
 * each (not installed).
 *
 * Each structure is a host struct holding the field values as the format
 * names them (docs/format.md gives the byte layout); *_encode() writes the
 * little-endian bytes of one structure and *_decode() reads them back.
 * Nothing here validates: encoders write what they are given, decoders
 * return what is on disk, and the reader and checker judge the values.
 * Reserved bytes are written as zeros and ignored when decoding.
 */
#ifndef IMGFS_FORMAT_FORMAT_H
#define IMGFS_FORMAT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/format.h"

/* Superblock, 128 bytes at byte 1024 (docs/format.md §3.1). */
struct imgfs_super_block {
	uint32_t magic;
	uint32_t checksum;
	uint32_t feature_compat;
	uint8_t blkszbits;
	uint8_t sb_extslots;
	uint16_t root_nid; /* blocks bits 32..47 with 48BIT + root_nid_64 */
	uint64_t inos;
	uint64_t epoch;
	uint32_t fixed_nsec;
	uint32_t blocks_lo;
	uint32_t meta_blkaddr;
	uint32_t xattr_blkaddr;
	uint8_t uuid[16];
	uint8_t volume_name[16]; /* NUL-padded, not NUL-terminated */
	uint32_t feature_incompat;
	uint16_t u1; /* algorithm bitmap (COMPR_CFGS) or lz4_max_distance */
	uint16_t extra_devices;
	uint16_t devt_slotoff;
	uint8_t dirblkbits;
	uint8_t xattr_prefix_count;
	uint32_t xattr_prefix_start;
	uint64_t packed_nid;
	uint8_t xattr_filter_reserved;
	uint8_t ishare_xattr_prefix_id;
	uint32_t build_time;
	uint64_t root_nid_64;
	/* decoded only (the encoder writes zeros): bytes 106..107, reserved,
	 * are not zero, which the checker reports */
	bool reserved_set;
};

void super_block_encode(const struct imgfs_super_block *sb, uint8_t *b);
void super_block_decode(const uint8_t *b, struct imgfs_super_block *sb);

/* Length of the superblock checksum range for block size @blksz (§3.3). */
uint32_t super_csum_len(uint32_t blksz);

/*
 * CRC-32C of the @len bytes at @b, which start with the superblock, its
 * checksum field counted as zero (§3.3); @b itself is not modified.
 */
uint32_t super_checksum(const uint8_t *b, uint32_t len);

/*
 * Compact inode, 32 bytes (§4.2). The first 8 bytes, i_u and i_ino sit at
 * the same offsets in both forms, so the compact decoder also reads the
 * version and layout of an extended inode from its first 32 bytes.
 */
struct imgfs_inode_compact {
	uint16_t i_format;
	uint16_t i_xattr_icount;
	uint16_t i_mode;
	uint16_t i_nb; /* nlink, or startblk bits 32..47 with NLINK_1 */
	uint32_t i_size;
	uint32_t i_mtime; /* seconds after the superblock epoch */
	uint32_t i_u;
	uint32_t i_ino;
	uint16_t i_uid;
	uint16_t i_gid;
};

/* Extended inode, 64 bytes (§4.3). */
struct imgfs_inode_extended {
	uint16_t i_format;
	uint16_t i_xattr_icount;
	uint16_t i_mode;
	uint16_t i_nb; /* startblk bits 32..47 */
	uint64_t i_size;
	uint32_t i_u;
	uint32_t i_ino;
	uint32_t i_uid;
	uint32_t i_gid;
	uint64_t i_mtime; /* signed seconds */
	uint32_t i_mtime_nsec;
	uint32_t i_nlink;
};

void inode_compact_encode(const struct imgfs_inode_compact *di, uint8_t *b);
void inode_compact_decode(const uint8_t *b, struct imgfs_inode_compact *di);
void inode_extended_encode(const struct imgfs_inode_extended *di, uint8_t *b);
void inode_extended_decode(const uint8_t *b, struct imgfs_inode_extended *di);

/* Directory entry, 12 bytes at the start of a directory block (§6.2). */
struct imgfs_dirent {
	uint64_t nid;
	uint16_t nameoff; /* from the start of the block */
	uint8_t file_type;
};

void dirent_encode(const struct imgfs_dirent *de, uint8_t *b);
void dirent_decode(const uint8_t *b, struct imgfs_dirent *de);

/* Header of an inode's xattr area, 12 bytes, then le32 shared ids (§7.1). */
struct imgfs_xattr_ibody_header {
	uint32_t h_name_filter; /* inverted bloom filter (§7.6) */
	uint8_t h_shared_count;
	/* decoded only: reserved bytes 5..11 are not zero */
	bool reserved_set;
};

void xattr_ibody_header_encode(const struct imgfs_xattr_ibody_header *h,
			       uint8_t *b);
void xattr_ibody_header_decode(const uint8_t *b,
			       struct imgfs_xattr_ibody_header *h);

/* Shared xattr id @i of the xattr area starting at @area (§7.1). */
void xattr_shared_id_encode(uint8_t *area, unsigned int i, uint32_t id);
uint32_t xattr_shared_id_decode(const uint8_t *area, unsigned int i);

/* Xattr entry header, 4 bytes, then name suffix and value (§7.2). */
struct imgfs_xattr_entry {
	uint8_t e_name_len;
	uint8_t e_name_index;
	uint16_t e_value_size;
};

void xattr_entry_encode(const struct imgfs_xattr_entry *e, uint8_t *b);
void xattr_entry_decode(const uint8_t *b, struct imgfs_xattr_entry *e);

/* Long xattr name prefix record header, 3 bytes, then the infix (§7.5). */
#define IMGFS_XATTR_LONG_PREFIX_HDR_SIZE 3u

struct imgfs_xattr_long_prefix {
	uint16_t len; /* base_index byte + infix: 1..256 */
	uint8_t base_index;
};

void xattr_long_prefix_encode(const struct imgfs_xattr_long_prefix *p,
			      uint8_t *b);
void xattr_long_prefix_decode(const uint8_t *b,
			      struct imgfs_xattr_long_prefix *p);

/*
 * Split a full xattr name into its short prefix index and suffix (§7.3).
 * Only the namespaces the kernel lists are accepted (not "lustre.");
 * returns -EOPNOTSUPP for any other name.
 */
int xattr_split_name(const char *name, uint8_t *index, const char **suffix);

/* Name filter bit (0..31) of a name: base index + suffix (§7.6). */
unsigned int xattr_filter_bit(unsigned int base_index, const char *suffix,
			      size_t len);

/* Chunk index record, 8 bytes (§5.3). */
struct imgfs_chunk_index {
	uint16_t startblk_hi; /* bits 32..47 with CHUNK_FORMAT_48BIT */
	uint16_t device_id;
	uint32_t startblk_lo;
};

void chunk_index_encode(const struct imgfs_chunk_index *ci, uint8_t *b);
void chunk_index_decode(const uint8_t *b, struct imgfs_chunk_index *ci);

/*
 * Block map of chunk-based inodes without INDEXES (§5.3): entry @i, a le32
 * block address (all ones: a hole), of the map starting at @map.
 */
void block_map_encode(uint8_t *map, uint64_t i, uint32_t blkaddr);
uint32_t block_map_decode(const uint8_t *map, uint64_t i);

/*
 * Device slot, 128 bytes, one per extra device in the device table at byte
 * devt_slotoff * 128 of the primary device (§10.1).
 */
struct imgfs_device_slot {
	uint8_t tag[64]; /* NUL-padded */
	uint32_t blocks_lo;
	uint32_t uniaddr_lo;
	uint16_t blocks_hi; /* bits 32..47 with 48BIT */
	uint16_t uniaddr_hi;
};

void device_slot_encode(const struct imgfs_device_slot *d, uint8_t *b);
void device_slot_decode(const uint8_t *b, struct imgfs_device_slot *d);

/* The device's size and unified address; the high bits count with 48BIT. */
uint64_t device_slot_blocks(const struct imgfs_device_slot *d, bool is48);
uint64_t device_slot_uniaddr(const struct imgfs_device_slot *d, bool is48);

/*
 * Compression configuration records after the superblock (§3.5): each a
 * le16 length (0 reads as 65536, as the kernel reads it) and the codec's
 * record of that length. The length field is 2 bytes.
 */
#define IMGFS_COMPR_CFG_HDR_SIZE 2u

void compr_cfg_len_encode(uint8_t *b, uint16_t len);
uint32_t compr_cfg_len_decode(const uint8_t *b);

/*
 * The records themselves (§3.5), IMGFS_<ALG>_CFGS_SIZE bytes each; the
 * bytes after the named fields are reserved.
 */
struct imgfs_lz4_cfg {
	uint16_t max_distance;
	uint16_t max_pclusterblks; /* largest pcluster in blocks, 0: one */
};

struct imgfs_lzma_cfg {
	uint32_t dict_size;
	uint16_t format; /* 0 */
};

struct imgfs_deflate_cfg {
	uint8_t windowbits;
};

struct imgfs_zstd_cfg {
	uint8_t format; /* 0 */
	uint8_t windowlog; /* window log - 10 */
};

void lz4_cfg_encode(const struct imgfs_lz4_cfg *c, uint8_t *b);
void lz4_cfg_decode(const uint8_t *b, struct imgfs_lz4_cfg *c);
void lzma_cfg_encode(const struct imgfs_lzma_cfg *c, uint8_t *b);
void lzma_cfg_decode(const uint8_t *b, struct imgfs_lzma_cfg *c);
void deflate_cfg_encode(const struct imgfs_deflate_cfg *c, uint8_t *b);
void deflate_cfg_decode(const uint8_t *b, struct imgfs_deflate_cfg *c);
void zstd_cfg_encode(const struct imgfs_zstd_cfg *c, uint8_t *b);
void zstd_cfg_decode(const uint8_t *b, struct imgfs_zstd_cfg *c);

/*
 * Compression map header, 8 bytes (§9.2). Its first word is h_fragmentoff
 * with ADVISE_FRAGMENT_PCLUSTER, else {reserved, h_idata_size}; the
 * decoder fills both views. A header whose top bit (bit 63 as le64) is
 * set describes an inode stored whole in the packed inode: then only
 * fragment_inode and fragment_off mean anything.
 */
struct imgfs_map_header {
	bool fragment_inode;
	uint64_t fragment_off; /* 63 bits, with fragment_inode */
	uint32_t h_fragmentoff;
	uint16_t h_idata_size;
	uint16_t h_advise;
	uint8_t h_algorithmtype; /* head1 in bits 0..3, head2 in bits 4..7 */
	uint8_t h_clusterbits;
};

void map_header_encode(const struct imgfs_map_header *h, uint8_t *b);
void map_header_decode(const uint8_t *b, struct imgfs_map_header *h);

/*
 * Full lcluster index record, 8 bytes (§9.5). A NONHEAD record holds the
 * two deltas where a head holds its block address; the decoder fills
 * both views, the encoder writes the one the type selects.
 */
struct imgfs_lcluster_index {
	uint16_t di_advise; /* type in the low 2 bits */
	uint16_t di_clusterofs;
	uint32_t di_blkaddr;
	uint16_t di_delta[2];
};

void lcluster_index_encode(const struct imgfs_lcluster_index *li, uint8_t *b);
void lcluster_index_decode(const uint8_t *b, struct imgfs_lcluster_index *li);

/*
 * Compact index packs (§9.6): a pack of @size bytes (8 for 2 entries, 32
 * for 16) holds its entries as little-endian bit fields of @ebits bits
 * from bit 0 (lo in the low @lobits bits, the lcluster type above them),
 * and a le32 block address in its last 4 bytes. The entry encoder ORs
 * into a pack zeroed beforehand.
 */
void compact_entry_encode(uint8_t *pack, unsigned int ebits,
			  unsigned int lobits, unsigned int i, unsigned int lo,
			  unsigned int type);
unsigned int compact_entry_decode(const uint8_t *pack, unsigned int ebits,
				  unsigned int lobits, unsigned int i,
				  unsigned int *type);
void compact_blkaddr_encode(uint8_t *pack, unsigned int size, uint32_t blkaddr);
uint32_t compact_blkaddr_decode(const uint8_t *pack, unsigned int size);

#endif /* IMGFS_FORMAT_FORMAT_H */
