/* SPDX-License-Identifier: MIT */
/*
 * reader_img.h - building small EROFS images for the reader and checker
 * unit tests. Everything is placed explicitly (nids, blocks), so a test
 * can make exactly the structure or corruption it needs; the structures
 * are written by the library's encoders (lib/format).
 */
#ifndef READER_IMG_H
#define READER_IMG_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "format/format.h"

struct timg {
	uint8_t *b;
	size_t size;
	unsigned int bits;
	uint32_t bs;
};

struct tdirent {
	const char *name;
	uint64_t nid;
	uint8_t type;
};

static inline uint8_t *timg_sb(struct timg *t)
{
	return t->b + IMGFS_SUPER_OFFSET;
}

static inline void timg_sb_get(struct timg *t, struct imgfs_super_block *sb)
{
	super_block_decode(timg_sb(t), sb);
}

static inline void timg_sb_put(struct timg *t,
			       const struct imgfs_super_block *sb)
{
	super_block_encode(sb, timg_sb(t));
}

/* A zeroed image of @nblocks blocks with a basic superblock. */
static inline void timg_init(struct timg *t, unsigned int bits,
			     size_t nblocks, uint16_t root_nid)
{
	struct imgfs_super_block sb = {
		.magic = IMGFS_SUPER_MAGIC,
		.blkszbits = (uint8_t)bits,
		.root_nid = root_nid,
		.inos = 1,
		.epoch = 1600000000,
		.fixed_nsec = 500,
	};

	t->bits = bits;
	t->bs = 1u << bits;
	t->size = nblocks << bits;
	if (t->size < 4096)
		t->size = 4096;
	t->b = calloc(1, t->size);
	sb.blocks_lo = (uint32_t)(t->size >> bits);
	memcpy(sb.volume_name, "testvol", 7);
	timg_sb_put(t, &sb);
}

/* Recompute and enable the superblock checksum (call last). */
static inline void timg_finish(struct timg *t)
{
	struct imgfs_super_block sb;

	timg_sb_get(t, &sb);
	sb.feature_compat |= IMGFS_FEATURE_COMPAT_SB_CHKSUM;
	timg_sb_put(t, &sb);
	sb.checksum = super_checksum(timg_sb(t), super_csum_len(t->bs));
	timg_sb_put(t, &sb);
}

static inline uint8_t *timg_at(struct timg *t, uint64_t pos)
{
	return t->b + pos;
}

static inline uint64_t timg_nid_pos(struct timg *t, uint64_t nid)
{
	struct imgfs_super_block sb;

	timg_sb_get(t, &sb);
	return ((uint64_t)sb.meta_blkaddr << t->bits) +
	       (nid << IMGFS_ISLOTBITS);
}

/* Compact inode; returns the byte offset right after it. */
static inline uint64_t timg_compact(struct timg *t, uint64_t nid,
				    unsigned int layout, uint16_t mode,
				    uint16_t nlink, uint32_t size, uint32_t u,
				    uint16_t icount)
{
	uint64_t pos = timg_nid_pos(t, nid);
	struct imgfs_inode_compact di = {
		.i_format = imgfs_i_format(IMGFS_INODE_COMPACT, layout),
		.i_xattr_icount = icount,
		.i_mode = mode,
		.i_nb = nlink,
		.i_size = size,
		.i_u = u,
		.i_ino = (uint32_t)nid,
		.i_uid = 1000,
		.i_gid = 100,
	};

	inode_compact_encode(&di, t->b + pos);
	return pos + IMGFS_INODE_COMPACT_SIZE;
}

/* Extended inode; returns the byte offset right after it. */
static inline uint64_t timg_extended(struct timg *t, uint64_t nid,
				     unsigned int layout, uint16_t mode,
				     uint32_t nlink, uint64_t size, uint32_t u,
				     uint16_t icount, uint32_t uid,
				     int64_t mtime, uint32_t nsec)
{
	uint64_t pos = timg_nid_pos(t, nid);
	struct imgfs_inode_extended di = {
		.i_format = imgfs_i_format(IMGFS_INODE_EXTENDED, layout),
		.i_xattr_icount = icount,
		.i_mode = mode,
		.i_size = size,
		.i_u = u,
		.i_ino = (uint32_t)nid,
		.i_uid = uid,
		.i_gid = uid + 1,
		.i_mtime = (uint64_t)mtime,
		.i_mtime_nsec = nsec,
		.i_nlink = nlink,
	};

	inode_extended_encode(&di, t->b + pos);
	return pos + IMGFS_INODE_EXTENDED_SIZE;
}

/* Write a directory block of @n entries at @pos; returns its length. */
static inline uint32_t timg_dirblk(struct timg *t, uint64_t pos,
				   const struct tdirent *de, unsigned int n)
{
	uint8_t *p = t->b + pos;
	uint32_t off = n * IMGFS_DIRENT_SIZE;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct imgfs_dirent d = { .nid = de[i].nid,
					  .nameoff = (uint16_t)off,
					  .file_type = de[i].type };
		size_t len = strlen(de[i].name);

		dirent_encode(&d, p + i * IMGFS_DIRENT_SIZE);
		memcpy(p + off, de[i].name, len);
		off += (uint32_t)len;
	}
	return off;
}

