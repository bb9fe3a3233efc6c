// SPDX-License-Identifier: MIT
/*
 * Metadata layout, run once all file data is in the image:
 *
 *   [sb][file data ...][inodes + inline xattrs/tails][shared xattrs]
 *   [directory and symlink blocks]
 *
 * meta_blkaddr points at the inode area so NIDs stay small (the root is
 * the first inode, NID 1: NID 0 reads as "unset" to some tools).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imgfs/format.h"
#include "writer/compress.h"
#include "writer/internal.h"
#include "util/vec.h"
#include "util/error.h"

struct layout {
	struct imgfs_node **order; /* placement order, root first */
	size_t nr;
	size_t cap;
	uint64_t meta_start; /* byte offset of block meta_blkaddr */
	uint64_t meta_end;
	uint64_t next_blk; /* allocator for blocks after the meta area */
	uint32_t xattr_blkaddr;
	bool any_xattrs;
};

static int order_add(struct layout *l, struct imgfs_node *inode)
{
	if (IMGFS_VEC_RESERVE(l->order, l->cap, l->nr + 1, 1024))
		return -ENOMEM;
	l->order[l->nr++] = inode;
	return 0;
}

static int add_dots(struct imgfs_writer *w, struct imgfs_dentry *dir)
{
	struct imgfs_dentry *dot, *dotdot;
	struct imgfs_dentry *parent = dir->parent ? dir->parent : dir;

	dot = arena_alloc(&w->tree.arena, sizeof(*dot));
	dotdot = arena_alloc(&w->tree.arena, sizeof(*dotdot));
	if (!dot || !dotdot)
		return -ENOMEM;
	dot->name = ".";
	dot->name_len = 1;
	dot->inode = dir->inode;
	dotdot->name = "..";
	dotdot->name_len = 2;
	dotdot->inode = parent->inode;
	/* reuse the child vector; both are unhashed and never looked up */
	if (IMGFS_VEC_RESERVE(dir->children, dir->cap_children,
			      (size_t)dir->nr_children + 2, 2))
		return -ENOMEM;
	dir->children[dir->nr_children++] = dot;
	dir->children[dir->nr_children++] = dotdot;
	return 0;
}

/* "a/b/c" for error messages ("/" for the root), cut to fit @size. */
static const char *dentry_path(const struct imgfs_dentry *d, char *buf,
			       size_t size)
{
	size_t pos = size - 1;

	buf[pos] = '\0';
	for (; d && d->parent && d->parent != d; d = d->parent) {
		size_t n = d->name_len + (pos < size - 1);

		if (n > pos)
			break;
		pos -= n;
		memcpy(buf + pos, d->name, d->name_len);
		if (n > d->name_len)
			buf[pos + d->name_len] = '/';
	}
	return buf[pos] ? buf + pos : "/";
}

static int overlay_xattrs(struct imgfs_writer *w, struct imgfs_dentry *dir,
			  struct imgfs_error *err)
{
	char path[1024];
	int ret = 0;

	if (dir->opaque)
		ret = xattr_set(&w->xattrs, dir->inode,
				"trusted.overlay.opaque", "y", 1, dir->name,
				err);
	if (!ret && dir->has_whiteouts)
		ret = xattr_set(&w->xattrs, dir->inode,
				"trusted.overlay.origin", "", 0, dir->name,
				err);
	if (!ret && (dir->opaque || dir->has_whiteouts))
		ret = xattr_check_inode(dir->inode, w->opts.shared_xattr_min,
					dentry_path(dir, path, sizeof(path)),
					err);
	return ret;
}

/* Breadth-first walk: fixes the order, link counts and directory lists. */
static int collect(struct imgfs_writer *w, struct layout *l,
		   struct imgfs_error *err)
{
	struct imgfs_node *root = w->tree.root->inode;
	struct imgfs_node *packed;
	int ret;

