// SPDX-License-Identifier: MIT
/*
 * extract.c - fsck.img --extract: the library's extraction
 * (imgfs/extract.h), fed with the checker's walk, its notices printed
 * under the option names of fsck.img.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/error.h"
#include "fsck.h"
#include "frontend/escape.h"
#include "imgfs/extract.h"

static void notice(void *arg, const struct imgfs_extract_notice *n)
{
	(void)arg;
	switch (n->kind) {
	case IMGFS_EXTRACT_NO_OWNERS:
		fprintf(stderr,
			"fsck.img: extract: not root, owners are not restored\n");
		return;
	case IMGFS_EXTRACT_NO_XATTRS:
		fprintf(stderr,
			"fsck.img: extract: not root, some xattrs (e.g. %s on ",
			n->what);
		fe_escape_fputs(stderr, n->path, 0);
		fputs(") are not restored\n", stderr);
		return;
	case IMGFS_EXTRACT_DEVICE_SKIPPED:
		fputs("fsck.img: extract ", stderr);
		fe_escape_fputs(stderr, n->path, 0);
		fputs(": device node skipped (not root)\n", stderr);
		return;
	case IMGFS_EXTRACT_LIMIT_REACHED:
		fputs("fsck.img: extract ", stderr);
		fe_escape_fputs(stderr, n->path, 0);
		fprintf(stderr,
			": file data beyond --extract-limit=%" PRIu64
			" bytes (%" PRIu64 " written): %s\n",
			n->limit, n->written, strerror(n->errnum));
		return;
	case IMGFS_EXTRACT_FAILED:
		break;
	}
	fputs("fsck.img: extract ", stderr);
	fe_escape_fputs(stderr, n->path ? n->path : "?", 0);
	fputs(": ", stderr);
	fe_escape_fputs(stderr, n->what ? n->what : "?", 0);
	fprintf(stderr, ": %s\n", strerror(n->errnum));
}

struct fsck_extract {
	struct imgfs_extract *x;
};

struct fsck_extract *fsck_extract_new(const char *dir, bool overwrite,
				      uint64_t limit, struct imgfs_image *img,
				      struct imgfs_error *err)
{
	struct fsck_extract *fx = calloc(1, sizeof(*fx));
	struct imgfs_extract_options o;
	char msg[IMGFS_ERROR_MSG_MAX];
	int ret;

	if (!fx) {
		fe_error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	imgfs_extract_options_init(&o);
	o.flags = overwrite ? IMGFS_EXTRACT_F_OVERWRITE : 0;
	o.limit = limit;
	o.notice = notice;
	ret = imgfs_extract_new(img, dir, &o, &fx->x, err);
	if (!ret)
		return fx;
	free(fx);
	if (ret == -ENOMEM)
		return NULL;
	/* the library names the directory; say which option, and the way
	 * out of a non-empty one */
	snprintf(msg, sizeof(msg), "%s", err->msg);
	imgfs_error_clear(err);
	fe_error_set(err, ret, "--extract: %s%s", msg,
			ret == -ENOTEMPTY ? " (use --overwrite)" : "");
	return NULL;
}

int fsck_extract_entry(void *arg, const struct imgfs_check_entry *e)
{
	struct fsck_extract *fx = arg;

	return imgfs_extract_check_entry(fx->x, e);
}

int fsck_extract_finish(struct fsck_extract *fx, uint64_t *written,
			uint64_t *failures, struct imgfs_error *err)
{
	struct imgfs_extract_result res = { 0 };
	int ret = imgfs_extract_finish(fx->x, &res, err);

	*written = res.entries;
	*failures = res.failures;
	imgfs_extract_free(fx->x);
	free(fx);
	return ret;
}
