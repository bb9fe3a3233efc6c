// SPDX-License-Identifier: MIT
/*
 * Reading and validating inodes (docs/format.md §4, §4.9); the bytes are
 * decoded by lib/format/inode.c.
 */
#include <errno.h>
#include <string.h>

#include "reader/internal.h"
#include "util/error.h"

#define NID_METABOX_BIT (1ull << 63)

static bool mode_type_ok(uint32_t mode)
{
	return imgfs_mode_to_ftype(mode) != IMGFS_FT_UNKNOWN;
}

static void decode_compact(const struct imgfs_image *img,
			   struct imgfs_inode *inode,
			   const struct imgfs_inode_compact *di)
{
	bool dir = (inode->mode & 0170000) == 0040000;

	inode->size = di->i_size;
	inode->mtime = img->sb.epoch + (int64_t)di->i_mtime;
	inode->mtime_nsec = img->sb.fixed_nsec;
	inode->uid = di->i_uid;
	inode->gid = di->i_gid;
	inode->startblk = inode->raw_u;
	if (!dir && inode->nlink_1) {
		inode->nlink = 1;
		inode->startblk |= (uint64_t)inode->raw_nb << 32;
	} else {
		inode->nlink = inode->raw_nb;
	}
}

static void decode_extended(struct imgfs_inode *inode,
			    const struct imgfs_inode_extended *di)
{
	inode->size = di->i_size;
	inode->uid = di->i_uid;
	inode->gid = di->i_gid;
	inode->mtime = (int64_t)di->i_mtime;
	inode->mtime_nsec = di->i_mtime_nsec;
	inode->nlink = di->i_nlink;
	/* 6.15+ kernels always take i_nb as startblk_hi here. */
	inode->startblk = inode->raw_u | ((uint64_t)inode->raw_nb << 32);
}

static int decode_layout(const struct imgfs_image *img,
			 struct imgfs_inode *inode, struct imgfs_error *err)
{
	bool is48 = img->sb.feature_incompat & IMGFS_FEATURE_INCOMPAT_48BIT;
	uint64_t mask = is48 ? (1ull << 48) - 1 : (1ull << 32) - 1;

	if (inode->layout >= IMGFS_LAYOUT_MAX)
		return error_set(err, -IMGFS_EFSCORRUPTED,
				 "nid %llu: unsupported data layout %u",
				 (unsigned long long)inode->nid, inode->layout);
	if (inode->layout != IMGFS_LAYOUT_CHUNK_BASED) {
		inode->startblk_null = (inode->startblk & mask) == mask;
		return 0;
	}
	inode->chunk_format = (uint16_t)inode->raw_u;
	if ((inode->chunk_format & ~IMGFS_CHUNK_FORMAT_ALL) ||
	    (inode->raw_u >> 16))
		return error_set(err, -IMGFS_EFSCORRUPTED,
				 "nid %llu: unsupported chunk format 0x%x",
				 (unsigned long long)inode->nid, inode->raw_u);
	inode->chunkbits = img->blkszbits +
			   (inode->chunk_format & IMGFS_CHUNK_FORMAT_BLKBITS_MASK);
	inode->startblk = 0;
	return 0;
}

static int check_nid(const struct imgfs_image *img, uint64_t nid,
		     struct imgfs_error *err)
{
	if (nid & NID_METABOX_BIT)
		return error_set(
			err, -EOPNOTSUPP,
			"nid %llu: inodes inside a metabox are not supported",
			(unsigned long long)nid);
	if (nid > (UINT64_MAX - img->meta_base) >> IMGFS_ISLOTBITS ||
	    !img_range_ok(img, nid_pos(img, nid), IMGFS_INODE_COMPACT_SIZE))
		return error_set(
			err, -IMGFS_EFSCORRUPTED,
			"nid %llu: inode is beyond the end of the image",
			(unsigned long long)nid);
	return 0;
}

