/* SPDX-License-Identifier: MIT */
/*
 * tmpfile.h - unlinked temporary files (not installed), for data the
 * library keeps outside memory while an image is built.
 */
#ifndef IMGFS_TMPFILE_H
#define IMGFS_TMPFILE_H

/* @dir (NULL: $TMPDIR), or /tmp when that is unset or empty. */
const char *temp_dir(const char *dir);

/*
 * Open a new read-write file in @dir that has no name, so it is gone when
 * closed: O_TMPFILE, or on file systems without it a file named
 * @dir/@prefix.XXXXXX unlinked at once. Returns the descriptor, or -1 with
 * errno set (the caller names the file in its message).
 */
int tmpfile_open(const char *dir, const char *prefix);

#endif /* IMGFS_TMPFILE_H */
