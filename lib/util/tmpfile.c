// SPDX-License-Identifier: MIT
/*
 * Unlinked temporary files: the xattr spill file, the tar's copy of
 * tar-index images and the dm-verity tree levels all use one.
 */
#define _GNU_SOURCE /* O_TMPFILE, mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/tmpfile.h"

const char *temp_dir(const char *dir)
{
	if (!dir)
		dir = getenv("TMPDIR");
	return dir && *dir ? dir : "/tmp";
}

int tmpfile_open(const char *dir, const char *prefix)
{
	char path[4096];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 ||
	    (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	/* no O_TMPFILE here: a named file, unlinked at once */
	if ((size_t)snprintf(path, sizeof(path), "%s/%s.XXXXXX", dir, prefix) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}
