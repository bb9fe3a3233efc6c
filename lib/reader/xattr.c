// SPDX-License-Identifier: MIT
/*
 * Inline and shared extended attributes (docs/format.md §7): walking an
 * inode's xattrs; the structures are decoded by lib/format/xattr.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"
#include "util/error.h"

/* Largest on-disk entry: header, 255-byte name, 64 KiB value. */
#define ENTRY_MAX (IMGFS_XATTR_ENTRY_SIZE + 255u + 65535u)

struct xattr_walk {
	struct imgfs_image *img;
	const struct imgfs_inode *inode;
	bool all;
	imgfs_xattr_fn fn;
	void *arg;
	char name[IMGFS_XATTR_NAME_MAX + 1];
};

/*
 * Build the full name of the entry whose header is at @e and pass it on.
 * Entries without a usable prefix get name "" (only when w->all) or are
 * skipped (return 0, the walk goes on).
 */
static int emit_entry(struct xattr_walk *w, const uint8_t *e,
		      struct imgfs_xattr_info *x)
{
	struct imgfs_xattr_entry ent;
	unsigned int nlen, index;
	const char *suffix = (const char *)e + IMGFS_XATTR_ENTRY_SIZE;
	const char *prefix = NULL, *infix = "";
	size_t plen = 0, ilen = 0;
	unsigned int base;

	xattr_entry_decode(e, &ent);
	nlen = ent.e_name_len;
	index = ent.e_name_index;
	if (index & IMGFS_XATTR_LONG_PREFIX) {
		if (!imgfs_image_long_prefix(w->img, index & 0x7F, &base,
					     &infix, &ilen))
			prefix = imgfs_xattr_prefix(base);
	} else if (index != IMGFS_XATTR_INDEX_LUSTRE) {
		prefix = imgfs_xattr_prefix(index);
	}
	x->name_len = 0;
	if (prefix) {
		plen = strlen(prefix);
		memcpy(w->name, prefix, plen);
		memcpy(w->name + plen, infix, ilen);
		memcpy(w->name + plen + ilen, suffix, nlen);
		x->name_len = plen + ilen + nlen;
	} else if (!w->all) {
		return 0;
	}
	w->name[x->name_len] = '\0';
	x->name = w->name;
	x->name_index = index;
	x->suffix = suffix;
	x->suffix_len = nlen;
	x->value = e + IMGFS_XATTR_ENTRY_SIZE + nlen;
	x->value_size = ent.e_value_size;
	return w->fn(w->arg, x);
}

static int walk_inline(struct xattr_walk *w, const uint8_t *area,
		       unsigned int start, unsigned int isize,
		       struct imgfs_error *err)
{
	unsigned int off = start;
	int ret;

	while (off < isize) {
		struct imgfs_xattr_info x = { 0 };
		struct imgfs_xattr_entry e;
		unsigned int sz;

		if (isize - off < IMGFS_XATTR_ENTRY_SIZE)
			goto bad;
		xattr_entry_decode(area + off, &e);
		sz = imgfs_xattr_entry_size(e.e_name_len, e.e_value_size);
		if (sz > isize - off)
			goto bad;
		x.pos = w->inode->pos + w->inode->inode_size + off;
		ret = emit_entry(w, area + off, &x);
		if (ret)
			return ret;
		off += sz;
	}
	return 0;
bad:
	return error_set(
		err, -IMGFS_EFSCORRUPTED,
		"nid %llu: inline xattr entry at area offset %u extends past the xattr area (%u bytes)",
		(unsigned long long)w->inode->nid, off, isize);
}

