// SPDX-License-Identifier: MIT
/*
 * check.c - image checker: superblock, inode fields, tree walk; drives the
 * per-inode checks of data.c and xattr.c (findings go through report.c).
 *
 * The tree is visited by imgfs_walk() (lib/reader/walk.c) breadth first,
 * going on after read errors, so a deep (hostile) tree cannot exhaust the
 * stack and a directory is only listed when its first entry is met, which
 * bounds the walk even when entries form cycles. Every inode gets one
 * record (nodes.c), which counts its links and names its path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/internal.h"
#include "imgfs/walk.h"
#include "util/error.h"
#include "util/sized.h"

void imgfs_check_options_init(struct imgfs_check_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->struct_size = sizeof(*opts);
}

/* ---- superblock */

static void check_compr_cfgs(struct check_ctx *c, uint64_t *pos)
{
	unsigned int alg;

	if (!(c->sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_COMPR_CFGS))
		return;
	if (c->sb->compr_algs >> IMGFS_COMPR_MAX)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "unknown compression algorithms in bitmap 0x%x",
			     c->sb->compr_algs);
	for (alg = 0; alg < IMGFS_COMPR_MAX; alg++) {
		uint8_t l[IMGFS_COMPR_CFG_HDR_SIZE];
		struct imgfs_error e = { 0 };

		if (!(c->sb->compr_algs & (1u << alg)))
			continue;
		*pos = (*pos + 3) & ~3ull;
		if (img_read(c->img, l, sizeof(l), *pos, "compression config",
			     0, &e)) {
			check_report(c, IMGFS_CHECK_ERROR,
				     IMGFS_CHECK_SUPERBLOCK, IMGFS_CHECK_NO_NID,
				     "compression config of algorithm %u: %s",
				     alg, e.msg);
			return;
		}
		*pos += sizeof(l) + compr_cfg_len_decode(l);
	}
}

static void check_area_addr(struct check_ctx *c, const char *what,
			    uint64_t pos)
{
	if (pos > c->img->size)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "%s at byte %llu is beyond the end of the image (%llu bytes)",
			     what, (unsigned long long)pos,
			     (unsigned long long)c->img->size);
}

static void check_prefix_table(struct check_ctx *c)
{
	uint64_t start = (uint64_t)c->sb->xattr_prefix_start << 2, pos = start;
	unsigned int i;

	if (!(c->sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_XATTR_PREFIXES)) {
		if (c->sb->xattr_prefix_count)
			check_report(c, IMGFS_CHECK_WARNING,
				     IMGFS_CHECK_SUPERBLOCK, IMGFS_CHECK_NO_NID,
				     "xattr_prefix_count %u without the XATTR_PREFIXES feature",
				     c->sb->xattr_prefix_count);
		return;
	}
	if (c->sb->xattr_prefix_count > 128)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "xattr_prefix_count %u exceeds 128",
			     c->sb->xattr_prefix_count);
	if (c->img->nr_prefixes < c->sb->xattr_prefix_count) {
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "long xattr prefixes stored in the packed inode or metabox are not verified");
		return;
	}
	for (i = 0; i < c->img->nr_prefixes; i++) {
		pos = (pos + 3) & ~3ull;
		pos += IMGFS_XATTR_LONG_PREFIX_HDR_SIZE +
		       c->img->prefixes[i].infix_len;
	}
	if (pos > start)
		check_add_range(c, start, pos - start, IMGFS_CHECK_NO_NID,
				CHECK_RANGE_META);
}

/* The packed inode (FRAGMENTS) holds tails of compressed files. */
static void check_packed_inode(struct check_ctx *c)
{
	struct imgfs_error e = { 0 };
	struct imgfs_inode in;

	if (!(c->sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_FRAGMENTS) ||
	    !c->sb->packed_nid)
		return;
	if (imgfs_inode_read(c->img, c->sb->packed_nid, &in, &e)) {
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID, "packed inode: %s", e.msg);
		return;
	}
	if (!imgfs_inode_is_reg(&in))
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "packed inode nid %llu is not a regular file",
			     (unsigned long long)in.nid);
	check_add_range(c, in.pos, in.data_pos - in.pos, in.nid,
			CHECK_RANGE_META);
	if (imgfs_inode_is_reg(&in))
		check_packed_storage(c, &in);
	c->hidden_inodes++;
}

