// SPDX-License-Identifier: MIT
/*
 * test_reader.c - the image reader on hand-built images: superblock,
 * inodes, directories, lookup, xattrs, data layouts, and the refusals of
 * malformed structures.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imgfs/reader.h"
#include "reader_img.h"
#include "unit.h"

static struct imgfs_image *open_mem(struct timg *t, unsigned int flags,
				    int *ret)
{
	struct imgfs_error err = { 0 };
	struct imgfs_image *img = NULL;

	*ret = imgfs_image_open_mem(t->b, t->size, flags, &img, &err);
	if (*ret)
		CHECK(err.code == *ret && err.msg[0]);
	return img;
}

static void test_superblock(void)
{
	struct timg t;
	const struct imgfs_sb_info *sb;
	struct imgfs_image *img;
	int ret;

	timg_sample(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(!ret && img);
	sb = imgfs_image_sb(img);
	CHECK(sb->blksz == 4096 && sb->blkszbits == 12);
	CHECK(sb->root_nid == SAMPLE_ROOT);
	CHECK(sb->inos == 6);
	CHECK(sb->epoch == 1600000000 && sb->fixed_nsec == 500);
	CHECK(sb->checksum_ok && sb->checksum == sb->checksum_calc);
	CHECK(!strcmp(sb->label, "testvol"));
	CHECK(sb->xattr_blkaddr == 1 && sb->blocks == 8);
	CHECK(sb->image_size == 8 * 4096);
	imgfs_image_close(img);
	free(t.b);
}

struct names {
	char buf[512];
	unsigned int n;
	uint64_t nids[16];
	unsigned int types[16];
};

static int collect(void *arg, const struct imgfs_dirent_info *de)
{
	struct names *n = arg;

	strcat(n->buf, de->name);
	strcat(n->buf, ",");
	if (n->n < 16) {
		n->nids[n->n] = de->nid;
		n->types[n->n] = de->file_type;
	}
	n->n++;
	return 0;
}

static void test_inodes_dirs(void)
{
	struct imgfs_error err = { 0 };
	struct imgfs_inode in;
	struct names n = { 0 };
	struct imgfs_image *img;
	uint64_t nid;
	unsigned int ft;
	struct timg t;
	int ret;

	timg_sample(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(!imgfs_inode_read_root(img, &in, &err));
	CHECK(in.nid == SAMPLE_ROOT && imgfs_inode_is_dir(&in));
	CHECK(in.layout == IMGFS_LAYOUT_FLAT_INLINE && in.nlink == 3);
	CHECK(in.version == IMGFS_INODE_COMPACT && in.uid == 1000 &&
	      in.gid == 100);
	/* compact: epoch + i_mtime (0), fixed_nsec */
	CHECK(in.mtime == 1600000000 && in.mtime_nsec == 500);
	CHECK(!imgfs_dir_iterate(img, &in, collect, &n, &err));
	CHECK(!strcmp(n.buf, ".,..,dev,file,hard,link,sub,"));
	CHECK(n.n == 7 && n.nids[3] == SAMPLE_FILE && n.nids[4] == SAMPLE_FILE);
	CHECK(n.types[2] == IMGFS_FT_CHRDEV && n.types[6] == IMGFS_FT_DIR);

	CHECK(!imgfs_inode_read(img, SAMPLE_FILE, &in, &err));
	CHECK(in.version == IMGFS_INODE_EXTENDED && in.inode_size == 64);
	CHECK(in.uid == 70000 && in.gid == 70001 && in.nlink == 2);
	CHECK(in.mtime == 1700000000 && in.mtime_nsec == 123456789);
	CHECK(in.mode == 0100640 && in.size == SAMPLE_FILE_SIZE);
	CHECK(in.startblk == 2 && !in.startblk_null);
	CHECK(in.xattr_isize == 28 && in.data_pos == in.pos + 64 + 28);

	CHECK(!imgfs_inode_read(img, SAMPLE_DEV, &in, &err));
	CHECK(imgfs_dev_major(in.rdev) == 1 && imgfs_dev_minor(in.rdev) == 3);

	CHECK(!imgfs_lookup(img, "/sub/inner", &nid, &err) &&
	      nid == SAMPLE_INNER);
	CHECK(!imgfs_lookup(img, "sub//inner/", &nid, &err) &&
	      nid == SAMPLE_INNER);
	CHECK(!imgfs_lookup(img, "/", &nid, &err) && nid == SAMPLE_ROOT);
	CHECK(!imgfs_lookup(img, "sub/..", &nid, &err) && nid == SAMPLE_ROOT);
	CHECK(imgfs_lookup(img, "/sub/missing", &nid, &err) == -ENOENT);
	CHECK(imgfs_lookup(img, "/file/x", &nid, &err) == -ENOTDIR);
	CHECK(!imgfs_inode_read(img, SAMPLE_ROOT, &in, &err));
	CHECK(!imgfs_dir_lookup(img, &in, "link", 4, &nid, &ft, &err) &&
	      nid == SAMPLE_LINK && ft == IMGFS_FT_SYMLINK);
	imgfs_image_close(img);
	free(t.b);
}