int imgfs_inode_read(struct imgfs_image *img, uint64_t nid,
		     struct imgfs_inode *inode, struct imgfs_error *err)
{
	uint8_t b[IMGFS_INODE_EXTENDED_SIZE];
	struct imgfs_inode_compact dc;
	size_t got = IMGFS_INODE_EXTENDED_SIZE;
	int ret;

	memset(inode, 0, sizeof(*inode));
	ret = check_nid(img, nid, err);
	if (ret)
		return ret;
	inode->nid = nid;
	inode->pos = nid_pos(img, nid);
	/* one read serves both forms (a read costs more than 32 bytes do),
	 * unless a compact inode ends the image */
	if (!img_range_ok(img, inode->pos, got))
		got = IMGFS_INODE_COMPACT_SIZE;
	ret = img_read(img, b, got, inode->pos, "inode", nid, err);
	if (ret)
		return ret;
	/* the fields read here sit at the same offsets in both forms */
	inode_compact_decode(b, &dc);
	inode->i_format = dc.i_format;
	if (inode->i_format & ~IMGFS_I_ALL_BITS)
		return error_set(err, -IMGFS_EFSCORRUPTED,
				 "nid %llu: unsupported i_format 0x%04x",
				 (unsigned long long)nid, inode->i_format);
	inode->version = imgfs_i_version(inode->i_format);
	inode->layout = imgfs_i_layout(inode->i_format);
	inode->xattr_icount = dc.i_xattr_icount;
	inode->xattr_isize = imgfs_xattr_ibody_size(inode->xattr_icount);
	inode->mode = dc.i_mode;
	inode->raw_nb = dc.i_nb;
	inode->raw_u = dc.i_u;
	inode->ino = dc.i_ino;
	if (!mode_type_ok(inode->mode))
		return error_set(err, -IMGFS_EFSCORRUPTED,
				 "nid %llu: bogus i_mode 0%o",
				 (unsigned long long)nid, inode->mode);
	if ((inode->mode & 0170000) == 0040000)
		inode->dot_omitted = inode->i_format & IMGFS_I_DOT_OMITTED;
	else
		inode->nlink_1 = inode->i_format & IMGFS_I_NLINK_1;

	if (inode->version == IMGFS_INODE_EXTENDED) {
		struct imgfs_inode_extended de;

		inode->inode_size = IMGFS_INODE_EXTENDED_SIZE;
		/* past the end: this read reports it */
		ret = got == IMGFS_INODE_EXTENDED_SIZE ?
			      0 :
			      img_read(img, b, IMGFS_INODE_EXTENDED_SIZE,
				       inode->pos, "extended inode", nid, err);
		if (ret)
			return ret;
		inode_extended_decode(b, &de);
		decode_extended(inode, &de);
		if (inode->size >> 63)
			return error_set(err, -IMGFS_EFSCORRUPTED,
					 "nid %llu: negative i_size",
					 (unsigned long long)nid);
	} else {
		inode->inode_size = IMGFS_INODE_COMPACT_SIZE;
		decode_compact(img, inode, &dc);
	}
	inode->rdev = inode->raw_u;
	ret = decode_layout(img, inode, err);
	if (ret)
		return ret;
	inode->data_pos = inode->pos + inode->inode_size + inode->xattr_isize;
	if (!img_range_ok(img, inode->pos, inode->data_pos - inode->pos))
		return error_set(
			err, -IMGFS_EFSCORRUPTED,
			"nid %llu: inline xattr area (%u bytes) is beyond the end of the image",
			(unsigned long long)nid, inode->xattr_isize);
	return 0;
}

int imgfs_inode_read_root(struct imgfs_image *img, struct imgfs_inode *inode,
			  struct imgfs_error *err)
{
	int ret = imgfs_inode_read(img, img->sb.root_nid, inode, err);

	if (ret)
		return ret;
	if (!imgfs_inode_is_dir(inode))
		return error_set(err, -IMGFS_EFSCORRUPTED,
				 "root nid %llu is not a directory (mode 0%o)",
				 (unsigned long long)inode->nid, inode->mode);
	return 0;
}