static void check_superblock(struct check_ctx *c)
{
	const struct imgfs_sb_info *sb = c->sb;
	uint64_t pos = IMGFS_SUPER_OFFSET + sb->sb_size;
	uint64_t blocks_bytes = sb->blocks << sb->blkszbits;
	uint8_t raw[IMGFS_SUPER_BASE_SIZE];
	struct imgfs_super_block d = { 0 };
	struct imgfs_error e = { 0 };

	if (!sb->checksum_ok)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "bad checksum 0x%08x (computed 0x%08x)",
			     sb->checksum, sb->checksum_calc);
	if (sb->unknown_incompat)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "unknown incompatible features 0x%x: the kernel refuses to mount",
			     sb->unknown_incompat);
	if (sb->unknown_compat)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "unknown compatible features 0x%x",
			     sb->unknown_compat);
	check_area_addr(c, "meta_blkaddr", c->img->meta_base);
	check_area_addr(c, "xattr_blkaddr", c->img->xattr_base);
	/* a dm-verity tree after the image is checked on its own, a
	 * tar-index image's tar in tarindex.c */
	if (sb->blocks && !check_is_tarindex(c) &&
	    (sb->blocks >> 52 || blocks_bytes != c->img->size) &&
	    !imgfs_check_has_verity(c->img))
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "superblock says %llu blocks (%llu bytes) but the image has %llu bytes",
			     (unsigned long long)sb->blocks,
			     (unsigned long long)blocks_bytes,
			     (unsigned long long)c->img->size);
	if (sb->fixed_nsec >= 1000000000u)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID, "fixed_nsec %u >= 10^9",
			     sb->fixed_nsec);
	if (!img_read(c->img, raw, sizeof(raw), IMGFS_SUPER_OFFSET,
		      "superblock", 0, &e))
		super_block_decode(raw, &d);
	if (d.reserved_set)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID, "reserved bytes are not zero");
	if (sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_DEVICE_TABLE) {
		uint64_t devt = (uint64_t)sb->devt_slotoff * IMGFS_DEVICE_SLOT_SIZE;

		check_area_addr(c, "device table",
				devt + (uint64_t)sb->extra_devices *
					       IMGFS_DEVICE_SLOT_SIZE);
		if (sb->extra_devices && !check_is_tarindex(c))
			check_report(c, IMGFS_CHECK_WARNING,
				     IMGFS_CHECK_SUPERBLOCK, IMGFS_CHECK_NO_NID,
				     "%u extra devices: their data is not verified",
				     sb->extra_devices);
	}
	if (sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_METABOX)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "metabox images are not verified");
	check_compr_cfgs(c, &pos);
	check_add_range(c, IMGFS_SUPER_OFFSET, pos - IMGFS_SUPER_OFFSET,
			IMGFS_CHECK_NO_NID, CHECK_RANGE_META);
	check_prefix_table(c);
	check_packed_inode(c);
}

/* ---- inode-level checks */

