// SPDX-License-Identifier: MIT
/*
 * Extended attributes: intern identical pairs, choose what to share,
 * encode inline areas and the shared area, compute the name filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "imgfs/format.h"
#include "format/acl.h"
#include "format/format.h"
#include "writer/tree.h"
#include "writer/xattr.h"
#include "util/vec.h"
#include "util/error.h"
#include "util/tmpfile.h"

/* Full name length of an item as listxattr shows it (without the NUL). */
static size_t full_name_len(uint8_t index, size_t suffix_len)
{
	const char *prefix = imgfs_xattr_prefix(index);

	return (prefix ? strlen(prefix) : 0) + suffix_len;
}

static uint64_t item_hash(uint8_t index, const char *suffix, size_t nlen,
			  const void *value, size_t vlen)
{
	uint64_t h = XXH64(suffix, nlen, index);

	return XXH64(value, vlen, h);
}

/* Copy @it's value to @buf (value_len bytes). */
static int item_value(const struct imgfs_xattr_table *t,
		      const struct imgfs_xattr_item *it, uint8_t *buf,
		      struct imgfs_error *err)
{
	if (!it->spilled) {
		memcpy(buf, it->data + it->name_len, it->value_len);
		return 0;
	}
	return spillfile_read(&t->spill, buf, it->value_len, it->spill_off,
			      err);
}

/* Whether @it holds exactly @value; 1, 0 or a negative errno. */
static int same_value(const struct imgfs_xattr_table *t,
		      const struct imgfs_xattr_item *it, const void *value,
		      struct imgfs_error *err)
{
	uint8_t *buf;
	int ret;

	if (!it->spilled)
		return !memcmp(it->data + it->name_len, value, it->value_len);
	buf = malloc(it->value_len);
	if (!buf)
		return error_set(err, -ENOMEM, "out of memory");
	ret = item_value(t, it, buf, err);
	if (!ret)
		ret = !memcmp(buf, value, it->value_len);
	free(buf);
	return ret;
}

/* The table's item for (index, suffix, value), created if new. */
static int intern(struct imgfs_xattr_table *t, uint8_t index,
		  const char *suffix, size_t nlen, const void *value,
		  size_t vlen, struct imgfs_xattr_item **out,
		  struct imgfs_error *err)
{
	uint64_t h = item_hash(index, suffix, nlen, value, vlen);
	bool spill = vlen > IMGFS_XATTR_SPILL_MIN;
	struct imgfs_xattr_item *it;
	struct imgfs_hnode *n;
	int ret;

	for (n = hashtab_first(&t->items, h); n; n = hashtab_next(n)) {
		it = imgfs_container_of(n, struct imgfs_xattr_item, hnode);
		if (it->index != index || it->name_len != nlen ||
		    it->value_len != vlen ||
		    memcmp(it->data, suffix, nlen))
			continue;
		ret = same_value(t, it, value, err);
		if (ret < 0)
			return ret;
		if (ret) {
			*out = it;
			return 0;
		}
	}
	it = calloc(1, sizeof(*it) + nlen + (spill ? 0 : vlen));
	if (!it)
		return error_set(err, -ENOMEM, "out of memory");
	if (spill) {
		/* the table starts zeroed: name its spill file on first use */
		if (!t->spill.what)
			spillfile_init(&t->spill, "imgfs-xattrs",
				       "the xattr spill file");
		ret = spillfile_append(&t->spill, value, vlen, &it->spill_off,
				       err);
		if (ret) {
			free(it);
			return ret;
		}
		it->spilled = true;
	} else if (vlen) {
		memcpy(it->data + nlen, value, vlen);
	}
	/* the spilled bytes of an item not added stay unused in the file */
	if (hashtab_insert(&t->items, &it->hnode, h)) {
		free(it);
		return error_set(err, -ENOMEM, "out of memory");
	}
	it->index = index;
	it->name_len = (uint8_t)nlen;
	it->value_len = (uint16_t)vlen;
	memcpy(it->data, suffix, nlen);
	it->filter_bit = (uint8_t)xattr_filter_bit(index, suffix, nlen);
	it->next_all = t->all;
	t->all = it;
	*out = it;
	return 0;
}

