/* SPDX-License-Identifier: MIT */
/*
 * imgfs/check.h - verifying an EROFS image.
 *
 * The checker walks every inode reachable from the root through the reader
 * (imgfs/reader.h) and verifies superblock, inodes, directories, xattrs and
 * data (see imgfs_check_image() for the list). Each problem goes to a
 * callback as it is found; the walk goes on after a problem, visiting each
 * directory once, so corrupt images (cycles, hard-linked directories) cannot
 * make it loop. Memory use is proportional to the metadata (one small
 * record per inode and per data extent), not to the data.
 */
#ifndef IMGFS_CHECK_H
#define IMGFS_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/api.h"
#include "imgfs/error.h"
#include "imgfs/reader.h"
#include "imgfs/walk.h"
#include "imgfs/verity.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IMGFS_SHA256_SIZE 32

/* nid value of problems that concern no inode (superblock, layout). */
#define IMGFS_CHECK_NO_NID UINT64_MAX

enum imgfs_check_severity {
	IMGFS_CHECK_ERROR = 0, /* the image is wrong (fsck exit 4) */
	IMGFS_CHECK_WARNING, /* unusual, tolerated by the kernel */
	IMGFS_CHECK_NOTE, /* informational (e.g. shared chunks seen) */
};

enum imgfs_check_area {
	IMGFS_CHECK_SUPERBLOCK = 0,
	IMGFS_CHECK_INODE,
	IMGFS_CHECK_DIR,
	IMGFS_CHECK_XATTR,
	IMGFS_CHECK_DATA,
	IMGFS_CHECK_LAYOUT, /* overlaps between inodes, data and metadata */
	IMGFS_CHECK_VERITY, /* the dm-verity tree after the image */
};

/* One finding, valid only during the report callback. */
struct imgfs_check_problem {
	enum imgfs_check_severity severity;
	enum imgfs_check_area area;
	uint64_t nid; /* IMGFS_CHECK_NO_NID if none */
	const char *path; /* "/dir/name" of the inode, or NULL if unknown */
	const char *msg; /* what is wrong */
};

typedef void (*imgfs_check_report_fn)(void *arg,
				      const struct imgfs_check_problem *p);

/* One reachable directory entry, valid only during the entry callback. */
struct imgfs_check_entry {
	const char *path; /* "/" for the root, else "/a/b" */
	const struct imgfs_inode *inode;
	/* Non-NULL for the second and later paths of a hard-linked inode:
	 * the path under which it was first met. */
	const char *link_to;
	/* SHA-256 of the content of a regular file when IMGFS_CHECK_F_DIGEST
	 * is set and the whole content was read; else NULL. */
	const uint8_t *sha256;
	bool data_ok; /* every byte of the content could be read */
	/* nid of the directory holding this path (the root's own for "/"):
	 * with it a consumer can keep a tree without keeping full paths. */
	uint64_t parent_nid;
	/*
	 * Walk serials (imgfs/walk.h: the root is 0, then every directory in
	 * the order met): @serial of a directory whose entries follow later
	 * (else IMGFS_WALK_NO_SERIAL), @parent_serial of the directory
	 * holding this path. For a hard link, where its first path is:
	 * @link_parent_serial and @link_name (else IMGFS_WALK_NO_SERIAL and
	 * NULL). With them a consumer keeps its tree in arrays.
	 */
	uint64_t serial;
	uint64_t parent_serial;
	uint64_t link_parent_serial;
	const char *link_name;
};

/*
 * Called once per path, parents before children (breadth first), root
 * first. Return 0 to go on, non-zero to stop the walk (the check then
 * returns that value if negative, 0 otherwise with res->stopped set).
 */
typedef int (*imgfs_check_entry_fn)(void *arg,
				    const struct imgfs_check_entry *e);

enum {
	IMGFS_CHECK_F_DIGEST = 1u << 0, /* SHA-256 of every regular file */
	IMGFS_CHECK_F_NO_DATA = 1u << 1, /* map data but do not read it */
};

struct imgfs_check_options {
	size_t struct_size; /* sizeof(struct imgfs_check_options) */
	unsigned int flags; /* IMGFS_CHECK_F_* */
	imgfs_check_report_fn report; /* may be NULL */
	void *report_arg;
	imgfs_check_entry_fn entry; /* may be NULL */
	void *entry_arg;
	/*
	 * Threads reading and decompressing file data (0: one per online
	 * CPU, at most IMGFS_CHECK_THREADS_MAX; 1: all in the calling
	 * thread). Whatever the count, findings and entries reach the
	 * callbacks in the same order, always from the calling thread, and
	 * the result is the same; the walk runs ahead of the reads by a
	 * bounded number of files and findings, not by one per thread.
	 * Exception: when the entry callback stops the walk, the counts in
	 * the result may include a few entries the walk met after the one
	 * that stopped it (their findings are dropped).
	 */
	unsigned int threads;
};

/* More threads than this are not started (each holds a 64 KiB buffer). */
#define IMGFS_CHECK_THREADS_MAX 64u

