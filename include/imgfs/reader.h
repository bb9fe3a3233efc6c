/* SPDX-License-Identifier: MIT */
/*
 * imgfs/reader.h - reading EROFS images.
 *
 * An image is opened into a struct imgfs_image handle; everything else takes
 * that handle explicitly. Images are untrusted input: every offset and length
 * read from the image is bounds-checked, reads go through pread() (never
 * mmap, so a truncated file cannot raise SIGBUS), and corruption is reported
 * as -EUCLEAN (IMGFS_EFSCORRUPTED) with a message naming the nid/offset.
 * Features the reader does not implement yield -EOPNOTSUPP.
 *
 * Handles share nothing with each other. One handle may be used by several
 * threads at once for reading (all calls are pread-based and keep no cursor;
 * the few 4 KiB units a file handle keeps for small reads are locked one by
 * one), as long as nobody closes it meanwhile. An image file is taken not to
 * change while it is open: a unit already read is not read again.
 */
#ifndef IMGFS_READER_H
#define IMGFS_READER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "imgfs/api.h"
#include "imgfs/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error code for on-disk corruption (the kernel's EFSCORRUPTED). */
#define IMGFS_EFSCORRUPTED EUCLEAN

/* Longest symlink target the kernel accepts (PATH_MAX - 1). */
#define IMGFS_SYMLINK_MAX 4095u

/* Bound on a full xattr name: prefix + long-prefix infix + 255-byte suffix. */
#define IMGFS_XATTR_NAME_MAX 560u

struct imgfs_image;

/* imgfs_image_open() flags */
enum {
	/* Open even if the superblock checksum is wrong (sb.checksum_ok
	 * tells). Used by the checker to carry on and report. */
	IMGFS_OPEN_IGNORE_CHECKSUM = 1u << 0,
	/* Open even with unknown incompat feature bits (sb.unknown_incompat
	 * tells); accessing what they govern may then misbehave safely. */
	IMGFS_OPEN_IGNORE_FEATURES = 1u << 1,
};

/* Parsed superblock. Raw on-disk values unless said otherwise. */
struct imgfs_sb_info {
	uint32_t magic;
	uint32_t checksum; /* stored value */
	uint32_t checksum_calc; /* value computed over the image */
	bool checksum_ok; /* SB_CHKSUM clear, or stored == computed */
	uint32_t feature_compat;
	uint32_t feature_incompat;
	uint32_t unknown_compat; /* compat bits this reader does not know */
	uint32_t unknown_incompat; /* incompat bits this reader does not know */
	unsigned int blkszbits;
	uint32_t blksz; /* 1 << blkszbits */
	unsigned int sb_extslots;
	unsigned int sb_size; /* 128 + 16 * sb_extslots */
	uint64_t root_nid; /* effective root NID (16-bit or root_nid_64) */
	uint64_t inos;
	int64_t epoch; /* base time of compact inode mtimes */
	uint32_t fixed_nsec;
	uint32_t build_time; /* relative to epoch */
	uint64_t blocks; /* primary device blocks (with blocks_hi if 48BIT) */
	uint32_t meta_blkaddr;
	uint32_t xattr_blkaddr;
	uint8_t uuid[16];
	char label[17]; /* volume_name, NUL-terminated (16 bytes on disk) */
	uint16_t compr_algs; /* COMPR_CFGS: bitmap of algorithms; else 0 */
	uint16_t lz4_max_distance; /* without COMPR_CFGS: raw u1 */
	uint16_t extra_devices;
	uint16_t devt_slotoff;
	uint8_t dirblkbits;
	uint8_t xattr_prefix_count;
	uint32_t xattr_prefix_start;
	uint64_t packed_nid;
	uint8_t xattr_filter_reserved;
	uint64_t image_size; /* bytes in the image file */
};

/*
 * Open the image file at @path read-only. @flags is a mask of
 * IMGFS_OPEN_*. On success *@img is a new handle (free it with
 * imgfs_image_close()). Fails with -EINVAL for something that is not an
 * EROFS image or that we cannot read (bad magic, block size, dirblkbits,
 * sb_extslots), -EBADMSG for a wrong checksum, -EOPNOTSUPP for unknown
 * incompat features (unless @flags say otherwise), -EIO/-errno on I/O
 * failure. @err gets the reason.
 */
IMGFS_API
int imgfs_image_open(const char *path, unsigned int flags,
		     struct imgfs_image **img, struct imgfs_error *err);

