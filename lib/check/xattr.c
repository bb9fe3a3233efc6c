// SPDX-License-Identifier: MIT
/*
 * xattr.c - xattr areas, names, POSIX ACLs and the name bloom filter.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check/internal.h"
#include "format/acl.h"
#include "util/vec.h"
#include "util/error.h"

struct xname {
	char *name;
	size_t len;
};

struct xattr_scan {
	struct check_ctx *c;
	const struct imgfs_inode *inode;
	uint32_t filter; /* bits of the names seen */
	struct xname *names;
	size_t nr, cap;
	bool oom;
};

static bool acl_tag_ok(unsigned int tag)
{
	switch (tag) {
	case IMGFS_ACL_USER_OBJ:
	case IMGFS_ACL_USER:
	case IMGFS_ACL_GROUP_OBJ:
	case IMGFS_ACL_GROUP:
	case IMGFS_ACL_MASK:
	case IMGFS_ACL_OTHER:
		return true;
	}
	return false;
}

/* Returns a static reason if @v is not a valid Linux POSIX ACL value. */
static const char *acl_problem(const uint8_t *v, size_t len)
{
	unsigned int seen = 0, named = 0, prev_tag = 0;
	uint32_t prev_id = 0;
	size_t i, nr;

	if (len < IMGFS_ACL_HEADER_SIZE ||
	    (len - IMGFS_ACL_HEADER_SIZE) % IMGFS_ACL_ENTRY_SIZE)
		return "size is not 4 + 8 * n";
	if (acl_version_decode(v) != IMGFS_ACL_XATTR_VERSION)
		return "version is not 2";
	nr = (len - IMGFS_ACL_HEADER_SIZE) / IMGFS_ACL_ENTRY_SIZE;
	for (i = 0; i < nr; i++) {
		struct imgfs_acl_entry e;
		unsigned int tag;
		uint32_t id;

		acl_entry_decode(v + IMGFS_ACL_HEADER_SIZE +
					 IMGFS_ACL_ENTRY_SIZE * i,
				 &e);
		tag = e.e_tag;
		id = e.e_id;
		if (!acl_tag_ok(tag))
			return "invalid tag";
		if (e.e_perm & ~7u)
			return "invalid permission bits";
		if (tag < prev_tag)
			return "entries not sorted by tag";
		if (tag == IMGFS_ACL_USER || tag == IMGFS_ACL_GROUP) {
			if (tag == prev_tag && id <= prev_id)
				return "named entries not sorted by id or duplicated";
			named++;
		} else if (seen & tag) {
			return "duplicate USER_OBJ/GROUP_OBJ/MASK/OTHER entry";
		}
		seen |= tag;
		prev_tag = tag;
		prev_id = id;
	}
	if (nr && (!(seen & IMGFS_ACL_USER_OBJ) ||
		   !(seen & IMGFS_ACL_GROUP_OBJ) || !(seen & IMGFS_ACL_OTHER)))
		return "USER_OBJ, GROUP_OBJ or OTHER entry missing";
	if (named && !(seen & IMGFS_ACL_MASK))
		return "named entries without a MASK entry";
	return NULL;
}

static void add_name(struct xattr_scan *s, const struct imgfs_xattr_info *x)
{
	struct xname *n;
	size_t len = x->name_len + 4;

	if (IMGFS_VEC_RESERVE(s->names, s->cap, s->nr + 1, 16)) {
		s->oom = true;
		return;
	}
	n = &s->names[s->nr];
	n->name = malloc(len);
	if (!n->name) {
		s->oom = true;
		return;
	}
	memcpy(n->name, x->name, x->name_len);
	n->len = x->name_len;
	s->nr++;
}

/*
 * Bloom-filter base index and hashed suffix of an entry
 * (docs/format.md §7.6).
 */
static void filter_add(struct xattr_scan *s, const struct imgfs_xattr_info *x)
{
	char buf[IMGFS_XATTR_NAME_MAX + 1];
	unsigned int base = x->name_index;
	const char *infix = "";
	size_t ilen = 0;

	if (base & IMGFS_XATTR_LONG_PREFIX) {
		if (imgfs_image_long_prefix(s->c->img, base & 0x7F, &base,
					    &infix, &ilen))
			return;
	}
	memcpy(buf, infix, ilen);
	memcpy(buf + ilen, x->suffix, x->suffix_len);
	s->filter |= 1u << xattr_filter_bit(base, buf, ilen + x->suffix_len);
}

