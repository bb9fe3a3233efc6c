// SPDX-License-Identifier: MIT
/*
 * ocicheck/report.c - what every part of the layout check uses: findings
 * counted and handed to the caller, and a blob read through the verifying
 * reader. Kept apart from the walk of check.c so that the layer check
 * (layer.c), which the walk calls, does not call back into it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf */
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ocicheck/check.h"
#include "util/error.h"

void chk_report(struct oci_chk *c, struct chk_blob *b,
		enum imgfs_check_severity sev, const char *where,
		const char *fmt, ...)
{
	struct imgfs_oci_finding f = {
		.severity = sev,
		.blob = b ? b->digest.str : NULL,
		.media_type = b ? b->media_type : NULL,
		.where = where,
	};
	char *msg = NULL;
	va_list ap;

	if (sev == IMGFS_CHECK_ERROR) {
		c->res->errors++;
		if (b)
			b->errors++;
	} else if (sev == IMGFS_CHECK_WARNING) {
		c->res->warnings++;
		if (b)
			b->warnings++;
	}
	if (!c->o->report)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	f.msg = msg ? msg : "(out of memory formatting the message)";
	c->o->report(c->o->report_arg, &f);
	free(msg);
}

/* Read the whole blob through the verifying reader. */
int chk_verify(struct oci_chk *c, struct chk_blob *b)
{
	struct oci_blob_reader r;
	struct imgfs_error e = { 0 };
	int ret;

	ret = oci_blob_open(c->root, &b->digest, b->size, &r, &e);
	if (!ret)
		ret = oci_blob_finish(&r, &e);
	c->res->bytes += r.size;
	oci_blob_close(&r);
	if (ret == -ENOMEM)
		return error_set(c->err, ret, "out of memory");
	if (ret) {
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where, "%s", e.msg);
		return 1;
	}
	b->verified = true;
	return 0;
}