/* Append an xattr entry at @pos; returns the position after it. */
static inline uint64_t timg_xattr(struct timg *t, uint64_t pos,
				  uint8_t index, const char *name,
				  const void *value, uint16_t vlen)
{
	uint8_t *p = t->b + pos;
	size_t nlen = strlen(name);
	struct imgfs_xattr_entry e = { .e_name_len = (uint8_t)nlen,
				       .e_name_index = index,
				       .e_value_size = vlen };

	xattr_entry_encode(&e, p);
	memcpy(p + IMGFS_XATTR_ENTRY_SIZE, name, nlen);
	memcpy(p + IMGFS_XATTR_ENTRY_SIZE + nlen, value, vlen);
	return pos + imgfs_xattr_entry_size((unsigned int)nlen, vlen);
}

/*
 * The sample image used by several tests (4 KiB blocks, 8 blocks):
 *   nid 36 "/"      compact dir, FLAT_INLINE, nlink 3
 *   nid 48 "/file"  extended reg, FLAT_PLAIN 5000 bytes at blocks 2-3,
 *                   uid 70000, mtime 1700000000.123456789, nlink 2,
 *                   xattrs user.foo=bar (inline), trusted.sh=v (shared id 0)
 *   "/hard"         hard link to /file
 *   nid 52 "/link"  compact symlink, FLAT_INLINE "target"
 *   nid 56 "/sub"   compact dir, FLAT_PLAIN at block 4
 *   nid 60 "/sub/inner" compact reg, FLAT_INLINE "0123456789"
 *   nid 64 "/dev"   compact char device 1:3
 * Shared xattrs at block 1 (xattr_blkaddr 1).
 */
#define SAMPLE_ROOT 36
#define SAMPLE_FILE 48
#define SAMPLE_LINK 52
#define SAMPLE_SUB 56
#define SAMPLE_INNER 60
#define SAMPLE_DEV 64
#define SAMPLE_FILE_SIZE 5000u

static inline uint8_t sample_byte(uint64_t i)
{
	return (uint8_t)(i * 7 + (i >> 8));
}

static inline void timg_sample(struct timg *t)
{
	static const struct tdirent root[] = {
		{ ".", SAMPLE_ROOT, IMGFS_FT_DIR },
		{ "..", SAMPLE_ROOT, IMGFS_FT_DIR },
		{ "dev", SAMPLE_DEV, IMGFS_FT_CHRDEV },
		{ "file", SAMPLE_FILE, IMGFS_FT_REG_FILE },
		{ "hard", SAMPLE_FILE, IMGFS_FT_REG_FILE },
		{ "link", SAMPLE_LINK, IMGFS_FT_SYMLINK },
		{ "sub", SAMPLE_SUB, IMGFS_FT_DIR },
	};
	static const struct tdirent sub[] = {
		{ ".", SAMPLE_SUB, IMGFS_FT_DIR },
		{ "..", SAMPLE_ROOT, IMGFS_FT_DIR },
		{ "inner", SAMPLE_INNER, IMGFS_FT_REG_FILE },
	};
	struct imgfs_xattr_ibody_header xh = { .h_shared_count = 1 };
	struct imgfs_super_block sb;
	uint64_t pos, x;
	uint32_t len;

	timg_init(t, 12, 8, SAMPLE_ROOT);
	timg_sb_get(t, &sb);
	sb.inos = 6;
	sb.xattr_blkaddr = 1;
	timg_sb_put(t, &sb);

	/* root: inline directory block right after the inode */
	pos = timg_nid_pos(t, SAMPLE_ROOT) + IMGFS_INODE_COMPACT_SIZE;
	len = timg_dirblk(t, pos, root, 7);
	timg_compact(t, SAMPLE_ROOT, IMGFS_LAYOUT_FLAT_INLINE, 040755, 3, len,
		     IMGFS_NULL_ADDR, 0);

	/* file: 28-byte xattr area = header, one shared id, one entry */
	pos = timg_extended(t, SAMPLE_FILE, IMGFS_LAYOUT_FLAT_PLAIN, 0100640,
			    2, SAMPLE_FILE_SIZE, 2, 5, 70000, 1700000000,
			    123456789);
	xattr_ibody_header_encode(&xh, t->b + pos);
	xattr_shared_id_encode(t->b + pos, 0, 0);
	timg_xattr(t, pos + IMGFS_XATTR_IBODY_HEADER_SIZE + 4,
		   IMGFS_XATTR_INDEX_USER, "foo", "bar", 3);
	for (x = 0; x < SAMPLE_FILE_SIZE; x++)
		t->b[2 * 4096 + x] = sample_byte(x);
	timg_xattr(t, 4096, IMGFS_XATTR_INDEX_TRUSTED, "sh", "v", 1);

	/* link */
	pos = timg_compact(t, SAMPLE_LINK, IMGFS_LAYOUT_FLAT_INLINE, 0120777,
			   1, 6, IMGFS_NULL_ADDR, 0);
	memcpy(t->b + pos, "target", 6);

	/* sub: one plain directory block at block 4 */
	len = timg_dirblk(t, 4 * 4096, sub, 3);
	timg_compact(t, SAMPLE_SUB, IMGFS_LAYOUT_FLAT_PLAIN, 040700, 2, len, 4,
		     0);

	/* inner */
	pos = timg_compact(t, SAMPLE_INNER, IMGFS_LAYOUT_FLAT_INLINE, 0100600,
			   1, 10, IMGFS_NULL_ADDR, 0);
	memcpy(t->b + pos, "0123456789", 10);

	/* dev */
	timg_compact(t, SAMPLE_DEV, IMGFS_LAYOUT_FLAT_PLAIN, 020644, 1, 0,
		     imgfs_encode_dev(1, 3), 0);
	timg_finish(t);
}

#endif /* READER_IMG_H */
