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
#include "util/error.h"

void acl_entry_encode(const struct imgfs_acl_entry *e, uint8_t *b)
{
	imgfs_put_le16(b + 0, e->e_tag);
	imgfs_put_le16(b + 2, e->e_perm);
	imgfs_put_le32(b + 4, e->e_id);
}

void acl_entry_decode(const uint8_t *b, struct imgfs_acl_entry *e)
{
	e->e_tag = imgfs_get_le16(b + 0);
	e->e_perm = imgfs_get_le16(b + 2);
	e->e_id = imgfs_get_le32(b + 4);
}

void acl_version_encode(uint8_t *b, uint32_t version)
{
	imgfs_put_le32(b, version);
}

uint32_t acl_version_decode(const uint8_t *b)
{
	return imgfs_get_le32(b);
}

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
	const struct imgfs_acl_entry *x = a, *y = b;

	if (x->e_tag != y->e_tag)
		return x->e_tag < y->e_tag ? -1 : 1;
	if (x->e_id != y->e_id)
		return x->e_id < y->e_id ? -1 : 1;
	return 0;
}

long acl_encode(struct archive_entry *e, int type, uint8_t **out,
		const char *path, struct imgfs_error *err)
{
	int n = archive_entry_acl_reset(e, type);
	int etype, permset, tag, id;
	const char *name;
	struct imgfs_acl_entry *ents;
	uint8_t *buf;
	int count = 0;

	if (archive_entry_acl_types(e) & ARCHIVE_ENTRY_ACL_TYPE_NFS4)
		return error_set(err, -EOPNOTSUPP,
				 "%s: NFSv4 ACLs cannot be stored in EROFS",
				 path);
	if (n <= 0)
		return 0;
	ents = calloc((size_t)n, sizeof(*ents));
	if (!ents)
		return error_set(err, -ENOMEM, "out of memory");
	while (count < n && archive_entry_acl_next(e, type, &etype, &permset,
						   &tag, &id, &name) == ARCHIVE_OK) {
		int t = acl_tag(tag);

		if (t < 0) {
			free(ents);
			return error_set(err, -EOPNOTSUPP,
					 "%s: unsupported ACL entry tag %d",
					 path, tag);
		}
		ents[count].e_tag = (uint16_t)t;
		ents[count].e_perm = (uint16_t)(permset & 7);
		ents[count].e_id = (t == IMGFS_ACL_USER || t == IMGFS_ACL_GROUP) ?
					   (uint32_t)id :
					   IMGFS_ACL_UNDEFINED_ID;
		count++;
	}
	qsort(ents, (size_t)count, sizeof(*ents), ent_cmp);
	buf = malloc(IMGFS_ACL_HEADER_SIZE +
		     IMGFS_ACL_ENTRY_SIZE * (size_t)count);
	if (!buf) {
		free(ents);
		return error_set(err, -ENOMEM, "out of memory");
	}
	acl_version_encode(buf, IMGFS_ACL_XATTR_VERSION);
	for (int i = 0; i < count; i++)
		acl_entry_encode(&ents[i], buf + IMGFS_ACL_HEADER_SIZE +
						   IMGFS_ACL_ENTRY_SIZE * i);
	free(ents);
	*out = buf;
	return IMGFS_ACL_HEADER_SIZE + (long)IMGFS_ACL_ENTRY_SIZE * count;
}

int acl_mask_perm(struct archive_entry *e)
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
const char *acl_value_problem(const void *value, size_t len)
{
	const uint8_t *v = value;
	unsigned int seen = 0, named = 0, prev_tag = 0;
	uint32_t prev_id = 0;
	size_t nr;

	if (len < IMGFS_ACL_HEADER_SIZE ||
	    (len - IMGFS_ACL_HEADER_SIZE) % IMGFS_ACL_ENTRY_SIZE)
		return "size is not 4 + 8 * entries";
	if (acl_version_decode(v) != IMGFS_ACL_XATTR_VERSION)
		return "version is not 2";
	nr = (len - IMGFS_ACL_HEADER_SIZE) / IMGFS_ACL_ENTRY_SIZE;
	if (!nr)
		return "no entries";
	for (size_t i = 0; i < nr; i++) {
		struct imgfs_acl_entry e;
		unsigned int tag;
		uint32_t id;

		acl_entry_decode(v + IMGFS_ACL_HEADER_SIZE +
					 IMGFS_ACL_ENTRY_SIZE * i,
				 &e);
		tag = e.e_tag;
		id = e.e_id;

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
		if (e.e_perm & ~7u)
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
