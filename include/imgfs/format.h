/* SPDX-License-Identifier: MIT */
/*
 * imgfs/format.h - EROFS on-disk format definitions.
 *
 * Every structure here mirrors bytes on disk. All multi-byte fields are
 * little-endian; use the imgfs_le*() / imgfs_put_le*() helpers to access
 * them so the code stays correct on big-endian hosts.
 */
#ifndef IMGFS_FORMAT_H
#define IMGFS_FORMAT_H

#include <stdint.h>
#include <string.h>

#define IMGFS_SUPER_MAGIC 0xE0F5E1E2u
#define IMGFS_SUPER_OFFSET 1024u
#define IMGFS_SUPER_BASE_SIZE 128u
#define IMGFS_SUPER_EXTSLOT_SIZE 16u
#define IMGFS_MIN_BLKSZBITS 9u
#define IMGFS_MAX_BLKSZBITS 12u
#define IMGFS_ISLOTBITS 5u
#define IMGFS_INODE_COMPACT_SIZE 32u
#define IMGFS_INODE_EXTENDED_SIZE 64u
#define IMGFS_DIRENT_SIZE 12u
#define IMGFS_NAME_MAX 255u
#define IMGFS_NULL_ADDR 0xFFFFFFFFu
#define IMGFS_XATTR_IBODY_HEADER_SIZE 12u
#define IMGFS_XATTR_ENTRY_SIZE 4u
#define IMGFS_DEVICE_SLOT_SIZE 128u
#define IMGFS_MAP_HEADER_SIZE 8u
#define IMGFS_MAX_PCLUSTER_SIZE (1024u * 1024u)
#define IMGFS_MAX_EXTENT_SIZE (12u * 1024u * 1024u)

/* feature_compat */
#define IMGFS_FEATURE_COMPAT_SB_CHKSUM 0x00000001u
#define IMGFS_FEATURE_COMPAT_MTIME 0x00000002u
#define IMGFS_FEATURE_COMPAT_XATTR_FILTER 0x00000004u
#define IMGFS_FEATURE_COMPAT_SHARED_EA_IN_METABOX 0x00000008u
#define IMGFS_FEATURE_COMPAT_PLAIN_XATTR_PFX 0x00000010u
#define IMGFS_FEATURE_COMPAT_ISHARE_XATTRS 0x00000020u
#define IMGFS_FEATURE_COMPAT_ALL 0x0000003Fu

/* feature_incompat */
#define IMGFS_FEATURE_INCOMPAT_ZERO_PADDING 0x00000001u
#define IMGFS_FEATURE_INCOMPAT_COMPR_CFGS 0x00000002u
#define IMGFS_FEATURE_INCOMPAT_BIG_PCLUSTER 0x00000002u
#define IMGFS_FEATURE_INCOMPAT_CHUNKED_FILE 0x00000004u
#define IMGFS_FEATURE_INCOMPAT_DEVICE_TABLE 0x00000008u
#define IMGFS_FEATURE_INCOMPAT_COMPR_HEAD2 0x00000008u
#define IMGFS_FEATURE_INCOMPAT_ZTAILPACKING 0x00000010u
#define IMGFS_FEATURE_INCOMPAT_FRAGMENTS 0x00000020u
#define IMGFS_FEATURE_INCOMPAT_DEDUPE 0x00000020u
#define IMGFS_FEATURE_INCOMPAT_XATTR_PREFIXES 0x00000040u
#define IMGFS_FEATURE_INCOMPAT_48BIT 0x00000080u
#define IMGFS_FEATURE_INCOMPAT_METABOX 0x00000100u
#define IMGFS_FEATURE_INCOMPAT_ALL 0x000001FFu

/* Superblock, at byte 1024 of the image. */
struct imgfs_super_block {
	uint32_t magic;
	uint32_t checksum;
	uint32_t feature_compat;
	uint8_t blkszbits;
	uint8_t sb_extslots;
	uint16_t root_nid; /* or blocks_hi with 48BIT + root_nid_64 */
	uint64_t inos;
	uint64_t epoch;
	uint32_t fixed_nsec;
	uint32_t blocks_lo;
	uint32_t meta_blkaddr;
	uint32_t xattr_blkaddr;
	uint8_t uuid[16];
	uint8_t volume_name[16];
	uint32_t feature_incompat;
	uint16_t u1; /* available_compr_algs or lz4_max_distance */
	uint16_t extra_devices;
	uint16_t devt_slotoff;
	uint8_t dirblkbits;
	uint8_t xattr_prefix_count;
	uint32_t xattr_prefix_start;
	uint64_t packed_nid;
	uint8_t xattr_filter_reserved;
	uint8_t ishare_xattr_prefix_id;
	uint8_t reserved[2];
	uint32_t build_time;
	uint64_t root_nid_64;
	uint64_t reserved2;
} __attribute__((packed));

