// SPDX-License-Identifier: MIT
/*
 * walk.c - imgfs_extract(): the extraction in one call, fed by the
 * reader's walk (breadth first, as the checker hands its entries) instead
 * of the checker. The first path of every hard-linked inode is kept (its
 * directory's serial and its name), so later paths become links to it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "extract/internal.h"
#include "imgfs/walk.h"
#include "util/hashtab.h"
#include "util/vec.h"
#include "util/error.h"

/* Where the first path of a hard-linked inode is. */
struct first_path {
	uint64_t parent_serial;
	size_t name; /* offset in walk_ctx.names */
};

struct walk_ctx {
	struct imgfs_extract *x;
	struct imgfs_u64map links; /* nid -> index in @firsts */
	struct first_path *firsts;
	size_t nr_firsts, cap_firsts;
	char *names; /* the names of @firsts, each NUL-terminated */
	size_t len_names, cap_names;
};

static int remember(struct walk_ctx *w, const struct imgfs_walk_entry *e)
{
	size_t len = e->name_len + 1;
	int ret;

	if (IMGFS_VEC_RESERVE(w->firsts, w->cap_firsts, w->nr_firsts + 1, 16) ||
	    IMGFS_VEC_RESERVE(w->names, w->cap_names, w->len_names + len, 256))
		return -ENOMEM;
	ret = u64map_add(&w->links, e->inode->nid, w->nr_firsts);
	if (ret <= 0)
		return ret;
	w->firsts[w->nr_firsts++] = (struct first_path){
		.parent_serial = e->parent_serial,
		.name = w->len_names,
	};
	memcpy(w->names + w->len_names, e->name, e->name_len);
	w->names[w->len_names + e->name_len] = '\0';
	w->len_names += len;
	return 0;
}

static int entry_cb(void *arg, const struct imgfs_walk_entry *e)
{
	struct walk_ctx *w = arg;
	struct imgfs_check_entry ce = {
		.path = e->path,
		.inode = e->inode,
		.data_ok = true,
		.parent_nid = e->parent_nid,
		.serial = e->serial,
		.parent_serial = e->parent_serial,
		.link_parent_serial = IMGFS_WALK_NO_SERIAL,
	};
	uint64_t i;
	int ret;

	if (!e->inode) {
		extract_fail(w->x, e->path,
			     e->error ? e->error->msg : "unreadable inode",
			     EIO);
		return 0;
	}
	if (imgfs_inode_is_dir(e->inode)) {
		/* a directory met again (corrupt image) is not listed again */
		if (!e->first)
			return 0;
	} else if (e->first) {
		if (e->inode->nlink > 1) {
			ret = remember(w, e);
			if (ret)
				return ret;
		}
	} else {
		/* the extraction needs where the first path is, not the
		 * path itself: its name stands for it */
		ce.link_to = e->name;
		if (u64map_get(&w->links, e->inode->nid, &i)) {
			ce.link_parent_serial = w->firsts[i].parent_serial;
			ce.link_name = w->names + w->firsts[i].name;
			ce.link_to = ce.link_name;
		}
	}
	return imgfs_extract_check_entry(w->x, &ce);
}

static int bad_block(void *arg, const char *path, const struct imgfs_inode *dir,
		     uint64_t block, unsigned int entry, const char *why)
{
	struct walk_ctx *w = arg;

	(void)dir;
	(void)block;
	(void)entry;
	extract_fail(w->x, path, why, EIO);
	return 0;
}

static int dir_error(void *arg, const char *path, const struct imgfs_inode *dir,
		     const struct imgfs_error *error)
{
	struct walk_ctx *w = arg;

	(void)dir;
	extract_fail(w->x, path, error->msg, EIO);
	return 0;
}

static int walk_image(struct walk_ctx *w, struct imgfs_error *err)
{
	struct imgfs_image *img = w->x->img;
	uint64_t root = imgfs_image_sb(img)->root_nid;
	struct imgfs_walk_options wo = {
		.struct_size = sizeof(wo),
		.flags = IMGFS_WALK_BREADTH_FIRST | IMGFS_WALK_CONTINUE,
		.entry = entry_cb,
		.arg = w,
		.bad_block = bad_block,
		.dir_error = dir_error,
	};
	struct imgfs_check_entry ce = { .path = "/" };
	struct imgfs_inode inode;
	int ret;

	ret = imgfs_inode_read(img, root, &inode, err);
	if (ret)
		return ret;
	if (!imgfs_inode_is_dir(&inode))
		return error_set(err, -ENOTDIR,
				 "the root (nid %llu) is not a directory",
				 (unsigned long long)root);
	ce.inode = &inode;
	ce.parent_nid = root;
	ce.link_parent_serial = IMGFS_WALK_NO_SERIAL;
	ret = imgfs_extract_check_entry(w->x, &ce);
	if (ret < 0)
		return error_set(err, ret, "out of memory");
	ret = imgfs_walk(img, root, "/", &wo, err);
	if (ret == -ENOMEM && !err->code)
		error_set(err, ret, "out of memory");
	return ret < 0 ? ret : 0;
}

int imgfs_extract(struct imgfs_image *img, const char *dir,
		  const struct imgfs_extract_options *o,
		  struct imgfs_extract_result *res, struct imgfs_error *err)
{
	struct imgfs_error local = { 0 };
	struct walk_ctx w = { 0 };
	int ret, ret2;

	if (!err)
		err = &local; /* walk_image() looks at what was set */
	ret = imgfs_extract_new(img, dir, o, &w.x, err);
	if (ret)
		return ret;
	ret = walk_image(&w, err);
	ret2 = imgfs_extract_finish(w.x, res, err);
	imgfs_extract_free(w.x);
	u64map_free(&w.links);
	free(w.firsts);
	free(w.names);
	return ret ? ret : ret2;
}