void xattr_table_free(struct imgfs_xattr_table *t)
{
	struct imgfs_xattr_item *it = t->all;

	while (it) {
		struct imgfs_xattr_item *next = it->next_all;

		free(it);
		it = next;
	}
	hashtab_free(&t->items);
	free(t->shared);
	spillfile_close(&t->spill);
	memset(t, 0, sizeof(*t));
}

static bool same_name(const struct imgfs_xattr_item *a,
		      const struct imgfs_xattr_item *b)
{
	return a->index == b->index && a->name_len == b->name_len &&
	       !memcmp(a->data, b->data, a->name_len);
}

int xattr_set(struct imgfs_xattr_table *t, struct imgfs_node *inode,
	      const char *name, const void *value, size_t len, const char *path,
	      struct imgfs_error *err)
{
	struct imgfs_node_xattrs *x = &inode->xattrs;
	struct imgfs_xattr_item *it = NULL;
	const char *suffix, *why;
	uint8_t index;
	size_t nlen;
	int ret;

	if (xattr_split_name(name, &index, &suffix))
		return error_set(
			err, -EOPNOTSUPP,
			"%s: xattr \"%s\": EROFS has no name prefix for this namespace",
			path, name);
	nlen = strlen(suffix);
	/* the kernel looks such a name up as the namespace alone: EINVAL */
	if (!nlen && index != IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS &&
	    index != IMGFS_XATTR_INDEX_POSIX_ACL_DEFAULT)
		return error_set(
			err, -EINVAL,
			"%s: xattr \"%s\": the name is only a namespace prefix",
			path, name);
	if (full_name_len(index, nlen) > IMGFS_XATTR_FULL_NAME_MAX)
		return error_set(
			err, -ENAMETOOLONG,
			"%s: xattr \"%.40s...\": name of %zu bytes is longer than the kernel's limit of %u",
			path, name, strlen(name), IMGFS_XATTR_FULL_NAME_MAX);
	if (len > 65535)
		return error_set(
			err, -E2BIG,
			"%s: xattr \"%s\": value of %zu bytes exceeds 65535",
			path, name, len);
	if ((index == IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS ||
	     index == IMGFS_XATTR_INDEX_POSIX_ACL_DEFAULT) &&
	    (why = acl_value_problem(value, len)))
		return error_set(err, -EINVAL,
				 "%s: xattr \"%s\": not a valid POSIX ACL: %s",
				 path, name, why);
	ret = intern(t, index, suffix, nlen, value, len, &it, err);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < x->count; i++) {
		if (!same_name(x->items[i], it))
			continue;
		x->items[i]->refcount--;
		x->items[i] = it;
		it->refcount++;
		return 0;
	}
	if (IMGFS_VEC_RESERVE(x->items, x->cap, (size_t)x->count + 1, 4))
		return error_set(err, -ENOMEM, "out of memory");
	x->items[x->count++] = it;
	it->refcount++;
	return 0;
}

void xattr_clear(struct imgfs_node *inode)
{
	for (uint32_t i = 0; i < inode->xattrs.count; i++)
		inode->xattrs.items[i]->refcount--;
	inode->xattrs.count = 0;
}

/*
 * Total order on items, for reproducible images: prefix index, name, value
 * length, then the value's hash (values may be on disk; equal hashes of
 * different values keep the order they arrived in, which the input fixes).
 */
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
	if (a->value_len != b->value_len)
		return a->value_len < b->value_len ? -1 : 1;
	if (a->hnode.hash != b->hnode.hash)
		return a->hnode.hash < b->hnode.hash ? -1 : 1;
	return 0;
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

/* Larger entries first, then the item order. */
static int size_pcmp(const void *a, const void *b)
{
	const struct imgfs_xattr_item *x = *(struct imgfs_xattr_item *const *)a;
	const struct imgfs_xattr_item *y = *(struct imgfs_xattr_item *const *)b;

	if (entry_size(x) != entry_size(y))
		return entry_size(x) > entry_size(y) ? -1 : 1;
	return item_cmp(x, y);
}

