// SPDX-License-Identifier: MIT
/*
 * stats.c - statistics over every inode of an image.
 *
 * One walk (imgfs_walk(), reader/walk.c) visits every path; each inode
 * is accounted the first time it is met. Storage of regular files is
 * collected as byte ranges, sorted and merged at the end, so storage
 * shared by several files (deduplicated chunks, shared pclusters) counts
 * once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "imgfs/stats.h"
#include "util/vec.h"
#include "util/error.h"

#define TAG_PLAIN 0xffu /* a range of uncompressed data; else an algorithm */

struct range {
	uint64_t pos;
	uint64_t len;
	unsigned int tag;
};

struct gather {
	struct imgfs_image *img;
	struct imgfs_stats *st;
	struct imgfs_error *err;
	struct range *ranges;
	size_t nr_ranges, cap_ranges;
	unsigned int file_algs; /* algorithms met in the current file */
	struct imgfs_extent run; /* the current file's last run */
	bool have_run;
};

static int range_add(struct gather *g, uint64_t pos, uint64_t len,
		     unsigned int tag)
{
	if (!len)
		return 0;
	if (IMGFS_VEC_RESERVE(g->ranges, g->cap_ranges, g->nr_ranges + 1, 256))
		return error_set(g->err, -ENOMEM, "out of memory");
	g->ranges[g->nr_ranges++] = (struct range){ pos, len, tag };
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->len < y->len ? 1 : x->len > y->len ? -1 : 0;
}

/* Add the bytes of @r not covered by earlier ranges to its tag's total. */
static void range_account(struct imgfs_stats *st, const struct range *r,
			  uint64_t *end)
{
	uint64_t stop = r->pos + r->len, from;

	if (stop <= *end)
		return;
	from = r->pos > *end ? r->pos : *end;
	st->data_bytes += stop - from;
	if (r->tag < IMGFS_COMPR_MAX)
		st->algs[r->tag].stored_bytes += stop - from;
	*end = stop;
}

static void ranges_merge(struct gather *g)
{
	uint64_t end = 0;
	size_t i;

	if (!g->nr_ranges)
		return;
	qsort(g->ranges, g->nr_ranges, sizeof(*g->ranges), range_cmp);
	for (i = 0; i < g->nr_ranges; i++)
		range_account(g->st, &g->ranges[i], &end);
}

static int compressed_extent(struct gather *g, const struct imgfs_extent *ext)
{
	struct imgfs_stats *st = g->st;

	if (ext->flags & IMGFS_EXTENT_F_RAW) {
		st->raw_extents++;
		st->raw_bytes += ext->length;
		return range_add(g, ext->pos, ext->plen, TAG_PLAIN);
	}
	if (ext->algorithm >= IMGFS_COMPR_MAX)
		return range_add(g, ext->pos, ext->plen, TAG_PLAIN);
	g->file_algs |= 1u << ext->algorithm;
	st->algs[ext->algorithm].extents++;
	st->algs[ext->algorithm].logical_bytes += ext->length;
	return range_add(g, ext->pos, ext->plen, ext->algorithm);
}

static int file_extent(void *arg, const struct imgfs_extent *ext)
{
	struct gather *g = arg;
	struct imgfs_stats *st = g->st;

	if (!g->have_run || !imgfs_extent_merge(&g->run, ext)) {
		st->extents++;
		g->run = *ext;
		g->have_run = true;
	}
	switch (ext->kind) {
	case IMGFS_EXTENT_HOLE:
		st->hole_bytes += ext->length;
		return 0;
	case IMGFS_EXTENT_PLAIN:
	case IMGFS_EXTENT_INLINE:
		st->plain_bytes += ext->length;
		if (ext->kind == IMGFS_EXTENT_INLINE)
			st->inline_bytes += ext->length;
		if (ext->plen > ext->length)
			st->slack_bytes += ext->plen - ext->length;
		return range_add(g, ext->pos, ext->plen, TAG_PLAIN);
	case IMGFS_EXTENT_COMPRESSED:
		return compressed_extent(g, ext);
	case IMGFS_EXTENT_FRAGMENT:
		st->fragment_bytes += ext->length;
		return 0;
	}
	return 0;
}

