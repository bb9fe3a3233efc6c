/* SPDX-License-Identifier: MIT */
/*
 * imgfs/format.h - EROFS on-disk format constants (docs/format.md).
 *
 * Sizes, magic numbers, feature and flag bits, enumerations and small
 * helpers that callers of the reader need to interpret what it returns.
 * The structures themselves are encoded and decoded in one place inside
 * the library (lib/format/), never by casting image bytes to a struct;
 * all multi-byte fields are little-endian: the imgfs_get_le*() /
 * imgfs_put_le*() helpers below read and write them on any host.
 */
#ifndef IMGFS_FORMAT_H
#define IMGFS_FORMAT_H

#include <stdint.h>
#include <string.h>

#include "imgfs/api.h"

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
#define IMGFS_LCLUSTER_INDEX_SIZE 8u
#define IMGFS_CHUNK_INDEX_SIZE 8u
#define IMGFS_ACL_HEADER_SIZE 4u
#define IMGFS_ACL_ENTRY_SIZE 8u
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

/* chunk info format word (i_u low 16 bits for CHUNK_BASED) */
#define IMGFS_CHUNK_FORMAT_BLKBITS_MASK 0x001Fu
#define IMGFS_CHUNK_FORMAT_INDEXES 0x0020u
#define IMGFS_CHUNK_FORMAT_48BIT 0x0040u
#define IMGFS_CHUNK_FORMAT_ALL 0x007Fu

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

#define IMGFS_LI_TYPE_MASK 0x0003u
#define IMGFS_LI_PARTIAL_REF 0x8000u
#define IMGFS_LI_D0_CBLKCNT 0x0800u

/* Compression config record sizes after the superblock (COMPR_CFGS). */
#define IMGFS_LZ4_CFGS_SIZE 14u
#define IMGFS_LZMA_CFGS_SIZE 14u
#define IMGFS_DEFLATE_CFGS_SIZE 6u
#define IMGFS_ZSTD_CFGS_SIZE 6u

enum imgfs_compr_alg {
	IMGFS_COMPR_LZ4 = 0,
	IMGFS_COMPR_LZMA = 1,
	IMGFS_COMPR_DEFLATE = 2,
	IMGFS_COMPR_ZSTD = 3,
	IMGFS_COMPR_MAX = 4,
};

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

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Prefix string of a short xattr name index (1..6), or NULL. Index 5
 * (lustre.) is returned although the kernel ignores it.
 */
IMGFS_API
const char *imgfs_xattr_prefix(unsigned int index);

/*
 * Names of on-disk values, for front ends. Each returns a static string,
 * or NULL when the value has no name (unknown feature bit, layout, ...).
 */

/* Name of the single feature bit @mask of feature_compat ("sb_chksum"). */
IMGFS_API
const char *imgfs_feature_compat_name(uint32_t mask);

/*
 * Name of the single feature bit @mask of feature_incompat. Bits with two
 * names get the first one: 0x2 "compr_cfgs" (big_pcluster), 0x8
 * "device_table" (compr_head2), 0x20 "fragments" (dedupe).
 */
IMGFS_API
const char *imgfs_feature_incompat_name(uint32_t mask);

/* "flat_plain", "compressed_full", "flat_inline", "compressed_compact",
 * "chunk_based". */
IMGFS_API
const char *imgfs_layout_name(unsigned int layout);

/* "lz4", "lzma", "deflate", "zstd". */
IMGFS_API
const char *imgfs_compr_alg_name(unsigned int alg);

/*
 * File type of a POSIX @mode: "regular", "directory", "symlink",
 * "chardev", "blockdev", "fifo", "socket"; NULL for anything else.
 */
IMGFS_API
const char *imgfs_mode_type_name(uint32_t mode);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_FORMAT_H */
