/* SPDX-License-Identifier: MIT */
/*
 * walk.h - one walker of an image's directory tree, on top of the reader,
 * for every user that visits the whole tree: dump.img's listings and
 * statistics, the checker (and through it fsck.img --extract).
 *
 * It detects loops and hard links by nid (each directory is listed once;
 * later paths of an inode come with first == false), keeps one path
 * buffer whatever the depth (no recursion on the C stack), can stop at a
 * depth, and either stops at the first error or hands unreadable entries,
 * directory blocks and directories to callbacks and goes on.
 */
#ifndef IMGFS_WALK_H
#define IMGFS_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/api.h"
#include "imgfs/error.h"
#include "imgfs/reader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* imgfs_walk_entry.serial of entries that are not directories to list. */
#define IMGFS_WALK_NO_SERIAL UINT64_MAX

/* One entry met by imgfs_walk(), valid only during the callback. */
struct imgfs_walk_entry {
	const char *path; /* "/a/b" */
	const char *name; /* last component, inside @path */
	size_t name_len;
	/*
	 * The entry's inode, read; NULL for "." and ".." (IMGFS_WALK_DOTS)
	 * and, with IMGFS_WALK_CONTINUE, for an inode that could not be read
	 * (then @error says why).
	 */
	const struct imgfs_inode *inode;
	uint64_t parent_nid;
	unsigned int file_type; /* the dirent's raw file_type */
	unsigned int depth; /* 1 for entries of the start directory */
	bool first; /* first path met for this inode during the walk */
	const struct imgfs_dirent_info *dirent; /* the raw directory entry */
	const struct imgfs_error *error; /* why @inode is NULL, or NULL */
	/*
	 * Directories the walk will list are numbered in the order they are
	 * met: the start directory is 0, the next 1, 2, ... @serial is that
	 * number for such a directory entry, IMGFS_WALK_NO_SERIAL for any
	 * other; @parent_serial is the number of the directory listed.
	 */
	uint64_t serial;
	uint64_t parent_serial;
};

/* imgfs_walk_options.flags */
enum {
	IMGFS_WALK_NO_RECURSE = 1u << 0, /* list the start directory only */
	/* directories in breadth-first order instead of "ls -R" order */
	IMGFS_WALK_BREADTH_FIRST = 1u << 1,
	/* hand "." and ".." to entry() too (inode NULL, never walked) */
	IMGFS_WALK_DOTS = 1u << 2,
	/*
	 * Go on after read errors: an entry whose inode cannot be read comes
	 * to entry() with inode NULL and error set, a directory that cannot
	 * be listed to the end to dir_error(). Only running out of memory
	 * still stops the walk.
	 */
	IMGFS_WALK_CONTINUE = 1u << 3,
};

/*
 * Callbacks of imgfs_walk(). Each may be NULL; each returns 0 to go on, a
 * positive value to stop the walk (imgfs_walk() then returns it) or a
 * negative errno to fail (returned as is).
 */
struct imgfs_walk_options {
	size_t struct_size; /* sizeof(struct imgfs_walk_options) */
	unsigned int flags; /* IMGFS_WALK_* */
	/* Before the entries of directory @dir (at @path) are listed. */
	int (*dir_begin)(void *arg, const char *path,
			 const struct imgfs_inode *dir);
	/* Once per entry of the directory, "." and ".." excluded. */
	int (*entry)(void *arg, const struct imgfs_walk_entry *e);
	/* After the last entry; @entries counts them. */
	int (*dir_end)(void *arg, const char *path,
		       const struct imgfs_inode *dir, uint64_t entries);
	void *arg;
	/* Fields below were added later; an older, smaller struct_size
	 * leaves them zero. */
	/* Directories at this depth are not listed (0: no limit; 1 is
	 * IMGFS_WALK_NO_RECURSE). */
	unsigned int max_depth;
	/*
	 * A directory block that fails validation (see imgfs_dir_iterate()):
	 * when set, it is handed here and skipped; when NULL it is an error.
	 */
	int (*bad_block)(void *arg, const char *path,
			 const struct imgfs_inode *dir, uint64_t block,
			 unsigned int entry, const char *why);
	/* IMGFS_WALK_CONTINUE: listing @dir failed part way; dir_end()
	 * follows. */
	int (*dir_error)(void *arg, const char *path,
			 const struct imgfs_inode *dir,
			 const struct imgfs_error *error);
};

/*
 * Walk the tree below directory @start_nid, named @start_path in the paths
 * handed out ("/" for the root). Each directory is listed in full (its
 * entries in on-disk order), then its subdirectories are walked in that
 * order, depth first, like "ls -R" (or, with IMGFS_WALK_BREADTH_FIRST,
 * level by level). A directory is entered once only, so a corrupt image
 * whose entries form a cycle or link a directory twice ends the walk
 * normally (later paths of an inode come with first == false). Without
 * IMGFS_WALK_CONTINUE the walk stops at the first error (an entry's inode
 * or a directory block that cannot be read) and returns it. Memory grows
 * with the number of inodes (one set of seen NIDs), the depth (one path)
 * and the names of the subdirectories still to walk (breadth first: of
 * all directories), never with depth times path length.
 * Returns 0, a callback's positive value, -ENOTDIR if @start_nid is not a
 * directory, or a negative errno.
 */
IMGFS_API
int imgfs_walk(struct imgfs_image *img, uint64_t start_nid,
	       const char *start_path, const struct imgfs_walk_options *opts,
	       struct imgfs_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_WALK_H */
