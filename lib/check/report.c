// SPDX-License-Identifier: MIT
/*
 * report.c - the checker's findings: counted, and handed to the caller's
 * report callback with the path of the inode they are about.
 */
#include <stdarg.h>
#include <stdio.h>

#include "check/internal.h"

static const char *const severity_names[] = { "error", "warning", "note" };
static const char *const area_names[] = { "superblock", "inode", "directory",
					  "xattr", "data", "layout", "verity" };

const char *imgfs_check_severity_name(enum imgfs_check_severity s)
{
	return (unsigned int)s < 3 ? severity_names[s] : "?";
}

const char *imgfs_check_area_name(enum imgfs_check_area a)
{
	return (unsigned int)a < sizeof(area_names) / sizeof(area_names[0]) ?
		       area_names[a] :
		       "?";
}

void check_report(struct check_ctx *c, enum imgfs_check_severity sev,
		  enum imgfs_check_area area, uint64_t nid, const char *fmt,
		  ...)
{
	struct imgfs_check_problem p = { .severity = sev, .area = area,
					 .nid = nid };
	char msg[1024];
	va_list ap;

	if (c->stop && c->walking)
		return; /* met after the entry that stopped the walk */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p.msg = msg;
	/* the path as it is now: queued findings keep it */
	if (nid != IMGFS_CHECK_NO_NID && check_node_find(c, nid))
		p.path = check_node_path_buf(c, nid, &c->rpath);
	if (check_queue_busy(c))
		check_queue_problem(c, &p);
	else
		check_deliver_problem(c, &p);
}
