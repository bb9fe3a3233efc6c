/* SPDX-License-Identifier: MIT */
/*
 * check/internal.h - state shared by the checker's files (not installed).
 */
#ifndef IMGFS_CHECK_INTERNAL_H
#define IMGFS_CHECK_INTERNAL_H

#include "imgfs/check.h"
#include "reader/internal.h"
#include "util/hashtab.h"

/* What the checker remembers about each inode it reached. */
struct check_node {
	uint64_t nid;
	uint64_t parent; /* directory through which it was first reached */
	uint64_t parent_serial; /* that directory's walk serial */
	char *name; /* name of that first entry (NULL for the root) */
	uint32_t mode;
	uint32_t nlink; /* on-disk link count */
	uint32_t refs; /* directory entries found pointing at it */
	uint32_t subdirs; /* directories: child directory entries */
	bool bad; /* inode could not be read */
	bool checked; /* inode-level checks done */
	bool data_ok;
	bool have_digest;
	uint8_t sha256[IMGFS_SHA256_SIZE];
};

/* A byte range of the image owned by one inode (or the superblock). */
struct check_range {
	uint64_t start;
	uint64_t end;
	uint64_t nid; /* IMGFS_CHECK_NO_NID: superblock / shared xattrs */
	uint8_t kind; /* CHECK_RANGE_* */
};

enum {
	CHECK_RANGE_META = 0, /* inode, xattrs, inline data, chunk array */
	CHECK_RANGE_DATA, /* data blocks of a flat file */
	CHECK_RANGE_CHUNK, /* data blocks of a chunk-based file (shareable) */
	CHECK_RANGE_SHARED_XATTR, /* a shared xattr entry (shareable) */
};

/* The checker's records, in the order they were met (see nodes.c). */
struct check_nodes {
	struct check_node **chunks;
	size_t nr_chunks, chunks_cap;
	size_t count;
	struct imgfs_u64map index; /* nid -> position */
};

/* A growable string (util/vec.h). */
struct check_buf {
	char *s;
	size_t cap;
};

struct dir_scan;

struct check_ctx {
	struct imgfs_image *img;
	const struct imgfs_sb_info *sb;
	struct imgfs_check_options opts;
	struct imgfs_check_result *res;
	struct imgfs_error *err; /* operational failures only */
	struct check_nodes nodes;
	struct check_range *ranges;
	size_t nr_ranges;
	size_t ranges_cap;
	uint8_t *buf; /* data read buffer */
	size_t bufsz;
	uint8_t *readmap; /* bit per image block already read (no digest) */
	uint64_t hole_hashed; /* zero bytes hashed for sparse files */
	uint64_t inline_bytes; /* file data stored inline or in the packed inode */
	uint64_t hidden_inodes; /* counted in sb inos, not reachable (packed) */
	/* Paths, grown as needed: no depth limit. */
	struct check_buf rpath; /* of a problem reported */
	struct check_buf lpath; /* first path of a hard-linked inode */
	struct dir_scan *scan; /* the directory being listed (check.c) */
	char nid_path[32]; /* "<nid N>" when no path can be built */
	int fatal; /* operational failure seen (negative errno) */
	struct check_tar *tar; /* tar-index images: the tar's entries */
};

#define CHECK_BUFSZ (1u << 20)

/* report.c: count a finding and hand it to opts.report. */
void check_report(struct check_ctx *c, enum imgfs_check_severity sev,
		  enum imgfs_check_area area, uint64_t nid, const char *fmt,
		  ...) __attribute__((format(printf, 5, 6)));

/* nodes.c: the record of @nid, or NULL. */
struct check_node *check_node_find(struct check_ctx *c, uint64_t nid);
/* The record of @nid, created zeroed (*@is_new set) when not there yet;
 * NULL on no memory. */
struct check_node *check_node_get(struct check_ctx *c, uint64_t nid,
				  bool *is_new);
/* A new zeroed record for @nid (not yet there); NULL on no memory. */
struct check_node *check_node_insert(struct check_ctx *c, uint64_t nid);
/* Record @i (0 .. c->nodes.count - 1), in the order they were met. */
struct check_node *check_node_at(struct check_ctx *c, size_t i);
void check_nodes_free(struct check_ctx *c);
/* Length of the path of @n (0 for the root), SIZE_MAX if its chain does
 * not reach the root. */
size_t check_node_path_len(struct check_ctx *c, struct check_node *n);
/* Write the path of @n (@len bytes) backwards into @out, all but its
 * first @skip bytes: byte i of the path goes to out[i - skip]. */
void check_node_path_fill(struct check_ctx *c, struct check_node *n,
			  char *out, size_t len, size_t skip);
/* Path of @nid as first reached, built into @buf; "<nid N>" if unknown.
 * A path longer than @size keeps its end, after "...". */
const char *check_node_path(struct check_ctx *c, uint64_t nid, char *buf,
			    size_t size);
/* The same, whole, in @b (grown as needed); "<nid N>" when unknown or out
 * of memory. */
const char *check_node_path_buf(struct check_ctx *c, uint64_t nid,
				struct check_buf *b);

/* data.c: ranges of the image owned by inodes, and their overlaps. */
int check_add_range(struct check_ctx *c, uint64_t start, uint64_t len,
		    uint64_t nid, unsigned int kind);
void check_ranges(struct check_ctx *c);

/* Per-inode checks of data.c and xattr.c, driven by check.c. */
void check_xattrs(struct check_ctx *c, const struct imgfs_inode *inode);
void check_data(struct check_ctx *c, const struct imgfs_inode *inode,
		struct check_node *n);
/*
 * Tar-index images (tarindex.c): init checks that the tar is appended
 * where the device table maps it and walks its headers; each data extent
 * on it must then lie inside one entry's data.
 */
struct check_tar;
void check_tarindex_init(struct check_ctx *c);
void check_tarindex_extent(struct check_ctx *c, uint64_t nid,
			   const struct imgfs_extent *ext);
void check_tarindex_free(struct check_ctx *c);
/* Is the image an index with its tar mapped after it? */
static inline bool check_is_tarindex(const struct check_ctx *c)
{
	return (c->sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_DEVICE_TABLE) &&
	       c->sb->extra_devices == 1 && c->img->dev_base &&
	       c->img->dev_base[0];
}

/* Count the packed inode's storage as file data (amplification). */
void check_packed_storage(struct check_ctx *c, const struct imgfs_inode *in);

#endif /* IMGFS_CHECK_INTERNAL_H */