/* i_format bits */
#define IMGFS_I_VERSION_BIT 0
#define IMGFS_I_DATALAYOUT_BIT 1
#define IMGFS_I_DATALAYOUT_MASK 0x7u
#define IMGFS_I_NLINK_1 0x0010u /* non-directories */
#define IMGFS_I_DOT_OMITTED 0x0010u /* directories */
#define IMGFS_I_ALL_BITS 0x001Fu

#define IMGFS_INODE_COMPACT 0
#define IMGFS_INODE_EXTENDED 1

enum imgfs_datalayout {
	IMGFS_LAYOUT_FLAT_PLAIN = 0,
	IMGFS_LAYOUT_COMPRESSED_FULL = 1,
	IMGFS_LAYOUT_FLAT_INLINE = 2,
	IMGFS_LAYOUT_COMPRESSED_COMPACT = 3,
	IMGFS_LAYOUT_CHUNK_BASED = 4,
	IMGFS_LAYOUT_MAX = 5,
};

static inline uint16_t imgfs_i_format(unsigned int version, unsigned int layout)
{
	return (uint16_t)((version & 1) | ((layout & IMGFS_I_DATALAYOUT_MASK)
					   << IMGFS_I_DATALAYOUT_BIT));
}

static inline unsigned int imgfs_i_version(uint16_t i_format)
{
	return i_format & 1;
}

static inline unsigned int imgfs_i_layout(uint16_t i_format)
{
	return (i_format >> IMGFS_I_DATALAYOUT_BIT) & IMGFS_I_DATALAYOUT_MASK;
}

/* 32-byte compact inode. */
struct imgfs_inode_compact {
	uint16_t i_format;
	uint16_t i_xattr_icount;
	uint16_t i_mode;
	uint16_t i_nb; /* nlink, or startblk_hi with NLINK_1 */
	uint32_t i_size;
	uint32_t i_mtime; /* relative to sb epoch */
	uint32_t i_u; /* startblk / compressed blocks / rdev / chunk info */
	uint32_t i_ino;
	uint16_t i_uid;
	uint16_t i_gid;
	uint32_t i_reserved;
} __attribute__((packed));

/* 64-byte extended inode. */
struct imgfs_inode_extended {
	uint16_t i_format;
	uint16_t i_xattr_icount;
	uint16_t i_mode;
	uint16_t i_nb; /* startblk_hi (48BIT), else 0 */
	uint64_t i_size;
	uint32_t i_u;
	uint32_t i_ino;
	uint32_t i_uid;
	uint32_t i_gid;
	uint64_t i_mtime;
	uint32_t i_mtime_nsec;
	uint32_t i_nlink;
	uint8_t i_reserved2[16];
} __attribute__((packed));

/* chunk info format word (i_u low 16 bits for CHUNK_BASED) */
#define IMGFS_CHUNK_FORMAT_BLKBITS_MASK 0x001Fu
#define IMGFS_CHUNK_FORMAT_INDEXES 0x0020u
#define IMGFS_CHUNK_FORMAT_48BIT 0x0040u
#define IMGFS_CHUNK_FORMAT_ALL 0x007Fu

/* 8-byte chunk index record (with CHUNK_FORMAT_INDEXES). */
struct imgfs_chunk_index {
	uint16_t startblk_hi;
	uint16_t device_id;
	uint32_t startblk_lo;
} __attribute__((packed));

/* 12-byte directory entry. */
struct imgfs_dirent {
	uint64_t nid;
	uint16_t nameoff;
	uint8_t file_type;
	uint8_t reserved;
} __attribute__((packed));

enum imgfs_file_type {
	IMGFS_FT_UNKNOWN = 0,
	IMGFS_FT_REG_FILE = 1,
	IMGFS_FT_DIR = 2,
	IMGFS_FT_CHRDEV = 3,
	IMGFS_FT_BLKDEV = 4,
	IMGFS_FT_FIFO = 5,
	IMGFS_FT_SOCK = 6,
	IMGFS_FT_SYMLINK = 7,
	IMGFS_FT_MAX = 8,
};