static int walk_shared(struct xattr_walk *w, const uint8_t *area,
		       unsigned int count, struct imgfs_error *err)
{
	uint8_t *e = malloc(ENTRY_MAX);
	unsigned int i;
	int ret = 0;

	if (!e)
		return error_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < count && !ret; i++) {
		struct imgfs_xattr_info x = { .shared = true };
		uint32_t id = xattr_shared_id_decode(area, i);
		uint64_t pos = shared_xattr_pos(w->img, id);
		struct imgfs_xattr_entry hdr;
		unsigned int sz;

		ret = img_read(w->img, e, IMGFS_XATTR_ENTRY_SIZE, pos,
			       "shared xattr", w->inode->nid, err);
		if (ret)
			break;
		xattr_entry_decode(e, &hdr);
		sz = imgfs_xattr_entry_size(hdr.e_name_len, hdr.e_value_size);
		ret = img_read(w->img, e, sz, pos, "shared xattr",
			       w->inode->nid, err);
		if (ret)
			break;
		x.shared_id = id;
		x.pos = pos;
		ret = emit_entry(w, e, &x);
	}
	free(e);
	return ret;
}

int imgfs_xattr_iterate(struct imgfs_image *img,
			const struct imgfs_inode *inode, bool all,
			imgfs_xattr_fn fn, void *arg, struct imgfs_error *err)
{
	unsigned int isize = inode->xattr_isize, count;
	struct imgfs_xattr_ibody_header h;
	struct xattr_walk *w;
	uint8_t *area;
	int ret;

	if (!isize)
		return 0;
	if (isize == IMGFS_XATTR_IBODY_HEADER_SIZE)
		return error_set(
			err, -EOPNOTSUPP,
			"nid %llu: xattr area of 12 bytes (header only) is not supported",
			(unsigned long long)inode->nid);
	area = malloc(isize);
	w = malloc(sizeof(*w));
	if (!area || !w) {
		ret = error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret = img_read(img, area, isize, inode->pos + inode->inode_size,
		       "inline xattr area", inode->nid, err);
	if (ret)
		goto out;
	xattr_ibody_header_decode(area, &h);
	count = h.h_shared_count;
	if (IMGFS_XATTR_IBODY_HEADER_SIZE + 4 * count > isize) {
		ret = error_set(
			err, -IMGFS_EFSCORRUPTED,
			"nid %llu: %u shared xattr ids do not fit the %u-byte xattr area",
			(unsigned long long)inode->nid, count, isize);
		goto out;
	}
	*w = (struct xattr_walk){ .img = img, .inode = inode, .all = all,
				  .fn = fn, .arg = arg };
	ret = walk_inline(w, area, IMGFS_XATTR_IBODY_HEADER_SIZE + 4 * count,
			  isize, err);
	if (!ret)
		ret = walk_shared(w, area, count, err);
out:
	free(w);
	free(area);
	return ret;
}

struct getxattr_ctx {
	const char *name;
	void *buf;
	size_t size;
	ssize_t found;
};

static int getxattr_cb(void *arg, const struct imgfs_xattr_info *x)
{
	struct getxattr_ctx *c = arg;

	if (strcmp(x->name, c->name))
		return 0;
	memcpy(c->buf, x->value, x->value_size < c->size ? x->value_size :
							     c->size);
	c->found = (ssize_t)x->value_size;
	return 1;
}

ssize_t imgfs_getxattr(struct imgfs_image *img, const struct imgfs_inode *inode,
		       const char *name, void *buf, size_t size,
		       struct imgfs_error *err)
{
	struct getxattr_ctx c = { .name = name, .buf = buf, .size = size,
				  .found = -ENODATA };
	int ret;

	if (!*name)
		return -ENODATA;
	ret = imgfs_xattr_iterate(img, inode, false, getxattr_cb, &c, err);
	if (ret < 0)
		return ret;
	return c.found;
}

/* The long prefixes were loaded at open (lib/reader/image.c). */
int imgfs_image_long_prefix(const struct imgfs_image *img, unsigned int n,
			    unsigned int *base_index, const char **infix,
			    size_t *infix_len)
{
	if (n >= img->nr_prefixes)
		return -ENOENT;
	*base_index = img->prefixes[n].base_index;
	*infix = img->prefixes[n].infix;
	*infix_len = img->prefixes[n].infix_len;
	return 0;
}
