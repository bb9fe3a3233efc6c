/* SPDX-License-Identifier: MIT */
/*
 * reader_img.h - building small EROFS images byte by byte for the
 * reader and checker unit tests. Everything is placed explicitly (nids,
 * blocks), so a test can make exactly the structure or corruption it needs.
 */
#ifndef READER_IMG_H
#define READER_IMG_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/crc32c.h"
#include "imgfs/format.h"

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

/* A zeroed image of @nblocks blocks with a basic superblock. */
static inline void timg_init(struct timg *t, unsigned int bits,
			     size_t nblocks, uint16_t root_nid)
{
	uint8_t *sb;

	t->bits = bits;
	t->bs = 1u << bits;
	t->size = nblocks << bits;
	if (t->size < 4096)
		t->size = 4096;
	t->b = calloc(1, t->size);
	sb = timg_sb(t);
	imgfs_put_le32(sb, IMGFS_SUPER_MAGIC);
	sb[12] = (uint8_t)bits;
	imgfs_put_le16(sb + 14, root_nid);
	imgfs_put_le64(sb + 16, 1);
	imgfs_put_le64(sb + 24, 1600000000); /* epoch */
	imgfs_put_le32(sb + 32, 500); /* fixed_nsec */
	imgfs_put_le32(sb + 36, (uint32_t)(t->size >> bits));
	memcpy(sb + 64, "testvol", 7);
}

/* Recompute and enable the superblock checksum (call last). */
static inline void timg_finish(struct timg *t)
{
	uint32_t len = t->bs > 1024 ? t->bs - 1024 : t->bs;
	uint8_t *sb = timg_sb(t);

	imgfs_put_le32(sb + 8, imgfs_get_le32(sb + 8) |
				       IMGFS_FEATURE_COMPAT_SB_CHKSUM);
	imgfs_put_le32(sb + 4, 0);
	imgfs_put_le32(sb + 4, imgfs_crc32c(0xFFFFFFFFu, sb, len));
}

static inline uint8_t *timg_at(struct timg *t, uint64_t pos)
{
	return t->b + pos;
}

static inline uint64_t timg_nid_pos(struct timg *t, uint64_t nid)
{
	uint32_t meta = imgfs_get_le32(timg_sb(t) + 40);

	return ((uint64_t)meta << t->bits) + (nid << 5);
}

/* Compact inode; returns the byte offset right after it. */
static inline uint64_t timg_compact(struct timg *t, uint64_t nid,
				    unsigned int layout, uint16_t mode,
				    uint16_t nlink, uint32_t size, uint32_t u,
				    uint16_t icount)
{
	uint64_t pos = timg_nid_pos(t, nid);
	uint8_t *p = t->b + pos;

	imgfs_put_le16(p, imgfs_i_format(IMGFS_INODE_COMPACT, layout));
	imgfs_put_le16(p + 2, icount);
	imgfs_put_le16(p + 4, mode);
	imgfs_put_le16(p + 6, nlink);
	imgfs_put_le32(p + 8, size);
	imgfs_put_le32(p + 12, 0);
	imgfs_put_le32(p + 16, u);
	imgfs_put_le32(p + 20, (uint32_t)nid);
	imgfs_put_le16(p + 24, 1000);
	imgfs_put_le16(p + 26, 100);
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
	uint8_t *p = t->b + pos;

	imgfs_put_le16(p, imgfs_i_format(IMGFS_INODE_EXTENDED, layout));
	imgfs_put_le16(p + 2, icount);
	imgfs_put_le16(p + 4, mode);
	imgfs_put_le64(p + 8, size);
	imgfs_put_le32(p + 16, u);
	imgfs_put_le32(p + 20, (uint32_t)nid);
	imgfs_put_le32(p + 24, uid);
	imgfs_put_le32(p + 28, uid + 1);
	imgfs_put_le64(p + 32, (uint64_t)mtime);
	imgfs_put_le32(p + 40, nsec);
	imgfs_put_le32(p + 44, nlink);
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
		size_t len = strlen(de[i].name);

		imgfs_put_le64(p + i * 12, de[i].nid);
		imgfs_put_le16(p + i * 12 + 8, (uint16_t)off);
		p[i * 12 + 10] = de[i].type;
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

	p[0] = (uint8_t)nlen;
	p[1] = index;
	imgfs_put_le16(p + 2, vlen);
	memcpy(p + 4, name, nlen);
	memcpy(p + 4 + nlen, value, vlen);
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
	uint64_t pos, x;
	uint32_t len;

	timg_init(t, 12, 8, SAMPLE_ROOT);
	imgfs_put_le64(timg_sb(t) + 16, 6); /* inos */
	imgfs_put_le32(timg_sb(t) + 44, 1); /* xattr_blkaddr */

	/* root: inline directory block right after the inode */
	pos = timg_nid_pos(t, SAMPLE_ROOT) + IMGFS_INODE_COMPACT_SIZE;
	len = timg_dirblk(t, pos, root, 7);
	timg_compact(t, SAMPLE_ROOT, IMGFS_LAYOUT_FLAT_INLINE, 040755, 3, len,
		     IMGFS_NULL_ADDR, 0);

	/* file: 28-byte xattr area = header, one shared id, one entry */
	pos = timg_extended(t, SAMPLE_FILE, IMGFS_LAYOUT_FLAT_PLAIN, 0100640,
			    2, SAMPLE_FILE_SIZE, 2, 5, 70000, 1700000000,
			    123456789);
	t->b[pos + 4] = 1; /* shared count */
	imgfs_put_le32(t->b + pos + 12, 0); /* shared id 0 */
	timg_xattr(t, pos + 16, IMGFS_XATTR_INDEX_USER, "foo", "bar", 3);
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
