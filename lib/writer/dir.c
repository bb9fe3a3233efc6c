// SPDX-License-Identifier: MIT
/*
 * Directories: entries sorted by unsigned bytes ("." and ".." included, in
 * their sorted place), packed into self-contained blocks of dirents
 * followed by names. The kernel binary-searches blocks by their first
 * name, so order must hold across blocks too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "writer/internal.h"

static int dentry_cmp(const void *a, const void *b)
{
	const struct imgfs_dentry *x = *(struct imgfs_dentry *const *)a;
	const struct imgfs_dentry *y = *(struct imgfs_dentry *const *)b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int r = memcmp(x->name, y->name, n);

	if (r)
		return r;
	return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

/* Drop dead children and sort the rest; the dot entries are added by the
 * caller as ordinary (unhashed) children before this runs. */
int dir_sort(struct imgfs_dentry *dir)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < dir->nr_children; i++)
		if (!dir->children[i]->dead)
			dir->children[n++] = dir->children[i];
	dir->nr_children = n;
	if (n > 1) /* qsort(NULL, 0) is undefined behaviour */
		qsort(dir->children, n, sizeof(*dir->children), dentry_cmp);
	return 0;
}

uint64_t dir_tree_size(struct imgfs_dentry *dir, uint32_t bs)
{
	uint64_t full = 0;
	uint32_t used = 0;

	for (uint32_t i = 0; i < dir->nr_children; i++) {
		uint32_t need = IMGFS_DIRENT_SIZE + dir->children[i]->name_len;

		if (used + need > bs) {
			full += bs;
			used = 0;
		}
		used += need;
	}
	return full + used;
}

static void encode_block(struct imgfs_dentry **ents, uint32_t n, uint8_t *p)
{
	uint32_t nameoff = n * IMGFS_DIRENT_SIZE;

	for (uint32_t i = 0; i < n; i++) {
		const struct imgfs_dentry *d = ents[i];
		struct imgfs_dirent ent = {
			.nid = d->inode->nid,
			.nameoff = (uint16_t)nameoff,
			.file_type = (uint8_t)imgfs_mode_to_ftype(d->inode->mode),
		};

		dirent_encode(&ent, p + i * IMGFS_DIRENT_SIZE);
		memcpy(p + nameoff, d->name, d->name_len);
		nameoff += d->name_len;
	}
}

int dir_encode(struct imgfs_dentry *dir, uint32_t bs, uint8_t *buf,
	       uint64_t size)
{
	uint64_t pos = 0;
	uint32_t used = 0, first = 0;

	memset(buf, 0, size);
	for (uint32_t i = 0; i < dir->nr_children; i++) {
		uint32_t need = IMGFS_DIRENT_SIZE + dir->children[i]->name_len;

		if (used + need > bs) {
			encode_block(dir->children + first, i - first,
				     buf + pos);
			pos += bs;
			used = 0;
			first = i;
		}
		used += need;
	}
	if (pos + used != size)
		return -EINVAL;
	encode_block(dir->children + first, dir->nr_children - first,
		     buf + pos);
	return 0;
}
