/* SPDX-License-Identifier: MIT */
/*
 * imgfs/stats.h - describing an EROFS image: names of on-disk values and
 * statistics over the whole tree (the walker itself: imgfs/walk.h).
 *
 * Everything here is built on the reader (imgfs/reader.h) and takes an
 * open struct imgfs_image. Nothing keeps global state.
 */
#ifndef IMGFS_STATS_H
#define IMGFS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/api.h"
#include "imgfs/error.h"
#include "imgfs/format.h"
#include "imgfs/reader.h"
#include "imgfs/walk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Names of on-disk values are in imgfs/format.h. */

/* "hole", "plain", "inline", "compressed", "fragment". */
IMGFS_API
const char *imgfs_extent_kind_name(enum imgfs_extent_kind kind);

/* Room imgfs_time_decimal() needs, terminating NUL included. */
#define IMGFS_TIME_DECIMAL_MAX 48

/*
 * A time of @sec seconds and @nsec nanoseconds since the epoch as one
 * signed decimal, floor-based input: -2 s + 500000000 ns is
 * "-1.500000000". An out-of-range @nsec is shown as "S s + N ns".
 */
IMGFS_API
void imgfs_time_decimal(int64_t sec, uint32_t nsec,
			char buf[IMGFS_TIME_DECIMAL_MAX]);

/*
 * Compression algorithms the superblock says the image may use, as a
 * bitmap (bit n = enum imgfs_compr_alg n): with COMPR_CFGS the
 * algorithm bitmap it stores; without it LZ4 alone when LZ4_0PADDING is
 * set or the LZ4 max distance is non-zero (the only algorithm such images
 * can hold); else 0.
 */
IMGFS_API
uint32_t imgfs_sb_compr_algs(const struct imgfs_sb_info *sb);

/*
 * Extend @run by @next when @next continues it in the file and on disk:
 * both holes, or both uncompressed blocks (PLAIN) on the same device with
 * @next's storage right after @run's and @run ending on a block boundary.
 * Flags must be equal. Returns true if @run was extended. The reader hands
 * out one extent per chunk; this turns them into runs for display.
 */
IMGFS_API
bool imgfs_extent_merge(struct imgfs_extent *run,
			const struct imgfs_extent *next);

/* imgfs_walk(), the tree walker these are built on, is in imgfs/walk.h. */

/* Symlinks followed by imgfs_resolve() before -ELOOP, as in the kernel. */
#define IMGFS_RESOLVE_MAX_LINKS 40

/*
 * Resolve @path from the root of @img, following symlinks inside the image
 * as the kernel would with the image as root directory: absolute targets
 * start from the image root, ".." comes from the components resolved so
 * far (never the on-disk ".." entries) and stays at the root when there.
 * The last component is followed too when @follow_last is set. Returns 0
 * with *@nid set, -ENOENT, -ENOTDIR, -ELOOP (more than
 * IMGFS_RESOLVE_MAX_LINKS symlinks), or another negative errno.
 */
IMGFS_API
int imgfs_resolve(struct imgfs_image *img, const char *path, bool follow_last,
		  uint64_t *nid, struct imgfs_error *err);

/* Regular file sizes: bucket 0 holds empty files, bucket k (1..64) sizes
 * in [2^(k-1), 2^k). */
#define IMGFS_STATS_SIZE_BUCKETS 65
#define IMGFS_STATS_TOP_DIRS 10

/*
 * Compressed data of one algorithm (from extents the reader can map, the
 * packed inode's included; pclusters stored uncompressed are not).
 */
struct imgfs_stats_alg {
	uint64_t files; /* regular files with at least one such extent */
	uint64_t extents;
	uint64_t logical_bytes; /* file bytes these extents decode to */
	uint64_t stored_bytes; /* bytes of their pclusters, each once */
};

struct imgfs_stats_dir {
	char *path;
	uint64_t nid;
	uint64_t entries; /* "." and ".." excluded */
};

/*
 * Statistics over every inode reachable from the root, each inode counted
 * once however many paths lead to it. Byte counts of storage count shared
 * storage (deduplicated chunks, shared pclusters) once.
 */
struct imgfs_stats {
	size_t struct_size; /* set by the library (docs/architecture.md) */
	uint64_t image_bytes;
	uint64_t inodes; /* distinct inodes reached */
	uint64_t paths; /* paths, the root included */
	uint64_t hardlinks; /* paths beyond the first of an inode */
	uint64_t by_type[IMGFS_FT_MAX]; /* indexed by enum imgfs_file_type */
	uint64_t by_layout[IMGFS_LAYOUT_MAX]; /* inodes per data layout */
	uint64_t size_hist[IMGFS_STATS_SIZE_BUCKETS];
	uint64_t max_file_size;
	uint64_t file_bytes; /* sum of regular file sizes */
	uint64_t xattrs; /* xattr entries (each inode's) */

	/* Regular file storage. */
	uint64_t extents; /* runs of regular files (see imgfs_extent_merge()),
			   * holes included */
	uint64_t hole_bytes; /* file bytes in holes */
	uint64_t plain_bytes; /* file bytes stored uncompressed */
	uint64_t inline_bytes; /* of which in inline tails */
	uint64_t fragment_bytes; /* file bytes in the packed inode */
	/* Sum over uncompressed extents of (allocated - length): bytes
	 * lost to block alignment. */
	uint64_t slack_bytes;

	/* Compressed regular files. */
	uint64_t compressed_files;
	uint64_t compressed_file_bytes; /* their sizes */
	uint64_t compressed_blocks; /* their on-disk block counts (i_u) */
	uint64_t compressed_unmapped; /* ones the reader cannot map yet */
	uint64_t raw_extents; /* pclusters stored uncompressed (PLAIN) */
	uint64_t raw_bytes; /* file bytes in them */
	uint64_t packed_size; /* i_size of the packed (fragments) inode */
	struct imgfs_stats_alg algs[IMGFS_COMPR_MAX];

	/* Where the image bytes go. */
	uint64_t data_bytes; /* regular file storage (see above) */
	uint64_t inode_bytes; /* inodes with their inline xattr areas (the
			       * packed inode's included) */
	uint64_t dir_bytes; /* directory blocks and inline tails */
	uint64_t symlink_bytes; /* symlink target storage */
	uint64_t metadata_bytes; /* inode + dir + symlink bytes */
	uint64_t other_bytes; /* the rest: superblock, shared xattrs,
			       * compression indexes, padding, free space */

	unsigned int nr_top_dirs;
	struct imgfs_stats_dir top_dirs[IMGFS_STATS_TOP_DIRS]; /* most
			       * entries first; ties in walk order */
};

/*
 * Walk the whole tree of @img (see imgfs_walk()) and gather statistics into
 * a new *@out, released with imgfs_stats_free(). data_bytes is the storage
 * of regular files as mapped by the reader (uncompressed blocks, inline
 * tails, pclusters; the packed inode's too, which holds the fragments),
 * plus compressed_blocks of the files it cannot map.
 * Stops at the first error: returns 0 or a negative errno (-ENOMEM,
 * -EUCLEAN for corruption, ...), with @err telling which inode.
 */
IMGFS_API
int imgfs_stats_gather(struct imgfs_image *img, struct imgfs_stats **out,
		       struct imgfs_error *err);

/* Free @st (from imgfs_stats_gather()); NULL is fine. */
IMGFS_API
void imgfs_stats_free(struct imgfs_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_STATS_H */