static int account_regular(struct gather *g, const struct imgfs_inode *inode)
{
	struct imgfs_stats *st = g->st;
	struct imgfs_error e;
	unsigned int k = 0, a;
	int ret;

	st->file_bytes += inode->size;
	if (inode->size > st->max_file_size)
		st->max_file_size = inode->size;
	while (k < 64 && (inode->size >> k))
		k++;
	st->size_hist[k]++;
	if (imgfs_inode_is_compressed(inode)) {
		st->compressed_files++;
		st->compressed_file_bytes += inode->size;
		st->compressed_blocks += inode->startblk;
	}
	/* A private error: an unmappable compressed file is no failure. */
	imgfs_error_clear(&e);
	g->file_algs = 0;
	g->have_run = false;
	ret = imgfs_extent_iterate(g->img, inode, file_extent, g, &e);
	if (ret == -EOPNOTSUPP && imgfs_inode_is_compressed(inode)) {
		st->compressed_unmapped++;
		st->data_bytes += inode->startblk << imgfs_image_sb(g->img)->blkszbits;
		return 0;
	}
	if (ret < 0)
		return error_set(g->err, ret, "%s", e.msg);
	for (a = 0; a < IMGFS_COMPR_MAX; a++)
		if (g->file_algs & (1u << a))
			st->algs[a].files++;
	return 0;
}

/* The packed inode's pclusters: storage of the fragments. */
static int packed_extent(void *arg, const struct imgfs_extent *ext)
{
	struct gather *g = arg;

	switch (ext->kind) {
	case IMGFS_EXTENT_PLAIN:
	case IMGFS_EXTENT_INLINE:
		return range_add(g, ext->pos, ext->plen, TAG_PLAIN);
	case IMGFS_EXTENT_COMPRESSED:
		return compressed_extent(g, ext);
	default:
		return 0;
	}
}

/*
 * The packed inode is reachable from no directory; its storage is file
 * data all the same. An unmappable one counts by its block count, as
 * other compressed files do.
 */
static int account_packed(struct gather *g)
{
	uint64_t nid = imgfs_image_sb(g->img)->packed_nid;
	struct imgfs_inode inode;
	struct imgfs_error e;
	int ret;

	if (!nid)
		return 0;
	ret = imgfs_inode_read(g->img, nid, &inode, g->err);
	if (ret)
		return ret;
	g->st->packed_size = inode.size;
	g->st->inode_bytes += inode.inode_size + inode.xattr_isize;
	imgfs_error_clear(&e);
	ret = imgfs_extent_iterate(g->img, &inode, packed_extent, g, &e);
	if (ret == -EOPNOTSUPP && imgfs_inode_is_compressed(&inode)) {
		g->st->data_bytes += inode.startblk <<
				     imgfs_image_sb(g->img)->blkszbits;
		return 0;
	}
	return ret < 0 ? error_set(g->err, ret, "%s", e.msg) : 0;
}

/* Storage of a directory or symlink: everything it maps. */
static int meta_extent(void *arg, const struct imgfs_extent *ext)
{
	uint64_t *sum = arg;

	if (ext->kind != IMGFS_EXTENT_HOLE)
		*sum += ext->plen;
	return 0;
}

static int count_xattr(void *arg, const struct imgfs_xattr_info *x)
{
	uint64_t *n = arg;

	(*n)++;
	return 0;
}

