// SPDX-License-Identifier: MIT
/*
 * Directory blocks, iteration and lookup (docs/format.md §6); entries are
 * decoded by lib/format/dirent.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader/dir.h"
#include "util/error.h"

/* Validate entry @i of a block and return its name bounds. */
static int dirent_name(const uint8_t *blk, unsigned int blen, unsigned int n,
		       unsigned int i, unsigned int *off, unsigned int *len,
		       const char **why)
{
	struct imgfs_dirent de, next;
	unsigned int start, end;

	dirent_decode(blk + i * IMGFS_DIRENT_SIZE, &de);
	start = de.nameoff;
	if (i + 1 < n) {
		dirent_decode(blk + (i + 1) * IMGFS_DIRENT_SIZE, &next);
		end = next.nameoff;
	} else {
		/* The last name ends at the first NUL or the block end. */
		end = start;
		while (end < blen && blk[end])
			end++;
	}
	if (start < n * IMGFS_DIRENT_SIZE || start >= blen) {
		*why = "name offset outside the name area";
		return -IMGFS_EFSCORRUPTED;
	}
	if (end <= start || end > blen) {
		*why = "name offsets not increasing or past the block";
		return -IMGFS_EFSCORRUPTED;
	}
	if (end - start > IMGFS_NAME_MAX) {
		*why = "name longer than 255 bytes";
		return -IMGFS_EFSCORRUPTED;
	}
	if (memchr(blk + start, '\0', end - start) ||
	    memchr(blk + start, '/', end - start)) {
		*why = "name contains '/' or NUL";
		return -IMGFS_EFSCORRUPTED;
	}
	*off = start;
	*len = end - start;
	return 0;
}

int dirblk_check(const uint8_t *blk, unsigned int blen, unsigned int blksz,
		 unsigned int *nr, unsigned int *bad, const char **why)
{
	struct imgfs_dirent first;
	unsigned int nameoff0, i, off, len;
	int ret;

	*bad = 0;
	if (blen < IMGFS_DIRENT_SIZE + 1) {
		*why = "directory block too short for one entry";
		return -IMGFS_EFSCORRUPTED;
	}
	dirent_decode(blk, &first);
	nameoff0 = first.nameoff;
	if (nameoff0 < IMGFS_DIRENT_SIZE || nameoff0 >= blksz ||
	    nameoff0 % IMGFS_DIRENT_SIZE || nameoff0 >= blen) {
		*why = "invalid first name offset";
		return -IMGFS_EFSCORRUPTED;
	}
	*nr = nameoff0 / IMGFS_DIRENT_SIZE;
	for (i = 0; i < *nr; i++) {
		ret = dirent_name(blk, blen, *nr, i, &off, &len, why);
		if (ret) {
			*bad = i;
			return ret;
		}
	}
	return 0;
}

void dirblk_entry(const uint8_t *blk, unsigned int blen, unsigned int nr,
		  unsigned int i, struct imgfs_dirent_info *de, char *name)
{
	struct imgfs_dirent d;
	unsigned int off, len;
	const char *why;

	dirent_decode(blk + i * IMGFS_DIRENT_SIZE, &d);
	dirent_name(blk, blen, nr, i, &off, &len, &why);
	memcpy(name, blk + off, len);
	name[len] = '\0';
	de->name = name;
	de->name_len = len;
	de->nid = d.nid;
	de->file_type = d.file_type;
	de->index = i;
}

int dir_walk(struct imgfs_image *img, const struct imgfs_inode *dir,
	     imgfs_dirent_fn fn, void *arg, imgfs_dirblk_bad_fn bad,
	     void *bad_arg, struct imgfs_error *err)
{
	uint64_t nblocks = (dir->size + img->blksz - 1) >> img->blkszbits;
	char name[IMGFS_NAME_MAX + 1];
	uint8_t *blk;
	uint64_t b;
	int ret = 0;

	if (!imgfs_inode_is_dir(dir))
		return error_set(err, -ENOTDIR, "nid %llu: not a directory",
				 (unsigned long long)dir->nid);
	blk = malloc(img->blksz);
	if (!blk)
		return error_set(err, -ENOMEM, "out of memory");
	for (b = 0; b < nblocks && !ret; b++) {
		uint64_t left = dir->size - (b << img->blkszbits);
		unsigned int blen = left < img->blksz ? (unsigned int)left :
							img->blksz;
		unsigned int nr, i, badi;
		const char *why;
		ssize_t n;

		n = imgfs_read(img, dir, b << img->blkszbits, blk, blen, err);
		if (n < 0) {
			ret = (int)n;
			break;
		}
		ret = dirblk_check(blk, blen, img->blksz, &nr, &badi, &why);
		if (ret) {
			if (bad) {
				ret = bad(bad_arg, b, badi, why);
				continue;
			}
			ret = error_set(
				err, ret,
				"nid %llu: directory block %llu entry %u: %s",
				(unsigned long long)dir->nid,
				(unsigned long long)b, badi, why);
			break;
		}
		for (i = 0; i < nr && !ret; i++) {
			struct imgfs_dirent_info de;

			dirblk_entry(blk, blen, nr, i, &de, name);
			de.block = b;
			ret = fn(arg, &de);
		}
	}
	free(blk);
	return ret;
}

int imgfs_dir_iterate(struct imgfs_image *img, const struct imgfs_inode *dir,
		      imgfs_dirent_fn fn, void *arg, struct imgfs_error *err)
{
	return dir_walk(img, dir, fn, arg, NULL, NULL, err);
}

struct lookup_ctx {
	const char *name;
	size_t len;
	uint64_t nid;
	unsigned int file_type;
};

static int lookup_cb(void *arg, const struct imgfs_dirent_info *de)
{
	struct lookup_ctx *c = arg;

	if (de->name_len != c->len || memcmp(de->name, c->name, c->len))
		return 0;
	c->nid = de->nid;
	c->file_type = de->file_type;
	return 1;
}

int imgfs_dir_lookup(struct imgfs_image *img, const struct imgfs_inode *dir,
		     const char *name, size_t len, uint64_t *nid,
		     unsigned int *file_type, struct imgfs_error *err)
{
	struct lookup_ctx c = { .name = name, .len = len };
	int ret;

	if (!len || len > IMGFS_NAME_MAX || memchr(name, '/', len))
		return -ENOENT;
	ret = imgfs_dir_iterate(img, dir, lookup_cb, &c, err);
	if (ret < 0)
		return ret;
	if (!ret)
		return -ENOENT;
	*nid = c.nid;
	if (file_type)
		*file_type = c.file_type;
	return 0;
}

int imgfs_lookup(struct imgfs_image *img, const char *path, uint64_t *nid,
		 struct imgfs_error *err)
{
	struct imgfs_inode dir;
	const char *p = path;
	uint64_t cur = img->sb.root_nid;
	int ret;

	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		len = strcspn(p, "/");
		ret = imgfs_inode_read(img, cur, &dir, err);
		if (ret)
			return ret;
		if (!imgfs_inode_is_dir(&dir))
			return -ENOTDIR;
		ret = imgfs_dir_lookup(img, &dir, p, len, &cur, NULL, err);
		if (ret)
			return ret;
		p += len;
	}
	*nid = cur;
	return 0;
}