	root->placed = 1;
	root->nlink = 0;
	if (order_add(l, root))
		return error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < l->nr; i++) {
		struct imgfs_node *inode = l->order[i];
		struct imgfs_dentry *dir = inode->dir;
		uint32_t subdirs = 0;

		if (!node_is_dir(inode))
			continue;
		ret = overlay_xattrs(w, dir, err);
		if (ret)
			return ret;
		dir_sort(dir);
		for (uint32_t k = 0; k < dir->nr_children; k++) {
			struct imgfs_node *child = dir->children[k]->inode;

			if (node_is_dir(child)) {
				subdirs++;
			} else if (child->placed) {
				child->nlink++;
				continue;
			} else {
				child->nlink = 1;
			}
			child->placed = 1;
			if (order_add(l, child))
				return error_set(err, -ENOMEM, "out of memory");
		}
		inode->nlink = 2 + subdirs;
		if (add_dots(w, dir))
			return error_set(err, -ENOMEM, "out of memory");
		dir_sort(dir);
	}
	/* compressed fragments: an inode no directory names */
	packed = compressor_packed_inode(w->compressor);
	if (packed && order_add(l, packed))
		return error_set(err, -ENOMEM, "out of memory");
	return 0;
}

struct mtime_key {
	int64_t sec;
	uint32_t nsec;
};

static int mtime_cmp(const void *a, const void *b)
{
	const struct mtime_key *x = a, *y = b;

	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return x->nsec < y->nsec ? -1 : x->nsec > y->nsec;
}

/*
 * The superblock records the build time only as an unsigned 32-bit offset
 * from the epoch, so an epoch is usable only in [build - UINT32_MAX, build].
 */
static bool epoch_keeps_build_time(int64_t epoch, int64_t build)
{
	return epoch <= build &&
	       (uint64_t)build - (uint64_t)epoch <= UINT32_MAX;
}

/*
 * Compact inodes carry no mtime of their own, only the superblock epoch:
 * pick the most common mtime as the epoch so that layers with uniform
 * timestamps (reproducible builds) get 32-byte inodes throughout. Only
 * mtimes that still let the superblock record the build time qualify;
 * when none does, the build time itself is the epoch and inodes with
 * other mtimes are extended.
 */
static int choose_epoch(struct imgfs_writer *w, struct layout *l)
{
	struct mtime_key *keys = malloc(l->nr * sizeof(*keys));
	size_t best = 0, run = 0, n = 0;

	w->epoch = w->build_time;
	w->epoch_nsec = 0;
	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < l->nr; i++) {
		if (!epoch_keeps_build_time(l->order[i]->mtime, w->build_time))
			continue;
		keys[n].sec = l->order[i]->mtime;
		keys[n].nsec = l->order[i]->mtime_nsec;
		n++;
	}
	qsort(keys, n, sizeof(*keys), mtime_cmp);
	for (size_t i = 0; i < n; i++) {
		run = (i && !mtime_cmp(&keys[i], &keys[i - 1])) ? run + 1 : 1;
		if (run > best) {
			best = run;
			w->epoch = keys[i].sec;
			w->epoch_nsec = keys[i].nsec;
		}
	}
	free(keys);
	return 0;
}

static uint32_t inode_size(const struct imgfs_node *inode)
{
	return inode->extended ? IMGFS_INODE_EXTENDED_SIZE :
				 IMGFS_INODE_COMPACT_SIZE;
}

/* Decide directory and symlink layouts: their tail goes inline if it can. */
static int prepare_inode(struct imgfs_writer *w, struct imgfs_node *inode,
			 struct imgfs_error *err)
{
	uint64_t size;
	int ret;

	xattr_layout_inode(inode);
	/* entries were checked at intake: never write an overflowed count */
	if (inode->xattr_isize > IMGFS_XATTR_IBODY_MAX)
		return error_set(
			err, -EINVAL,
			"internal: xattr area of %u bytes exceeds i_xattr_icount",
			inode->xattr_isize);
	inode->extended = inode_needs_extended(w, inode);
	ret = compress_layout_inode(w->compressor, inode, err);
	if (ret)
		return ret;
	if ((inode->mode & 0170000) == 0120000) {
		inode->layout = IMGFS_LAYOUT_FLAT_INLINE;
		inode->tail_len = (uint32_t)inode->size;
		inode->dir_nblocks = 0;
		return 0;
	}
	if (!node_is_dir(inode))
		return 0;
	size = dir_tree_size(inode->dir, w->bs);
	if (size > UINT32_MAX && !inode->extended)
		inode->extended = 1;
	inode->size = size;
	if (size % w->bs == 0) {
		inode->layout = IMGFS_LAYOUT_FLAT_PLAIN;
		inode->dir_nblocks = (uint32_t)(size / w->bs);
		inode->tail_len = 0;
	} else {
		inode->layout = IMGFS_LAYOUT_FLAT_INLINE;
		inode->dir_nblocks = (uint32_t)(size / w->bs);
		inode->tail_len = (uint32_t)(size % w->bs);
	}
	return 0;
}