static int account_inode(struct gather *g, const struct imgfs_inode *inode)
{
	struct imgfs_stats *st = g->st;
	unsigned int ft = imgfs_mode_to_ftype(inode->mode);
	int ret;

	st->inodes++;
	st->by_type[ft]++;
	if (inode->layout < IMGFS_LAYOUT_MAX)
		st->by_layout[inode->layout]++;
	st->inode_bytes += inode->inode_size + inode->xattr_isize;
	if (inode->xattr_icount) {
		ret = imgfs_xattr_iterate(g->img, inode, true, count_xattr,
					  &st->xattrs, g->err);
		if (ret < 0)
			return ret;
	}
	if (ft == IMGFS_FT_REG_FILE)
		return account_regular(g, inode);
	if (ft == IMGFS_FT_DIR)
		return imgfs_extent_iterate(g->img, inode, meta_extent,
					    &st->dir_bytes, g->err);
	if (ft == IMGFS_FT_SYMLINK)
		return imgfs_extent_iterate(g->img, inode, meta_extent,
					    &st->symlink_bytes, g->err);
	return 0;
}

static int stats_entry(void *arg, const struct imgfs_walk_entry *e)
{
	struct gather *g = arg;

	g->st->paths++;
	if (!e->first) {
		g->st->hardlinks++;
		return 0;
	}
	return account_inode(g, e->inode);
}

/* Keep the IMGFS_STATS_TOP_DIRS directories with the most entries. */
static int stats_dir_end(void *arg, const char *path,
			 const struct imgfs_inode *dir, uint64_t entries)
{
	struct imgfs_stats *st = ((struct gather *)arg)->st;
	unsigned int n = st->nr_top_dirs, i;
	char *copy;

	if (n == IMGFS_STATS_TOP_DIRS && st->top_dirs[n - 1].entries >= entries)
		return 0;
	copy = strdup(path);
	if (!copy)
		return error_set(((struct gather *)arg)->err, -ENOMEM,
				 "out of memory");
	if (n == IMGFS_STATS_TOP_DIRS)
		free(st->top_dirs[--n].path);
	for (i = n; i > 0 && st->top_dirs[i - 1].entries < entries; i--)
		st->top_dirs[i] = st->top_dirs[i - 1];
	st->top_dirs[i] = (struct imgfs_stats_dir){ copy, dir->nid, entries };
	st->nr_top_dirs = n + 1;
	return 0;
}

static void finish_totals(struct imgfs_stats *st)
{
	uint64_t used;

	st->metadata_bytes = st->inode_bytes + st->dir_bytes +
			     st->symlink_bytes;
	used = st->data_bytes + st->metadata_bytes;
	st->other_bytes = st->image_bytes > used ? st->image_bytes - used : 0;
}

static int gather_run(struct gather *g)
{
	struct imgfs_walk_options o = {
		.struct_size = sizeof(o),
		.entry = stats_entry,
		.dir_end = stats_dir_end,
		.arg = g,
	};
	struct imgfs_inode root;
	int ret;

	ret = imgfs_inode_read_root(g->img, &root, g->err);
	if (ret)
		return ret;
	g->st->paths = 1;
	ret = account_inode(g, &root);
	if (ret)
		return ret;
	ret = imgfs_walk(g->img, root.nid, "/", &o, g->err);
	if (ret)
		return ret < 0 ? ret : 0;
	ret = account_packed(g);
	if (ret)
		return ret;
	ranges_merge(g);
	finish_totals(g->st);
	return 0;
}

int imgfs_stats_gather(struct imgfs_image *img, struct imgfs_stats **out,
		       struct imgfs_error *err)
{
	struct gather g = { .img = img, .err = err };
	int ret;

	*out = NULL;
	g.st = calloc(1, sizeof(*g.st));
	if (!g.st)
		return error_set(err, -ENOMEM, "out of memory");
	g.st->struct_size = sizeof(*g.st);
	g.st->image_bytes = imgfs_image_sb(img)->image_size;
	ret = gather_run(&g);
	free(g.ranges);
	if (ret) {
		imgfs_stats_free(g.st);
		return ret;
	}
	*out = g.st;
	return 0;
}

void imgfs_stats_free(struct imgfs_stats *st)
{
	unsigned int i;

	if (!st)
		return;
	for (i = 0; i < st->nr_top_dirs; i++)
		free(st->top_dirs[i].path);
	free(st);
}