static void check_inode_fields(struct check_ctx *c,
			       const struct imgfs_inode *inode)
{
	uint32_t type = inode->mode & 0170000;
	bool special = type != 0100000 && type != 0040000 && type != 0120000;
	bool is48 = c->sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_48BIT;
	uint64_t nid = inode->nid;

	if ((inode->nlink_1 || inode->dot_omitted) && !is48)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE, nid,
			     "i_format bit 4 (NLINK_1/DOT_OMITTED) needs Linux 6.15+");
	if (inode->version == IMGFS_INODE_EXTENDED && inode->raw_nb && !is48)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE, nid,
			     "extended inode has i_nb 0x%x (startblk_hi) without the 48BIT feature",
			     inode->raw_nb);
	if (inode->mtime_nsec >= 1000000000u)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE, nid,
			     "mtime nanoseconds %u >= 10^9", inode->mtime_nsec);
	if (inode->layout == IMGFS_LAYOUT_CHUNK_BASED &&
	    !(c->sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_CHUNKED_FILE))
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE, nid,
			     "chunk-based inode but the CHUNKED_FILE feature is not set");
	if (inode->layout == IMGFS_LAYOUT_CHUNK_BASED && type != 0100000)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE, nid,
			     "chunk-based layout on a non-regular file");
	if (inode->layout == IMGFS_LAYOUT_FLAT_INLINE && inode->size &&
	    !(inode->size & (c->img->blksz - 1)))
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE, nid,
			     "FLAT_INLINE with a block-aligned size %llu",
			     (unsigned long long)inode->size);
	if (special) {
		if (inode->size)
			check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE,
				     nid, "special file with size %llu",
				     (unsigned long long)inode->size);
		if (inode->layout != IMGFS_LAYOUT_FLAT_PLAIN &&
		    inode->layout != IMGFS_LAYOUT_FLAT_INLINE)
			check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE,
				     nid, "special file with data layout %u",
				     inode->layout);
		if ((type == 0010000 || type == 0140000) && inode->raw_u)
			check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE,
				     nid, "FIFO/socket with non-zero i_u 0x%x",
				     inode->raw_u);
	}
	if (type == 0120000 && (!inode->size || inode->size > IMGFS_SYMLINK_MAX))
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE, nid,
			     "symlink target length %llu not in 1..%u",
			     (unsigned long long)inode->size, IMGFS_SYMLINK_MAX);
	if (type == 0040000 && !inode->size)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, nid,
			     "directory of size 0 (no \"..\" entry)");
	if (type == 0040000 && inode->nlink < 1)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE, nid,
			     "directory with link count 0");
}

static void check_inode(struct check_ctx *c, const struct imgfs_inode *inode,
			struct check_node *n)
{
	uint32_t type = inode->mode & 0170000;

	n->checked = true;
	c->res->inodes++;
	if (type == 0040000)
		c->res->dirs++;
	else if (type == 0100000)
		c->res->regular++;
	else if (type == 0120000)
		c->res->symlinks++;
	else
		c->res->specials++;
	check_inode_fields(c, inode);
	check_add_range(c, inode->pos, inode->data_pos - inode->pos,
			inode->nid, CHECK_RANGE_META);
	check_xattrs(c, inode);
	check_data(c, inode, n);
}

/* ---- directory walk (imgfs_walk(), breadth first, going on after errors) */

/* The directory being listed. */
struct dir_scan {
	uint64_t nid;
	uint64_t parent;
	bool dot_omitted;
	unsigned int dots, dotdots;
	bool have_prev;
	size_t prev_len;
	char prev[IMGFS_NAME_MAX + 1];
};

static const char *const type_names[] = { "unknown", "regular file",
					  "directory", "character device",
					  "block device", "FIFO", "socket",
					  "symlink" };

static void check_order(struct check_ctx *c, struct dir_scan *s,
			const struct imgfs_dirent_info *de)
{
	size_t min = de->name_len < s->prev_len ? de->name_len : s->prev_len;
	int cmp;

	if (s->have_prev) {
		cmp = memcmp(de->name, s->prev, min);
		if (!cmp)
			cmp = de->name_len < s->prev_len ? -1 :
			      de->name_len > s->prev_len;
		if (!cmp)
			check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR,
				     s->nid, "duplicate entry \"%s\"",
				     de->name);
		else if (cmp < 0)
			check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR,
				     s->nid,
				     "entry \"%s\" (block %llu) is not sorted after \"%s\"",
				     de->name, (unsigned long long)de->block,
				     s->prev);
	}
	memcpy(s->prev, de->name, de->name_len + 1);
	s->prev_len = de->name_len;
	s->have_prev = true;
}

static int check_dot_entry(struct check_ctx *c, struct dir_scan *s,
			   const struct imgfs_dirent_info *de, bool dotdot)
{
	uint64_t want = dotdot ? s->parent : s->nid;

	if (dotdot)
		s->dotdots++;
	else
		s->dots++;
	if (de->nid != want)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, s->nid,
			     "\"%s\" points to nid %llu instead of %llu",
			     de->name, (unsigned long long)de->nid,
			     (unsigned long long)want);
	if (de->file_type != IMGFS_FT_DIR)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, s->nid,
			     "\"%s\" has file type %u instead of 2 (directory)",
			     de->name, de->file_type);
	if (!dotdot && s->dot_omitted)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, s->nid,
			     "\".\" present in a directory flagged DOT_OMITTED");
	return 0;
}