int xattr_check_inode(struct imgfs_node *inode, unsigned int min_refs,
		      const char *path, struct imgfs_error *err)
{
	const struct imgfs_node_xattrs *x = &inode->xattrs;
	struct imgfs_xattr_item **by_size;
	uint64_t list = 0, isize = IMGFS_XATTR_IBODY_HEADER_SIZE;
	uint32_t moved = 0;

	if (!x->count)
		return 0;
	for (uint32_t i = 0; i < x->count; i++) {
		uint8_t index = x->items[i]->index;

		/* the kernel has no ACL operations for symlinks */
		if ((inode->mode & 0170000) == 0120000 &&
		    (index == IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS ||
		     index == IMGFS_XATTR_INDEX_POSIX_ACL_DEFAULT))
			return error_set(
				err, -EOPNOTSUPP,
				"%s: a symlink cannot carry a POSIX ACL (%s)",
				path,
				index == IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS
					? "system.posix_acl_access"
					: "system.posix_acl_default");
		/* the kernel answers ENODATA for user. xattrs elsewhere */
		if (index == IMGFS_XATTR_INDEX_USER &&
		    (inode->mode & 0170000) != 0100000 &&
		    (inode->mode & 0170000) != 0040000)
			return error_set(
				err, -EOPNOTSUPP,
				"%s: xattr \"user.%.*s\": user. xattrs exist only on regular files and directories",
				path, (int)x->items[i]->name_len,
				(const char *)x->items[i]->data);
		list += full_name_len(index, x->items[i]->name_len) + 1;
		isize += entry_size(x->items[i]);
	}
	if (list > IMGFS_XATTR_LIST_MAX)
		return error_set(
			err, -E2BIG,
			"%s: %u xattr names take %llu bytes; the kernel lists at most %u",
			path, x->count, (unsigned long long)list,
			IMGFS_XATTR_LIST_MAX);
	if (isize <= IMGFS_XATTR_IBODY_MAX)
		return 0;
	if (!min_refs)
		return error_set(
			err, -E2BIG,
			"%s: xattrs of %llu bytes do not fit in an inode (at most %u) and xattr sharing is disabled",
			path, (unsigned long long)isize, IMGFS_XATTR_IBODY_MAX);
	/* Move the largest values to the shared area: the header has room
	 * for 255 ids. The inode keeps the items; only where they go changes.
	 */
	by_size = malloc(x->count * sizeof(*by_size));
	if (!by_size)
		return error_set(err, -ENOMEM, "out of memory");
	memcpy(by_size, x->items, x->count * sizeof(*by_size));
	qsort(by_size, x->count, sizeof(*by_size), size_pcmp);
	for (uint32_t i = 0;
	     i < x->count && i < 255 && isize > IMGFS_XATTR_IBODY_MAX; i++) {
		isize -= entry_size(by_size[i]) - 4;
		moved++;
	}
	if (isize <= IMGFS_XATTR_IBODY_MAX)
		for (uint32_t i = 0; i < moved; i++)
			by_size[i]->must_share = true;
	free(by_size);
	if (isize > IMGFS_XATTR_IBODY_MAX)
		return error_set(
			err, -E2BIG,
			"%s: xattrs need %llu bytes in the inode even with the 255 largest shared; at most %u fit",
			path, (unsigned long long)isize, IMGFS_XATTR_IBODY_MAX);
	return 0;
}

static bool wants_sharing(const struct imgfs_xattr_item *it,
			  unsigned int min_refs)
{
	return it->refcount && (it->refcount >= min_refs || it->must_share);
}