/*
 * Like imgfs_image_open() but on an already open file descriptor. The
 * handle does not own @fd: the caller closes it after imgfs_image_close().
 */
IMGFS_API
int imgfs_image_open_fd(int fd, unsigned int flags, struct imgfs_image **img,
			struct imgfs_error *err);

/*
 * Like imgfs_image_open() on @size bytes at @buf (fuzzing, tests). The
 * buffer is not copied and must outlive the handle.
 */
IMGFS_API
int imgfs_image_open_mem(const void *buf, size_t size, unsigned int flags,
			 struct imgfs_image **img, struct imgfs_error *err);

/* Close @img and free everything it owns. @img may be NULL. */
IMGFS_API
void imgfs_image_close(struct imgfs_image *img);

/* The parsed superblock; valid as long as @img is open. */
IMGFS_API
const struct imgfs_sb_info *imgfs_image_sb(const struct imgfs_image *img);

/*
 * Read @len bytes at byte offset @off of the image into @buf. Fails with
 * -EUCLEAN if the range is not entirely inside the image, -EIO on a read
 * error.
 */
IMGFS_API
int imgfs_image_pread(struct imgfs_image *img, void *buf, size_t len,
		      uint64_t off, struct imgfs_error *err);

/* Parsed inode. */
struct imgfs_inode {
	uint64_t nid;
	uint64_t pos; /* byte offset of the inode in the image */
	unsigned int version; /* IMGFS_INODE_COMPACT or IMGFS_INODE_EXTENDED */
	unsigned int inode_size; /* 32 or 64 */
	unsigned int layout; /* enum imgfs_datalayout */
	uint16_t i_format; /* raw */
	uint32_t mode; /* type and permission bits */
	uint32_t nlink;
	uint32_t uid;
	uint32_t gid;
	uint64_t size;
	int64_t mtime; /* seconds since the Unix epoch */
	uint32_t mtime_nsec;
	uint32_t rdev; /* devices: raw i_u (imgfs_dev_major/minor) */
	uint32_t raw_u; /* raw i_u */
	uint16_t raw_nb; /* raw i_nb */
	uint32_t ino; /* i_ino (informational) */
	uint16_t xattr_icount;
	unsigned int xattr_isize; /* bytes of inline xattr area */
	/* Flat layouts: first data block (IMGFS_NULL_ADDR-like all-ones of
	 * the field width when there is no full block); compressed layouts:
	 * compressed block count. */
	uint64_t startblk;
	bool startblk_null; /* startblk is the NULL address */
	bool nlink_1; /* i_format NLINK_1 (non-directories) */
	bool dot_omitted; /* i_format DOT_OMITTED (directories) */
	uint16_t chunk_format; /* CHUNK_BASED: raw format word */
	unsigned int chunkbits; /* CHUNK_BASED: log2(chunk size in bytes) */
	uint64_t data_pos; /* byte offset right after the inline xattrs */
};

/*
 * Read and validate the inode @nid (checks of docs/format.md §4.9 plus: inode
 * inside the image, layout valid for the file type, chunk format, inline
 * xattr area inside the image). Fills @inode. Returns 0, -EUCLEAN for
 * corruption, -EOPNOTSUPP for layouts or NIDs (metabox) not supported.
 */
IMGFS_API
int imgfs_inode_read(struct imgfs_image *img, uint64_t nid,
		     struct imgfs_inode *inode, struct imgfs_error *err);

/* The root directory's inode. */
IMGFS_API
int imgfs_inode_read_root(struct imgfs_image *img, struct imgfs_inode *inode,
			  struct imgfs_error *err);

/* Convenience predicates on a parsed inode. */
static inline bool imgfs_inode_is_dir(const struct imgfs_inode *inode)
{
	return (inode->mode & 0170000) == 0040000;
}

static inline bool imgfs_inode_is_reg(const struct imgfs_inode *inode)
{
	return (inode->mode & 0170000) == 0100000;
}

static inline bool imgfs_inode_is_symlink(const struct imgfs_inode *inode)
{
	return (inode->mode & 0170000) == 0120000;
}

static inline bool imgfs_inode_is_compressed(const struct imgfs_inode *inode)
{
	return inode->layout == 1 || inode->layout == 3;
}

