// SPDX-License-Identifier: MIT
/*
 * The entry calls (imgfs/writer.h): entries described by the caller
 * become dentries and inodes, and a regular file's data goes to data.c
 * as it is appended. Nothing here knows where entries come from:
 * archive.c feeds tar and directory entries through these same calls.
 *
 * Path rule: leading "/" and "./" are dropped, empty and "." components
 * are ignored, and ".." removes the previous component but never climbs
 * above the image root. A path ending in "/", "." or ".." designates a
 * directory, so only a directory entry may take that form. Later entries
 * for the same path replace earlier ones, except that a directory entry
 * only updates an existing directory.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "source/path.h"
#include "source/tar.h"
#include "util/sized.h"
#include "writer/internal.h"
#include "util/error.h"

#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"
#define WH_META ".wh..wh."
#define SYMLINK_MAX 4095
#define S_TYPE 0170000u
#define S_REG 0100000u
#define S_DIR 0040000u

struct imgfs_pending_link {
	struct imgfs_pending_link *next;
	struct imgfs_dentry *dentry; /* placeholder in the tree */
	char *target;
	char *path;
};

static struct imgfs_node *implied_dir(struct imgfs_writer *w)
{
	struct imgfs_node *inode = tree_node_new(&w->tree);

	if (!inode)
		return NULL;
	/* never world-writable: the top layer holding a dir decides its mode */
	inode->mode = 0040755;
	inode->mtime = w->build_time;
	return inode;
}

/*
 * Walk to the parent directory of the last component of @cp, creating
 * missing directories when @create. Returns the parent or NULL (with
 * *ret set: -ENOENT when missing and !create, or another error).
 */
static struct imgfs_dentry *walk_parent(struct imgfs_writer *w,
					const struct imgfs_path_comps *cp,
					bool create, const char *path,
					int *ret, struct imgfs_error *err)
{
	struct imgfs_dentry *dir = w->tree.root;

	for (size_t i = 0; i + 1 < cp->n; i++) {
		const char *name = cp->text + cp->off[i];
		struct imgfs_dentry *d;
		struct imgfs_node *inode;
		bool opaque;

		d = tree_lookup(&w->tree, dir, name, cp->len[i]);
		opaque = d && d->whiteout && create;
		if (opaque) {
			/* ".wh.d" then "d/b": d is new, hiding the lower d */
			tree_kill(&w->tree, d);
			d = NULL;
		}
		if (d && (!d->inode || !node_is_dir(d->inode))) {
			*ret = error_set(
				err, -ENOTDIR,
				"%s: parent \"%.*s\" is not a directory", path,
				(int)cp->len[i], name);
			return NULL;
		}
		if (!d && !create) {
			*ret = -ENOENT;
			return NULL;
		}
		if (!d) {
			inode = implied_dir(w);
			d = inode ? tree_add(&w->tree, dir, name, cp->len[i],
					     inode)
				  : NULL;
			if (!d) {
				*ret = error_set(err, -ENOMEM, "out of memory");
				return NULL;
			}
			d->implied = true;
			d->opaque = opaque;
			inode->dir = d;
		}
		dir = d;
	}
	return dir;
}

/*
 * Is @cp a whiteout below a path this layer already made a
 * non-directory? umoci, replacing a directory by a file, writes the file
 * and then a whiteout for each name the directory held ("a", then
 * "a/.wh.old"); the file hides all of those already, so such a whiteout
 * changes nothing and is dropped rather than refused.
 */
static bool whiteout_under_non_dir(struct imgfs_writer *w,
				   const struct imgfs_path_comps *cp)
{
	const char *last = cp->text + cp->off[cp->n - 1];
	size_t plen = strlen(WH_PREFIX);
	struct imgfs_dentry *dir = w->tree.root, *d;

	if (w->opts.whiteouts != IMGFS_WHITEOUT_OVERLAY ||
	    cp->len[cp->n - 1] < plen || memcmp(last, WH_PREFIX, plen))
		return false;
	for (size_t i = 0; i + 1 < cp->n; i++) {
		d = tree_lookup(&w->tree, dir, cp->text + cp->off[i],
				cp->len[i]);
		if (!d)
			return false;
		if (!d->inode || !node_is_dir(d->inode))
			return true;
		dir = d;
	}
	return false;
}