/* Inline xattr area header. */
struct imgfs_xattr_ibody_header {
	uint32_t h_name_filter;
	uint8_t h_shared_count;
	uint8_t h_reserved2[7];
	/* followed by le32 shared ids */
} __attribute__((packed));

/* Xattr entry header (inline and shared). */
struct imgfs_xattr_entry {
	uint8_t e_name_len;
	uint8_t e_name_index;
	uint16_t e_value_size;
	/* followed by name, then value */
} __attribute__((packed));

enum imgfs_xattr_index {
	IMGFS_XATTR_INDEX_USER = 1,
	IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS = 2,
	IMGFS_XATTR_INDEX_POSIX_ACL_DEFAULT = 3,
	IMGFS_XATTR_INDEX_TRUSTED = 4,
	IMGFS_XATTR_INDEX_LUSTRE = 5,
	IMGFS_XATTR_INDEX_SECURITY = 6,
};
#define IMGFS_XATTR_LONG_PREFIX 0x80u
#define IMGFS_XATTR_FILTER_BITS 32u
#define IMGFS_XATTR_FILTER_SEED 0x25BBE08Fu

/* POSIX ACL xattr value encoding (Linux). */
#define IMGFS_ACL_XATTR_VERSION 2u
#define IMGFS_ACL_USER_OBJ 0x01u
#define IMGFS_ACL_USER 0x02u
#define IMGFS_ACL_GROUP_OBJ 0x04u
#define IMGFS_ACL_GROUP 0x08u
#define IMGFS_ACL_MASK 0x10u
#define IMGFS_ACL_OTHER 0x20u
#define IMGFS_ACL_UNDEFINED_ID 0xFFFFFFFFu

struct imgfs_acl_entry {
	uint16_t e_tag;
	uint16_t e_perm;
	uint32_t e_id;
} __attribute__((packed));

/* Compression map header (8 bytes, 8-aligned after inode + xattrs). */
struct imgfs_map_header {
	uint32_t h_fragmentoff; /* or {le16 reserved, le16 idata_size} */
	uint16_t h_advise;
	uint8_t h_algorithmtype;
	uint8_t h_clusterbits;
} __attribute__((packed));

#define IMGFS_ADVISE_COMPACTED_2B 0x0001u
#define IMGFS_ADVISE_EXTENTS 0x0001u
#define IMGFS_ADVISE_BIG_PCLUSTER_1 0x0002u
#define IMGFS_ADVISE_BIG_PCLUSTER_2 0x0004u
#define IMGFS_ADVISE_INLINE_PCLUSTER 0x0008u
#define IMGFS_ADVISE_INTERLACED_PCLUSTER 0x0010u
#define IMGFS_ADVISE_FRAGMENT_PCLUSTER 0x0020u

enum imgfs_lcluster_type {
	IMGFS_LCLUSTER_PLAIN = 0,
	IMGFS_LCLUSTER_HEAD1 = 1,
	IMGFS_LCLUSTER_NONHEAD = 2,
	IMGFS_LCLUSTER_HEAD2 = 3,
};

/* Full (8-byte) lcluster index record. */
struct imgfs_lcluster_index {
	uint16_t di_advise;
	uint16_t di_clusterofs;
	union {
		uint32_t blkaddr;
		uint16_t delta[2];
	} di_u;
} __attribute__((packed));

#define IMGFS_LI_TYPE_MASK 0x0003u
#define IMGFS_LI_PARTIAL_REF 0x8000u
#define IMGFS_LI_D0_CBLKCNT 0x0800u

enum imgfs_compr_alg {
	IMGFS_COMPR_LZ4 = 0,
	IMGFS_COMPR_LZMA = 1,
	IMGFS_COMPR_DEFLATE = 2,
	IMGFS_COMPR_ZSTD = 3,
	IMGFS_COMPR_MAX = 4,
};

/* Compression config records following the superblock (COMPR_CFGS). */
struct imgfs_lz4_cfgs {
	uint16_t max_distance;
	uint16_t max_pclusterblks;
	uint8_t reserved[10];
} __attribute__((packed));

struct imgfs_lzma_cfgs {
	uint32_t dict_size;
	uint16_t format;
	uint8_t reserved[8];
} __attribute__((packed));

struct imgfs_deflate_cfgs {
	uint8_t windowbits;
	uint8_t reserved[5];
} __attribute__((packed));

struct imgfs_zstd_cfgs {
	uint8_t format;
	uint8_t windowlog;
	uint8_t reserved[4];
} __attribute__((packed));

