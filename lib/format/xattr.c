// SPDX-License-Identifier: MIT
/*
 * Extended attributes on disk: the area header and shared ids
 * (docs/format.md §7.1), entries (§7.2), the one table of short name
 * prefixes (§7.3), long prefix records (§7.5) and the name filter (§7.6).
 */
#include <errno.h>
#include <string.h>
#include <xxhash.h>

#include "format/format.h"

static const struct {
	const char *prefix;
	bool whole; /* the full name is the prefix; the suffix is empty */
	bool listed; /* the kernel has a handler: names we write and show */
} prefixes[] = {
	[IMGFS_XATTR_INDEX_USER] = { "user.", false, true },
	[IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS] = { "system.posix_acl_access",
						 true, true },
	[IMGFS_XATTR_INDEX_POSIX_ACL_DEFAULT] = { "system.posix_acl_default",
						  true, true },
	[IMGFS_XATTR_INDEX_TRUSTED] = { "trusted.", false, true },
	[IMGFS_XATTR_INDEX_LUSTRE] = { "lustre.", false, false },
	[IMGFS_XATTR_INDEX_SECURITY] = { "security.", false, true },
};

#define NR_PREFIXES (sizeof(prefixes) / sizeof(prefixes[0]))

const char *imgfs_xattr_prefix(unsigned int index)
{
	return index < NR_PREFIXES ? prefixes[index].prefix : NULL;
}

int xattr_split_name(const char *name, uint8_t *index, const char **suffix)
{
	for (unsigned int i = 0; i < NR_PREFIXES; i++) {
		size_t plen;

		if (!prefixes[i].listed)
			continue;
		plen = strlen(prefixes[i].prefix);
		if (strncmp(name, prefixes[i].prefix, plen))
			continue;
		if (prefixes[i].whole && name[plen])
			continue;
		*index = (uint8_t)i;
		*suffix = name + plen;
		return 0;
	}
	return -EOPNOTSUPP;
}

unsigned int xattr_filter_bit(unsigned int base_index, const char *suffix,
			      size_t len)
{
	return XXH32(suffix, len, IMGFS_XATTR_FILTER_SEED + base_index) &
	       (IMGFS_XATTR_FILTER_BITS - 1);
}

void xattr_ibody_header_encode(const struct imgfs_xattr_ibody_header *h,
			       uint8_t *b)
{
	memset(b, 0, IMGFS_XATTR_IBODY_HEADER_SIZE);
	imgfs_put_le32(b + 0, h->h_name_filter);
	b[4] = h->h_shared_count;
}

void xattr_ibody_header_decode(const uint8_t *b,
			       struct imgfs_xattr_ibody_header *h)
{
	h->h_name_filter = imgfs_get_le32(b + 0);
	h->h_shared_count = b[4];
	h->reserved_set = false;
	for (unsigned int i = 5; i < IMGFS_XATTR_IBODY_HEADER_SIZE; i++)
		h->reserved_set |= b[i] != 0;
}

void xattr_shared_id_encode(uint8_t *area, unsigned int i, uint32_t id)
{
	imgfs_put_le32(area + IMGFS_XATTR_IBODY_HEADER_SIZE + 4 * i, id);
}

uint32_t xattr_shared_id_decode(const uint8_t *area, unsigned int i)
{
	return imgfs_get_le32(area + IMGFS_XATTR_IBODY_HEADER_SIZE + 4 * i);
}

void xattr_entry_encode(const struct imgfs_xattr_entry *e, uint8_t *b)
{
	b[0] = e->e_name_len;
	b[1] = e->e_name_index;
	imgfs_put_le16(b + 2, e->e_value_size);
}

void xattr_entry_decode(const uint8_t *b, struct imgfs_xattr_entry *e)
{
	e->e_name_len = b[0];
	e->e_name_index = b[1];
	e->e_value_size = imgfs_get_le16(b + 2);
}

void xattr_long_prefix_encode(const struct imgfs_xattr_long_prefix *p,
			      uint8_t *b)
{
	imgfs_put_le16(b + 0, p->len);
	b[2] = p->base_index;
}

void xattr_long_prefix_decode(const uint8_t *b,
			      struct imgfs_xattr_long_prefix *p)
{
	p->len = imgfs_get_le16(b + 0);
	p->base_index = b[2];
}