static int map_id(int64_t id, bool all_root, int64_t force, int64_t offset,
		  uint32_t *out)
{
	if (all_root)
		id = 0;
	if (force >= 0)
		id = force;
	id += offset;
	if (id < 0 || id > (int64_t)UINT32_MAX)
		return -ERANGE;
	*out = (uint32_t)id;
	return 0;
}

static int set_owner_time(struct imgfs_writer *w, struct imgfs_node *inode,
			  const struct imgfs_entry *e, struct imgfs_error *err)
{
	const struct imgfs_mkfs_options *o = &w->opts;

	if (map_id(e->uid, o->all_root, o->force_uid, o->uid_offset,
		   &inode->uid) ||
	    map_id(e->gid, o->all_root, o->force_gid, o->gid_offset,
		   &inode->gid))
		return error_set(
			err, -ERANGE,
			"%s: uid %lld / gid %lld out of range after mapping",
			e->path, (long long)e->uid, (long long)e->gid);
	if (e->have_mtime && e->mtime_nsec >= 1000000000u)
		return error_set(err, -EINVAL,
				 "%s: mtime nanoseconds %u out of range",
				 e->path, e->mtime_nsec);
	inode->mtime = e->have_mtime ? e->mtime : w->build_time;
	inode->mtime_nsec = e->have_mtime ? e->mtime_nsec : 0;
	if (o->mtime_policy == IMGFS_MTIME_BUILD_TIME ||
	    (o->mtime_policy == IMGFS_MTIME_CLAMP &&
	     inode->mtime >= w->build_time)) {
		inode->mtime = w->build_time;
		inode->mtime_nsec = 0;
	}
	return 0;
}

static int set_xattrs(struct imgfs_writer *w, struct imgfs_node *inode,
		      const struct imgfs_entry *e, struct imgfs_error *err)
{
	int ret;

	for (size_t i = 0; i < e->nr_xattrs; i++) {
		const struct imgfs_xattr_pair *x = &e->xattrs[i];

		if (!x->name || (x->size && !x->value))
			return error_set(
				err, -EINVAL,
				"%s: xattr %zu has no name or no value",
				e->path, i);
		ret = xattr_set(&w->xattrs, inode, x->name, x->value, x->size,
				e->path, err);
		if (ret)
			return ret;
	}
	return xattr_check_inode(inode, w->opts.shared_xattr_min, e->path, err);
}

static int check_type(const struct imgfs_entry *e, struct imgfs_error *err)
{
	switch (e->mode & S_TYPE) {
	case 0100000:
	case 0040000:
	case 0120000:
	case 0020000:
	case 0060000:
	case 0010000:
	case 0140000:
		return 0;
	}
	return error_set(err, -EOPNOTSUPP,
			 "%s: unsupported entry type (mode %o)", e->path,
			 (unsigned int)e->mode);
}

static int fill_special(struct imgfs_node *inode, const struct imgfs_entry *e,
			struct imgfs_error *err)
{
	size_t len;

	switch (inode->mode & S_TYPE) {
	case 0120000:
		len = e->symlink ? strlen(e->symlink) : 0;
		if (!len || len > SYMLINK_MAX)
			return error_set(
				err, -EINVAL,
				"%s: symlink target length %zu is outside 1..%d",
				e->path, len, SYMLINK_MAX);
		inode->symlink = strdup(e->symlink);
		if (!inode->symlink)
			return error_set(err, -ENOMEM, "out of memory");
		inode->size = len;
		return 0;
	case 0020000:
	case 0060000:
		if (e->rdev_major > 0xFFF || e->rdev_minor > 0xFFFFF)
			return error_set(
				err, -ERANGE,
				"%s: device %llu:%llu cannot be encoded",
				e->path, (unsigned long long)e->rdev_major,
				(unsigned long long)e->rdev_minor);
		inode->rdev = imgfs_encode_dev((unsigned int)e->rdev_major,
					       (unsigned int)e->rdev_minor);
		return 0;
	}
	return 0;
}

static uint32_t inline_room(struct imgfs_writer *w, struct imgfs_node *inode)
{
	uint32_t used = IMGFS_INODE_EXTENDED_SIZE;

	if (!w->opts.inline_data)
		return 0;
	for (uint32_t i = 0; i < inode->xattrs.count; i++)
		used += 4 + imgfs_xattr_entry_size(inode->xattrs.items[i]->name_len,
						    inode->xattrs.items[i]->value_len);
	if (inode->xattrs.count)
		used += IMGFS_XATTR_IBODY_HEADER_SIZE;
	return used < w->bs ? w->bs - used : 0;
}

