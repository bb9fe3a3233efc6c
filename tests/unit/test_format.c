// SPDX-License-Identifier: MIT
/*
 * The on-disk structure encoders and decoders of lib/format: each one
 * against bytes of real images, and each encode/decode pair round trip.
 *
 * The fixture bytes come from two images mkfs.img made of one pax tar:
 *   dir/       0755, user.foo=bar
 *   dir/file   0644, "hello world\n" x 1000, trusted.x=y
 *   ext        0600, uid 70000, mtime 1700000000.5 (extended inode)
 *   link   ->  dir/file
 * all other times 1600000000, with
 *   mkfs.img -T 1600000000 -U 11111111-2222-3333-4444-555555555555 \
 *            -L fxvol fx.tar plain.img
 *   mkfs.img -T 1600000000 -U 11111111-2222-3333-4444-555555555555 \
 *            -z lz4 fx.tar lz4.img
 * dump.erofs (erofs-utils) reads the same values from them as the
 * checks below: NIDs 1, 5, 9, 11, 13, sizes 73, 43, 0, 8, 12000, uid
 * 70000, mtime 2023-11-14 22:13:20.5, layouts and xattr sizes, and
 * one extent for the compact map of /dir/file: bytes 0..12000 in the
 * pcluster at block 1 (the kernel reads the file back intact).
 * Both superblock checksum ranges hold zeros after the 128 bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "format/acl.h"
#include "format/format.h"
#include "unit.h"

/* plain.img bytes 1024..1151: the superblock */
static const uint8_t sb_plain[128] = {
	0xe2, 0xe1, 0xf5, 0xe0, 0x3f, 0x1b, 0xc7, 0x7f, 0x05, 0x00, 0x00, 0x00,
	0x0c, 0x00, 0x01, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x10, 0x5e, 0x5f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x05, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
	0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55,
	0x55, 0x55, 0x55, 0x55, 0x66, 0x78, 0x76, 0x6f, 0x6c, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* lz4.img bytes 1024..1151: the superblock */
static const uint8_t sb_lz4[128] = {
	0xe2, 0xe1, 0xf5, 0xe0, 0x91, 0x35, 0x04, 0xc6, 0x05, 0x00, 0x00, 0x00,
	0x0c, 0x00, 0x01, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x10, 0x5e, 0x5f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x03, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
	0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55,
	0x55, 0x55, 0x55, 0x55, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* plain.img nid 1: "/", compact, FLAT_INLINE */
static const uint8_t root_inode[32] = {
	0x04, 0x00, 0x00, 0x00, 0xed, 0x41, 0x03, 0x00, 0x49, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* plain.img: the 73-byte inline directory block of "/" */
static const uint8_t root_dirblk[73] = {
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3c, 0x00, 0x02,
	0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3d, 0x00,
	0x02, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3f,
	0x00, 0x02, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x42, 0x00, 0x01, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x45, 0x00, 0x07, 0x00, 0x2e, 0x2e, 0x2e, 0x64, 0x69, 0x72,
	0x65, 0x78, 0x74, 0x6c, 0x69, 0x6e, 0x6b,
};

/* plain.img nid 5: "/dir", compact, then its 24-byte xattr area */
static const uint8_t dir_inode[56] = {
	0x04, 0x00, 0x04, 0x00, 0xed, 0x41, 0x02, 0x00, 0x2b, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xef, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x01, 0x03, 0x00,
	0x66, 0x6f, 0x6f, 0x62, 0x61, 0x72, 0x00, 0x00,
};

/* plain.img nid 9: "/ext", extended */
static const uint8_t ext_inode[64] = {
	0x01, 0x00, 0x00, 0x00, 0x80, 0x81, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00,
	0x00, 0x00, 0x70, 0x11, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xf1, 0x53, 0x65, 0x00, 0x00, 0x00, 0x00, 0x00, 0x65, 0xcd, 0x1d,
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* plain.img nid 13: "/dir/file", compact, then its 20-byte xattr area */
static const uint8_t file_inode[52] = {
	0x00, 0x00, 0x03, 0x00, 0xa4, 0x81, 0x01, 0x00, 0xe0, 0x2e, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff,
	0xff, 0xfd, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x04, 0x01, 0x00, 0x78, 0x79, 0x00, 0x00,
};

/*
 * lz4.img: the map of "/dir/file" (nid 13, COMPRESSED_COMPACT, 3
 * lclusters): the header, then two 8-byte packs of 2 entries (its index
 * starts 32-byte aligned and holds fewer than 16 entries: no 2-byte packs)
 */
static const uint8_t lz4_map[24] = {
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, /* header */
	0x00, 0x10, 0x01, 0x20, 0x00, 0x00, 0x00, 0x00, /* pack 0 */
	0xe0, 0x0e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* pack 1 */
};

/* Encode @want's structure again from what it decoded to: same bytes. */
#define REENCODE(name, want, len)             \
	do {                                  \
		struct imgfs_##name d_;       \
		uint8_t b_[len];              \
                                              \
		memset(b_, 0xA5, sizeof(b_)); \
		name##_decode(want, &d_);     \
		name##_encode(&d_, b_);       \
		CHECK_BYTES(b_, want, len);   \
	} while (0)

static void test_super_real(void)
{
	struct imgfs_super_block sb;
	uint8_t *range = calloc(1, 3072);

	super_block_decode(sb_plain, &sb);
	CHECK(sb.magic == IMGFS_SUPER_MAGIC);
	CHECK(sb.checksum == 0x7FC71B3Fu);
	CHECK(sb.feature_compat == (IMGFS_FEATURE_COMPAT_SB_CHKSUM |
				    IMGFS_FEATURE_COMPAT_XATTR_FILTER));
	CHECK(sb.blkszbits == 12 && sb.sb_extslots == 0);
	CHECK(sb.root_nid == 1 && sb.inos == 5);
	CHECK(sb.epoch == 1600000000 && sb.fixed_nsec == 0);
	CHECK(sb.blocks_lo == 5 && sb.meta_blkaddr == 4 &&
	      sb.xattr_blkaddr == 5);
	CHECK(sb.uuid[0] == 0x11 && sb.uuid[4] == 0x22 && sb.uuid[15] == 0x55);
	CHECK(!memcmp(sb.volume_name, "fxvol\0\0\0\0\0\0\0\0\0\0\0", 16));
	CHECK(sb.feature_incompat == 0 && sb.u1 == 0);
	CHECK(sb.build_time == 0 && sb.packed_nid == 0 && sb.root_nid_64 == 0);
	REENCODE(super_block, sb_plain, IMGFS_SUPER_BASE_SIZE);

	/* the checksum covers bytes 1024..4095 with its own field as 0 */
	CHECK(super_csum_len(4096) == 3072);
	memcpy(range, sb_plain, sizeof(sb_plain));
	CHECK(super_checksum(range, 3072) == 0x7FC71B3Fu);
	CHECK(!memcmp(range, sb_plain, sizeof(sb_plain))); /* not modified */

	super_block_decode(sb_lz4, &sb);
	CHECK(sb.feature_incompat == IMGFS_FEATURE_INCOMPAT_ZERO_PADDING);
	CHECK(sb.u1 == 0xFFFF); /* lz4_max_distance without COMPR_CFGS */
	CHECK(sb.blocks_lo == 3 && sb.meta_blkaddr == 2);
	CHECK(sb.volume_name[0] == 0);
	REENCODE(super_block, sb_lz4, IMGFS_SUPER_BASE_SIZE);
	memcpy(range, sb_lz4, sizeof(sb_lz4));
	CHECK(super_checksum(range, 3072) == sb.checksum);
	free(range);
}

static void test_super_roundtrip(void)
{
	struct imgfs_super_block a = {
		.magic = 0x01020304,
		.checksum = 0x05060708,
		.feature_compat = 0x090A0B0C,
		.blkszbits = 0x0D,
		.sb_extslots = 0x0E,
		.root_nid = 0x0F10,
		.inos = 0x1112131415161718ull,
		.epoch = 0x191A1B1C1D1E1F20ull,
		.fixed_nsec = 0x21222324,
		.blocks_lo = 0x25262728,
		.meta_blkaddr = 0x292A2B2C,
		.xattr_blkaddr = 0x2D2E2F30,
		.feature_incompat = 0x31323334,
		.u1 = 0x3536,
		.extra_devices = 0x3738,
		.devt_slotoff = 0x393A,
		.dirblkbits = 0x3B,
		.xattr_prefix_count = 0x3C,
		.xattr_prefix_start = 0x3D3E3F40,
		.packed_nid = 0x4142434445464748ull,
		.xattr_filter_reserved = 0x49,
		.ishare_xattr_prefix_id = 0x4A,
		.build_time = 0x4B4C4D4E,
		.root_nid_64 = 0x4F50515253545556ull,
	};
	struct imgfs_super_block b;
	uint8_t buf[IMGFS_SUPER_BASE_SIZE];

	memset(a.uuid, 0x57, 16);
	memcpy(a.volume_name, "0123456789abcdef", 16); /* no NUL: 16 bytes */
	memset(buf, 0xFF, sizeof(buf));
	super_block_encode(&a, buf);
	/* spot checks of docs/format.md §3.1 offsets, reserved bytes zero */
	CHECK(buf[0] == 0x04 && buf[12] == 0x0D && buf[14] == 0x10);
	CHECK(buf[84] == 0x36 && buf[90] == 0x3B && buf[105] == 0x4A);
	CHECK(!buf[106] && !buf[107]);
	for (unsigned int i = 120; i < 128; i++)
		CHECK(!buf[i]);
	super_block_decode(buf, &b);
	CHECK(b.magic == a.magic && b.checksum == a.checksum);
	CHECK(b.feature_compat == a.feature_compat);
	CHECK(b.blkszbits == a.blkszbits && b.sb_extslots == a.sb_extslots);
	CHECK(b.root_nid == a.root_nid && b.inos == a.inos);
	CHECK(b.epoch == a.epoch && b.fixed_nsec == a.fixed_nsec);
	CHECK(b.blocks_lo == a.blocks_lo && b.meta_blkaddr == a.meta_blkaddr);
	CHECK(b.xattr_blkaddr == a.xattr_blkaddr);
	CHECK(!memcmp(b.uuid, a.uuid, 16));
	CHECK(!memcmp(b.volume_name, a.volume_name, 16));
	CHECK(b.feature_incompat == a.feature_incompat && b.u1 == a.u1);
	CHECK(b.extra_devices == a.extra_devices);
	CHECK(b.devt_slotoff == a.devt_slotoff);
	CHECK(b.dirblkbits == a.dirblkbits);
	CHECK(b.xattr_prefix_count == a.xattr_prefix_count);
	CHECK(b.xattr_prefix_start == a.xattr_prefix_start);
	CHECK(b.packed_nid == a.packed_nid);
	CHECK(b.xattr_filter_reserved == a.xattr_filter_reserved);
	CHECK(b.ishare_xattr_prefix_id == a.ishare_xattr_prefix_id);
	CHECK(b.build_time == a.build_time && b.root_nid_64 == a.root_nid_64);

	CHECK(super_csum_len(2048) == 1024);
	CHECK(super_csum_len(1024) == 1024);
	CHECK(super_csum_len(512) == 512);
}

static void test_inodes_real(void)
{
	struct imgfs_inode_compact c;
	struct imgfs_inode_extended e;

	inode_compact_decode(root_inode, &c);
	CHECK(c.i_format ==
	      imgfs_i_format(IMGFS_INODE_COMPACT, IMGFS_LAYOUT_FLAT_INLINE));
	CHECK(c.i_xattr_icount == 0 && c.i_mode == 040755 && c.i_nb == 3);
	CHECK(c.i_size == 73 && c.i_mtime == 0 && c.i_u == IMGFS_NULL_ADDR);
	CHECK(c.i_ino == 1 && c.i_uid == 0 && c.i_gid == 0);
	REENCODE(inode_compact, root_inode, IMGFS_INODE_COMPACT_SIZE);

	inode_compact_decode(dir_inode, &c);
	CHECK(imgfs_i_layout(c.i_format) == IMGFS_LAYOUT_FLAT_INLINE);
	CHECK(c.i_xattr_icount == 4 && imgfs_xattr_ibody_size(4) == 24);
	CHECK(c.i_mode == 040755 && c.i_nb == 2 && c.i_size == 43);
	CHECK(c.i_ino == 2);
	REENCODE(inode_compact, dir_inode, IMGFS_INODE_COMPACT_SIZE);

	inode_compact_decode(file_inode, &c);
	CHECK(c.i_format ==
	      imgfs_i_format(IMGFS_INODE_COMPACT, IMGFS_LAYOUT_FLAT_PLAIN));
	CHECK(c.i_xattr_icount == 3 && c.i_mode == 0100644 && c.i_nb == 1);
	CHECK(c.i_size == 12000 && c.i_u == 1 && c.i_ino == 5);
	REENCODE(inode_compact, file_inode, IMGFS_INODE_COMPACT_SIZE);

	/* the compact decoder reads version and layout of either form */
	inode_compact_decode(ext_inode, &c);
	CHECK(imgfs_i_version(c.i_format) == IMGFS_INODE_EXTENDED);
	CHECK(c.i_mode == 0100600);
	inode_extended_decode(ext_inode, &e);
	CHECK(e.i_format ==
	      imgfs_i_format(IMGFS_INODE_EXTENDED, IMGFS_LAYOUT_FLAT_PLAIN));
	CHECK(e.i_xattr_icount == 0 && e.i_mode == 0100600 && e.i_nb == 0);
	CHECK(e.i_size == 0 && e.i_u == 0 && e.i_ino == 3);
	CHECK(e.i_uid == 70000 && e.i_gid == 0);
	CHECK(e.i_mtime == 1700000000 && e.i_mtime_nsec == 500000000);
	CHECK(e.i_nlink == 1);
	REENCODE(inode_extended, ext_inode, IMGFS_INODE_EXTENDED_SIZE);
}

static void test_inodes_roundtrip(void)
{
	struct imgfs_inode_compact c = {
		0x1F, 0x0203, 0xA1FF, 0x0405, 0x06070809, 0x0A0B0C0D,
		0x0E0F1011, 0x12131415, 0x1617, 0x1819,
	}, c2;
	struct imgfs_inode_extended e = {
		0x1F, 0x0203, 0xA1FF, 0x0405, 0x060708090A0B0C0Dull,
		0x0E0F1011, 0x12131415, 0x16171819, 0x1A1B1C1D,
		0x8000000000000001ull, 999999999, 0x1E1F2021,
	}, e2;
	uint8_t b[IMGFS_INODE_EXTENDED_SIZE];

	memset(b, 0xFF, sizeof(b));
	inode_compact_encode(&c, b);
	CHECK(!b[28] && !b[29] && !b[30] && !b[31]); /* reserved */
	inode_compact_decode(b, &c2);
	CHECK(!memcmp(&c, &c2, sizeof(c))); /* no padding in this struct */

	memset(b, 0xFF, sizeof(b));
	inode_extended_encode(&e, b);
	for (unsigned int i = 48; i < 64; i++)
		CHECK(!b[i]);
	inode_extended_decode(b, &e2);
	CHECK(e2.i_format == e.i_format && e2.i_xattr_icount == 0x0203);
	CHECK(e2.i_mode == e.i_mode && e2.i_nb == e.i_nb);
	CHECK(e2.i_size == e.i_size && e2.i_u == e.i_u && e2.i_ino == e.i_ino);
	CHECK(e2.i_uid == e.i_uid && e2.i_gid == e.i_gid);
	CHECK(e2.i_mtime == e.i_mtime && e2.i_mtime_nsec == e.i_mtime_nsec);
	CHECK(e2.i_nlink == e.i_nlink);
}

static void test_dirents(void)
{
	static const struct {
		uint64_t nid;
		uint16_t nameoff;
		uint8_t type;
		const char *name;
	} want[] = {
		{ 1, 60, IMGFS_FT_DIR, "." },
		{ 1, 61, IMGFS_FT_DIR, ".." },
		{ 5, 63, IMGFS_FT_DIR, "dir" },
		{ 9, 66, IMGFS_FT_REG_FILE, "ext" },
		{ 11, 69, IMGFS_FT_SYMLINK, "link" },
	};
	struct imgfs_dirent d = { 0x0102030405060708ull, 0x090A, 0x0B }, d2;
	uint8_t b[IMGFS_DIRENT_SIZE];

	for (unsigned int i = 0; i < 5; i++) {
		const uint8_t *p = root_dirblk + i * IMGFS_DIRENT_SIZE;
		struct imgfs_dirent de;

		dirent_decode(p, &de);
		CHECK(de.nid == want[i].nid && de.nameoff == want[i].nameoff);
		CHECK(de.file_type == want[i].type);
		CHECK(!memcmp(root_dirblk + de.nameoff, want[i].name,
			      strlen(want[i].name)));
		REENCODE(dirent, p, IMGFS_DIRENT_SIZE);
	}
	memset(b, 0xFF, sizeof(b));
	dirent_encode(&d, b);
	CHECK(b[11] == 0); /* reserved */
	dirent_decode(b, &d2);
	CHECK(d2.nid == d.nid && d2.nameoff == d.nameoff &&
	      d2.file_type == d.file_type);
}

static void test_xattrs_real(void)
{
	const uint8_t *area = dir_inode + IMGFS_INODE_COMPACT_SIZE;
	struct imgfs_xattr_ibody_header h;
	struct imgfs_xattr_entry e;

	/* /dir: user.foo=bar, inline */
	xattr_ibody_header_decode(area, &h);
	CHECK(h.h_shared_count == 0);
	CHECK(h.h_name_filter ==
	      ~(1u << xattr_filter_bit(IMGFS_XATTR_INDEX_USER, "foo", 3)));
	REENCODE(xattr_ibody_header, area, IMGFS_XATTR_IBODY_HEADER_SIZE);
	xattr_entry_decode(area + 12, &e);
	CHECK(e.e_name_len == 3 && e.e_name_index == IMGFS_XATTR_INDEX_USER);
	CHECK(e.e_value_size == 3 && !memcmp(area + 16, "foobar", 6));
	CHECK(imgfs_xattr_entry_size(e.e_name_len, e.e_value_size) == 12);
	REENCODE(xattr_entry, area + 12, IMGFS_XATTR_ENTRY_SIZE);

	/* /dir/file: trusted.x=y */
	area = file_inode + IMGFS_INODE_COMPACT_SIZE;
	xattr_ibody_header_decode(area, &h);
	CHECK(h.h_shared_count == 0);
	CHECK(h.h_name_filter ==
	      ~(1u << xattr_filter_bit(IMGFS_XATTR_INDEX_TRUSTED, "x", 1)));
	CHECK(h.h_name_filter == 0xFFFDFFFFu);
	xattr_entry_decode(area + 12, &e);
	CHECK(e.e_name_len == 1 && e.e_name_index == IMGFS_XATTR_INDEX_TRUSTED);
	CHECK(e.e_value_size == 1 && !memcmp(area + 16, "xy", 2));
}

static void test_xattrs_roundtrip(void)
{
	static const uint8_t want_prefix[3] = { 0x09, 0x00, 0x04 };
	struct imgfs_xattr_ibody_header h = { .h_name_filter = 0x89ABCDEF,
					      .h_shared_count = 3 };
	struct imgfs_xattr_ibody_header h2;
	struct imgfs_xattr_long_prefix lp = { 9, IMGFS_XATTR_INDEX_TRUSTED };
	struct imgfs_xattr_entry e = { 0xFE, 0x81, 0xFEDC }, e2;
	uint8_t area[IMGFS_XATTR_IBODY_HEADER_SIZE + 12];

	memset(area, 0xFF, sizeof(area));
	xattr_ibody_header_encode(&h, area);
	for (unsigned int i = 5; i < 12; i++)
		CHECK(!area[i]); /* reserved */
	xattr_shared_id_encode(area, 0, 7);
	xattr_shared_id_encode(area, 2, 0x01020304);
	xattr_ibody_header_decode(area, &h2);
	CHECK(h2.h_name_filter == h.h_name_filter && h2.h_shared_count == 3);
	CHECK(xattr_shared_id_decode(area, 0) == 7);
	CHECK(xattr_shared_id_decode(area, 1) == 0xFFFFFFFFu);
	CHECK(xattr_shared_id_decode(area, 2) == 0x01020304);
	CHECK(area[20] == 0x04 && area[23] == 0x01);

	xattr_entry_encode(&e, area);
	xattr_entry_decode(area, &e2);
	CHECK(e2.e_name_len == 0xFE && e2.e_name_index == 0x81 &&
	      e2.e_value_size == 0xFEDC);

	/* docs/format.md §7.5: "trusted.overlay." as base 4 + "overlay." */
	xattr_long_prefix_encode(&lp, area);
	CHECK_BYTES(area, want_prefix, 3);
	REENCODE(xattr_long_prefix, want_prefix,
		 IMGFS_XATTR_LONG_PREFIX_HDR_SIZE);
}

static void test_xattr_names(void)
{
	const char *suffix;
	uint8_t index;

	CHECK(!xattr_split_name("user.foo", &index, &suffix));
	CHECK(index == IMGFS_XATTR_INDEX_USER && !strcmp(suffix, "foo"));
	CHECK(!xattr_split_name("security.selinux", &index, &suffix));
	CHECK(index == IMGFS_XATTR_INDEX_SECURITY);
	CHECK(!xattr_split_name("trusted.", &index, &suffix));
	CHECK(index == IMGFS_XATTR_INDEX_TRUSTED && !*suffix);
	CHECK(!xattr_split_name("system.posix_acl_default", &index, &suffix));
	CHECK(index == IMGFS_XATTR_INDEX_POSIX_ACL_DEFAULT && !*suffix);
	CHECK(xattr_split_name("system.posix_acl_access2", &index, &suffix) ==
	      -EOPNOTSUPP);
	CHECK(xattr_split_name("lustre.x", &index, &suffix) == -EOPNOTSUPP);
	CHECK(xattr_split_name("system.foo", &index, &suffix) == -EOPNOTSUPP);
	CHECK(!strcmp(imgfs_xattr_prefix(IMGFS_XATTR_INDEX_LUSTRE), "lustre."));
	CHECK(!strcmp(imgfs_xattr_prefix(IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS),
		      "system.posix_acl_access"));
	CHECK(!imgfs_xattr_prefix(0) && !imgfs_xattr_prefix(7) &&
	      !imgfs_xattr_prefix(0x84));
}

static void test_chunk_index(void)
{
	static const uint8_t want[8] = { 0x01, 0x00, 0x02, 0x00,
					 0xEF, 0xCD, 0xAB, 0x89 };
	struct imgfs_chunk_index ci = { 1, 2, 0x89ABCDEF }, ci2;
	uint8_t b[IMGFS_CHUNK_INDEX_SIZE];

	chunk_index_encode(&ci, b);
	CHECK_BYTES(b, want, 8);
	chunk_index_decode(b, &ci2);
	CHECK(ci2.startblk_hi == 1 && ci2.device_id == 2 &&
	      ci2.startblk_lo == 0x89ABCDEF);
}

static void test_block_map(void)
{
	static const uint8_t want[8] = { 0x78, 0x56, 0x34, 0x12,
					 0xFF, 0xFF, 0xFF, 0xFF };
	uint8_t b[8];

	block_map_encode(b, 0, 0x12345678);
	block_map_encode(b, 1, IMGFS_NULL_ADDR);
	CHECK_BYTES(b, want, 8);
	CHECK(block_map_decode(b, 0) == 0x12345678);
	CHECK(block_map_decode(b, 1) == IMGFS_NULL_ADDR);
}

/*
 * The device slot of a tar-index image (docs/format.md §10.4): mkfs.img
 * --tar-index -T 1 of a 10240-byte pax tar holding one 6-byte file gives a
 * 4-block index; its slot at byte 1152 maps the tar's 20 blocks at 4.
 */
static void test_device_slot(void)
{
	uint8_t real[IMGFS_DEVICE_SLOT_SIZE] = { 0 };
	struct imgfs_device_slot d, a = {
		.blocks_lo = 0x12345678,
		.uniaddr_lo = 0x9ABCDEF0,
		.blocks_hi = 0x0102,
		.uniaddr_hi = 0x0304,
	};
	uint8_t b[IMGFS_DEVICE_SLOT_SIZE];

	real[64] = 0x14;
	real[68] = 0x04;
	device_slot_decode(real, &d);
	CHECK(d.blocks_lo == 20 && d.uniaddr_lo == 4);
	CHECK(!d.blocks_hi && !d.uniaddr_hi && !d.tag[0]);
	REENCODE(device_slot, real, IMGFS_DEVICE_SLOT_SIZE);

	memcpy(a.tag, "sha256:0123", 11);
	memset(b, 0xFF, sizeof(b));
	device_slot_encode(&a, b);
	CHECK(!memcmp(b, "sha256:0123", 11) && !b[11] && !b[63]);
	CHECK(b[64] == 0x78 && b[67] == 0x12 && b[68] == 0xF0 &&
	      b[72] == 0x02 && b[74] == 0x04 && b[75] == 0x03);
	for (unsigned int i = 76; i < IMGFS_DEVICE_SLOT_SIZE; i++)
		CHECK(!b[i]);
	device_slot_decode(b, &d);
	CHECK(!memcmp(d.tag, a.tag, sizeof(a.tag)));
	CHECK(device_slot_blocks(&d, true) == 0x010212345678ull);
	CHECK(device_slot_uniaddr(&d, true) == 0x03049ABCDEF0ull);
	/* without 48BIT the high halves are not part of the values */
	CHECK(device_slot_blocks(&d, false) == 0x12345678);
	CHECK(device_slot_uniaddr(&d, false) == 0x9ABCDEF0);
}

/* §3.5: the LZ4 record is 14 bytes; a length of 0 reads as 65536. */
static void test_compr_cfg_len(void)
{
	uint8_t b[IMGFS_COMPR_CFG_HDR_SIZE];

	compr_cfg_len_encode(b, 14);
	CHECK(b[0] == 14 && b[1] == 0);
	CHECK(compr_cfg_len_decode(b) == 14);
	compr_cfg_len_encode(b, 0);
	CHECK(compr_cfg_len_decode(b) == 65536);
}

/* §3.5: the four records, reserved bytes zero; a 64 KiB LZ4 pcluster. */
static void test_compr_cfgs(void)
{
	static const uint8_t lz4[14] = { 0xFF, 0xFF, 0x10, 0x00 };
	static const uint8_t lzma[14] = { 0x00, 0x00, 0x80, 0x00 };
	static const uint8_t zstd[6] = { 0x00, 0x07 };
	static const uint8_t deflate[6] = { 0x0F };
	struct imgfs_lz4_cfg l4 = { 0xFFFF, 16 }, l4b;
	struct imgfs_lzma_cfg lz = { 8u << 20, 0 }, lzb;
	struct imgfs_zstd_cfg zs = { 0, 7 }, zsb;
	struct imgfs_deflate_cfg df = { 15 }, dfb;
	uint8_t b[14];

	memset(b, 0xA5, sizeof(b));
	lz4_cfg_encode(&l4, b);
	CHECK_BYTES(b, lz4, 14);
	lz4_cfg_decode(b, &l4b);
	CHECK(l4b.max_distance == 0xFFFF && l4b.max_pclusterblks == 16);
	memset(b, 0xA5, sizeof(b));
	lzma_cfg_encode(&lz, b);
	CHECK_BYTES(b, lzma, 14);
	lzma_cfg_decode(b, &lzb);
	CHECK(lzb.dict_size == 8u << 20 && lzb.format == 0);
	memset(b, 0xA5, sizeof(b));
	zstd_cfg_encode(&zs, b);
	CHECK_BYTES(b, zstd, 6);
	zstd_cfg_decode(b, &zsb);
	CHECK(zsb.format == 0 && zsb.windowlog == 7);
	memset(b, 0xA5, sizeof(b));
	deflate_cfg_encode(&df, b);
	CHECK_BYTES(b, deflate, 6);
	deflate_cfg_decode(b, &dfb);
	CHECK(dfb.windowbits == 15);
}

/* The reserved bytes the checker reports: decoded, never encoded. */
static void test_reserved(void)
{
	struct imgfs_super_block sb = { .magic = IMGFS_SUPER_MAGIC };
	struct imgfs_xattr_ibody_header h = { .h_shared_count = 1 };
	uint8_t b[IMGFS_SUPER_BASE_SIZE];

	sb.reserved_set = true;
	super_block_encode(&sb, b);
	CHECK(!b[106] && !b[107]);
	super_block_decode(b, &sb);
	CHECK(!sb.reserved_set);
	b[107] = 1;
	super_block_decode(b, &sb);
	CHECK(sb.reserved_set);

	xattr_ibody_header_encode(&h, b);
	xattr_ibody_header_decode(b, &h);
	CHECK(!h.reserved_set && h.h_shared_count == 1);
	b[11] = 0x80;
	xattr_ibody_header_decode(b, &h);
	CHECK(h.reserved_set);
}

static void test_map_header(void)
{
	/* docs/format.md §9.2: a whole-file fragment at 269335 */
	static const uint8_t whole[8] = { 0x17, 0x1c, 0x04, 0x00,
					  0x00, 0x00, 0x00, 0x80 };
	static const uint8_t frag[8] = { 0x78, 0x56, 0x34, 0x12,
					 0x26, 0x00, 0x03, 0x00 };
	static const uint8_t tail[8] = { 0x00, 0x00, 0x64, 0x00,
					 0x09, 0x00, 0x00, 0x00 };
	struct imgfs_map_header h = { 0 };
	uint8_t b[IMGFS_MAP_HEADER_SIZE];

	map_header_decode(lz4_map, &h);
	CHECK(!h.fragment_inode);
	CHECK(h.h_advise == IMGFS_ADVISE_COMPACTED_2B);
	CHECK(h.h_algorithmtype == IMGFS_COMPR_LZ4 && h.h_clusterbits == 0);
	CHECK(h.h_idata_size == 0 && h.h_fragmentoff == 0);
	REENCODE(map_header, lz4_map, IMGFS_MAP_HEADER_SIZE);

	map_header_decode(whole, &h);
	CHECK(h.fragment_inode && h.fragment_off == 269335);
	h = (struct imgfs_map_header){ .fragment_inode = true,
				       .fragment_off = 269335,
				       .h_advise = 0xFFFF };
	map_header_encode(&h, b);
	CHECK_BYTES(b, whole, 8);

	h = (struct imgfs_map_header){
		.h_fragmentoff = 0x12345678,
		.h_idata_size = 0xFFFF,
		.h_advise = IMGFS_ADVISE_FRAGMENT_PCLUSTER |
			    IMGFS_ADVISE_BIG_PCLUSTER_1 |
			    IMGFS_ADVISE_BIG_PCLUSTER_2,
		.h_algorithmtype = IMGFS_COMPR_ZSTD,
	};
	map_header_encode(&h, b);
	CHECK_BYTES(b, frag, 8);
	h = (struct imgfs_map_header){
		.h_fragmentoff = 0xFFFFFFFF,
		.h_idata_size = 100,
		.h_advise = IMGFS_ADVISE_INLINE_PCLUSTER |
			    IMGFS_ADVISE_COMPACTED_2B,
	};
	map_header_encode(&h, b);
	CHECK_BYTES(b, tail, 8);
	map_header_decode(tail, &h);
	CHECK(!h.fragment_inode && h.h_idata_size == 100 &&
	      h.h_advise == 0x0009);
}

static void test_lcluster_index(void)
{
	/* records 1, 8 and 12 of the worked example of docs/format.md §9.5 */
	static const uint8_t rec1[8] = { 0x02, 0x00, 0x00, 0x00,
					 0x04, 0x08, 0x07, 0x00 };
	static const uint8_t rec8[8] = { 0x01, 0x00, 0xc9, 0x07,
					 0x48, 0x00, 0x00, 0x00 };
	static const uint8_t rec12[8] = { 0x00, 0x00, 0x3e, 0x08,
					  0x00, 0x00, 0x00, 0x00 };
	struct imgfs_lcluster_index li;
	uint8_t b[IMGFS_LCLUSTER_INDEX_SIZE];

	lcluster_index_decode(rec1, &li);
	CHECK((li.di_advise & IMGFS_LI_TYPE_MASK) == IMGFS_LCLUSTER_NONHEAD);
	CHECK(li.di_delta[0] == (IMGFS_LI_D0_CBLKCNT | 4) &&
	      li.di_delta[1] == 7);
	REENCODE(lcluster_index, rec1, IMGFS_LCLUSTER_INDEX_SIZE);
	lcluster_index_decode(rec8, &li);
	CHECK(li.di_advise == IMGFS_LCLUSTER_HEAD1);
	CHECK(li.di_clusterofs == 1993 && li.di_blkaddr == 72);
	REENCODE(lcluster_index, rec8, IMGFS_LCLUSTER_INDEX_SIZE);
	lcluster_index_decode(rec12, &li);
	CHECK(li.di_advise == IMGFS_LCLUSTER_PLAIN);
	CHECK(li.di_clusterofs == 2110 && li.di_blkaddr == 0);
	REENCODE(lcluster_index, rec12, IMGFS_LCLUSTER_INDEX_SIZE);

	/* a head writes its address, a NONHEAD its deltas, never both */
	li = (struct imgfs_lcluster_index){ .di_advise = IMGFS_LCLUSTER_HEAD1,
					    .di_clusterofs = 1993,
					    .di_blkaddr = 72,
					    .di_delta = { 0xAAAA, 0xBBBB } };
	lcluster_index_encode(&li, b);
	CHECK_BYTES(b, rec8, 8);
	li = (struct imgfs_lcluster_index){
		.di_advise = IMGFS_LCLUSTER_NONHEAD,
		.di_blkaddr = 0xCCCCCCCC,
		.di_delta = { IMGFS_LI_D0_CBLKCNT | 4, 7 },
	};
	lcluster_index_encode(&li, b);
	CHECK_BYTES(b, rec1, 8);
}

static void test_compact_packs(void)
{
	static const struct {
		unsigned int lo, type;
	} want[4] = {
		{ 0, IMGFS_LCLUSTER_HEAD1 }, /* extent at 0, block base + 1 */
		{ 1, IMGFS_LCLUSTER_NONHEAD },
		{ 3808, IMGFS_LCLUSTER_PLAIN }, /* terminator: 12000 - 2 * 4096
						 */
		{ 0, IMGFS_LCLUSTER_PLAIN }, /* past the end, unused */
	};
	uint8_t pack[32], again[32];
	unsigned int type;

	for (unsigned int i = 0; i < 4; i++) {
		const uint8_t *p = lz4_map + 8 + 8 * (i / 2);

		CHECK(compact_entry_decode(p, 16, 12, i % 2, &type) ==
		      want[i].lo);
		CHECK(type == want[i].type);
		CHECK(compact_blkaddr_decode(p, 8) == 0);
	}
	for (unsigned int k = 0; k < 2; k++) {
		memset(again, 0, 8);
		for (unsigned int i = 0; i < 2; i++)
			compact_entry_encode(again, 16, 12, i,
					     want[2 * k + i].lo,
					     want[2 * k + i].type);
		compact_blkaddr_encode(again, 8, 0);
		CHECK_BYTES(again, lz4_map + 8 + 8 * k, 8);
	}

	/* a 32-byte pack: 16 entries of 14 bits, then the base */
	memset(pack, 0, sizeof(pack));
	for (unsigned int i = 0; i < 16; i++)
		compact_entry_encode(pack, 14, 12, i, 4095 - 255 * i, i & 3);
	compact_blkaddr_encode(pack, 32, 0xDEADBEEF);
	CHECK(pack[28] == 0xEF && pack[31] == 0xDE);
	for (unsigned int i = 0; i < 16; i++) {
		CHECK(compact_entry_decode(pack, 14, 12, i, &type) ==
		      4095 - 255 * i);
		CHECK(type == (i & 3));
	}
	CHECK(compact_blkaddr_decode(pack, 32) == 0xDEADBEEF);
	/* a value wider than lobits does not reach the type bits */
	memset(pack, 0, 8);
	compact_entry_encode(pack, 16, 12, 0, 0x1FFF, 0);
	CHECK(compact_entry_decode(pack, 16, 12, 0, &type) == 0xFFF);
	CHECK(type == 0);
}

static void test_acl_entry(void)
{
	/* docs/format.md §8.1: user 1000 rw- */
	static const uint8_t want[8] = { 0x02, 0x00, 0x06, 0x00,
					 0xe8, 0x03, 0x00, 0x00 };
	struct imgfs_acl_entry e = { IMGFS_ACL_USER, 6, 1000 }, e2;
	uint8_t b[IMGFS_ACL_ENTRY_SIZE];

	acl_entry_encode(&e, b);
	CHECK_BYTES(b, want, 8);
	acl_entry_decode(b, &e2);
	CHECK(e2.e_tag == IMGFS_ACL_USER && e2.e_perm == 6 && e2.e_id == 1000);
	REENCODE(acl_entry, want, IMGFS_ACL_ENTRY_SIZE);
	acl_version_encode(b, IMGFS_ACL_XATTR_VERSION);
	CHECK(b[0] == 2 && !b[1] && !b[2] && !b[3]);
	CHECK(acl_version_decode(b) == IMGFS_ACL_XATTR_VERSION);
}

static void test_names(void)
{
	CHECK(!strcmp(imgfs_compr_alg_name(IMGFS_COMPR_LZ4), "lz4"));
	CHECK(!strcmp(imgfs_compr_alg_name(IMGFS_COMPR_ZSTD), "zstd"));
	CHECK(!imgfs_compr_alg_name(IMGFS_COMPR_MAX));
	CHECK(!strcmp(imgfs_layout_name(IMGFS_LAYOUT_CHUNK_BASED),
		      "chunk_based"));
	CHECK(!imgfs_layout_name(IMGFS_LAYOUT_MAX));
	CHECK(!strcmp(
		imgfs_feature_compat_name(IMGFS_FEATURE_COMPAT_XATTR_FILTER),
		"xattr_filter"));
	CHECK(!strcmp(imgfs_feature_incompat_name(IMGFS_FEATURE_INCOMPAT_48BIT),
		      "48bit"));
	CHECK(!imgfs_feature_incompat_name(0x200));
	CHECK(!strcmp(imgfs_mode_type_name(0120777), "symlink"));
}

int main(void)
{
	test_super_real();
	test_super_roundtrip();
	test_inodes_real();
	test_inodes_roundtrip();
	test_dirents();
	test_xattrs_real();
	test_xattrs_roundtrip();
	test_xattr_names();
	test_chunk_index();
	test_block_map();
	test_device_slot();
	test_compr_cfg_len();
	test_compr_cfgs();
	test_reserved();
	test_map_header();
	test_lcluster_index();
	test_compact_packs();
	test_acl_entry();
	test_names();
	return unit_done("test_format");
}