static void check_name(struct xattr_scan *s, const struct imgfs_xattr_info *x)
{
	struct check_ctx *c = s->c;
	uint64_t nid = s->inode->nid;
	unsigned int idx = x->name_index;

	if (idx & IMGFS_XATTR_LONG_PREFIX) {
		/* a table kept in the packed inode or metabox is not loaded */
		bool unread = c->img->nr_prefixes < c->sb->xattr_prefix_count &&
			      (idx & 0x7F) < c->sb->xattr_prefix_count;

		if (!x->name_len)
			check_report(c, unread ? IMGFS_CHECK_WARNING :
						 IMGFS_CHECK_ERROR,
				     IMGFS_CHECK_XATTR, nid,
				     "xattr at byte %llu uses long prefix %u, but the image has %u",
				     (unsigned long long)x->pos, idx & 0x7F,
				     c->img->nr_prefixes);
	} else if (idx == IMGFS_XATTR_INDEX_LUSTRE) {
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_XATTR, nid,
			     "xattr at byte %llu has name index 5 (lustre.), which the kernel ignores",
			     (unsigned long long)x->pos);
	} else if (!x->name_len) {
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_XATTR, nid,
			     "xattr at byte %llu has invalid name index %u",
			     (unsigned long long)x->pos, idx);
	} else if ((idx == IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS ||
		    idx == IMGFS_XATTR_INDEX_POSIX_ACL_DEFAULT) &&
		   x->suffix_len) {
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_XATTR, nid,
			     "ACL xattr \"%s\" has a name suffix", x->name);
	} else if (idx != IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS &&
		   idx != IMGFS_XATTR_INDEX_POSIX_ACL_DEFAULT &&
		   !x->suffix_len) {
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_XATTR, nid,
			     "xattr \"%s\" has an empty name", x->name);
	}
	if (memchr(x->suffix, '\0', x->suffix_len))
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_XATTR, nid,
			     "xattr name at byte %llu contains a NUL byte",
			     (unsigned long long)x->pos);
}

static int xattr_cb(void *arg, const struct imgfs_xattr_info *x)
{
	struct xattr_scan *s = arg;
	struct check_ctx *c = s->c;
	const char *why;

	c->res->xattrs++;
	if (x->shared)
		check_add_range(c, x->pos,
				imgfs_xattr_entry_size((unsigned int)x->suffix_len,
						       (unsigned int)x->value_size),
				IMGFS_CHECK_NO_NID, CHECK_RANGE_SHARED_XATTR);
	check_name(s, x);
	if (!x->name_len)
		return 0; /* invisible to the kernel */
	if ((x->name_index == IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS ||
	     x->name_index == IMGFS_XATTR_INDEX_POSIX_ACL_DEFAULT) &&
	    (why = acl_problem(x->value, x->value_size)))
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_XATTR,
			     s->inode->nid, "ACL xattr \"%s\": %s", x->name,
			     why);
	filter_add(s, x);
	add_name(s, x);
	return 0;
}

static int xname_cmp(const void *a, const void *b)
{
	const struct xname *x = a, *y = b;
	size_t min = x->len < y->len ? x->len : y->len;
	int r = memcmp(x->name, y->name, min);

	if (r)
		return r;
	return x->len < y->len ? -1 : x->len > y->len;
}

static void check_duplicates(struct xattr_scan *s)
{
	size_t i;

	if (s->nr < 2)
		return;
	qsort(s->names, s->nr, sizeof(*s->names), xname_cmp);
	for (i = 1; i < s->nr; i++) {
		if (xname_cmp(&s->names[i - 1], &s->names[i]))
			continue;
		s->names[i].name[s->names[i].len] = '\0';
		check_report(s->c, IMGFS_CHECK_ERROR, IMGFS_CHECK_XATTR,
			     s->inode->nid, "duplicate xattr \"%s\"",
			     s->names[i].name);
	}
}

static void check_filter(struct xattr_scan *s,
			 const struct imgfs_xattr_ibody_header *hdr)
{
	const struct imgfs_sb_info *sb = s->c->sb;
	uint32_t stored = hdr->h_name_filter;

	if (!(sb->feature_compat & IMGFS_FEATURE_COMPAT_XATTR_FILTER) ||
	    sb->xattr_filter_reserved)
		return;
	if (stored & s->filter)
		check_report(s->c, IMGFS_CHECK_ERROR, IMGFS_CHECK_XATTR,
			     s->inode->nid,
			     "xattr name filter 0x%08x hides present names (expected 0x%08x)",
			     stored, ~s->filter);
	else if (stored != ~s->filter)
		check_report(s->c, IMGFS_CHECK_WARNING, IMGFS_CHECK_XATTR,
			     s->inode->nid,
			     "xattr name filter 0x%08x is not exact (expected 0x%08x)",
			     stored, ~s->filter);
}

void check_xattrs(struct check_ctx *c, const struct imgfs_inode *inode)
{
	struct xattr_scan s = { .c = c, .inode = inode };
	uint8_t raw[IMGFS_XATTR_IBODY_HEADER_SIZE];
	struct imgfs_xattr_ibody_header hdr;
	struct imgfs_error e = { 0 };
	size_t i;
	int ret;

	if (!inode->xattr_isize)
		return;
	if (inode->xattr_isize == IMGFS_XATTR_IBODY_HEADER_SIZE) {
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_XATTR,
			     inode->nid,
			     "xattr area of 12 bytes (i_xattr_icount 1): the kernel refuses xattr access");
		return;
	}
	if (img_read(c->img, raw, sizeof(raw), inode->pos + inode->inode_size,
		     "xattr header", inode->nid, &e))
		return; /* the inode read already checked the area bounds */
	xattr_ibody_header_decode(raw, &hdr);
	if (hdr.reserved_set)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_XATTR,
			     inode->nid, "xattr header reserved bytes are not zero");
	ret = imgfs_xattr_iterate(c->img, inode, true, xattr_cb, &s, &e);
	if (ret == -ENOMEM || s.oom)
		c->fatal = error_set(c->err, -ENOMEM, "out of memory");
	else if (ret < 0)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_XATTR,
			     inode->nid, "%s", e.msg);
	else
		check_filter(&s, &hdr);
	check_duplicates(&s);
	for (i = 0; i < s.nr; i++)
		free(s.names[i].name);
	free(s.names);
}
