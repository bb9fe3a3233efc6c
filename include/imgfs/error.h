/* SPDX-License-Identifier: MIT */
/*
 * imgfs/error.h - error reporting.
 *
 * Library functions return 0 (or a non-negative count) on success and a
 * negative errno value on failure. The first failure also records a
 * human-readable message in the caller's struct imgfs_error, naming the
 * entry or offset and the reason, so a front end can print it once.
 */
#ifndef IMGFS_ERROR_H
#define IMGFS_ERROR_H

#include "imgfs/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IMGFS_ERROR_MSG_MAX 1024

struct imgfs_error {
	int code; /* negative errno, 0 when nothing failed */
	char msg[IMGFS_ERROR_MSG_MAX];
};

/* Reset @err to "no error". */
IMGFS_API
void imgfs_error_clear(struct imgfs_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_ERROR_H */