/* Device slot (DEVICE_TABLE). */
struct imgfs_device_slot {
	uint8_t tag[64];
	uint32_t blocks_lo;
	uint32_t uniaddr_lo;
	uint16_t blocks_hi;
	uint16_t uniaddr_hi;
	uint8_t reserved[52];
} __attribute__((packed));

/* Checked where the library is built; C++ spells it static_assert. */
#ifndef __cplusplus
_Static_assert(sizeof(struct imgfs_super_block) == 128, "superblock size");
_Static_assert(sizeof(struct imgfs_inode_compact) == 32, "compact inode");
_Static_assert(sizeof(struct imgfs_inode_extended) == 64, "extended inode");
_Static_assert(sizeof(struct imgfs_dirent) == 12, "dirent");
_Static_assert(sizeof(struct imgfs_xattr_ibody_header) == 12, "xattr hdr");
_Static_assert(sizeof(struct imgfs_xattr_entry) == 4, "xattr entry");
_Static_assert(sizeof(struct imgfs_map_header) == 8, "map header");
_Static_assert(sizeof(struct imgfs_lcluster_index) == 8, "lcluster index");
_Static_assert(sizeof(struct imgfs_chunk_index) == 8, "chunk index");
_Static_assert(sizeof(struct imgfs_device_slot) == 128, "device slot");
#endif

/* Little-endian accessors for unaligned on-disk bytes. */
static inline uint16_t imgfs_get_le16(const void *p)
{
	const uint8_t *b = (const uint8_t *)p;

	return (uint16_t)(b[0] | (b[1] << 8));
}

static inline uint32_t imgfs_get_le32(const void *p)
{
	const uint8_t *b = (const uint8_t *)p;

	return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
	       ((uint32_t)b[3] << 24);
}

static inline uint64_t imgfs_get_le64(const void *p)
{
	const uint8_t *b = (const uint8_t *)p;

	return (uint64_t)imgfs_get_le32(b) | ((uint64_t)imgfs_get_le32(b + 4) << 32);
}

static inline void imgfs_put_le16(void *p, uint16_t v)
{
	uint8_t *b = (uint8_t *)p;

	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

static inline void imgfs_put_le32(void *p, uint32_t v)
{
	uint8_t *b = (uint8_t *)p;

	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

static inline void imgfs_put_le64(void *p, uint64_t v)
{
	imgfs_put_le32(p, (uint32_t)v);
	imgfs_put_le32((uint8_t *)p + 4, (uint32_t)(v >> 32));
}

/* Linux "new" device number encoding used in i_u. */
static inline uint32_t imgfs_encode_dev(unsigned int major, unsigned int minor)
{
	return (minor & 0xFFu) | (major << 8) | ((minor & ~0xFFu) << 12);
}

static inline unsigned int imgfs_dev_major(uint32_t rdev)
{
	return (rdev & 0xFFF00u) >> 8;
}

static inline unsigned int imgfs_dev_minor(uint32_t rdev)
{
	return (rdev & 0xFFu) | ((rdev >> 12) & 0xFFF00u);
}

/* Size in bytes of the inline xattr area for a given i_xattr_icount. */
static inline unsigned int imgfs_xattr_ibody_size(uint16_t icount)
{
	if (!icount)
		return 0;
	return IMGFS_XATTR_IBODY_HEADER_SIZE + 4u * (icount - 1u);
}

/* On-disk size of one xattr entry, 4-byte aligned. */
static inline unsigned int imgfs_xattr_entry_size(unsigned int name_len,
						   unsigned int value_size)
{
	return (IMGFS_XATTR_ENTRY_SIZE + name_len + value_size + 3u) & ~3u;
}

/* Dirent file type for a POSIX mode. */
static inline unsigned int imgfs_mode_to_ftype(unsigned int mode)
{
	switch (mode & 0170000) {
	case 0100000:
		return IMGFS_FT_REG_FILE;
	case 0040000:
		return IMGFS_FT_DIR;
	case 0020000:
		return IMGFS_FT_CHRDEV;
	case 0060000:
		return IMGFS_FT_BLKDEV;
	case 0010000:
		return IMGFS_FT_FIFO;
	case 0140000:
		return IMGFS_FT_SOCK;
	case 0120000:
		return IMGFS_FT_SYMLINK;
	}
	return IMGFS_FT_UNKNOWN;
}

#endif /* IMGFS_FORMAT_H */