/* Now, or queued behind data still being read (order.c). */
static int call_entry(struct check_ctx *c, struct imgfs_check_entry *e,
		      struct check_node *n)
{
	if (check_queue_busy(c))
		return check_queue_entry(c, e, n);
	return check_call_entry(c, e, n);
}

/* The first path of an inode: the root (@w NULL), or met by the walk. */
static int emit_entry(struct check_ctx *c, const struct imgfs_walk_entry *w,
		      const struct imgfs_inode *inode, struct check_node *n)
{
	struct imgfs_check_entry e = {
		.path = w ? w->path : "/",
		.inode = inode,
		.parent_nid = w ? w->parent_nid : n->nid,
		.serial = w ? w->serial : 0,
		.parent_serial = w ? w->parent_serial : 0,
		.link_parent_serial = IMGFS_WALK_NO_SERIAL,
	};

	if (!c->opts.entry)
		return 0;
	return call_entry(c, &e, n);
}

/* A second or later path to a non-directory inode (hard link). */
static int emit_link(struct check_ctx *c, const struct imgfs_walk_entry *w,
		     struct check_node *n)
{
	struct imgfs_check_entry e = {
		.path = w->path,
		.inode = w->inode,
		.link_to = check_node_path_buf(c, n->nid, &c->lpath),
		.parent_nid = w->parent_nid,
		.serial = IMGFS_WALK_NO_SERIAL,
		.parent_serial = w->parent_serial,
		.link_parent_serial = n->parent_serial,
		.link_name = n->name,
	};

	return call_entry(c, &e, n);
}

/* First (or later) reference to a non-directory inode. */
static int visit_file(struct check_ctx *c, const struct imgfs_walk_entry *w,
		      struct check_node *n)
{
	n->refs++;
	if (n->refs == 1) {
		check_inode(c, w->inode, n);
		return emit_entry(c, w, w->inode, n);
	}
	c->res->hardlinks++;
	return c->opts.entry ? emit_link(c, w, n) : 0;
}

/* The walk lists a directory the first time it is met, and only then. */
static int visit_dir(struct check_ctx *c, const struct imgfs_walk_entry *w,
		     struct check_node *n)
{
	struct check_node *parent = check_node_find(c, w->parent_nid);

	if (parent)
		parent->subdirs++;
	n->refs++;
	if (n->refs > 1) {
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR,
			     w->parent_nid,
			     "entry \"%s\" reaches directory nid %llu a second time (hard-linked directory or cycle)",
			     w->dirent->name, (unsigned long long)n->nid);
		return 0;
	}
	check_inode(c, w->inode, n);
	return emit_entry(c, w, w->inode, n);
}

/* The record of the entry's inode, created at its first path. */
static struct check_node *entry_node(struct check_ctx *c,
				     const struct imgfs_walk_entry *w,
				     bool *is_new)
{
	const struct imgfs_dirent_info *de = w->dirent;
	struct check_node *n = check_node_get(c, de->nid, is_new);

	if (!n || !*is_new)
		return n;
	n->parent = w->parent_nid;
	n->parent_serial = w->parent_serial;
	n->name = strdup(de->name);
	return n->name ? n : NULL;
}

static int walk_entry(void *arg, const struct imgfs_walk_entry *w)
{
	struct check_ctx *c = arg;
	struct dir_scan *s = c->scan;
	const struct imgfs_dirent_info *de = w->dirent;
	struct check_node *n;
	bool is_new;

	if (c->stop)
		return c->stop; /* an entry delivered late stopped the walk */
	check_order(c, s, de);
	if (de->file_type >= IMGFS_FT_MAX)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, s->nid,
			     "entry \"%s\" has invalid file type %u",
			     de->name, de->file_type);
	if (!strcmp(de->name, "."))
		return check_dot_entry(c, s, de, false);
	if (!strcmp(de->name, ".."))
		return check_dot_entry(c, s, de, true);
	n = entry_node(c, w, &is_new);
	if (!n)
		return error_set(c->err, -ENOMEM, "out of memory");
	if (n->bad || !w->inode) {
		n->refs++;
		if (!n->bad)
			check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE,
				     de->nid, "%s", w->error->msg);
		n->bad = true;
		return 0;
	}
	if (is_new) {
		n->mode = w->inode->mode;
		n->nlink = w->inode->nlink;
	}
	if (de->file_type < IMGFS_FT_MAX &&
	    de->file_type != imgfs_mode_to_ftype(w->inode->mode))
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, s->nid,
			     "entry \"%s\": file type %u (%s) but the inode is a %s",
			     de->name, de->file_type,
			     type_names[de->file_type],
			     type_names[imgfs_mode_to_ftype(w->inode->mode)]);
	if (!imgfs_inode_is_dir(w->inode))
		return visit_file(c, w, n);
	return visit_dir(c, w, n);
}

