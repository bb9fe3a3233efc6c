// SPDX-License-Identifier: MIT
/*
 * resolve.c - resolve a path inside the image, following symlinks the
 * way the kernel would if the image were mounted and chrooted into.
 *
 * ".." is taken from the components resolved so far, never from the
 * on-disk ".." entries (a hostile image can point them anywhere), so the
 * walk never leaves the image root: ".." at the root stays at the root,
 * and absolute symlink targets start again from the root.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/stats.h"
#include "util/vec.h"
#include "util/error.h"

struct resolve {
	struct imgfs_image *img;
	struct imgfs_error *err;
	uint64_t *nids; /* nids[0] is the root, nids[n - 1] the current dir */
	size_t n, cap;
	char *rest; /* what is left to resolve */
	unsigned int links;
};

static int push_nid(struct resolve *r, uint64_t nid)
{
	if (IMGFS_VEC_RESERVE(r->nids, r->cap, r->n + 1, 64))
		return error_set(r->err, -ENOMEM, "out of memory");
	r->nids[r->n++] = nid;
	return 0;
}

/* Replace r->rest by @target followed by what follows offset @off. */
static int splice_link(struct resolve *r, const char *target, size_t tlen,
		       size_t off)
{
	size_t left = strlen(r->rest + off);
	char *s = malloc(tlen + 1 + left + 1);

	if (!s)
		return error_set(r->err, -ENOMEM, "out of memory");
	memcpy(s, target, tlen);
	s[tlen] = '/';
	memcpy(s + tlen + 1, r->rest + off, left + 1);
	free(r->rest);
	r->rest = s;
	if (target[0] == '/')
		r->n = 1;
	return 0;
}

static int follow(struct resolve *r, const struct imgfs_inode *inode,
		  size_t off)
{
	char target[IMGFS_SYMLINK_MAX + 1];
	ssize_t len;

	if (++r->links > IMGFS_RESOLVE_MAX_LINKS)
		return error_set(r->err, -ELOOP,
				 "too many levels of symbolic links");
	len = imgfs_readlink(r->img, inode, target, sizeof(target), r->err);
	if (len < 0)
		return (int)len;
	target[len] = '\0';
	return splice_link(r, target, (size_t)len, off);
}

/* One component of r->rest at @off, @len bytes; *@next: where to go on. */
static int step(struct resolve *r, size_t off, size_t len, bool last,
		bool follow_last, size_t *next)
{
	const char *name = r->rest + off;
	struct imgfs_inode dir, inode;
	uint64_t nid;
	int ret;

	*next = off + len;
	if (len == 1 && name[0] == '.')
		return 0;
	if (len == 2 && name[0] == '.' && name[1] == '.') {
		if (r->n > 1)
			r->n--;
		return 0;
	}
	ret = imgfs_inode_read(r->img, r->nids[r->n - 1], &dir, r->err);
	if (ret)
		return ret;
	if (!imgfs_inode_is_dir(&dir))
		return -ENOTDIR;
	ret = imgfs_dir_lookup(r->img, &dir, name, len, &nid, NULL, r->err);
	if (ret)
		return ret;
	ret = imgfs_inode_read(r->img, nid, &inode, r->err);
	if (ret)
		return ret;
	if (imgfs_inode_is_symlink(&inode) && (!last || follow_last)) {
		*next = 0;
		return follow(r, &inode, off + len);
	}
	return push_nid(r, nid);
}

int imgfs_resolve(struct imgfs_image *img, const char *path, bool follow_last,
		  uint64_t *nid, struct imgfs_error *err)
{
	struct resolve r = { .img = img, .err = err };
	size_t off = 0, len, next, len_path = strlen(path);
	int ret;

	r.rest = strdup(path);
	if (!r.rest)
		return error_set(err, -ENOMEM, "out of memory");
	ret = push_nid(&r, imgfs_image_sb(img)->root_nid);
	while (!ret) {
		bool last;

		off += strspn(r.rest + off, "/");
		if (!r.rest[off])
			break;
		len = strcspn(r.rest + off, "/");
		last = !r.rest[off + len + strspn(r.rest + off + len, "/")];
		ret = step(&r, off, len, last, follow_last, &next);
		off = next;
	}
	/* "file/" names a directory or nothing, as in the kernel */
	if (!ret && len_path && path[len_path - 1] == '/' && r.n > 1) {
		struct imgfs_inode last;

		ret = imgfs_inode_read(img, r.nids[r.n - 1], &last, err);
		if (!ret && !imgfs_inode_is_dir(&last))
			ret = -ENOTDIR;
	}
	if (!ret)
		*nid = r.nids[r.n - 1];
	free(r.nids);
	free(r.rest);
	return ret;
}
