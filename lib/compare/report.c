// SPDX-License-Identifier: MIT
/*
 * compare/report.c - differences: each is worded once, counted by kind
 * and handed to the caller's callback.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "compare/internal.h"

static const char *const kind_names[IMGFS_COMPARE_NR_KINDS] = {
	[IMGFS_COMPARE_MISSING] = "missing",
	[IMGFS_COMPARE_EXTRA] = "extra",
	[IMGFS_COMPARE_TYPE] = "type",
	[IMGFS_COMPARE_MODE] = "mode",
	[IMGFS_COMPARE_OWNER] = "owner",
	[IMGFS_COMPARE_MTIME] = "mtime",
	[IMGFS_COMPARE_SIZE] = "size",
	[IMGFS_COMPARE_CONTENT] = "content",
	[IMGFS_COMPARE_SYMLINK] = "symlink",
	[IMGFS_COMPARE_RDEV] = "rdev",
	[IMGFS_COMPARE_XATTR] = "xattr",
	[IMGFS_COMPARE_HARDLINK] = "hardlink",
	[IMGFS_COMPARE_UNREPRESENTABLE] = "unrepresentable",
};

const char *imgfs_compare_kind_name(enum imgfs_compare_kind kind)
{
	if ((unsigned int)kind >= IMGFS_COMPARE_NR_KINDS)
		return "unknown";
	return kind_names[kind];
}

/* Format into c->msg, grown to fit (two symlink targets can be 8 KiB). */
static const char *format_msg(struct imgfs_compare *c, const char *fmt,
			      va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(c->msg, c->msg_cap, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return "?";
	if ((size_t)n >= c->msg_cap) {
		char *m = realloc(c->msg, (size_t)n + 1);

		if (!m) {
			c->oom = -ENOMEM;
			return "out of memory";
		}
		c->msg = m;
		c->msg_cap = (size_t)n + 1;
		vsnprintf(c->msg, c->msg_cap, fmt, ap);
	}
	return c->msg;
}

void cmp_diff(struct imgfs_compare *c, const char *path,
	      enum imgfs_compare_kind kind, const char *fmt, ...)
{
	struct imgfs_compare_difference d = { .kind = kind, .path = path };
	va_list ap;

	c->res.differences++;
	c->res.by_kind[kind]++;
	if (!c->o.report)
		return;
	va_start(ap, fmt);
	d.msg = format_msg(c, fmt, ap);
	va_end(ap);
	c->o.report(c->o.report_arg, &d);
}

void cmp_unrepresentable(struct imgfs_compare *c, const char *path,
			 const char *why)
{
	cmp_diff(c, path, IMGFS_COMPARE_UNREPRESENTABLE, "%s", why);
}

const char *cmp_type_words(uint32_t mode)
{
	switch (mode & 0170000) {
	case 0040000:
		return "directory";
	case 0100000:
		return "regular file";
	case 0120000:
		return "symlink";
	case 0020000:
		return "character device";
	case 0060000:
		return "block device";
	case 0010000:
		return "FIFO";
	case 0140000:
		return "socket";
	}
	return "unknown";
}
