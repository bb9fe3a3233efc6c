/* SPDX-License-Identifier: MIT */
/* acl.h - POSIX ACLs from archive entries to system.posix_acl_* values. */
#ifndef IMGFS_ACL_H
#define IMGFS_ACL_H

#include <stddef.h>
#include <stdint.h>

#include "imgfs/error.h"

struct archive_entry;

/*
 * One entry of a system.posix_acl_* value: after the le32 version, 8 bytes
 * each (docs/format.md §8).
 */
struct imgfs_acl_entry {
	uint16_t e_tag;
	uint16_t e_perm;
	uint32_t e_id; /* IMGFS_ACL_UNDEFINED_ID unless USER or GROUP */
};

void acl_entry_encode(const struct imgfs_acl_entry *e, uint8_t *b);
void acl_entry_decode(const uint8_t *b, struct imgfs_acl_entry *e);

/* The le32 header of a value: its version (IMGFS_ACL_XATTR_VERSION). */
void acl_version_encode(uint8_t *b, uint32_t version);
uint32_t acl_version_decode(const uint8_t *b);

/*
 * Encode the ACL of type @type (ARCHIVE_ENTRY_ACL_TYPE_ACCESS or _DEFAULT)
 * of @e in the Linux xattr format into a malloc'ed buffer. Returns the
 * value length, 0 when the entry has no such ACL (*out untouched), or a
 * negative errno (NFSv4 ACLs cannot be represented).
 */
long acl_encode(struct archive_entry *e, int type, uint8_t **out,
		const char *path, struct imgfs_error *err);

/*
 * Permission bits (0..7) of the access ACL's mask entry of @e, or -1 when
 * it has none. With a mask, the group bits of st_mode are the mask.
 */
int acl_mask_perm(struct archive_entry *e);

/*
 * Why the system.posix_acl_* value @value of @len bytes is not an ACL the
 * kernel reads back (a static string), or NULL when it is valid.
 */
const char *acl_value_problem(const void *value, size_t len);

#endif /* IMGFS_ACL_H */
