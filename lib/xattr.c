// SPDX-License-Identifier: MIT
/*
 * Extended attributes: intern identical pairs, choose what to share,
 * encode inline areas and the shared area, compute the name filter.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "imgfs/format.h"
#include "tree.h"
#include "xattr.h"

static const struct {
	const char *prefix;
	uint8_t index;
	bool whole; /* the full name is the prefix; suffix must be empty */
} xattr_prefixes[] = {
	{ "user.", IMGFS_XATTR_INDEX_USER, false },
	{ "system.posix_acl_access", IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS, true },
	{ "system.posix_acl_default", IMGFS_XATTR_INDEX_POSIX_ACL_DEFAULT, true },
	{ "trusted.", IMGFS_XATTR_INDEX_TRUSTED, false },
	{ "security.", IMGFS_XATTR_INDEX_SECURITY, false },
};

int imgfs_xattr_split_name(const char *name, uint8_t *index,
			   const char **suffix)
{
	for (size_t i = 0; i < sizeof(xattr_prefixes) / sizeof(xattr_prefixes[0]);
	     i++) {
		size_t plen = strlen(xattr_prefixes[i].prefix);

		if (strncmp(name, xattr_prefixes[i].prefix, plen))
			continue;
		if (xattr_prefixes[i].whole && name[plen])
			continue;
		*index = xattr_prefixes[i].index;
		*suffix = name + plen;
		return 0;
	}
	return -EOPNOTSUPP;
}

static uint32_t item_hash(uint8_t index, const char *suffix, size_t nlen,
			  const void *value, size_t vlen)
{
	uint32_t h = XXH32(suffix, nlen, index);

	return XXH32(value, vlen, h);
}

static int table_grow(struct imgfs_xattr_table *t)
{
	size_t n = t->nr_buckets ? t->nr_buckets * 2 : 256;
	struct imgfs_xattr_item **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (struct imgfs_xattr_item *it = t->all; it; it = it->next_all) {
		it->hash_next = b[it->hash & (n - 1)];
		b[it->hash & (n - 1)] = it;
	}
	free(t->buckets);
	t->buckets = b;
	t->nr_buckets = n;
	return 0;
}

static struct imgfs_xattr_item *intern(struct imgfs_xattr_table *t,
				       uint8_t index, const char *suffix,
				       size_t nlen, const void *value,
				       size_t vlen)
{
	uint32_t h = item_hash(index, suffix, nlen, value, vlen);
	struct imgfs_xattr_item *it;

	if (t->count * 4 >= t->nr_buckets * 3 && table_grow(t))
		return NULL;
	for (it = t->buckets[h & (t->nr_buckets - 1)]; it; it = it->hash_next) {
		if (it->hash == h && it->index == index &&
		    it->name_len == nlen && it->value_len == vlen &&
		    !memcmp(it->data, suffix, nlen) &&
		    !memcmp(it->data + nlen, value, vlen))
			return it;
	}
	it = calloc(1, sizeof(*it) + nlen + vlen);
	if (!it)
		return NULL;
	it->hash = h;
	it->index = index;
	it->name_len = (uint8_t)nlen;
	it->value_len = (uint16_t)vlen;
	memcpy(it->data, suffix, nlen);
	if (vlen)
		memcpy(it->data + nlen, value, vlen);
	it->filter_bit = (uint8_t)imgfs_xattr_filter_bit(index, suffix, nlen);
	it->hash_next = t->buckets[h & (t->nr_buckets - 1)];
	t->buckets[h & (t->nr_buckets - 1)] = it;
	it->next_all = t->all;
	t->all = it;
	t->count++;
	return it;
}

void imgfs_xattr_table_free(struct imgfs_xattr_table *t)
{
	struct imgfs_xattr_item *it = t->all;

	while (it) {
		struct imgfs_xattr_item *next = it->next_all;

		free(it);
		it = next;
	}
	free(t->buckets);
	free(t->shared);
	memset(t, 0, sizeof(*t));
}

static bool same_name(const struct imgfs_xattr_item *a,
		      const struct imgfs_xattr_item *b)
{
	return a->index == b->index && a->name_len == b->name_len &&
	       !memcmp(a->data, b->data, a->name_len);
}

int imgfs_xattr_set(struct imgfs_xattr_table *t, struct imgfs_node *inode,
		    const char *name, const void *value, size_t len,
		    const char *path, struct imgfs_error *err)
{
	struct imgfs_node_xattrs *x = &inode->xattrs;
	struct imgfs_xattr_item *it;
	const char *suffix;
	uint8_t index;
	size_t nlen;

	if (imgfs_xattr_split_name(name, &index, &suffix))
		return imgfs_error_set(err, -EOPNOTSUPP,
				       "%s: xattr \"%s\": EROFS has no name prefix for this namespace",
				       path, name);
	nlen = strlen(suffix);
	if (nlen > 255)
		return imgfs_error_set(err, -ENAMETOOLONG,
				       "%s: xattr \"%s\": name longer than 255 bytes after its prefix",
				       path, name);
	if (len > 65535)
		return imgfs_error_set(err, -E2BIG,
				       "%s: xattr \"%s\": value of %zu bytes exceeds 65535",
				       path, name, len);
	it = intern(t, index, suffix, nlen, value, len);
	if (!it)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < x->count; i++) {
		if (!same_name(x->items[i], it))
			continue;
		x->items[i]->refcount--;
		x->items[i] = it;
		it->refcount++;
		return 0;
	}
	if (x->count == x->cap) {
		uint32_t cap = x->cap ? x->cap * 2 : 4;
		void *p = realloc(x->items, cap * sizeof(*x->items));

		if (!p)
			return imgfs_error_set(err, -ENOMEM, "out of memory");
		x->items = p;
		x->cap = cap;
	}
	x->items[x->count++] = it;
	it->refcount++;
	return 0;
}