/* One directory entry, valid only during the callback. */
struct imgfs_dirent_info {
	const char *name; /* NUL-terminated copy of the name */
	size_t name_len; /* 1..255 */
	uint64_t nid;
	unsigned int file_type; /* enum imgfs_file_type (raw dirent value) */
	uint64_t block; /* directory block index the entry is in */
	unsigned int index; /* entry index inside that block */
};

/*
 * Called for each entry; return 0 to go on, a positive value to stop the
 * iteration early (returned by imgfs_dir_iterate()), or a negative errno to
 * fail (returned as is).
 */
typedef int (*imgfs_dirent_fn)(void *arg, const struct imgfs_dirent_info *de);

/*
 * Call @fn for every entry of directory @dir, "." and ".." included, in
 * on-disk order. Each directory block is validated before its entries are
 * passed on (docs/format.md §6.1 and §6.6: nameoff bounds and alignment, name
 * lengths 1..255 inside the block; names containing '/' or NUL are refused
 * too). Sort order is not checked here (the checker does). Returns 0 at the
 * end, @fn's positive value if it stopped early, or a negative errno.
 */
IMGFS_API
int imgfs_dir_iterate(struct imgfs_image *img, const struct imgfs_inode *dir,
		      imgfs_dirent_fn fn, void *arg, struct imgfs_error *err);

/*
 * Find @name (@len bytes, no '/') in directory @dir. Returns 0 and sets
 * *@nid (and *@file_type if not NULL), -ENOENT if absent, -ENOTDIR if @dir
 * is not a directory, or another negative errno.
 */
IMGFS_API
int imgfs_dir_lookup(struct imgfs_image *img, const struct imgfs_inode *dir,
		     const char *name, size_t len, uint64_t *nid,
		     unsigned int *file_type, struct imgfs_error *err);

/*
 * Resolve the '/'-separated @path from the root (leading and repeated
 * slashes ignored; "." and ".." components are looked up like any name, so
 * ".." goes to the on-disk parent). Symlinks are not followed. "" and "/"
 * give the root. Returns 0 with *@nid set, -ENOENT, -ENOTDIR, or another
 * negative errno.
 */
IMGFS_API
int imgfs_lookup(struct imgfs_image *img, const char *path, uint64_t *nid,
		 struct imgfs_error *err);

/* One extended attribute, valid only during the callback. */
struct imgfs_xattr_info {
	const char *name; /* full name, NUL-terminated ("user.foo") */
	size_t name_len;
	const void *value;
	size_t value_size;
	unsigned int name_index; /* raw e_name_index (0x80|n: long prefix) */
	const char *suffix; /* stored name suffix (no prefix) */
	size_t suffix_len;
	bool shared; /* from the shared area */
	uint32_t shared_id; /* shared: the id */
	uint64_t pos; /* byte offset of the entry header in the image */
};

/* Return 0 to go on, > 0 to stop, < 0 to fail (as for imgfs_dirent_fn). */
typedef int (*imgfs_xattr_fn)(void *arg, const struct imgfs_xattr_info *x);

/*
 * Call @fn for each xattr of @inode: inline entries first, then shared ones
 * (the kernel's order). Entries with a name index that has no prefix (0,
 * 5 lustre., 7..127) or an unknown long prefix are passed with name ""
 * only if @all is true, else skipped. Fails with -EUCLEAN if the area is
 * malformed (header, entry past the area, shared id outside the image),
 * -EOPNOTSUPP for a 12-byte area (the kernel refuses it too).
 */
IMGFS_API
int imgfs_xattr_iterate(struct imgfs_image *img,
			const struct imgfs_inode *inode, bool all,
			imgfs_xattr_fn fn, void *arg, struct imgfs_error *err);

/*
 * Look up the xattr @name of @inode and copy at most @size bytes of its
 * value into @buf. Returns the value size (which may exceed @size),
 * -ENODATA if absent, or a negative errno.
 */
IMGFS_API
ssize_t imgfs_getxattr(struct imgfs_image *img, const struct imgfs_inode *inode,
		       const char *name, void *buf, size_t size,
		       struct imgfs_error *err);

/* Kinds of file extents. */
enum imgfs_extent_kind {
	IMGFS_EXTENT_HOLE = 0, /* no storage; reads as zeros */
	IMGFS_EXTENT_PLAIN, /* uncompressed at byte @pos of the image */
	IMGFS_EXTENT_INLINE, /* uncompressed tail inside the inode's block */
	IMGFS_EXTENT_COMPRESSED, /* decoded from the pcluster at @pos */
	IMGFS_EXTENT_FRAGMENT, /* in the packed inode at offset @pos */
};