static int add_pending_link(struct imgfs_writer *w, struct imgfs_dentry *d,
			    const char *target, const char *path,
			    struct imgfs_error *err)
{
	struct imgfs_pending_link *pl = calloc(1, sizeof(*pl));

	if (!pl)
		return error_set(err, -ENOMEM, "out of memory");
	pl->dentry = d;
	pl->target = strdup(target);
	pl->path = strdup(path);
	if (!pl->target || !pl->path) {
		free(pl->target);
		free(pl->path);
		free(pl);
		return error_set(err, -ENOMEM, "out of memory");
	}
	pl->next = w->pending;
	w->pending = pl;
	w->nr_pending++;
	return 0;
}

/* Resolve @target to a live non-directory dentry; NULL if absent. */
static struct imgfs_dentry *find_path(struct imgfs_writer *w,
				      const char *target, int *ret,
				      struct imgfs_error *err)
{
	struct imgfs_path_comps cp = { 0 };
	struct imgfs_dentry *dir, *d = NULL;

	*ret = path_comps_parse(&cp, target, err);
	if (*ret) {
		path_comps_free(&cp);
		return NULL;
	}
	if (!cp.n) {
		d = w->tree.root;
	} else {
		dir = walk_parent(w, &cp, false, target, ret, err);
		if (*ret == -ENOENT)
			*ret = 0;
		if (dir)
			d = tree_lookup(&w->tree, dir,
					cp.text + cp.off[cp.n - 1],
					cp.len[cp.n - 1]);
	}
	path_comps_free(&cp);
	return d;
}

static int link_to(struct imgfs_dentry *d, struct imgfs_dentry *target,
		   const char *path, struct imgfs_error *err)
{
	if (node_is_dir(target->inode))
		return error_set(
			err, -EPERM,
			"%s: hard link to a directory cannot be represented",
			path);
	d->inode = target->inode;
	return 0;
}

static int handle_hardlink(struct imgfs_writer *w, struct imgfs_dentry *d,
			   const char *target, const char *path,
			   struct imgfs_error *err)
{
	struct imgfs_dentry *t;
	int ret;

	t = find_path(w, target, &ret, err);
	if (ret)
		return ret;
	/* placeholder inode until the target arrives */
	d->inode = NULL;
	if (t && !t->inode)
		return add_pending_link(w, d, target, path, err);
	if (t)
		return link_to(d, t, path, err);
	return add_pending_link(w, d, target, path, err);
}

int writer_resolve_links(struct imgfs_writer *w, struct imgfs_error *err)
{
	bool progress = true;

	/* a link may point at another pending link: iterate to a fixpoint */
	while (w->pending && progress) {
		struct imgfs_pending_link **pp = &w->pending;

		progress = false;
		while (*pp) {
			struct imgfs_pending_link *pl = *pp;
			struct imgfs_dentry *t = NULL;
			int ret = 0;

			if (!pl->dentry->dead)
				t = find_path(w, pl->target, &ret, err);
			if (ret)
				return ret;
			if (!pl->dentry->dead && (!t || !t->inode)) {
				pp = &pl->next;
				continue;
			}
			if (!pl->dentry->dead) {
				ret = link_to(pl->dentry, t, pl->path, err);
				if (ret)
					return ret;
			}
			*pp = pl->next;
			free(pl->target);
			free(pl->path);
			free(pl);
			w->nr_pending--;
			progress = true;
		}
	}
	if (w->pending)
		return error_set(
			err, -ENOENT,
			"%s: hard link target \"%s\" does not exist in the archive",
			w->pending->path, w->pending->target);
	return 0;
}

void writer_free_links(struct imgfs_writer *w)
{
	while (w->pending) {
		struct imgfs_pending_link *next = w->pending->next;

		free(w->pending->target);
		free(w->pending->path);
		free(w->pending);
		w->pending = next;
	}
	w->nr_pending = 0;
}


struct entry_ctx {
	struct imgfs_writer *w;
	const struct imgfs_entry *e;
	struct imgfs_dentry *dir;
	const char *name;
	size_t name_len;
	struct imgfs_node *file; /* a regular file's inode, for its data */
	bool drop_data; /* a whiteout: its data goes nowhere */
};