struct imgfs_check_result {
	size_t struct_size; /* set by the library (docs/architecture.md) */
	uint64_t errors;
	uint64_t warnings;
	uint64_t notes;
	uint64_t inodes; /* distinct inodes reached */
	uint64_t dirs;
	uint64_t regular;
	uint64_t symlinks;
	uint64_t specials; /* devices, FIFOs, sockets */
	uint64_t hardlinks; /* extra paths to an already seen inode */
	uint64_t xattrs; /* xattr entries seen (shared ones per inode) */
	uint64_t data_bytes; /* file bytes verified readable */
	uint64_t image_bytes;
	bool stopped; /* the entry callback ended the walk early */
	/* bytes of regular file data that reading gives (holes excluded), and
	 * the image bytes holding file data (blocks shared by several chunks
	 * or files counted once): their ratio is the amplification */
	uint64_t logical_bytes;
	uint64_t physical_bytes;
};

/*
 * Amplification above which the checker warns, for the image and for each
 * file: more than compression alone can give (at most a 12 MiB extent
 * from one 512-byte block, 24576), so only blocks referenced again and
 * again (a chunk map pointing many chunks at the same blocks) exceed it.
 * Such a file's digest is not computed (the structure check reads its
 * blocks once).
 */
#define IMGFS_CHECK_AMPLIFICATION_MAX 65536u

/* Fill @opts with the defaults (no flags, no callbacks). */
IMGFS_API
void imgfs_check_options_init(struct imgfs_check_options *opts);

/*
 * Check the open image @img. Verified:
 * - superblock: checksum, known feature bits (unknown incompat = error,
 *   unknown compat = warning), area addresses inside the image, root;
 * - inodes: format bits, layout valid for the type, sizes consistent with
 *   the layout, extents inside the image and not overlapping metadata or
 *   other files (shared chunks of chunk-based files are allowed and noted),
 *   symlink length 1..4095, special files, inline data inside its block;
 * - directories: block structure, names (no '/', NUL, empty), strict memcmp
 *   order across blocks, no duplicates, "." and ".." targets, file types,
 *   each directory reached once, link counts;
 * - xattrs: area and entry bounds, shared ids, name indexes and long
 *   prefixes, duplicate names, POSIX ACL values, bloom filter;
 * - data: every byte of every file readable (SHA-256 with DIGEST).
 * @img should be opened with IMGFS_OPEN_IGNORE_CHECKSUM and
 * IMGFS_OPEN_IGNORE_FEATURES so those are reported, not fatal.
 * @opts may be NULL. @res is filled in. Returns 0 when the walk ran
 * (findings are in @res and went to the callback), or a negative errno for
 * an operational failure (out of memory, I/O error on the image file).
 */
IMGFS_API
int imgfs_check_image(struct imgfs_image *img,
		      const struct imgfs_check_options *opts,
		      struct imgfs_check_result *res, struct imgfs_error *err);

/*
 * Open the image file @path and check it. A file that is not a valid image
 * (bad magic, block size, ...) counts as one superblock error and returns
 * 0; failing to open or read the file returns a negative errno.
 */
IMGFS_API
int imgfs_check_path(const char *path, const struct imgfs_check_options *opts,
		     struct imgfs_check_result *res, struct imgfs_error *err);

/*
 * dm-verity hash trees after images (mkfs.img --dm-verity): the verity
 * superblock sits at the image size (superblock block count; for a
 * tar-index image, the end of the tar the device table maps after the
 * index) rounded up to 4096, as "veritysetup format --hash-offset" puts
 * it there.
 * imgfs_check_verity_offset() gives that offset (UINT64_MAX if absurd),
 * imgfs_check_has_verity() whether a verity superblock is there.
 * imgfs_check_verity() checks the tree over the whole image as the kernel
 * would (imgfs_verity_verify_fd), @root_hash NULL meaning the root is not
 * compared, and that the tree covers the whole image with data blocks no
 * larger than the image's. Returns 0, -EBADMSG with a message naming the
 * first mismatch, or another negative errno (I/O, a memory image).
 * imgfs_check_image() does not warn about the bytes of such a tree.
 */
IMGFS_API
uint64_t imgfs_check_verity_offset(const struct imgfs_image *img);
IMGFS_API
bool imgfs_check_has_verity(struct imgfs_image *img);
IMGFS_API
int imgfs_check_verity(struct imgfs_image *img, const uint8_t *root_hash,
		       struct imgfs_verity_check *chk, struct imgfs_error *err);

/* Human-readable names, for front ends. */
IMGFS_API
const char *imgfs_check_severity_name(enum imgfs_check_severity s);
IMGFS_API
const char *imgfs_check_area_name(enum imgfs_check_area a);

/*
 * Compute SHA-256 of @len bytes at @buf into @out (convenience for front
 * ends comparing digests). Returns 0 or -ENOMEM/-EIO.
 */
IMGFS_API
int imgfs_sha256(const void *buf, size_t len, uint8_t out[IMGFS_SHA256_SIZE]);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_CHECK_H */
