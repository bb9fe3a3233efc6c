// SPDX-License-Identifier: MIT
/*
 * data.c - mapping and reading file data (docs/format.md §5).
 *
 * Every layout is reduced to imgfs_map(): byte offset -> extent. Reading,
 * extent iteration and readlink are written once on top of it; compressed
 * layouts plug in through z_map()/z_read().
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "reader/zdata.h"
#include "util/error.h"

static uint64_t round_up_blk(const struct imgfs_image *img, uint64_t len)
{
	return (len + img->blksz - 1) & ~(uint64_t)(img->blksz - 1);
}

static int storage_check(const struct imgfs_image *img,
			 const struct imgfs_inode *inode,
			 const struct imgfs_extent *ext, struct imgfs_error *err)
{
	if (img_range_ok(img, ext->pos, ext->length))
		return 0;
	return error_set(
		err, -IMGFS_EFSCORRUPTED,
		"nid %llu: data of bytes %llu..%llu at image offset %llu is beyond the end of the image",
		(unsigned long long)inode->nid,
		(unsigned long long)ext->logical,
		(unsigned long long)(ext->logical + ext->length),
		(unsigned long long)ext->pos);
}

static int map_blocks(const struct imgfs_image *img,
		      const struct imgfs_inode *inode, uint64_t logical,
		      uint64_t len, struct imgfs_extent *ext,
		      struct imgfs_error *err)
{
	bool is48 = img->sb.feature_incompat & IMGFS_FEATURE_INCOMPAT_48BIT;

	ext->logical = logical;
	ext->length = len;
	if (inode->startblk_null) {
		if (inode->layout == IMGFS_LAYOUT_FLAT_PLAIN && is48) {
			ext->kind = IMGFS_EXTENT_HOLE;
			return 0;
		}
		return error_set(
			err, -IMGFS_EFSCORRUPTED,
			"nid %llu: %llu bytes of block data but startblk is NULL",
			(unsigned long long)inode->nid,
			(unsigned long long)len);
	}
	ext->kind = IMGFS_EXTENT_PLAIN;
	ext->pos = (inode->startblk << img->blkszbits) + logical;
	ext->plen = round_up_blk(img, len);
	return storage_check(img, inode, ext, err);
}

static int map_inline(const struct imgfs_image *img,
		      const struct imgfs_inode *inode, uint64_t offset,
		      struct imgfs_extent *ext, struct imgfs_error *err)
{
	uint64_t full = ((inode->size - 1) >> img->blkszbits) << img->blkszbits;
	uint64_t tail = inode->size - full;

	if (offset < full)
		return map_blocks(img, inode, 0, full, ext, err);
	if ((inode->data_pos & (img->blksz - 1)) + tail > img->blksz)
		return error_set(
			err, -IMGFS_EFSCORRUPTED,
			"nid %llu: inline data (%llu bytes at offset %llu) crosses a block boundary",
			(unsigned long long)inode->nid,
			(unsigned long long)tail,
			(unsigned long long)inode->data_pos);
	ext->logical = full;
	ext->length = tail;
	ext->kind = IMGFS_EXTENT_INLINE;
	ext->pos = inode->data_pos;
	ext->plen = tail;
	return storage_check(img, inode, ext, err);
}

/*
 * Position of the chunk array (docs/format.md §5.3: aligned to the record
 * size).
 */
static uint64_t chunk_array_pos(const struct imgfs_inode *inode,
				unsigned int recsz)
{
	return (inode->data_pos + recsz - 1) & ~(uint64_t)(recsz - 1);
}

static unsigned int chunk_recsz(const struct imgfs_inode *inode)
{
	return (inode->chunk_format & IMGFS_CHUNK_FORMAT_INDEXES) ? 8 : 4;
}