static void test_data(void)
{
	static const size_t lens[] = { 1, 95, 4095, 4096, 4097, 5000, 9000 };
	struct imgfs_error err = { 0 };
	struct imgfs_extent ext;
	struct imgfs_inode in;
	struct imgfs_image *img;
	uint8_t buf[9000];
	char target[32];
	struct timg t;
	uint64_t off;
	size_t i, k;
	int ret;

	timg_sample(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(!imgfs_inode_read(img, SAMPLE_FILE, &in, &err));
	for (off = 0; off < SAMPLE_FILE_SIZE + 10; off += 1237) {
		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			ssize_t n = imgfs_read(img, &in, off, buf, lens[i],
					       &err);
			size_t want = off >= SAMPLE_FILE_SIZE ? 0 :
				      SAMPLE_FILE_SIZE - off < lens[i] ?
				      SAMPLE_FILE_SIZE - off : lens[i];
			int same = 1;

			CHECK(n == (ssize_t)want);
			for (k = 0; k < want; k++)
				same &= buf[k] == sample_byte(off + k);
			CHECK(same);
		}
	}
	CHECK(!imgfs_map(img, &in, 4999, &ext, &err));
	CHECK(ext.kind == IMGFS_EXTENT_PLAIN && ext.logical == 0 &&
	      ext.length == SAMPLE_FILE_SIZE && ext.pos == 2 * 4096 &&
	      ext.plen == 8192);
	CHECK(imgfs_map(img, &in, 5000, &ext, &err) == -EINVAL);

	CHECK(!imgfs_inode_read(img, SAMPLE_INNER, &in, &err));
	CHECK(imgfs_read(img, &in, 3, buf, 100, &err) == 7);
	CHECK(!memcmp(buf, "3456789", 7));
	CHECK(!imgfs_map(img, &in, 0, &ext, &err));
	CHECK(ext.kind == IMGFS_EXTENT_INLINE &&
	      ext.pos == timg_nid_pos(&t, SAMPLE_INNER) + 32 &&
	      ext.length == 10);

	CHECK(!imgfs_inode_read(img, SAMPLE_LINK, &in, &err));
	CHECK(imgfs_readlink(img, &in, target, sizeof(target), &err) == 6);
	CHECK(!strcmp(target, "target"));
	CHECK(imgfs_readlink(img, &in, target, 6, &err) == -ERANGE);
	CHECK(!imgfs_inode_read(img, SAMPLE_INNER, &in, &err));
	CHECK(imgfs_readlink(img, &in, target, sizeof(target), &err) ==
	      -EINVAL);
	imgfs_image_close(img);
	free(t.b);
}

struct xlist {
	char buf[512];
	unsigned int shared;
};

static int xcollect(void *arg, const struct imgfs_xattr_info *x)
{
	struct xlist *l = arg;

	strcat(l->buf, x->name);
	strcat(l->buf, "=");
	strncat(l->buf, x->value, x->value_size);
	strcat(l->buf, ";");
	l->shared += x->shared;
	return 0;
}

