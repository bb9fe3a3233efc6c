// SPDX-License-Identifier: MIT
/*
 * POSIX ACLs: libarchive parses tar ACL records (SCHILY.acl.*, Solaris,
 * disk ACLs) into entry lists; the kernel wants the binary xattr form,
 * entries sorted by tag and then id.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "imgfs/format.h"
#include "format/acl.h"

struct acl_ent {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
};

static int acl_tag(int ae_tag)
{
	switch (ae_tag) {
	case ARCHIVE_ENTRY_ACL_USER_OBJ:
		return IMGFS_ACL_USER_OBJ;
	case ARCHIVE_ENTRY_ACL_USER:
		return IMGFS_ACL_USER;
	case ARCHIVE_ENTRY_ACL_GROUP_OBJ:
		return IMGFS_ACL_GROUP_OBJ;
	case ARCHIVE_ENTRY_ACL_GROUP:
		return IMGFS_ACL_GROUP;
	case ARCHIVE_ENTRY_ACL_MASK:
		return IMGFS_ACL_MASK;
	case ARCHIVE_ENTRY_ACL_OTHER:
		return IMGFS_ACL_OTHER;
	}
	return -1;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct acl_ent *x = a, *y = b;

	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return 0;
}

long imgfs_acl_encode(struct archive_entry *e, int type, uint8_t **out,
		      const char *path, struct imgfs_error *err)
{
	int n = archive_entry_acl_reset(e, type);
	int etype, permset, tag, id;
	const char *name;
	struct acl_ent *ents;
	uint8_t *buf;
	int count = 0;

	if (archive_entry_acl_types(e) & ARCHIVE_ENTRY_ACL_TYPE_NFS4)
		return imgfs_error_set(err, -EOPNOTSUPP,
				       "%s: NFSv4 ACLs cannot be stored in EROFS",
				       path);
	if (n <= 0)
		return 0;
	ents = calloc((size_t)n, sizeof(*ents));
	if (!ents)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	while (count < n && archive_entry_acl_next(e, type, &etype, &permset,
						   &tag, &id, &name) == ARCHIVE_OK) {
		int t = acl_tag(tag);

		if (t < 0) {
			free(ents);
			return imgfs_error_set(err, -EOPNOTSUPP,
					       "%s: unsupported ACL entry tag %d",
					       path, tag);
		}
		ents[count].tag = (uint16_t)t;
		ents[count].perm = (uint16_t)(permset & 7);
		ents[count].id = (t == IMGFS_ACL_USER || t == IMGFS_ACL_GROUP) ?
					 (uint32_t)id :
					 IMGFS_ACL_UNDEFINED_ID;
		count++;
	}
	qsort(ents, (size_t)count, sizeof(*ents), ent_cmp);
	buf = malloc(4 + 8 * (size_t)count);
	if (!buf) {
		free(ents);
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	}
	imgfs_put_le32(buf, IMGFS_ACL_XATTR_VERSION);
	for (int i = 0; i < count; i++) {
		imgfs_put_le16(buf + 4 + 8 * i, ents[i].tag);
		imgfs_put_le16(buf + 6 + 8 * i, ents[i].perm);
		imgfs_put_le32(buf + 8 + 8 * i, ents[i].id);
	}
	free(ents);
	*out = buf;
	return 4 + 8L * count;
}

int imgfs_acl_mask_perm(struct archive_entry *e)
{
	int n = archive_entry_acl_reset(e, ARCHIVE_ENTRY_ACL_TYPE_ACCESS);
	int type, permset, tag, id, mask = -1;
	const char *name;

	while (n-- > 0 && archive_entry_acl_next(e, ARCHIVE_ENTRY_ACL_TYPE_ACCESS,
						 &type, &permset, &tag, &id,
						 &name) == ARCHIVE_OK)
		if (tag == ARCHIVE_ENTRY_ACL_MASK)
			mask = permset & 7;
	return mask;
}

/*
 * The kernel turns the value into an ACL entry by entry (version 2, known
 * tags, valid ids for named entries) and uses it as a valid ACL: one
 * USER_OBJ, GROUP_OBJ and OTHER, sorted by tag, named entries by id without
 * duplicates, a MASK when there are named entries. An empty list reads as
 * "no ACL", so the xattr would vanish.
 */
const char *imgfs_acl_value_problem(const void *value, size_t len)
{
	const uint8_t *v = value;
	unsigned int seen = 0, named = 0, prev_tag = 0;
	uint32_t prev_id = 0;
	size_t nr;

	if (len < 4 || (len - 4) % 8)
		return "size is not 4 + 8 * entries";
	if (imgfs_get_le32(v) != IMGFS_ACL_XATTR_VERSION)
		return "version is not 2";
	nr = (len - 4) / 8;
	if (!nr)
		return "no entries";
	for (size_t i = 0; i < nr; i++) {
		const uint8_t *e = v + 4 + 8 * i;
		unsigned int tag = imgfs_get_le16(e);
		uint32_t id = imgfs_get_le32(e + 4);

		switch (tag) {
		case IMGFS_ACL_USER_OBJ:
		case IMGFS_ACL_GROUP_OBJ:
		case IMGFS_ACL_MASK:
		case IMGFS_ACL_OTHER:
			if (seen & tag)
				return "duplicate owner, group, mask or other entry";
			break;
		case IMGFS_ACL_USER:
		case IMGFS_ACL_GROUP:
			if (id == IMGFS_ACL_UNDEFINED_ID)
				return "named user or group entry without a numeric id";
			if (tag == prev_tag && id <= prev_id)
				return "named entries not sorted by id, or duplicated";
			named++;
			break;
		default:
			return "unknown entry tag";
		}
		if (imgfs_get_le16(e + 2) & ~7u)
			return "permission bits other than rwx";
		if (tag < prev_tag)
			return "entries not sorted by tag";
		seen |= tag;
		prev_tag = tag;
		prev_id = id;
	}
	if (!(seen & IMGFS_ACL_USER_OBJ) || !(seen & IMGFS_ACL_GROUP_OBJ) ||
	    !(seen & IMGFS_ACL_OTHER))
		return "owner, group or other entry missing";
	if (named && !(seen & IMGFS_ACL_MASK))
		return "named entries without a mask entry";
	return NULL;
}
