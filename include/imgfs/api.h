/* SPDX-License-Identifier: MIT */
/*
 * imgfs/api.h - what marks a function as part of the public API.
 *
 * The library is built with -fvisibility=hidden: only functions declared
 * with IMGFS_API in these headers are exported from libimgfs.so, so the
 * API is exactly what the headers say (tests/api/exports.sh checks it).
 */
#ifndef IMGFS_API_H
#define IMGFS_API_H

#if defined(__GNUC__) || defined(__clang__)
#define IMGFS_API __attribute__((visibility("default")))
#else
#define IMGFS_API
#endif

#endif /* IMGFS_API_H */