/* Apply a whiteout entry; returns 1 when the entry was consumed. */

/* Apply a whiteout entry; returns 1 when the entry was consumed. */
static int handle_whiteout(struct entry_ctx *c, struct imgfs_error *err)
{
	struct imgfs_writer *w = c->w;
	const char *path = c->e->path;
	struct imgfs_node *inode;
	struct imgfs_dentry *d;
	size_t plen = strlen(WH_PREFIX);
	int ret;

	if (w->opts.whiteouts != IMGFS_WHITEOUT_OVERLAY ||
	    c->name_len < plen || memcmp(c->name, WH_PREFIX, plen))
		return 0;
	if (path_ends_in_dir_form(path))
		return error_set(
			err, -EINVAL,
			"%s: whiteout path ends in \"/\", \".\" or \"..\"",
			path);
	c->drop_data = true;
	if (c->name_len == strlen(WH_OPAQUE) &&
	    !memcmp(c->name, WH_OPAQUE, c->name_len)) {
		c->dir->opaque = true;
		if (c->dir == w->tree.root && w->opts.warn)
			w->opts.warn("an opaque marker (.wh..wh..opq) at the layer's root: the root gets trusted.overlay.opaque, which overlayfs ignores on a layer's root, so a stack of layer images still shows the lower layers' files (docs/oci.md)",
				     w->opts.warn_arg);
		return 1;
	}
	if (c->name_len >= strlen(WH_META) &&
	    !memcmp(c->name, WH_META, strlen(WH_META)))
		return error_set(
			err, -EINVAL,
			"%s: unknown whiteout meta-entry (use --keep-whiteouts to store it verbatim)",
			path);
	if (c->name_len == plen)
		return error_set(err, -EINVAL, "%s: whiteout without a name",
				 path);
	if (path_is_dot_name(c->name + plen, c->name_len - plen))
		return error_set(
			err, -EINVAL,
			"%s: whiteout for \"%.*s\", which is not a file name",
			path, (int)(c->name_len - plen), c->name + plen);
	c->name += plen;
	c->name_len -= plen;
	d = tree_lookup(&w->tree, c->dir, c->name, c->name_len);
	if (d)
		tree_kill(&w->tree, d);
	inode = tree_node_new(&w->tree);
	d = inode ? tree_add(&w->tree, c->dir, c->name, c->name_len, inode)
		  : NULL;
	if (!d)
		return error_set(err, -ENOMEM, "out of memory");
	d->whiteout = true;
	inode->mode = 0020000;
	c->dir->has_whiteouts = true;
	ret = set_owner_time(w, inode, c->e, err);
	return ret ? ret : 1;
}

/* Update an existing directory from a later entry for the same path. */
static int update_dir(struct entry_ctx *c, struct imgfs_dentry *d,
		      struct imgfs_error *err)
{
	struct imgfs_node *inode = d->inode;
	int ret;

	inode->mode = c->e->mode;
	ret = set_owner_time(c->w, inode, c->e, err);
	if (ret)
		return ret;
	xattr_clear(inode);
	d->implied = false;
	return set_xattrs(c->w, inode, c->e, err);
}

static int add_hardlink(struct entry_ctx *c, struct imgfs_error *err)
{
	struct imgfs_dentry *d;

	if (c->e->size)
		return error_set(
			err, -EOPNOTSUPP,
			"%s: hard link entry carrying data is not supported",
			c->e->path);
	d = tree_add(&c->w->tree, c->dir, c->name, c->name_len, NULL);
	if (!d)
		return error_set(err, -ENOMEM, "out of memory");
	return handle_hardlink(c->w, d, c->e->hardlink, c->e->path, err);
}

