// SPDX-License-Identifier: MIT
/*
 * verify.c - verify a finished image (verify.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "frontend/error.h"
#include "frontend/escape.h"
#include "frontend/verify.h"
#include "imgfs/check.h"
#include "imgfs/reader.h"
#include "imgfs/verity.h"

/* Only errors: a warning does not stop an image from being written. */
static void print_problem(void *arg, const struct imgfs_check_problem *p)
{
	const char *prog = arg;

	if (p->severity != IMGFS_CHECK_ERROR)
		return;
	fprintf(stderr, "%s: verify: ", prog);
	fe_escape_fputs(stderr, p->path ? p->path : "-", 0);
	fputs(": ", stderr);
	fe_escape_fputs(stderr, p->msg, 0);
	fputc('\n', stderr);
}

int fe_verify_fd(const char *prog, int fd, bool dm_verity,
		 struct imgfs_error *err)
{
	struct imgfs_verity_check chk;
	struct imgfs_check_options co;
	struct imgfs_check_result res;
	struct imgfs_image *img;
	int ret;

	imgfs_check_options_init(&co);
	co.report = print_problem;
	co.report_arg = (void *)prog;
	ret = imgfs_image_open_fd(fd, IMGFS_OPEN_IGNORE_CHECKSUM |
					     IMGFS_OPEN_IGNORE_FEATURES,
				  &img, err);
	if (ret)
		return ret;
	ret = imgfs_check_image(img, &co, &res, err);
	if (!ret && dm_verity)
		ret = imgfs_check_verity(img, NULL, &chk, err);
	imgfs_image_close(img);
	if (ret)
		return ret;
	if (res.errors)
		return fe_error_set(err, -EUCLEAN,
				    "verification found %" PRIu64 " %s",
				    res.errors,
				    res.errors == 1 ? "error" : "errors");
	return 0;
}