int xattr_plan_shared(struct imgfs_xattr_table *t, unsigned int min_refs)
{
	size_t n = 0;
	uint64_t off = 0;

	if (!min_refs)
		return 0;
	for (struct imgfs_xattr_item *it = t->all; it; it = it->next_all)
		n += wants_sharing(it, min_refs);
	if (!n)
		return 0;
	t->shared = malloc(n * sizeof(*t->shared));
	if (!t->shared)
		return -ENOMEM;
	n = 0;
	for (struct imgfs_xattr_item *it = t->all; it; it = it->next_all)
		if (wants_sharing(it, min_refs))
			t->shared[n++] = it;
	qsort(t->shared, n, sizeof(*t->shared), item_pcmp);
	for (size_t i = 0; i < n; i++) {
		t->shared[i]->shared = true;
		t->shared[i]->shared_id = (uint32_t)(off / 4);
		off += entry_size(t->shared[i]);
	}
	t->nr_shared = n;
	/* the area's size is kept in 32 bits */
	if (off > UINT32_MAX)
		return -EFBIG;
	t->shared_size = (uint32_t)off;
	return 0;
}

void xattr_layout_inode(struct imgfs_node *inode)
{
	struct imgfs_node_xattrs *x = &inode->xattrs;
	uint32_t size = IMGFS_XATTR_IBODY_HEADER_SIZE;
	uint32_t nr_shared = 0, nr_ids = 0;

	inode->xattr_isize = 0;
	inode->nr_shared = 0;
	if (!x->count)
		return;
	for (uint32_t i = 0; i < x->count; i++)
		nr_shared += x->items[i]->shared;
	/* The header holds at most 255 shared ids: refer to the largest
	 * shared items by id and inline the others. Ids go first. */
	qsort(x->items, x->count, sizeof(*x->items),
	      nr_shared > 255 ? size_pcmp : item_pcmp);
	for (uint32_t i = 0, k = 0; i < x->count; i++) {
		struct imgfs_xattr_item *it = x->items[i];

		if (it->shared && nr_ids < 255) {
			memmove(x->items + k + 1, x->items + k,
				(i - k) * sizeof(*x->items));
			x->items[k++] = it;
			nr_ids++;
		}
	}
	/* ids and inline entries each in item order */
	qsort(x->items, nr_ids, sizeof(*x->items), item_pcmp);
	qsort(x->items + nr_ids, x->count - nr_ids, sizeof(*x->items),
	      item_pcmp);
	for (uint32_t i = 0; i < x->count; i++)
		size += i < nr_ids ? 4 : entry_size(x->items[i]);
	inode->xattr_isize = size;
	inode->nr_shared = nr_ids;
}

long xattr_encode_entry(const struct imgfs_xattr_table *t,
			const struct imgfs_xattr_item *it, uint8_t *p,
			struct imgfs_error *err)
{
	uint32_t size = entry_size(it);
	struct imgfs_xattr_entry e = {
		.e_name_len = it->name_len,
		.e_name_index = it->index,
		.e_value_size = it->value_len,
	};
	int ret;

	memset(p, 0, size);
	xattr_entry_encode(&e, p);
	memcpy(p + IMGFS_XATTR_ENTRY_SIZE, it->data, it->name_len);
	ret = item_value(t, it, p + IMGFS_XATTR_ENTRY_SIZE + it->name_len, err);
	return ret ? ret : (long)size;
}

int xattr_encode_ibody(const struct imgfs_xattr_table *t,
		       const struct imgfs_node *inode, uint8_t *buf,
		       struct imgfs_error *err)
{
	const struct imgfs_node_xattrs *x = &inode->xattrs;
	struct imgfs_xattr_ibody_header h = {
		.h_shared_count = (uint8_t)inode->nr_shared,
	};
	uint32_t filter = 0, pos;

	if (!inode->xattr_isize)
		return 0;
	pos = IMGFS_XATTR_IBODY_HEADER_SIZE + 4 * inode->nr_shared;
	for (uint32_t i = 0; i < x->count; i++) {
		const struct imgfs_xattr_item *it = x->items[i];

		filter |= 1u << it->filter_bit;
		if (i < inode->nr_shared) {
			xattr_shared_id_encode(buf, i, it->shared_id);
		} else {
			long n = xattr_encode_entry(t, it, buf + pos, err);

			if (n < 0)
				return (int)n;
			pos += (uint32_t)n;
		}
	}
	h.h_name_filter = ~filter;
	xattr_ibody_header_encode(&h, buf);
	return 0;
}
