/* SPDX-License-Identifier: MIT */
/*
 * fsck.h - what the parts of fsck.img share.
 */
#ifndef FSCK_FSCK_H
#define FSCK_FSCK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "imgfs/check.h"
#include "imgfs/reader.h"
#include "imgfs/writer.h"

/* fsck(8) exit codes */
#define FSCK_EXIT_OK 0
#define FSCK_EXIT_ERRORS 4
#define FSCK_EXIT_OPERATIONAL 8
#define FSCK_EXIT_USAGE 16

struct fsck_out; /* report.h */

/* --extract: the library's extraction (imgfs/extract.h), fed with the
 * checker's walk; its notices are printed on stderr. */
struct fsck_extract;
/* Into @dir, at most @limit bytes of file data in all (0: no limit). */
struct fsck_extract *fsck_extract_new(const char *dir, bool overwrite,
				      uint64_t limit, struct imgfs_image *img,
				      struct imgfs_error *err);
/* Entry callback for imgfs_check_image(). */
int fsck_extract_entry(void *arg, const struct imgfs_check_entry *e);
/* Apply directory metadata (deepest first) and free. Returns 0 or -errno;
 * *@failures counts entries that could not be written. */
int fsck_extract_finish(struct fsck_extract *x, uint64_t *written,
			uint64_t *failures, struct imgfs_error *err);

/* --compare: the library's comparison (imgfs/compare.h), fed with the
 * checker's walk; differences go to fsck_difference(). */
struct fsck_compare;
struct fsck_compare *fsck_compare_new(struct imgfs_image *img,
				      const struct imgfs_mkfs_options *rules,
				      struct fsck_out *out);
/* Entry callback of the check: hands each image path to the comparison. */
int fsck_compare_entry(void *arg, const struct imgfs_check_entry *e);
/* Read @tar and report every difference. Returns 0 or -errno (cannot read
 * the archive / the image). */
int fsck_compare_run(struct fsck_compare *c, const char *tar,
		     struct imgfs_error *err);
void fsck_compare_free(struct fsck_compare *c);

/* JSON reports (fsck/json.c; records: frontend/json_rec.h) */
struct json_object;
/* The counts of imgfs_check_image()'s result, as an object. */
struct json_object *
fsck_json_check_stats(const struct imgfs_check_result *res);

/* --oci=DIR (fsck/oci.c): a whole OCI image layout, its own options. */
bool fsck_oci_requested(int argc, char **argv);
int fsck_oci_main(int argc, char **argv);

#endif /* FSCK_FSCK_H */