static int handle_entry(struct entry_ctx *c, struct imgfs_error *err)
{
	struct imgfs_writer *w = c->w;
	const struct imgfs_entry *e = c->e;
	bool is_dir = (e->mode & S_TYPE) == S_DIR;
	struct imgfs_node *inode;
	struct imgfs_dentry *d;
	bool opaque = false;
	int ret;

	ret = handle_whiteout(c, err);
	if (ret)
		return ret < 0 ? ret : 0;
	d = tree_lookup(&w->tree, c->dir, c->name, c->name_len);
	if (d && d->inode && node_is_dir(d->inode) && is_dir && !e->hardlink)
		return update_dir(c, d, err);
	if (d) {
		/* ".wh.d" then "d/": a new d hiding the lower one */
		opaque = d->whiteout && is_dir && !e->hardlink;
		tree_kill(&w->tree, d);
	}
	if (e->hardlink)
		return add_hardlink(c, err);
	ret = check_type(e, err);
	if (ret)
		return ret;
	inode = tree_node_new(&w->tree);
	if (!inode)
		return error_set(err, -ENOMEM, "out of memory");
	inode->mode = e->mode;
	d = tree_add(&w->tree, c->dir, c->name, c->name_len, inode);
	if (!d)
		return error_set(err, -ENOMEM, "out of memory");
	if (is_dir)
		inode->dir = d;
	d->opaque = opaque;
	ret = set_owner_time(w, inode, e, err);
	if (!ret)
		ret = set_xattrs(w, inode, e, err);
	if (!ret)
		ret = fill_special(inode, e, err);
	if (ret || (inode->mode & S_TYPE) != S_REG)
		return ret;
	inode->size = e->size;
	c->file = inode;
	return 0;
}

/* The entry names the root itself ("./", "/"): update it. */
static int handle_root(struct entry_ctx *c, struct imgfs_error *err)
{
	if ((c->e->mode & S_TYPE) != S_DIR)
		return error_set(
			err, -EINVAL,
			"%s: entry for the image root is not a directory",
			c->e->path);
	return update_dir(c, c->w->tree.root, err);
}

/* Put entry @c->e in the tree; a regular file's inode is left in c->file. */
static int consume(struct entry_ctx *c, struct imgfs_error *err)
{
	const struct imgfs_entry *e = c->e;
	struct imgfs_path_comps cp = { 0 };
	int ret = 0;

	ret = path_comps_parse(&cp, e->path, err);
	if (ret)
		goto out;
	if (!cp.n) {
		ret = handle_root(c, err);
		goto out;
	}
	if (path_ends_in_dir_form(e->path) &&
	    ((e->mode & S_TYPE) != S_DIR || e->hardlink)) {
		ret = error_set(
			err, -EINVAL,
			"%s: path ends in \"/\", \".\" or \"..\" but the entry is not a directory",
			e->path);
		goto out;
	}
	if (whiteout_under_non_dir(c->w, &cp)) {
		c->drop_data = true;
		goto out;
	}
	c->dir = walk_parent(c->w, &cp, true, e->path, &ret, err);
	if (!c->dir)
		goto out;
	c->name = cp.text + cp.off[cp.n - 1];
	c->name_len = cp.len[cp.n - 1];
	ret = handle_entry(c, err);
out:
	path_comps_free(&cp);
	return ret;
}

/*
 * Every 64 entries, and every 4 MiB of file data (a layer of a few large
 * files would otherwise stay silent).
 */
static void report_progress(struct imgfs_writer *w)
{
	struct imgfs_progress p = { 0 };

	if (!w->opts.progress || (w->entries < w->next_progress &&
				  w->data_bytes < w->next_progress_bytes))
		return;
	w->next_progress = w->entries + 64;
	w->next_progress_bytes = w->data_bytes + (4u << 20);
	p.entries = w->entries;
	p.bytes_in = w->data_bytes;
	if (w->progress_tar)
		p.source_bytes =
			tar_input_bytes(w->progress_tar, &p.source_size);
	w->opts.progress(&p, w->opts.progress_arg);
}

/* Drop the open file, if any (after a failure, or when destroying). */
void writer_close_file(struct imgfs_writer *w)
{
	wdata_abort(w->file);
	w->file = NULL;
	free(w->file_path);
	w->file_path = NULL;
	w->file_open = false;
}

bool writer_file_keeps_data(const struct imgfs_writer *w)
{
	return w->file_open && w->file;
}

/* Every entry call starts here: is the writer in a state to take it? */
static int check_state(struct imgfs_writer *w, bool want_open,
		       struct imgfs_error *err)
{
	if (w->failed)
		return error_set(err, -EINVAL, "writer already failed");
	if (want_open && !w->file_open)
		return error_set(err, -EINVAL, "no file is open for data");
	if (!want_open && w->file_open)
		return error_set(err, -EINVAL,
				 "%s: the file's data is not ended yet",
				 w->file_path);
	return 0;
}

static int open_file(struct imgfs_writer *w, const struct imgfs_entry *e,
		     struct imgfs_error *err)
{
	struct entry_ctx c = { .w = w, .e = e };
	int ret;