/* extent flags */
enum {
	IMGFS_EXTENT_F_PARTIAL = 1u << 0, /* partial reference of a pcluster */
	IMGFS_EXTENT_F_SHARED = 1u << 1, /* the layout permits sharing (chunks;
					  * pclusters of DEDUPE images) */
	IMGFS_EXTENT_F_RAW = 1u << 2, /* compressed layout, PLAIN pcluster */
	IMGFS_EXTENT_F_INLINE = 1u << 3, /* pcluster inline after the
					  * compressed index (ztailpacking) */
	IMGFS_EXTENT_F_INTERLACED = 1u << 4, /* RAW pcluster, interlaced */
};

/* A run of file data [logical, logical + length) and where it is stored. */
struct imgfs_extent {
	uint64_t logical; /* byte offset in the file */
	uint64_t length; /* bytes of file data (never 0) */
	enum imgfs_extent_kind kind;
	uint64_t pos; /* byte offset of the storage (HOLE: 0) */
	uint64_t plen; /* bytes of storage (PLAIN: length rounded up to
			* blocks; INLINE: length; COMPRESSED: pcluster) */
	/* 0: primary image, else the extra device id; @pos is then where
	 * the device table maps that device into the image (unified
	 * address, as in tar-index images) */
	unsigned int device;
	unsigned int algorithm; /* COMPRESSED: enum imgfs_compr_alg */
	unsigned int flags; /* IMGFS_EXTENT_F_* */
};

/*
 * Map the byte @offset (< inode->size) of @inode to the extent containing
 * it. Works for every layout whose mapping is implemented. Compressed
 * layouts yield one extent per pcluster (kind COMPRESSED, flags RAW,
 * INLINE, INTERLACED, PARTIAL) or a FRAGMENT extent; 48-bit encoded
 * extents give -EOPNOTSUPP. Checks that the storage lies inside the image
 * (-EUCLEAN otherwise) and, for FLAT_INLINE, that the tail does not cross
 * a block. Extra devices the device table does not map into the image
 * (no unified address): -EOPNOTSUPP.
 */
IMGFS_API
int imgfs_map(struct imgfs_image *img, const struct imgfs_inode *inode,
	      uint64_t offset, struct imgfs_extent *ext,
	      struct imgfs_error *err);

/* Return 0 to go on, > 0 to stop, < 0 to fail. */
typedef int (*imgfs_extent_fn)(void *arg, const struct imgfs_extent *ext);

/*
 * Call @fn for the extents covering [0, inode->size) in logical order
 * (adjacent runs are not merged: chunk-based files yield one extent per
 * chunk). Returns 0, @fn's positive value, or a negative errno.
 */
IMGFS_API
int imgfs_extent_iterate(struct imgfs_image *img,
			 const struct imgfs_inode *inode, imgfs_extent_fn fn,
			 void *arg, struct imgfs_error *err);

/*
 * Read up to @len bytes of @inode's data at @offset into @buf. Holes read
 * as zeros. Returns the number of bytes read (short only at end of file, 0
 * at or past it) or a negative errno (-EOPNOTSUPP for layouts not
 * implemented, -EUCLEAN for corruption). Works for any file type (a
 * directory's raw blocks, a symlink's target).
 */
IMGFS_API
ssize_t imgfs_read(struct imgfs_image *img, const struct imgfs_inode *inode,
		   uint64_t offset, void *buf, size_t len,
		   struct imgfs_error *err);

/*
 * Read the target of symlink @inode into @buf (@size bytes, >= size + 1)
 * and NUL-terminate it. Returns the target length, -EINVAL if @inode is not
 * a symlink, -EUCLEAN for a length of 0 or above IMGFS_SYMLINK_MAX or an
 * embedded NUL, -ERANGE if @buf is too small.
 */
IMGFS_API
ssize_t imgfs_readlink(struct imgfs_image *img, const struct imgfs_inode *inode,
		       char *buf, size_t size, struct imgfs_error *err);


/*
 * Long xattr prefix @n (0-based) of the image: its base short index and
 * its infix. Returns 0, or -ENOENT if there is no such prefix.
 */
IMGFS_API
int imgfs_image_long_prefix(const struct imgfs_image *img, unsigned int n,
			    unsigned int *base_index, const char **infix,
			    size_t *infix_len);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_READER_H */