/* Fall back from an inline tail to a whole extra block. */
static void uninline(struct imgfs_writer *w, struct imgfs_node *inode)
{
	inode->layout = IMGFS_LAYOUT_FLAT_PLAIN;
	inode->dir_nblocks = (uint32_t)((inode->size + w->bs - 1) / w->bs);
	inode->tail_len = 0;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

/* Byte length from the inode start to the end of its inline tail. */
static uint64_t inode_span(const struct imgfs_node *inode, uint64_t pos)
{
	uint64_t end = pos + inode_size(inode) + inode->xattr_isize;

	if (inode->extra_len)
		end = align_up(end, inode->extra_align) + inode->extra_len;
	return end + inode->tail_len - pos;
}

static bool tail_fits(const struct imgfs_node *inode, uint64_t pos,
		      uint32_t bs)
{
	uint64_t tail_start = pos + inode_span(inode, pos) - inode->tail_len;

	return !inode->tail_len || (tail_start % bs) + inode->tail_len <= bs;
}

/*
 * Meta blocks with room left, by how many free 32-byte slots each has at
 * its end: the best fit for an inode is the fullest block it fits in.
 */
struct meta_bins {
	uint64_t **blk; /* [free slots]: block start offsets, a stack */
	size_t *nr, *cap;
	uint32_t nslots; /* slots per block */
};

static int bins_push(struct meta_bins *b, uint32_t free_slots, uint64_t blk)
{
	if (!free_slots || free_slots >= b->nslots)
		return 0;
	if (IMGFS_VEC_RESERVE(b->blk[free_slots], b->cap[free_slots],
			      b->nr[free_slots] + 1, 64))
		return -ENOMEM;
	b->blk[free_slots][b->nr[free_slots]++] = blk;
	return 0;
}

static void bins_free(struct meta_bins *b)
{
	for (uint32_t i = 0; b->blk && i < b->nslots; i++)
		free(b->blk[i]);
	free(b->blk);
	free(b->nr);
	free(b->cap);
}

/* Give @inode, the @i-th of the walk, the NID of byte offset @pos. */
static void put_at(struct layout *l, struct imgfs_node *inode, size_t i,
		   uint64_t pos)
{
	inode->nid = (pos - l->meta_start) >> IMGFS_ISLOTBITS;
	inode->ino = (uint32_t)(i + 1);
	if (inode->xattr_isize)
		l->any_xattrs = true;
}

/* The meta blocks being filled: the last one, and the others with room. */
struct meta_fill {
	struct meta_bins bins;
	uint32_t bs;
	uint64_t cur; /* start of the last block in use */
	uint64_t fill; /* bytes used in it */
};

/* Leave the last block for a new one after it; its room stays usable. */
static int next_block(struct meta_fill *m)
{
	if (bins_push(&m->bins, (uint32_t)((m->bs - m->fill) >> IMGFS_ISLOTBITS),
		      m->cur))
		return -ENOMEM;
	m->cur += m->bs;
	m->fill = 0;
	return 0;
}

/*
 * Where an inode of @need bytes (a multiple of 32, at most a block) goes:
 * the fullest block it fits in, the last one included, else a new one.
 */
static int fit(struct meta_fill *m, uint64_t need, uint64_t *pos)
{
	uint32_t slots = (uint32_t)(need >> IMGFS_ISLOTBITS), k;
	uint64_t room, blk;

	for (k = slots; k < m->bins.nslots && !m->bins.nr[k]; k++)
		;
	room = (uint64_t)k << IMGFS_ISLOTBITS;
	if (m->fill + need <= m->bs &&
	    (k == m->bins.nslots || m->bs - m->fill <= room)) {
		*pos = m->cur + m->fill;
		m->fill += need;
		return 0;
	}
	if (k < m->bins.nslots) {
		blk = m->bins.blk[k][--m->bins.nr[k]];
		*pos = blk + m->bs - room;
		return bins_push(&m->bins, k - slots, blk);
	}
	if (next_block(m))
		return -ENOMEM;
	*pos = m->cur;
	m->fill = need;
	return 0;
}

/* Place the @i-th inode of the walk, @need bytes from inode to tail end. */
static int place_one(struct imgfs_writer *w, struct layout *l,
		     struct meta_fill *m, size_t i, uint64_t need,
		     struct imgfs_error *err)
{
	struct imgfs_node *inode = l->order[i];
	uint64_t pos = m->cur + m->fill;

	if (need <= w->bs) {
		if (fit(m, need, &pos))
			return -ENOMEM;
		put_at(l, inode, i, pos);
		return 0;
	}
	/* larger than a block: it starts where the last block is filled */
	if (!tail_fits(inode, pos, w->bs)) {
		if (tail_fits(inode, m->cur + w->bs, w->bs)) {
			if (next_block(m))
				return -ENOMEM;
			pos = m->cur;
		} else if (inode->tail) {
			/* file tails are sized to fit at intake */
			return error_set(
				err, -EINVAL,
				"internal: inline tail of inode %zu cannot be placed",
				i);
		} else {
			uninline(w, inode);
		}
	}
	put_at(l, inode, i, pos);
	pos = align_up(pos + inode_span(inode, pos), 32);
	m->cur = pos & ~(uint64_t)(w->bs - 1);
	m->fill = pos - m->cur;
	return 0;
}

/* The pass placing the @i-th inode: 0 the root (order[0]), 1 those
 * taking more than half a block, 2 the others. */
static int pass_of(size_t i, uint64_t need, uint32_t bs)
{
	if (!i)
		return 0;
	return need > bs / 2 && need <= bs ? 1 : 2;
}

/*
 * Inodes with their inline tails are packed best fit into the meta
 * blocks, as a tail never crosses a block. The root comes first (its NID
 * must fit the superblock's 16 bits); then the inodes that take more
 * than half a block, each opening a block, as no two share one; then the
 * others fill what is left. Each pass keeps walk order. On the bench
 * layers about 1.5% of the metadata area stays empty, half of what
 * mkfs.erofs leaves; one best-fit pass in walk order left two to three
 * times as much.
 */
static int place_packed(struct imgfs_writer *w, struct layout *l,
			struct imgfs_error *err)
{
	struct meta_fill m = {
		.bins.nslots = w->bs >> IMGFS_ISLOTBITS,
		.bs = w->bs,
		.cur = l->meta_start,
		.fill = 32, /* NID 0 stays unused */
	};
	struct meta_bins *b = &m.bins;
	int ret = -ENOMEM;

	b->blk = calloc(b->nslots, sizeof(*b->blk));
	b->nr = calloc(b->nslots, sizeof(*b->nr));
	b->cap = calloc(b->nslots, sizeof(*b->cap));
	if (!b->blk || !b->nr || !b->cap)
		goto out;
	ret = 0;
	for (int pass = 0; pass < 3 && !ret; pass++) {
		for (size_t i = 0; i < l->nr && !ret; i++) {
			uint64_t need =
				align_up(inode_span(l->order[i], 0), 32);

			if (pass_of(i, need, w->bs) == pass)
				ret = place_one(w, l, &m, i, need, err);
		}
	}
	l->meta_end = m.cur + m.fill;
out:
	bins_free(b);
	if (ret == -ENOMEM)
		ret = error_set(err, ret, "out of memory");
	return ret;
}

static int place(struct imgfs_writer *w, struct layout *l,
		 struct imgfs_error *err)
{
	int ret = place_packed(w, l, err);

	if (ret)
		return ret;
	if (w->tree.root->inode->nid > UINT16_MAX)
		return error_set(err, -EFBIG, "root NID too large");
	return 0;
}

/* Blocks after the meta area: the shared xattrs, then dir/symlink blocks. */
static int allocate_blocks(struct imgfs_writer *w, struct layout *l,
			   struct imgfs_error *err)
{
	uint64_t blk = align_up(l->meta_end, w->bs) >> w->blkszbits;

	l->xattr_blkaddr = (uint32_t)blk;
	blk += align_up(w->xattrs.shared_size, w->bs) >> w->blkszbits;
	for (size_t i = 0; i < l->nr; i++) {
		struct imgfs_node *inode = l->order[i];
		bool dir_or_link = node_is_dir(inode) ||
				   (inode->mode & 0170000) == 0120000;

		if (!dir_or_link)
			continue;
		if (!inode->dir_nblocks) {
			inode->startblk = IMGFS_NULL_ADDR;
			continue;
		}
		inode->startblk = blk;
		blk += inode->dir_nblocks;
	}
	if (blk >= IMGFS_NULL_ADDR)
		return error_set(err, -EFBIG, "image exceeds 2^32 blocks");
	l->next_blk = blk;
	return 0;
}

/* The full content of a directory or symlink, for blocks and tail. */
static uint8_t *content_of(struct imgfs_writer *w, struct imgfs_node *inode,
			   struct imgfs_error *err)
{
	uint8_t *buf = malloc(inode->size ? inode->size : 1);

	if (!buf) {
		error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	if (!node_is_dir(inode)) {
		memcpy(buf, inode->symlink, inode->size);
		return buf;
	}
	if (dir_encode(inode->dir, w->bs, buf, inode->size)) {
		free(buf);
		error_set(err, -EINVAL, "internal: directory size mismatch");
		return NULL;
	}
	return buf;
}

static int emit_inode(struct imgfs_writer *w, struct layout *l,
		      struct imgfs_node *inode, struct imgfs_error *err)
{
	uint64_t pos = l->meta_start + (inode->nid << IMGFS_ISLOTBITS);
	uint8_t hdr[IMGFS_INODE_EXTENDED_SIZE];
	uint8_t *xbuf = NULL;
	int ret;

	ret = blkout_zero(&w->out, pos - w->out.pos, err);
	if (ret)
		return ret;
	inode_encode(w, inode, hdr);
	ret = blkout_write(&w->out, hdr, inode_size(inode), err);
	if (!ret && inode->xattr_isize) {
		xbuf = malloc(inode->xattr_isize);
		if (!xbuf)
			return error_set(err, -ENOMEM, "out of memory");
		ret = xattr_encode_ibody(&w->xattrs, inode, xbuf, err);
		if (!ret)
			ret = blkout_write(&w->out, xbuf, inode->xattr_isize,
					   err);
		free(xbuf);
	}
	if (!ret && inode->extra_len) {
		ret = blkout_zero(&w->out,
				  align_up(w->out.pos, inode->extra_align) -
					  w->out.pos,
				  err);
		if (!ret)
			ret = blkout_write(&w->out, inode->extra,
					   inode->extra_len, err);
	}
	if (ret || !inode->tail_len)
		return ret;
	if (inode->tail)
		return blkout_write(&w->out, inode->tail, inode->tail_len, err);
	/* directory or symlink: the tail is the end of its content */
	xbuf = content_of(w, inode, err);
	if (!xbuf)
		return err ? err->code : -ENOMEM;
	ret = blkout_write(&w->out, xbuf + inode->size - inode->tail_len,
			   inode->tail_len, err);
	free(xbuf);
	return ret;
}

static int by_nid(const void *a, const void *b)
{
	const struct imgfs_node *x = *(struct imgfs_node *const *)a;
	const struct imgfs_node *y = *(struct imgfs_node *const *)b;

	return x->nid < y->nid ? -1 : x->nid > y->nid;
}

/* Inodes are written in address order, which packing may not keep. */
static int emit_inodes(struct imgfs_writer *w, struct layout *l,
		       struct imgfs_error *err)
{
	struct imgfs_node **by_addr;
	int ret = 0;

	by_addr = malloc(l->nr * sizeof(*by_addr));
	if (!by_addr)
		return error_set(err, -ENOMEM, "out of memory");
	memcpy(by_addr, l->order, l->nr * sizeof(*by_addr));
	qsort(by_addr, l->nr, sizeof(*by_addr), by_nid);
	for (size_t i = 0; i < l->nr && !ret; i++)
		ret = emit_inode(w, l, by_addr[i], err);
	free(by_addr);
	return ret;
}

static int emit_blocks(struct imgfs_writer *w, struct layout *l,
		       struct imgfs_error *err)
{
	uint8_t *buf;
	int ret;

	ret = blkout_pad(&w->out, err);
	if (ret)
		return ret;
	if (w->xattrs.shared_size) {
		/* entry by entry: values may come back from the spill file */
		buf = malloc(IMGFS_XATTR_ENTRY_MAX);
		if (!buf)
			return error_set(err, -ENOMEM, "out of memory");
		for (size_t i = 0; i < w->xattrs.nr_shared && !ret; i++) {
			long n = xattr_encode_entry(
				&w->xattrs, w->xattrs.shared[i], buf, err);

			ret = n < 0 ? (int)n
				    : blkout_write(&w->out, buf, (size_t)n,
						   err);
		}
		free(buf);
		if (!ret)
			ret = blkout_pad(&w->out, err);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < l->nr; i++) {
		struct imgfs_node *inode = l->order[i];
		uint64_t len = (uint64_t)inode->dir_nblocks << w->blkszbits;

		if (!inode->dir_nblocks)
			continue;
		if (blkout_blk(&w->out) != inode->startblk)
			return error_set(err, -EINVAL,
					 "internal: block allocation mismatch");
		buf = content_of(w, inode, err);
		if (!buf)
			return err ? err->code : -ENOMEM;
		if (len > inode->size)
			len = inode->size;
		ret = blkout_write(&w->out, buf, len, err);
		free(buf);
		if (!ret)
			ret = blkout_pad(&w->out, err);
		if (ret)
			return ret;
	}
	return blkout_flush(&w->out, err);
}

int layout_write(struct imgfs_writer *w, struct imgfs_mkfs_stats *stats,
		 struct imgfs_error *err)
{
	struct imgfs_sb_layout sbl = { 0 };
	struct layout l = { 0 };
	int ret;

	ret = compressor_finish(w, err);
	if (!ret)
		ret = blkout_pad(&w->out, err);
	if (ret)
		return ret;
	l.meta_start = w->out.pos;
	ret = collect(w, &l, err);
	if (ret)
		goto out;
	if (choose_epoch(w, &l)) {
		ret = error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret = xattr_plan_shared(&w->xattrs, w->opts.shared_xattr_min);
	if (ret) {
		ret = error_set(err, ret,
				ret == -EFBIG ? "shared xattrs exceed 4 GiB"
					      : "out of memory");
		goto out;
	}
	for (size_t i = 0; i < l.nr && !ret; i++)
		ret = prepare_inode(w, l.order[i], err);
	if (!ret)
		ret = place(w, &l, err);
	if (!ret)
		ret = allocate_blocks(w, &l, err);
	if (!ret)
		ret = emit_inodes(w, &l, err);
	if (!ret)
		ret = emit_blocks(w, &l, err);
	if (ret)
		goto out;
	sbl.root_nid = w->tree.root->inode->nid;
	if (compressor_packed_inode(w->compressor))
		sbl.packed_nid = compressor_packed_inode(w->compressor)->nid;
	sbl.inos = l.nr;
	sbl.blocks = blkout_blk(&w->out);
	sbl.meta_blkaddr = (uint32_t)(l.meta_start >> w->blkszbits);
	sbl.xattr_blkaddr = l.xattr_blkaddr;
	sbl.feature_compat = l.any_xattrs ? IMGFS_FEATURE_COMPAT_XATTR_FILTER : 0;
	sbl.feature_incompat = w->feature_incompat;
	if (w->has_chunks)
		sbl.feature_incompat |= IMGFS_FEATURE_INCOMPAT_CHUNKED_FILE;
	if (w->compressor)
		ret = compressor_super(w->compressor, &sbl, err);
	if (w->opts.tar_index)
		taridx_super(w, &sbl);
	if (w->nr_devices)
		external_super(w, &sbl);
	if (!ret)
		ret = super_write(w, &sbl, err);
	if (ret)
		goto out;
	if (ftruncate(w->fd, (off_t)w->out.pos) < 0) {
		ret = error_set(err, -errno, "sizing image: %s",
				strerror(errno));
		goto out;
	}
	if (stats) {
		stats->inodes = l.nr;
		stats->image_bytes = w->out.pos;
		stats->stored_data_bytes = l.meta_start - w->data_start;
		stats->padding_bytes = w->out.pad_bytes;
	}
out:
	free(l.order);
	return ret;
}
