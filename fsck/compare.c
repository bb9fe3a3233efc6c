// SPDX-License-Identifier: MIT
/*
 * compare.c - fsck.img --compare: the library's comparison
 * (imgfs/compare.h), fed with the checker's walk so that the image data
 * is read once, its differences printed through fsck_difference().
 */
#include <stdio.h>
#include <stdlib.h>

#include "fsck.h"
#include "imgfs/compare.h"
#include "report.h"

struct fsck_compare {
	struct imgfs_compare *c;
	struct fsck_out *out;
};

static void difference(void *arg, const struct imgfs_compare_difference *d)
{
	struct fsck_compare *fc = arg;

	fsck_difference(fc->out, d->path, imgfs_compare_kind_name(d->kind),
			"%s", d->msg);
}

static void warning(const char *msg, void *arg)
{
	struct fsck_compare *fc = arg;

	if (!fc->out->quiet)
		fprintf(stderr, "fsck.img: warning: %s\n", msg);
}

struct fsck_compare *fsck_compare_new(struct imgfs_image *img,
				      const struct imgfs_mkfs_options *rules,
				      struct fsck_out *out)
{
	struct fsck_compare *fc = calloc(1, sizeof(*fc));
	struct imgfs_compare_options co;

	if (!fc)
		return NULL;
	fc->out = out;
	imgfs_compare_options_init(&co);
	imgfs_compare_options_set_rules(&co, rules);
	co.report = difference;
	co.report_arg = fc;
	co.warn = warning;
	co.warn_arg = fc;
	if (imgfs_compare_new(img, &co, &fc->c, NULL)) {
		free(fc);
		return NULL;
	}
	return fc;
}

int fsck_compare_entry(void *arg, const struct imgfs_check_entry *e)
{
	struct fsck_compare *fc = arg;

	return imgfs_compare_check_entry(fc->c, e);
}

int fsck_compare_run(struct fsck_compare *fc, const char *tar,
		     struct imgfs_error *err)
{
	return imgfs_compare_run(fc->c, tar, NULL, err);
}

void fsck_compare_free(struct fsck_compare *fc)
{
	if (!fc)
		return;
	imgfs_compare_free(fc->c);
	free(fc);
}
