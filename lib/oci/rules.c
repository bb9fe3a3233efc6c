// SPDX-License-Identifier: MIT
/*
 * The conversion rules of an EROFS layer (whiteouts, owners, file flags,
 * how the tar may end), written with the layer's descriptor as the
 * OCI_ANN_RULES annotation, so that a later check of the layout compares
 * the layer with its source under the rules it was made with, wherever
 * the layout was copied. The text is the comparison's options:
 * "whiteouts=overlay all-root=0 force-uid=-1 ... require-end=0".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/internal.h"

static const char *const flag_names[] = { "warn", "error", "ignore" };

int oci_rules_text(const struct imgfs_compare_options *co, char *buf,
		   size_t size)
{
	unsigned int f = co->flags;
	int n;

	n = snprintf(buf, size,
		     "whiteouts=%s all-root=%d force-uid=%" PRId64
		     " force-gid=%" PRId64 " uid-offset=%" PRId64
		     " gid-offset=%" PRId64
		     " file-flags=%s allow-missing-end=%d require-end=%d",
		     f & IMGFS_COMPARE_F_KEEP_WHITEOUTS ? "keep" : "overlay",
		     !!(f & IMGFS_COMPARE_F_ALL_ROOT), co->force_uid,
		     co->force_gid, co->uid_offset, co->gid_offset,
		     (f & IMGFS_COMPARE_F_IGNORE_FILE_FLAGS) ?
			     "ignore" :
			     flag_names[co->file_flags % 3],
		     !!(f & IMGFS_COMPARE_F_ALLOW_MISSING_END),
		     !!(f & IMGFS_COMPARE_F_REQUIRE_END));
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* "0" or "1" for the flag @bit. */
static int set_flag(struct imgfs_compare_options *co, unsigned int bit,
		    const char *v)
{
	if (strcmp(v, "0") && strcmp(v, "1"))
		return -1;
	if (*v == '1')
		co->flags |= bit;
	return 0;
}

static int set_id(int64_t *out, const char *v, int64_t min)
{
	char *end;
	long long n;

	if (!*v || (*v != '-' && (*v < '0' || *v > '9')))
		return -1;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || *end || n < min || n > (long long)UINT32_MAX)
		return -1;
	*out = n;
	return 0;
}

static int set_file_flags(struct imgfs_compare_options *co, const char *v)
{
	for (unsigned int i = 0; i < 3; i++) {
		if (!strcmp(v, flag_names[i])) {
			co->file_flags = (enum imgfs_file_flags)i;
			return 0;
		}
	}
	return -1;
}

/* One "KEY=VALUE" of the text: 0, or -1 (unknown key, bad value). */
static int set_rule(struct imgfs_compare_options *co, const char *k,
		    const char *v)
{
	if (!strcmp(k, "whiteouts")) {
		if (!strcmp(v, "keep"))
			co->flags |= IMGFS_COMPARE_F_KEEP_WHITEOUTS;
		return strcmp(v, "keep") && strcmp(v, "overlay") ? -1 : 0;
	}
	if (!strcmp(k, "all-root"))
		return set_flag(co, IMGFS_COMPARE_F_ALL_ROOT, v);
	if (!strcmp(k, "allow-missing-end"))
		return set_flag(co, IMGFS_COMPARE_F_ALLOW_MISSING_END, v);
	if (!strcmp(k, "require-end"))
		return set_flag(co, IMGFS_COMPARE_F_REQUIRE_END, v);
	if (!strcmp(k, "force-uid"))
		return set_id(&co->force_uid, v, -1);
	if (!strcmp(k, "force-gid"))
		return set_id(&co->force_gid, v, -1);
	if (!strcmp(k, "uid-offset"))
		return set_id(&co->uid_offset, v, -(int64_t)UINT32_MAX);
	if (!strcmp(k, "gid-offset"))
		return set_id(&co->gid_offset, v, -(int64_t)UINT32_MAX);
	if (!strcmp(k, "file-flags"))
		return set_file_flags(co, v);
	return -1;
}

int oci_rules_parse(const char *text, struct imgfs_compare_options *co)
{
	char buf[512], *save = NULL, *tok;

	if (strlen(text) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, text);
	for (tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			return -EINVAL;
		*eq = '\0';
		if (set_rule(co, tok, eq + 1))
			return -EINVAL;
	}
	return 0;
}

int oci_rules_of(const struct imgfs_oci_options *o, char *buf, size_t size)
{
	struct imgfs_compare_options co;
	struct imgfs_mkfs_options m;

	oci_mkfs_of(o, &m);
	imgfs_compare_options_init(&co);
	imgfs_compare_options_set_rules(&co, &m);
	return oci_rules_text(&co, buf, size);
}