void imgfs_xattr_clear(struct imgfs_node *inode)
{
	for (uint32_t i = 0; i < inode->xattrs.count; i++)
		inode->xattrs.items[i]->refcount--;
	inode->xattrs.count = 0;
}

/* Total order on items: prefix index, name, value (reproducible images). */
static int item_cmp(const struct imgfs_xattr_item *a,
		    const struct imgfs_xattr_item *b)
{
	size_t n;
	int r;

	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	n = a->name_len < b->name_len ? a->name_len : b->name_len;
	r = memcmp(a->data, b->data, n);
	if (r || a->name_len != b->name_len)
		return r ? r : (a->name_len < b->name_len ? -1 : 1);
	n = a->value_len < b->value_len ? a->value_len : b->value_len;
	r = memcmp(a->data + a->name_len, b->data + b->name_len, n);
	if (r || a->value_len == b->value_len)
		return r;
	return a->value_len < b->value_len ? -1 : 1;
}

static int item_pcmp(const void *a, const void *b)
{
	return item_cmp(*(struct imgfs_xattr_item *const *)a,
			*(struct imgfs_xattr_item *const *)b);
}

static uint32_t entry_size(const struct imgfs_xattr_item *it)
{
	return imgfs_xattr_entry_size(it->name_len, it->value_len);
}

int imgfs_xattr_plan_shared(struct imgfs_xattr_table *t, unsigned int min_refs)
{
	size_t n = 0;
	uint32_t off = 0;

	if (!min_refs)
		return 0;
	for (struct imgfs_xattr_item *it = t->all; it; it = it->next_all)
		n += it->refcount >= min_refs;
	if (!n)
		return 0;
	t->shared = malloc(n * sizeof(*t->shared));
	if (!t->shared)
		return -ENOMEM;
	n = 0;
	for (struct imgfs_xattr_item *it = t->all; it; it = it->next_all)
		if (it->refcount >= min_refs)
			t->shared[n++] = it;
	qsort(t->shared, n, sizeof(*t->shared), item_pcmp);
	for (size_t i = 0; i < n; i++) {
		t->shared[i]->shared = true;
		t->shared[i]->shared_id = off / 4;
		off += entry_size(t->shared[i]);
	}
	t->nr_shared = n;
	t->shared_size = off;
	return 0;
}

void imgfs_xattr_layout_inode(struct imgfs_node *inode)
{
	struct imgfs_node_xattrs *x = &inode->xattrs;
	uint32_t size = IMGFS_XATTR_IBODY_HEADER_SIZE;
	uint32_t nr_shared = 0;

	inode->xattr_isize = 0;
	inode->nr_shared = 0;
	if (!x->count)
		return;
	qsort(x->items, x->count, sizeof(*x->items), item_pcmp);
	for (uint32_t i = 0; i < x->count; i++) {
		/* the header holds at most 255 shared ids; inline the rest */
		if (x->items[i]->shared && nr_shared < 255) {
			nr_shared++;
			size += 4;
		} else {
			size += entry_size(x->items[i]);
		}
	}
	inode->xattr_isize = size;
	inode->nr_shared = nr_shared;
}

static uint32_t encode_entry(const struct imgfs_xattr_item *it, uint8_t *p)
{
	uint32_t size = entry_size(it);

	memset(p, 0, size);
	p[0] = it->name_len;
	p[1] = it->index;
	imgfs_put_le16(p + 2, it->value_len);
	memcpy(p + 4, it->data, it->name_len + it->value_len);
	return size;
}

void imgfs_xattr_encode_ibody(const struct imgfs_node *inode, uint8_t *buf)
{
	const struct imgfs_node_xattrs *x = &inode->xattrs;
	uint32_t filter = 0, pos, nr_shared = 0;

	if (!inode->xattr_isize)
		return;
	memset(buf, 0, IMGFS_XATTR_IBODY_HEADER_SIZE);
	buf[4] = (uint8_t)inode->nr_shared;
	pos = IMGFS_XATTR_IBODY_HEADER_SIZE;
	for (uint32_t i = 0; i < x->count; i++) {
		const struct imgfs_xattr_item *it = x->items[i];

		filter |= 1u << it->filter_bit;
		if (it->shared && nr_shared < inode->nr_shared) {
			imgfs_put_le32(buf + pos, it->shared_id);
			pos += 4;
			nr_shared++;
		}
	}
	nr_shared = 0;
	for (uint32_t i = 0; i < x->count; i++) {
		const struct imgfs_xattr_item *it = x->items[i];

		if (it->shared && nr_shared < inode->nr_shared) {
			nr_shared++;
			continue;
		}
		pos += encode_entry(it, buf + pos);
	}
	imgfs_put_le32(buf, ~filter);
}

void imgfs_xattr_encode_shared(const struct imgfs_xattr_table *t, uint8_t *buf)
{
	uint32_t pos = 0;

	for (size_t i = 0; i < t->nr_shared; i++)
		pos += encode_entry(t->shared[i], buf + pos);
}