/* Decode one chunk record into *@blk (all ones = hole) and *@dev. */
static void chunk_decode(const struct imgfs_image *img,
			 const struct imgfs_inode *inode, const uint8_t *rec,
			 uint64_t *blk, bool *hole, unsigned int *dev)
{
	uint64_t mask = (1ull << 32) - 1;
	struct imgfs_chunk_index ci;

	*dev = 0;
	if (chunk_recsz(inode) == 4) {
		*blk = block_map_decode(rec, 0);
	} else {
		chunk_index_decode(rec, &ci);
		*blk = ci.startblk_lo;
		*dev = ci.device_id;
		if (inode->chunk_format & IMGFS_CHUNK_FORMAT_48BIT) {
			*blk |= (uint64_t)ci.startblk_hi << 32;
			mask = (1ull << 48) - 1;
		}
	}
	*hole = (*blk & mask) == mask;
	if (*dev && (img->sb.feature_incompat &
		     IMGFS_FEATURE_INCOMPAT_DEVICE_TABLE)) {
		unsigned int m = 1;

		while (m < (unsigned int)img->sb.extra_devices + 1u)
			m <<= 1;
		*dev &= m - 1;
	}
}

static int chunk_extent(struct imgfs_image *img,
			const struct imgfs_inode *inode, uint64_t idx,
			const uint8_t *rec, struct imgfs_extent *ext,
			struct imgfs_error *err)
{
	uint64_t chunksz = 1ull << inode->chunkbits;
	uint64_t start = idx << inode->chunkbits;
	unsigned int dev;
	uint64_t blk;
	bool hole;

	chunk_decode(img, inode, rec, &blk, &hole, &dev);
	memset(ext, 0, sizeof(*ext));
	ext->logical = start;
	ext->length = inode->size - start < chunksz ? inode->size - start :
						      chunksz;
	ext->flags = IMGFS_EXTENT_F_SHARED;
	if (hole) {
		ext->kind = IMGFS_EXTENT_HOLE;
		return 0;
	}
	if (dev && dev <= img->sb.extra_devices && img->dev_base &&
	    img->dev_base[dev - 1]) {
		/* mapped into the image after the primary device's blocks */
		ext->kind = IMGFS_EXTENT_PLAIN;
		ext->device = dev;
		ext->pos = (img->dev_base[dev - 1] + blk) << img->blkszbits;
		ext->plen = round_up_blk(img, ext->length);
		return storage_check(img, inode, ext, err);
	}
	if (dev)
		return error_set(
			err,
			dev > img->sb.extra_devices ? -IMGFS_EFSCORRUPTED
						    : -EOPNOTSUPP,
			"nid %llu: chunk %llu is on extra device %u (%u devices)",
			(unsigned long long)inode->nid, (unsigned long long)idx,
			dev, img->sb.extra_devices);
	ext->kind = IMGFS_EXTENT_PLAIN;
	ext->pos = blk << img->blkszbits;
	ext->plen = round_up_blk(img, ext->length);
	return storage_check(img, inode, ext, err);
}

static int map_chunk(struct imgfs_image *img, const struct imgfs_inode *inode,
		     uint64_t offset, struct imgfs_extent *ext,
		     struct imgfs_error *err)
{
	unsigned int recsz = chunk_recsz(inode);
	uint64_t idx = offset >> inode->chunkbits;
	uint8_t rec[8];
	int ret;

	ret = img_read(img, rec, recsz,
		       chunk_array_pos(inode, recsz) + idx * recsz,
		       "chunk index", inode->nid, err);
	if (ret)
		return ret;
	return chunk_extent(img, inode, idx, rec, ext, err);
}

int imgfs_map(struct imgfs_image *img, const struct imgfs_inode *inode,
	      uint64_t offset, struct imgfs_extent *ext,
	      struct imgfs_error *err)
{
	memset(ext, 0, sizeof(*ext));
	if (offset >= inode->size)
		return error_set(
			err, -EINVAL,
			"nid %llu: offset %llu is past the end of the file (%llu bytes)",
			(unsigned long long)inode->nid,
			(unsigned long long)offset,
			(unsigned long long)inode->size);
	switch (inode->layout) {
	case IMGFS_LAYOUT_FLAT_PLAIN:
		return map_blocks(img, inode, 0, inode->size, ext, err);
	case IMGFS_LAYOUT_FLAT_INLINE:
		return map_inline(img, inode, offset, ext, err);
	case IMGFS_LAYOUT_CHUNK_BASED:
		return map_chunk(img, inode, offset, ext, err);
	case IMGFS_LAYOUT_COMPRESSED_FULL:
	case IMGFS_LAYOUT_COMPRESSED_COMPACT:
		return z_map(img, inode, offset, ext, err);
	}
	return error_set(err, -IMGFS_EFSCORRUPTED,
			 "nid %llu: unsupported data layout %u",
			 (unsigned long long)inode->nid, inode->layout);
}