	if (!e->path)
		return error_set(err, -EINVAL, "entry %llu: no path name",
				 (unsigned long long)w->entries + 1);
	w->entries++;
	ret = consume(&c, err);
	if (ret)
		return ret;
	w->file_path = strdup(e->path);
	if (!w->file_path)
		return error_set(err, -ENOMEM, "out of memory");
	w->file_open = true;
	w->file_pos = 0;
	/* only regular files and dropped whiteouts take data */
	w->file_size = c.file || c.drop_data ? e->size : 0;
	if (!c.file)
		return 0;
	return wdata_begin(w, c.file, e->sparse, e->nr_sparse,
			   inline_room(w, c.file), e->path, &w->file, err);
}

/* The caller's entry by the struct_size rule (util/sized.h). */
static int entry_in(struct imgfs_entry *full, const struct imgfs_entry *e,
		    struct imgfs_error *err)
{
	memset(full, 0, sizeof(*full));
	if (!e)
		return error_set(err, -EINVAL, "no entry");
	return SIZED_IN(full, e, sizeof(*full), "entry", err);
}

int imgfs_writer_begin_file(struct imgfs_writer *w, const struct imgfs_entry *e,
			    struct imgfs_error *err)
{
	struct imgfs_entry full;
	int ret = check_state(w, false, err);

	if (!ret)
		ret = entry_in(&full, e, err);
	if (!ret)
		ret = open_file(w, &full, err);
	if (ret)
		w->failed = true;
	return ret;
}

/* How many of the next @len bytes still belong to the open file? */
static int check_room(struct imgfs_writer *w, uint64_t len,
		      struct imgfs_error *err)
{
	int ret = check_state(w, true, err);

	if (ret)
		return ret;
	if (len > w->file_size - w->file_pos)
		return error_set(
			err, -EINVAL,
			"%s: more data than the %llu bytes of its size",
			w->file_path, (unsigned long long)w->file_size);
	return 0;
}

int imgfs_writer_append(struct imgfs_writer *w, const void *buf, size_t len,
			struct imgfs_error *err)
{
	int ret = check_room(w, len, err);

	if (!ret && w->file && len) {
		w->data_bytes += len;
		ret = wdata_put(w, w->file, buf, len, err);
		if (!ret)
			report_progress(w);
	}
	if (ret)
		w->failed = true;
	else
		w->file_pos += len;
	return ret;
}

int imgfs_writer_skip(struct imgfs_writer *w, uint64_t len,
		      struct imgfs_error *err)
{
	int ret = check_room(w, len, err);

	if (!ret && w->file && len)
		ret = wdata_put(w, w->file, NULL, len, err);
	if (ret)
		w->failed = true;
	else
		w->file_pos += len;
	return ret;
}

int imgfs_writer_end_file(struct imgfs_writer *w, struct imgfs_error *err)
{
	int ret = check_state(w, true, err);

	if (!ret && w->file && w->file_pos != w->file_size)
		ret = error_set(err, -EINVAL,
				"%s: data ended after %llu of its %llu bytes",
				w->file_path, (unsigned long long)w->file_pos,
				(unsigned long long)w->file_size);
	if (!ret && w->file) {
		ret = wdata_end(w, w->file, err);
		w->file = NULL;
	}
	if (ret) {
		w->failed = true;
		return ret;
	}
	writer_close_file(w);
	report_progress(w);
	return 0;
}

int imgfs_writer_add_entry(struct imgfs_writer *w, const struct imgfs_entry *e,
			   struct imgfs_error *err)
{
	int ret = imgfs_writer_begin_file(w, e, err);

	return ret ? ret : imgfs_writer_end_file(w, err);
}

int writer_add_node(struct imgfs_writer *w, const struct imgfs_entry *e,
		    struct imgfs_node **file, struct imgfs_error *err)
{
	struct entry_ctx c = { .w = w, .e = e };
	int ret = check_state(w, false, err);

	*file = NULL;
	if (!ret && !e->path)
		ret = error_set(err, -EINVAL, "entry %llu: no path name",
				(unsigned long long)w->entries + 1);
	if (!ret) {
		w->entries++;
		ret = consume(&c, err);
	}
	if (!ret && !c.file)
		ret = error_set(err, -EINVAL, "%s: not a regular file",
				e->path);
	if (ret)
		w->failed = true;
	else
		*file = c.file;
	return ret;
}