static int walk_bad_block(void *arg, const char *path,
			  const struct imgfs_inode *dir, uint64_t block,
			  unsigned int entry, const char *why)
{
	struct check_ctx *c = arg;

	(void)path;
	check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, dir->nid,
		     "directory block %llu (entry %u): %s",
		     (unsigned long long)block, entry, why);
	return 0;
}

/* A block of @dir could not be read: report, go on. */
static int walk_dir_error(void *arg, const char *path,
			  const struct imgfs_inode *dir,
			  const struct imgfs_error *e)
{
	(void)path;
	check_report(arg, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, dir->nid, "%s",
		     e->msg);
	return 0;
}

static int walk_dir_begin(void *arg, const char *path,
			  const struct imgfs_inode *dir)
{
	struct check_ctx *c = arg;
	struct dir_scan *s = c->scan;
	struct check_node *n = check_node_find(c, dir->nid);

	(void)path;
	memset(s, 0, sizeof(*s));
	s->nid = dir->nid;
	s->parent = n && n->name ? n->parent : dir->nid;
	s->dot_omitted = dir->dot_omitted;
	return 0;
}

static int walk_dir_end(void *arg, const char *path,
			const struct imgfs_inode *dir, uint64_t entries)
{
	struct check_ctx *c = arg;
	struct dir_scan *s = c->scan;

	(void)path;
	(void)entries;
	if (!s->dot_omitted && s->dots != 1)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, dir->nid,
			     "%u \".\" entries (expected 1)", s->dots);
	if (s->dotdots != 1)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, dir->nid,
			     "%u \"..\" entries (expected 1)", s->dotdots);
	return 0;
}

static int walk(struct check_ctx *c)
{
	struct imgfs_walk_options o = {
		.struct_size = sizeof(o),
		.flags = IMGFS_WALK_BREADTH_FIRST | IMGFS_WALK_DOTS |
			 IMGFS_WALK_CONTINUE,
		.dir_begin = walk_dir_begin,
		.entry = walk_entry,
		.dir_end = walk_dir_end,
		.arg = c,
		.bad_block = walk_bad_block,
		.dir_error = walk_dir_error,
	};
	struct imgfs_error e = { 0 };
	struct imgfs_inode root;
	struct check_node *n;
	int ret;

	n = check_node_insert(c, c->sb->root_nid);
	if (!n)
		return error_set(c->err, -ENOMEM, "out of memory");
	n->parent = c->sb->root_nid;
	n->refs = 1;
	if (imgfs_inode_read_root(c->img, &root, &e)) {
		n->bad = true;
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE,
			     c->sb->root_nid, "root inode: %s", e.msg);
		return 0;
	}
	n->mode = root.mode;
	n->nlink = root.nlink;
	check_inode(c, &root, n);
	ret = emit_entry(c, NULL, &root, n);
	c->scan = calloc(1, sizeof(*c->scan));
	if (!ret && !c->scan)
		ret = error_set(c->err, -ENOMEM, "out of memory");
	if (!ret) {
		c->walking = true;
		ret = imgfs_walk(c->img, root.nid, "/", &o, c->err);
		check_queue_flush(c, true);
		c->walking = false;
		if (!ret && c->stop < 0)
			ret = c->stop;
	}
	free(c->scan);
	c->scan = NULL;
	return ret < 0 ? ret : 0;
}