/* Chunk-based files: read the record array in batches, not per chunk. */
static int chunk_iterate(struct imgfs_image *img,
			 const struct imgfs_inode *inode, imgfs_extent_fn fn,
			 void *arg, struct imgfs_error *err)
{
	unsigned int recsz = chunk_recsz(inode);
	uint64_t nr = (inode->size + (1ull << inode->chunkbits) - 1) >>
		      inode->chunkbits;
	uint64_t base = chunk_array_pos(inode, recsz);
	uint8_t buf[4096];
	uint64_t i, j, batch;
	int ret;

	for (i = 0; i < nr; i += batch) {
		batch = nr - i < sizeof(buf) / recsz ? nr - i :
						       sizeof(buf) / recsz;
		ret = img_read(img, buf, batch * recsz, base + i * recsz,
			       "chunk index", inode->nid, err);
		if (ret)
			return ret;
		for (j = 0; j < batch; j++) {
			struct imgfs_extent ext;

			ret = chunk_extent(img, inode, i + j, buf + j * recsz,
					   &ext, err);
			if (!ret)
				ret = fn(arg, &ext);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int imgfs_extent_iterate(struct imgfs_image *img,
			 const struct imgfs_inode *inode, imgfs_extent_fn fn,
			 void *arg, struct imgfs_error *err)
{
	struct imgfs_extent ext;
	uint64_t off = 0;
	int ret;

	if (inode->layout == IMGFS_LAYOUT_CHUNK_BASED)
		return chunk_iterate(img, inode, fn, arg, err);
	while (off < inode->size) {
		ret = imgfs_map(img, inode, off, &ext, err);
		if (ret)
			return ret;
		/* A mapper must make progress, or a loop is possible. */
		if (ext.logical > off || ext.logical + ext.length <= off)
			return error_set(err, -IMGFS_EFSCORRUPTED,
					 "nid %llu: bad mapping at offset %llu",
					 (unsigned long long)inode->nid,
					 (unsigned long long)off);
		ret = fn(arg, &ext);
		if (ret)
			return ret;
		off = ext.logical + ext.length;
	}
	return 0;
}

/*
 * Tail or whole-file fragment: bytes of the packed inode
 * (docs/format.md §9.11), read like any file's through imgfs_read(); one
 * level deep only, as the packed inode may not point into itself.
 */
static ssize_t read_range(struct imgfs_image *img,
			  const struct imgfs_inode *inode, uint64_t offset,
			  void *buf, size_t len, bool verify,
			  struct imgfs_error *err);

static ssize_t read_fragment(struct imgfs_image *img,
			     const struct imgfs_inode *inode,
			     const struct imgfs_extent *ext, uint64_t offset,
			     void *buf, size_t n, bool verify,
			     struct imgfs_error *err)
{
	struct imgfs_zstate *zs = img->zpriv;
	ssize_t got;

	if (!zs || !zs->have_packed || zs->packed.nid == inode->nid)
		return error_set(
			err, -IMGFS_EFSCORRUPTED,
			"nid %llu: fragment without a usable packed inode",
			(unsigned long long)inode->nid);
	got = read_range(img, &zs->packed, ext->pos + (offset - ext->logical),
			 buf, n, verify, err);
	if (got < 0)
		return got;
	if ((size_t)got != n)
		return error_set(
			err, -IMGFS_EFSCORRUPTED,
			"nid %llu: fragment of bytes %llu..%llu is beyond the end of packed inode %llu",
			(unsigned long long)inode->nid,
			(unsigned long long)ext->logical,
			(unsigned long long)(ext->logical + ext->length),
			(unsigned long long)zs->packed.nid);
	return got;
}

static ssize_t read_extent(struct imgfs_image *img,
			   const struct imgfs_inode *inode,
			   const struct imgfs_extent *ext, uint64_t offset,
			   void *buf, size_t len, bool verify,
			   struct imgfs_error *err)
{
	uint64_t avail = ext->logical + ext->length - offset;
	size_t n = avail < len ? (size_t)avail : len;
	int ret;

	switch (ext->kind) {
	case IMGFS_EXTENT_HOLE:
		memset(buf, 0, n);
		return (ssize_t)n;
	case IMGFS_EXTENT_PLAIN:
	case IMGFS_EXTENT_INLINE:
		ret = img_read(img, buf, n, ext->pos + (offset - ext->logical),
			       "file data", inode->nid, err);
		return ret ? ret : (ssize_t)n;
	case IMGFS_EXTENT_FRAGMENT:
		return read_fragment(img, inode, ext, offset, buf, n, verify,
				     err);
	default:
		return z_read(img, inode, ext, offset, buf, n, verify, err);
	}
}

static ssize_t read_range(struct imgfs_image *img,
			  const struct imgfs_inode *inode, uint64_t offset,
			  void *buf, size_t len, bool verify,
			  struct imgfs_error *err)
{
	uint8_t *p = buf;
	size_t done = 0;

	if (offset >= inode->size)
		return 0;
	if (len > inode->size - offset)
		len = (size_t)(inode->size - offset);
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	while (done < len) {
		struct imgfs_extent ext;
		ssize_t n;
		int ret;

		ret = imgfs_map(img, inode, offset + done, &ext, err);
		if (ret)
			return ret;
		if (ext.logical > offset + done ||
		    ext.logical + ext.length <= offset + done)
			return error_set(err, -IMGFS_EFSCORRUPTED,
					 "nid %llu: bad mapping at offset %llu",
					 (unsigned long long)inode->nid,
					 (unsigned long long)(offset + done));
		n = read_extent(img, inode, &ext, offset + done, p + done,
				len - done, verify, err);
		if (n < 0)
			return n;
		if (n == 0)
			return error_set(
				err, -EIO,
				"nid %llu: no progress reading at %llu",
				(unsigned long long)inode->nid,
				(unsigned long long)(offset + done));
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t imgfs_read(struct imgfs_image *img, const struct imgfs_inode *inode,
		   uint64_t offset, void *buf, size_t len,
		   struct imgfs_error *err)
{
	return read_range(img, inode, offset, buf, len, false, err);
}

ssize_t read_verify(struct imgfs_image *img, const struct imgfs_inode *inode,
		    uint64_t offset, void *buf, size_t len,
		    struct imgfs_error *err)
{
	return read_range(img, inode, offset, buf, len, true, err);
}

ssize_t imgfs_readlink(struct imgfs_image *img, const struct imgfs_inode *inode,
		       char *buf, size_t size, struct imgfs_error *err)
{
	ssize_t n;

	if (!imgfs_inode_is_symlink(inode))
		return error_set(err, -EINVAL, "nid %llu: not a symlink",
				 (unsigned long long)inode->nid);
	if (!inode->size || inode->size > IMGFS_SYMLINK_MAX)
		return error_set(err, -IMGFS_EFSCORRUPTED,
				 "nid %llu: bad symlink length %llu",
				 (unsigned long long)inode->nid,
				 (unsigned long long)inode->size);
	if (size < inode->size + 1)
		return error_set(err, -ERANGE,
				 "nid %llu: symlink target buffer too small",
				 (unsigned long long)inode->nid);
	n = imgfs_read(img, inode, 0, buf, (size_t)inode->size, err);
	if (n < 0)
		return n;
	buf[n] = '\0';
	if ((uint64_t)n != inode->size || strlen(buf) != (size_t)n)
		return error_set(err, -IMGFS_EFSCORRUPTED,
				 "nid %llu: symlink target contains a NUL byte",
				 (unsigned long long)inode->nid);
	return n;
}
