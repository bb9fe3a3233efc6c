/* SPDX-License-Identifier: MIT */
/*
 * fileio.h - whole reads and writes at an offset (not installed): pread()
 * and pwrite() may move fewer bytes than asked, or be interrupted; these
 * loop until all is done, so no caller repeats the loop.
 */
#ifndef IMGFS_FILEIO_H
#define IMGFS_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Read up to @len bytes of @fd at @off; fewer only at the end of the file.
 * Returns how many, or a negative errno.
 */
ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off);

/*
 * Write all @len bytes at @off. Returns 0, or a negative errno (-EIO for a
 * write that makes no progress).
 */
int pwrite_full(int fd, const void *buf, size_t len, uint64_t off);

#endif /* IMGFS_FILEIO_H */
