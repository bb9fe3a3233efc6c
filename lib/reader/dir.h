/* SPDX-License-Identifier: MIT */
/*
 * reader/dir.h - directory block parsing shared by the reader and checker.
 */
#ifndef IMGFS_READER_DIR_H
#define IMGFS_READER_DIR_H

#include "reader/internal.h"

/*
 * Validate the directory block @blk of @blen bytes (@blksz: image block
 * size). On success *@nr is the number of entries. On failure returns
 * -EUCLEAN, *@bad is the first bad entry and *@why a static reason.
 */
int dirblk_check(const uint8_t *blk, unsigned int blen, unsigned int blksz,
		 unsigned int *nr, unsigned int *bad, const char **why);

/*
 * Fill @de (all but ->block) for entry @i of a block that passed
 * dirblk_check(); the name is copied NUL-terminated into @name
 * (IMGFS_NAME_MAX + 1 bytes).
 */
void dirblk_entry(const uint8_t *blk, unsigned int blen, unsigned int nr,
		  unsigned int i, struct imgfs_dirent_info *de, char *name);

/*
 * Called for a directory block that fails validation: return 0 to skip it
 * and go on, non-zero to stop the walk with that value.
 */
typedef int (*imgfs_dirblk_bad_fn)(void *arg, uint64_t block,
				   unsigned int entry, const char *why);

/*
 * imgfs_dir_iterate() with an optional @bad hook; without it a bad block
 * ends the walk with -EUCLEAN.
 */
int dir_walk(struct imgfs_image *img, const struct imgfs_inode *dir,
	     imgfs_dirent_fn fn, void *arg, imgfs_dirblk_bad_fn bad,
	     void *bad_arg, struct imgfs_error *err);

#endif /* IMGFS_READER_DIR_H */
