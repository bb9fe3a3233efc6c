/* SPDX-License-Identifier: MIT */
/*
 * frontend/verify.h - verify a finished image before it is put in place
 * (mkfs.img --verify, the mkfs.erofs command line).
 */
#ifndef FRONTEND_VERIFY_H
#define FRONTEND_VERIFY_H

#include <stdbool.h>

#include "imgfs/error.h"

/*
 * Check the image open at @fd (it has no name yet) with the library's
 * checker, and its dm-verity tree against it when @dm_verity. Each error
 * found is printed on stderr as "@prog: verify: PATH: MESSAGE". Returns
 * 0, -EUCLEAN when errors were found, or the checker's own failure.
 */
int fe_verify_fd(const char *prog, int fd, bool dm_verity,
		 struct imgfs_error *err);

#endif /* FRONTEND_VERIFY_H */