static void check_links(struct check_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nodes.count; i++) {
		struct check_node *n = check_node_at(c, i);
		bool dir = (n->mode & 0170000) == 0040000;
		uint64_t want = dir ? 2ull + n->subdirs : n->refs;

		if (n->bad || !n->checked || n->nlink == want)
			continue;
		if (dir && n->nlink == 1)
			check_report(c, IMGFS_CHECK_NOTE, IMGFS_CHECK_INODE,
				     n->nid,
				     "directory link count 1 (unknown) instead of %llu",
				     (unsigned long long)want);
		else
			check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE,
				     n->nid, "link count %u, but %llu %s",
				     n->nlink, (unsigned long long)want,
				     dir ? "expected (2 + subdirectories)" :
					   "directory entries found");
	}
}

/* Threads reading file data: 0 asks for one per online CPU. */
static unsigned int check_threads(const struct imgfs_check_options *o)
{
	long n = o->threads;

	if (!n)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > IMGFS_CHECK_THREADS_MAX ? IMGFS_CHECK_THREADS_MAX :
					     (unsigned int)n;
}

int imgfs_check_image(struct imgfs_image *img,
		      const struct imgfs_check_options *opts,
		      struct imgfs_check_result *res, struct imgfs_error *err)
{
	struct check_ctx *c;
	int ret;

	memset(res, 0, sizeof(*res));
	res->struct_size = sizeof(*res);
	c = calloc(1, sizeof(*c));
	if (!c)
		return error_set(err, -ENOMEM, "out of memory");
	c->img = img;
	c->sb = imgfs_image_sb(img);
	c->res = res;
	c->err = err;
	imgfs_check_options_init(&c->opts);
	if (opts) {
		ret = SIZED_IN(&c->opts, opts, sizeof(c->opts),
			       "check options", err);
		if (ret)
			goto out;
	}
	c->threads = check_threads(&c->opts);
	/* no file can hold more plain bytes than the image */
	c->bufsz = img->size < CHECK_BUFSZ ? (size_t)img->size + 1 :
					     CHECK_BUFSZ;
	c->buf = malloc(c->bufsz);
	if (!c->buf) {
		ret = error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	res->image_bytes = img->size;
	check_superblock(c);
	check_tarindex_init(c);
	check_prefetch_packed(c);
	ret = walk(c);
	if (ret)
		goto out;
	check_tarindex_finish(c);
	if (c->fatal) {
		ret = c->fatal;
		goto out;
	}
	check_links(c);
	check_ranges(c);
	if (c->sb->inos != res->inodes + c->hidden_inodes && !res->stopped)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "superblock inode count %llu, %llu inodes reachable",
			     (unsigned long long)c->sb->inos,
			     (unsigned long long)(res->inodes +
						  c->hidden_inodes));
out:
	check_queue_free(c);
	check_prefetch_free(c);
	workpool_destroy(c->pool);
	check_nodes_free(c);
	free(c->rpath.s);
	free(c->lpath.s);
	check_tarindex_free(c);
	free(c->ranges);
	free(c->buf);
	free(c->readmap);
	free(c);
	return ret;
}

int imgfs_check_path(const char *path, const struct imgfs_check_options *opts,
		     struct imgfs_check_result *res, struct imgfs_error *err)
{
	struct imgfs_error e = { 0 };
	struct imgfs_image *img;
	int ret;

	memset(res, 0, sizeof(*res));
	res->struct_size = sizeof(*res);
	ret = imgfs_image_open(path, IMGFS_OPEN_IGNORE_CHECKSUM |
				     IMGFS_OPEN_IGNORE_FEATURES, &img, &e);
	if (ret == -EINVAL || ret == -IMGFS_EFSCORRUPTED ||
	    ret == -EOPNOTSUPP || ret == -EBADMSG) {
		struct imgfs_check_problem p = {
			.severity = IMGFS_CHECK_ERROR,
			.area = IMGFS_CHECK_SUPERBLOCK,
			.nid = IMGFS_CHECK_NO_NID,
			.msg = e.msg,
		};

		res->errors = 1;
		if (opts && opts->report)
			opts->report(opts->report_arg, &p);
		return 0;
	}
	if (ret)
		return error_set(err, ret, "%s", e.msg);
	ret = imgfs_check_image(img, opts, res, err);
	imgfs_image_close(img);
	return ret;
}
