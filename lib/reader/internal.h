/* SPDX-License-Identifier: MIT */
/*
 * reader/internal.h - what the reader's files share (not installed).
 *
 * The image handle, bounds-checked I/O helpers, and the hooks through which
 * the compressed-layout code (lib/reader/zmap.c) plugs into the generic
 * mapping/read paths of lib/reader/data.c.
 */
#ifndef IMGFS_READER_INTERNAL_H
#define IMGFS_READER_INTERNAL_H

#include "imgfs/format.h"
#include "imgfs/reader.h"
#include "format/format.h"

struct imgfs_long_prefix {
	uint8_t base_index;
	uint8_t infix_len;
	char infix[256];
};

struct imgfs_image {
	int fd; /* -1 for a memory image */
	bool own_fd;
	const uint8_t *mem; /* memory image, else NULL */
	uint64_t size; /* image bytes */
	unsigned int flags;
	struct imgfs_sb_info sb;
	unsigned int blkszbits;
	uint32_t blksz;
	uint64_t meta_base; /* meta_blkaddr << blkszbits */
	uint64_t xattr_base; /* xattr_blkaddr << blkszbits */
	struct imgfs_long_prefix *prefixes; /* sb.xattr_prefix_count of them */
	unsigned int nr_prefixes; /* prefixes successfully loaded */
	void *zpriv; /* private state of the compressed-layout code */
	/* extra devices' slots (DEVICE_TABLE): unified address (0: not
	 * mapped into the image) and size, in blocks; NULL if none read */
	uint64_t *dev_base;
	uint64_t *dev_blocks;
	struct img_cache *cache; /* small reads of a file image (cache.c) */
};

/* The small-read cache: 1 when the read is not one it serves. */
int img_cache_init(struct imgfs_image *img);
void img_cache_free(struct imgfs_image *img);
int img_cache_read(struct imgfs_image *img, void *buf, size_t len,
		   uint64_t off);

/* Bounds-checked read that reports errors in terms of @what (for messages). */
int img_read(struct imgfs_image *img, void *buf, size_t len, uint64_t off,
	     const char *what, uint64_t nid, struct imgfs_error *err);

/* True if [off, off + len) lies inside the image (overflow-safe). */
static inline bool img_range_ok(const struct imgfs_image *img, uint64_t off,
				uint64_t len)
{
	return off <= img->size && len <= img->size - off;
}

/* Byte offset of inode @nid (primary metadata area NIDs only). */
static inline uint64_t nid_pos(const struct imgfs_image *img, uint64_t nid)
{
	return img->meta_base + (nid << IMGFS_ISLOTBITS);
}

/* Byte offset of shared xattr @id. */
static inline uint64_t shared_xattr_pos(const struct imgfs_image *img,
					uint32_t id)
{
	return img->xattr_base + ((uint64_t)id << 2);
}

/*
 * Hooks of the compressed-layout code. z_image_init() runs at the end
 * of image open (parse compression configs, set up img->zpriv);
 * z_image_free() at close. z_map() maps @offset of a compressed
 * inode like imgfs_map(). z_read() copies the file bytes
 * [@offset, @offset + @len) that lie inside @ext (returned by z_map())
 * into @buf and returns how many it copied, or a negative errno; with
 * @verify, see read_verify().
 */
int z_image_init(struct imgfs_image *img, struct imgfs_error *err);
void z_image_free(struct imgfs_image *img);
int z_map(struct imgfs_image *img, const struct imgfs_inode *inode,
	  uint64_t offset, struct imgfs_extent *ext, struct imgfs_error *err);
ssize_t z_read(struct imgfs_image *img, const struct imgfs_inode *inode,
	       const struct imgfs_extent *ext, uint64_t offset, void *buf,
	       size_t len, bool verify, struct imgfs_error *err);

/*
 * imgfs_read() for a checker that needs to know whether the bytes can be
 * read, not what they are: the result and errors are the same, but @buf
 * holds garbage where data was compressed, and a pcluster that decoded
 * without error once (with the same size, algorithm and flags) is not
 * decoded again: tails packed together (fragments) cost one decode each,
 * whatever the order the files are read in. Memory: one small record per
 * pcluster verified.
 */
ssize_t read_verify(struct imgfs_image *img, const struct imgfs_inode *inode,
		    uint64_t offset, void *buf, size_t len,
		    struct imgfs_error *err);

#endif /* IMGFS_READER_INTERNAL_H */