static void test_xattrs(void)
{
	struct imgfs_error err = { 0 };
	struct xlist l = { .shared = 0 };
	struct imgfs_inode in;
	struct imgfs_image *img;
	char v[8];
	struct timg t;
	uint64_t pos;
	int ret;

	timg_sample(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(!imgfs_inode_read(img, SAMPLE_FILE, &in, &err));
	CHECK(!imgfs_xattr_iterate(img, &in, false, xcollect, &l, &err));
	/* inline entries first, then shared ones */
	CHECK(!strcmp(l.buf, "user.foo=bar;trusted.sh=v;"));
	CHECK(l.shared == 1);
	CHECK(imgfs_getxattr(img, &in, "trusted.sh", v, sizeof(v), &err) == 1 &&
	      v[0] == 'v');
	CHECK(imgfs_getxattr(img, &in, "user.bar", v, sizeof(v), &err) ==
	      -ENODATA);
	imgfs_image_close(img);

	/* an inline entry running past the area */
	pos = timg_nid_pos(&t, SAMPLE_FILE) + 64 + 16;
	t.b[pos + 2] = 40;
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(!imgfs_inode_read(img, SAMPLE_FILE, &in, &err));
	memset(&l, 0, sizeof(l));
	CHECK(imgfs_xattr_iterate(img, &in, false, xcollect, &l, &err) ==
	      -EUCLEAN);
	imgfs_image_close(img);
	t.b[pos + 2] = 3;

	/* a shared id far beyond the image */
	imgfs_put_le32(t.b + pos - 4, 0x40000000);
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(!imgfs_inode_read(img, SAMPLE_FILE, &in, &err));
	CHECK(imgfs_xattr_iterate(img, &in, false, xcollect, &l, &err) ==
	      -EUCLEAN);
	imgfs_image_close(img);
	imgfs_put_le32(t.b + pos - 4, 0);

	/* too many shared ids for the area */
	t.b[timg_nid_pos(&t, SAMPLE_FILE) + 64 + 4] = 9;
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(!imgfs_inode_read(img, SAMPLE_FILE, &in, &err));
	CHECK(imgfs_xattr_iterate(img, &in, false, xcollect, &l, &err) ==
	      -EUCLEAN);
	imgfs_image_close(img);

	/* icount 1: a 12-byte area the kernel refuses */
	imgfs_put_le16(t.b + timg_nid_pos(&t, SAMPLE_FILE) + 2, 1);
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(!imgfs_inode_read(img, SAMPLE_FILE, &in, &err));
	CHECK(imgfs_xattr_iterate(img, &in, false, xcollect, &l, &err) ==
	      -EOPNOTSUPP);
	imgfs_image_close(img);
	free(t.b);
}

static void test_long_prefix(void)
{
	struct imgfs_error err = { 0 };
	struct xlist l = { .shared = 0 };
	struct imgfs_inode in;
	struct imgfs_image *img;
	unsigned int base;
	const char *infix;
	size_t ilen;
	struct timg t;
	uint64_t pos;
	uint8_t *sb;
	int ret;

	timg_sample(&t);
	sb = timg_sb(&t);
	/* table at byte 4096 + 64 (inside the shared area block) */
	imgfs_put_le32(sb + 80, IMGFS_FEATURE_INCOMPAT_XATTR_PREFIXES);
	imgfs_put_le32(sb + 8, IMGFS_FEATURE_COMPAT_PLAIN_XATTR_PFX);
	sb[91] = 1;
	imgfs_put_le32(sb + 92, (4096 + 64) / 4);
	imgfs_put_le16(t.b + 4096 + 64, 9);
	t.b[4096 + 66] = IMGFS_XATTR_INDEX_TRUSTED;
	memcpy(t.b + 4096 + 67, "overlay.", 8);
	/* replace the inline user.foo by a long-prefixed "opaque" = "y" */
	pos = timg_nid_pos(&t, SAMPLE_FILE) + 64 + 16;
	memset(t.b + pos, 0, 12);
	timg_xattr(&t, pos, 0x80, "opaque", "y", 1);
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(!ret);
	CHECK(!imgfs_image_long_prefix(img, 0, &base, &infix, &ilen));
	CHECK(base == IMGFS_XATTR_INDEX_TRUSTED && ilen == 8 &&
	      !memcmp(infix, "overlay.", 8));
	CHECK(imgfs_image_long_prefix(img, 1, &base, &infix, &ilen) == -ENOENT);
	CHECK(!imgfs_inode_read(img, SAMPLE_FILE, &in, &err));
	CHECK(!imgfs_xattr_iterate(img, &in, false, xcollect, &l, &err));
	CHECK(!strcmp(l.buf, "trusted.overlay.opaque=y;trusted.sh=v;"));
	imgfs_image_close(img);

	/* a prefix record of length 0 is refused at open */
	imgfs_put_le16(t.b + 4096 + 64, 0);
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(ret == -EUCLEAN && !img);
	free(t.b);
}

static void test_superblock_errors(void)
{
	struct imgfs_image *img;
	struct timg t;
	int ret;

	timg_sample(&t);
	t.b[1024] ^= 1;
	img = open_mem(&t, 0, &ret);
	CHECK(ret == -EINVAL && !img);
	t.b[1024] ^= 1;

	t.b[1024 + 12] = 8;
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(ret == -EINVAL);
	t.b[1024 + 12] = 13;
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(ret == -EINVAL);
	t.b[1024 + 12] = 12;

	t.b[1024 + 90] = 1; /* dirblkbits */
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(ret == -EINVAL);
	t.b[1024 + 90] = 0;

	t.b[1024 + 13] = 200; /* sb_extslots beyond a page */
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(ret == -EINVAL);
	t.b[1024 + 13] = 0;

	/* bad checksum: refused, or opened and flagged on request */
	timg_finish(&t);
	t.b[3000] ^= 0x40;
	img = open_mem(&t, 0, &ret);
	CHECK(ret == -EBADMSG && !img);
	img = open_mem(&t, IMGFS_OPEN_IGNORE_CHECKSUM, &ret);
	CHECK(!ret && !imgfs_image_sb(img)->checksum_ok);
	imgfs_image_close(img);
	t.b[3000] ^= 0x40;

	/* unknown incompat feature */
	imgfs_put_le32(t.b + 1024 + 80, 0x200);
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(ret == -EOPNOTSUPP);
	img = open_mem(&t, IMGFS_OPEN_IGNORE_FEATURES, &ret);
	CHECK(!ret && imgfs_image_sb(img)->unknown_incompat == 0x200);
	imgfs_image_close(img);
	imgfs_put_le32(t.b + 1024 + 80, 0);

	/* unknown compat: opens, reported */
	imgfs_put_le32(t.b + 1024 + 8, 0x400);
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(!ret && imgfs_image_sb(img)->unknown_compat == 0x400);
	imgfs_image_close(img);

	/* truncated images */
	{
		struct imgfs_error err = { 0 };

		CHECK(imgfs_image_open_mem(t.b, 1100, 0, &img, &err) == -EINVAL);
		CHECK(imgfs_image_open_mem(t.b, 0, 0, &img, &err) == -EINVAL);
		CHECK(imgfs_image_open_mem(t.b, 2048, 0, &img, &err) == -EINVAL);
	}
	free(t.b);
}

static void test_inode_errors(void)
{
	struct imgfs_error err = { 0 };
	struct imgfs_inode in;
	struct imgfs_image *img;
	struct timg t;
	uint8_t *p;
	int ret;

	timg_sample(&t);
	img = open_mem(&t, 0, &ret);
	p = t.b + timg_nid_pos(&t, SAMPLE_INNER);
	p[0] |= 0x20; /* reserved i_format bit */
	CHECK(imgfs_inode_read(img, SAMPLE_INNER, &in, &err) == -EUCLEAN);
	p[0] = (uint8_t)imgfs_i_format(0, 5);
	CHECK(imgfs_inode_read(img, SAMPLE_INNER, &in, &err) == -EUCLEAN);
	p[0] = (uint8_t)imgfs_i_format(0, IMGFS_LAYOUT_FLAT_INLINE);
	imgfs_put_le16(p + 4, 0170644); /* bogus type */
	CHECK(imgfs_inode_read(img, SAMPLE_INNER, &in, &err) == -EUCLEAN);
	imgfs_put_le16(p + 4, 0100600);
	CHECK(!imgfs_inode_read(img, SAMPLE_INNER, &in, &err));
	/* nids outside the image or in a metabox */
	CHECK(imgfs_inode_read(img, 8 * 4096 / 32, &in, &err) == -EUCLEAN);
	CHECK(imgfs_inode_read(img, UINT64_MAX >> 1, &in, &err) == -EUCLEAN);
	CHECK(imgfs_inode_read(img, 1ull << 63, &in, &err) == -EOPNOTSUPP);
	/* extended inode with a negative size */
	p = t.b + timg_nid_pos(&t, SAMPLE_FILE);
	p[15] = 0x80;
	CHECK(imgfs_inode_read(img, SAMPLE_FILE, &in, &err) == -EUCLEAN);
	p[15] = 0;
	/* xattr area running past the image end */
	p = t.b + timg_nid_pos(&t, SAMPLE_DEV);
	imgfs_put_le16(p + 2, 0xFFFF);
	imgfs_image_close(img);
	{
		struct imgfs_image *small;

		CHECK(!imgfs_image_open_mem(t.b, 3 * 4096,
					   IMGFS_OPEN_IGNORE_CHECKSUM, &small,
					   &err));
		CHECK(imgfs_inode_read(small, SAMPLE_DEV, &in, &err) ==
		      -EUCLEAN);
		imgfs_image_close(small);
	}
	free(t.b);
}

static void test_inline_and_dir_errors(void)
{
	struct imgfs_error err = { 0 };
	struct names n = { 0 };
	struct imgfs_inode in;
	struct imgfs_image *img;
	uint8_t buf[64];
	struct timg t;
	uint64_t pos;
	int ret;

	timg_sample(&t);
	img = open_mem(&t, 0, &ret);
	/* inline tail that would cross the block: make inner 4000 bytes */
	imgfs_put_le32(t.b + timg_nid_pos(&t, SAMPLE_INNER) + 8, 4000);
	CHECK(!imgfs_inode_read(img, SAMPLE_INNER, &in, &err));
	CHECK(imgfs_read(img, &in, 0, buf, sizeof(buf), &err) == -EUCLEAN);
	imgfs_put_le32(t.b + timg_nid_pos(&t, SAMPLE_INNER) + 8, 10);

	/* FLAT_PLAIN data beyond the image */
	imgfs_put_le32(t.b + timg_nid_pos(&t, SAMPLE_FILE) + 16, 7);
	CHECK(!imgfs_inode_read(img, SAMPLE_FILE, &in, &err));
	CHECK(imgfs_read(img, &in, 0, buf, sizeof(buf), &err) == -EUCLEAN);
	imgfs_put_le32(t.b + timg_nid_pos(&t, SAMPLE_FILE) + 16, 2);

	/* directory blocks */
	pos = 4 * 4096;
	CHECK(!imgfs_inode_read(img, SAMPLE_SUB, &in, &err));
	CHECK(!imgfs_dir_iterate(img, &in, collect, &n, &err));
	CHECK(!strcmp(n.buf, ".,..,inner,"));
	imgfs_put_le16(t.b + pos + 8, 35); /* nameoff0 not a multiple of 12 */
	CHECK(imgfs_dir_iterate(img, &in, collect, &n, &err) == -EUCLEAN);
	imgfs_put_le16(t.b + pos + 8, 36);
	t.b[pos + 36 + 3 + 2] = '/'; /* "in/er" */
	CHECK(imgfs_dir_iterate(img, &in, collect, &n, &err) == -EUCLEAN);
	t.b[pos + 36 + 3 + 2] = 'n';
	imgfs_put_le16(t.b + pos + 12 + 8, 36); /* ".." nameoff == "." */
	CHECK(imgfs_dir_iterate(img, &in, collect, &n, &err) == -EUCLEAN);
	imgfs_put_le16(t.b + pos + 12 + 8, 37);
	imgfs_put_le16(t.b + pos + 24 + 8, 5000); /* past the block */
	CHECK(imgfs_dir_iterate(img, &in, collect, &n, &err) == -EUCLEAN);
	imgfs_put_le16(t.b + pos + 24 + 8, 39);
	memset(n.buf, 0, sizeof(n.buf));
	CHECK(!imgfs_dir_iterate(img, &in, collect, &n, &err));
	CHECK(!strcmp(n.buf, ".,..,inner,"));
	imgfs_image_close(img);
	free(t.b);
}

/* Chunk-based files: 4-byte block map and 8-byte indexes, with holes. */
static void test_chunks(void)
{
	struct imgfs_error err = { 0 };
	struct imgfs_extent ext;
	struct imgfs_inode in;
	struct imgfs_image *img;
	uint8_t buf[4 * 4096];
	struct timg t;
	uint64_t pos;
	int ret, i, ok;

	timg_sample(&t);
	imgfs_put_le32(timg_sb(&t) + 80, IMGFS_FEATURE_INCOMPAT_CHUNKED_FILE);
	/* inner -> chunk-based, 1-block chunks, size 3.5 blocks:
	 * chunk 0 -> block 5, chunk 1 hole, chunk 2 -> block 6, 3 -> block 5 */
	pos = timg_compact(&t, SAMPLE_INNER, IMGFS_LAYOUT_CHUNK_BASED, 0100600,
			   1, 3 * 4096 + 2048, 0, 0);
	imgfs_put_le32(t.b + pos, 5);
	imgfs_put_le32(t.b + pos + 4, IMGFS_NULL_ADDR);
	imgfs_put_le32(t.b + pos + 8, 6);
	imgfs_put_le32(t.b + pos + 12, 5);
	memset(t.b + 5 * 4096, 0xAA, 4096);
	memset(t.b + 6 * 4096, 0xBB, 4096);
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(!ret);
	CHECK(!imgfs_inode_read(img, SAMPLE_INNER, &in, &err));
	CHECK(in.chunkbits == 12);
	CHECK(imgfs_read(img, &in, 0, buf, sizeof(buf), &err) ==
	      3 * 4096 + 2048);
	ok = 1;
	for (i = 0; i < 3 * 4096 + 2048; i++)
		ok &= buf[i] == (i < 4096 ? 0xAA : i < 8192 ? 0 :
				 i < 12288 ? 0xBB : 0xAA);
	CHECK(ok);
	CHECK(!imgfs_map(img, &in, 5000, &ext, &err));
	CHECK(ext.kind == IMGFS_EXTENT_HOLE && ext.logical == 4096 &&
	      ext.length == 4096);
	CHECK(!imgfs_map(img, &in, 13000, &ext, &err));
	CHECK(ext.kind == IMGFS_EXTENT_PLAIN && ext.pos == 5 * 4096 &&
	      ext.length == 2048 && (ext.flags & IMGFS_EXTENT_F_SHARED));
	imgfs_image_close(img);

	/* 8-byte chunk indexes (format 0x20), 2-block chunks */
	pos = timg_compact(&t, SAMPLE_INNER, IMGFS_LAYOUT_CHUNK_BASED, 0100600,
			   1, 3 * 4096, IMGFS_CHUNK_FORMAT_INDEXES | 1, 0);
	memset(t.b + pos, 0, 16);
	imgfs_put_le32(t.b + pos + 4, 5);
	imgfs_put_le32(t.b + pos + 12, IMGFS_NULL_ADDR);
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(!imgfs_inode_read(img, SAMPLE_INNER, &in, &err));
	CHECK(imgfs_read(img, &in, 0, buf, sizeof(buf), &err) == 3 * 4096);
	ok = 1;
	for (i = 0; i < 3 * 4096; i++)
		ok &= buf[i] == (i < 4096 ? 0xAA : i < 8192 ? 0xBB : 0);
	CHECK(ok);
	/* device id without a device table, and a bad chunk format */
	imgfs_put_le16(t.b + pos + 2, 1);
	CHECK(imgfs_read(img, &in, 0, buf, 10, &err) < 0);
	imgfs_put_le16(t.b + pos + 2, 0);
	imgfs_put_le16(t.b + timg_nid_pos(&t, SAMPLE_INNER) + 16, 0x80);
	CHECK(imgfs_inode_read(img, SAMPLE_INNER, &in, &err) == -EUCLEAN);
	imgfs_image_close(img);
	free(t.b);
}

/* 512-byte blocks: superblock in block 2, checksum over one block. */
static void test_small_blocks(void)
{
	static const struct tdirent root[] = {
		{ ".", 40, IMGFS_FT_DIR },
		{ "..", 40, IMGFS_FT_DIR },
		{ "f", 48, IMGFS_FT_REG_FILE },
	};
	struct imgfs_error err = { 0 };
	struct imgfs_inode in;
	struct imgfs_image *img;
	uint8_t buf[1500];
	struct timg t;
	uint64_t pos;
	uint32_t len;
	int ret, i, ok = 1;

	timg_init(&t, 9, 12, 40);
	pos = timg_nid_pos(&t, 40) + 32;
	len = timg_dirblk(&t, pos, root, 3);
	timg_compact(&t, 40, IMGFS_LAYOUT_FLAT_INLINE, 040755, 2, len,
		     IMGFS_NULL_ADDR, 0);
	/* file of 1300 bytes: blocks 8, 9 and an inline tail of 276 bytes
	 * right after the inode at byte 1568 (block 3) */
	pos = timg_compact(&t, 48, IMGFS_LAYOUT_FLAT_INLINE, 0100644, 1, 1300,
			   8, 0);
	for (i = 0; i < 1024; i++)
		t.b[8 * 512 + i] = (uint8_t)i;
	for (i = 1024; i < 1300; i++)
		t.b[pos + i - 1024] = (uint8_t)i;
	timg_finish(&t);
	img = open_mem(&t, 0, &ret);
	CHECK(!ret && imgfs_image_sb(img)->blksz == 512);
	CHECK(!imgfs_inode_read(img, 48, &in, &err));
	CHECK(imgfs_read(img, &in, 0, buf, sizeof(buf), &err) == 1300);
	for (i = 0; i < 1300; i++)
		ok &= buf[i] == (uint8_t)i;
	CHECK(ok);
	imgfs_image_close(img);
	/* the checksum covers bytes 1024..1535 only */
	t.b[1600] ^= 1;
	img = open_mem(&t, 0, &ret);
	CHECK(!ret);
	imgfs_image_close(img);
	t.b[1500] ^= 1;
	img = open_mem(&t, 0, &ret);
	CHECK(ret == -EBADMSG);
	free(t.b);
}

/* File and fd openers, and a file truncated after the superblock. */
static void test_open_file(void)
{
	char path[] = "/tmp/imgfs-test-reader-XXXXXX";
	struct imgfs_error err = { 0 };
	struct imgfs_inode in;
	struct imgfs_image *img;
	uint8_t buf[64];
	struct timg t;
	int fd;

	timg_sample(&t);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, t.b, t.size) == (ssize_t)t.size);
	CHECK(!imgfs_image_open(path, 0, &img, &err));
	CHECK(!imgfs_inode_read(img, SAMPLE_FILE, &in, &err));
	CHECK(imgfs_read(img, &in, 4096, buf, 10, &err) == 10);
	CHECK(buf[0] == sample_byte(4096));
	imgfs_image_close(img);
	CHECK(ftruncate(fd, 3 * 4096 + 100) == 0);
	CHECK(!imgfs_image_open_fd(fd, 0, &img, &err));
	/* an extent not entirely inside the image is refused as a whole */
	CHECK(!imgfs_inode_read(img, SAMPLE_FILE, &in, &err));
	CHECK(imgfs_read(img, &in, 0, buf, 10, &err) == -EUCLEAN);
	CHECK(!imgfs_inode_read(img, SAMPLE_INNER, &in, &err));
	CHECK(imgfs_read(img, &in, 0, buf, 10, &err) == 10);
	/* small reads come from 4 KiB units kept in memory: the last unit is
	 * short, a read across two units goes to the file, a read past the
	 * end is refused before any of it; the third unit is left unread */
	for (uint64_t off = 0; off + sizeof(buf) <= 3 * 4096 + 100; off += 1000) {
		if (off >> 12 == 2)
			continue;
		CHECK(!imgfs_image_pread(img, buf, sizeof(buf), off, &err));
		CHECK(!memcmp(buf, t.b + off, sizeof(buf)));
	}
	CHECK(!imgfs_image_pread(img, buf, 36, 3 * 4096 + 64, &err));
	CHECK(!memcmp(buf, t.b + 3 * 4096 + 64, 36));
	CHECK(!imgfs_image_pread(img, buf, 64, 2 * 4096 - 32, &err));
	CHECK(!memcmp(buf, t.b + 2 * 4096 - 32, 64));
	CHECK(imgfs_image_pread(img, buf, 64, 3 * 4096 + 64, &err) ==
	      -EUCLEAN);
	/* once the file shrank under the image: a unit read before is kept,
	 * the unit not read yet fails, nothing is made up */
	CHECK(ftruncate(fd, 4096) == 0);
	CHECK(imgfs_image_pread(img, buf, 16, 3 * 4096 + 8, &err) == 0);
	CHECK(!memcmp(buf, t.b + 3 * 4096 + 8, 16));
	CHECK(imgfs_image_pread(img, buf, 16, 2 * 4096 + 3000, &err) == -EIO);
	imgfs_image_close(img);
	CHECK(imgfs_image_open("/nonexistent/imgfs", 0, &img, &err) == -ENOENT);
	close(fd);
	unlink(path);
	free(t.b);
}

int main(void)
{
	test_superblock();
	test_inodes_dirs();
	test_data();
	test_xattrs();
	test_long_prefix();
	test_superblock_errors();
	test_inode_errors();
	test_inline_and_dir_errors();
	test_chunks();
	test_small_blocks();
	test_open_file();
	return unit_done("test_reader");
}
