// SPDX-License-Identifier: MIT
/*
 * compare/replay.c - the tar replayed into the expected tree with the
 * rules mkfs.img documents (README "How a layer is converted"), written
 * independently of the writer so that a bug there shows up here:
 * - paths: leading "/" and "./" dropped, empty and "." components ignored,
 *   ".." removes the previous component but never climbs above the root;
 *   a path ending in "/", "." or ".." must be a directory's, and no
 *   whiteout's ("a/.wh.." would whiteout "." and is refused);
 * - a later entry for a path replaces the earlier one (and its subtree),
 *   except that a directory over a directory only updates its metadata;
 * - missing parents are implied directories: 0755, owner 0:0, mtime = the
 *   image build time;
 * - OCI whiteouts (unless IMGFS_COMPARE_F_KEEP_WHITEOUTS): ".wh.NAME"
 *   becomes a char device 0:0 (mode 0, owner and mtime of the entry) named
 *   NAME, and its directory gets trusted.overlay.origin = ""; a whiteout
 *   below a path the archive made a non-directory is ignored;
 *   ".wh..wh..opq" gives its directory trusted.overlay.opaque = "y";
 * - hard links point at the inode the target path holds when the link is
 *   read, or, for forward references, at the end of the archive.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "compare/internal.h"
#include "source/tar.h"
#include "imgfs/format.h"
#include "imgfs/source.h"
#include "util/error.h"

#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"
#define WH_META ".wh..wh."

/* Returns true when the link is settled (resolved or reported). */
static bool try_link(struct imgfs_compare *c, struct exp_dentry *d, bool final)
{
	struct exp_dentry *t = cmp_find_path(c, d->link_target);

	if (!t || !t->inode) {
		if (final)
			cmp_unrepresentable(
				c, d->entry_path,
				"hard link target does not exist in the archive");
		return final;
	}
	if (cmp_is_dir(t)) {
		cmp_unrepresentable(c, d->entry_path,
				    "hard link to a directory");
		d->dead = true;
		return true;
	}
	d->inode = t->inode;
	return true;
}

/*
 * A path whose last element is empty, "." or ".." (as written, before the
 * path rules) can only mean a directory: mkfs.img refuses it for anything
 * else, and for whiteouts.
 */
static bool dir_only_path(const char *path)
{
	size_t n = strlen(path);

	if (!n || path[n - 1] == '/')
		return true;
	if (path[n - 1] != '.')
		return false;
	if (n == 1 || path[n - 2] == '/')
		return true;
	return path[n - 2] == '.' && (n == 2 || path[n - 3] == '/');
}

/* Returns 0 when @name is no whiteout, 1 when handled, or -ENOMEM. */
static int whiteout(struct imgfs_compare *c, struct exp_dentry *dir,
		    const char *name, struct archive_entry *ae,
		    const char *path)
{
	struct exp_inode *in;
	struct exp_dentry *d;

	if ((c->o.flags & IMGFS_COMPARE_F_KEEP_WHITEOUTS) ||
	    strncmp(name, WH_PREFIX, strlen(WH_PREFIX)))
		return 0;
	if (dir_only_path(path)) {
		cmp_unrepresentable(
			c, path,
			"whiteout path ending in \"/\", \".\" or \"..\"");
		return 1;
	}
	if (!strcmp(name, WH_OPAQUE)) {
		dir->opaque = true;
		return 1;
	}
	if (!strncmp(name, WH_META, strlen(WH_META)) ||
	    !name[strlen(WH_PREFIX)]) {
		cmp_unrepresentable(
			c, path,
			"unknown whiteout meta-entry or empty whiteout");
		return 1;
	}
	name += strlen(WH_PREFIX);
	if (!strcmp(name, ".") || !strcmp(name, "..")) {
		cmp_unrepresentable(c, path, "whiteout for \".\" or \"..\"");
		return 1;
	}
	d = cmp_dlookup(c, dir, name, strlen(name));
	if (d)
		d->dead = true;
	in = cmp_inode_new(c);
	if (!in || !(d = cmp_dadd(c, dir, name, strlen(name), in)))
		return -ENOMEM;
	d->whiteout = true;
	in->mode = 0020000;
	cmp_set_owner_time(c, in, ae, path);
	dir->whiteouts = true;
	return 1;
}

static int update_dir(struct imgfs_compare *c, struct exp_dentry *d,
		      struct archive_entry *ae, const char *path)
{
	struct exp_inode *in = d->inode;

	in->mode = cmp_tar_mode(ae);
	cmp_set_owner_time(c, in, ae, path);
	cmp_kv_clear(in);
	return cmp_set_xattrs(c, in, ae, path);
}

static int add_link(struct imgfs_compare *c, struct exp_dentry *dir,
		    const char *name, struct archive_entry *ae,
		    const char *path)
{
	struct exp_dentry *d = cmp_dadd(c, dir, name, strlen(name), NULL);

	if (!d || !(d->link_target = strdup(archive_entry_hardlink(ae))) ||
	    !(d->entry_path = strdup(path)))
		return -ENOMEM;
	if (archive_entry_size_is_set(ae) && archive_entry_size(ae))
		cmp_unrepresentable(c, path, "hard link entry carrying data");
	try_link(c, d, false);
	return 0;
}

/* The entry named @name in @dir, the tar's @path (its last component). */
static int add_named(struct imgfs_compare *c, struct archive *a,
		     struct archive_entry *ae, struct exp_dentry *dir,
		     const char *name, const char *path)
{
	bool dir_entry = archive_entry_filetype(ae) == AE_IFDIR;
	const char *hardlink = archive_entry_hardlink(ae);
	struct exp_dentry *d;
	struct exp_inode *in;
	bool opaque;
	int ret;

	ret = whiteout(c, dir, name, ae, path);
	if (ret)
		return ret;
	d = cmp_dlookup(c, dir, name, strlen(name));
	if (d && cmp_is_dir(d) && dir_entry && !hardlink)
		return update_dir(c, d, ae, path);
	/* a directory where the archive put a whiteout: opaque */
	opaque = d && d->whiteout && dir_entry && !hardlink;
	if (d)
		d->dead = true;
	if (hardlink)
		return add_link(c, dir, name, ae, path);
	in = cmp_inode_new(c);
	if (!in || !(d = cmp_dadd(c, dir, name, strlen(name), in)))
		return -ENOMEM;
	d->opaque = opaque;
	return cmp_fill_inode(c, a, ae, in, path);
}

/*
 * File flags with mkfs.img's rule (lib/source/fflags.c): internal ones
 * never differ; a user's are refused, told once at the end, or ignored,
 * as the options say. A refused entry is still compared.
 */
static void file_flags(struct imgfs_compare *c, struct archive_entry *ae,
		       const char *path)
{
	const char *text = archive_entry_fflags_text(ae);
	char user[256];

	if (!text || !*text ||
	    (c->o.flags & IMGFS_COMPARE_F_IGNORE_FILE_FLAGS) ||
	    c->o.file_flags == IMGFS_FILE_FLAGS_IGNORE ||
	    !fflags_user(text, user, sizeof(user)))
		return;
	if (c->o.file_flags == IMGFS_FILE_FLAGS_ERROR) {
		cmp_diff(c, path, IMGFS_COMPARE_UNREPRESENTABLE,
			 "file flags (%s) cannot be stored", user);
		return;
	}
	fflags_tally_add(&c->fflags, path, user);
}

/*
 * A whiteout below a non-directory of this archive hides nothing more
 * than the non-directory does (umoci writes such whiteouts when a
 * directory became a file): nothing to expect.
 */
static bool whiteout_under_non_dir(struct imgfs_compare *c,
				   const struct cmp_comps *cp)
{
	struct exp_dentry *dir = c->root;
	size_t i;

	if ((c->o.flags & IMGFS_COMPARE_F_KEEP_WHITEOUTS) ||
	    strncmp(cp->v[cp->n - 1], WH_PREFIX, strlen(WH_PREFIX)))
		return false;
	for (i = 0; i + 1 < cp->n; i++) {
		dir = cmp_dlookup(c, dir, cp->v[i], strlen(cp->v[i]));
		if (!dir)
			return false;
		if (!cmp_is_dir(dir))
			return true;
	}
	return false;
}

static int add_entry(struct imgfs_compare *c, struct archive *a,
		     struct archive_entry *ae, const char *path)
{
	bool dir_entry = archive_entry_filetype(ae) == AE_IFDIR;
	struct exp_dentry *dir;
	struct cmp_comps cp;
	const char *name;
	int ret = 0;

	file_flags(c, ae, path);
	if (cmp_split_path(path, &cp)) {
		cmp_comps_free(&cp);
		return -ENOMEM;
	}
	if (!cp.n) {
		cmp_comps_free(&cp);
		if (!dir_entry) {
			cmp_unrepresentable(
				c, path,
				"entry for the root is not a directory");
			return 0;
		}
		return update_dir(c, c->root, ae, path);
	}
	if (dir_only_path(path) && (!dir_entry || archive_entry_hardlink(ae))) {
		cmp_comps_free(&cp);
		cmp_unrepresentable(
			c, path,
			"path ending in \"/\", \".\" or \"..\" on an entry that is not a directory");
		return 0;
	}
	if (whiteout_under_non_dir(c, &cp)) {
		cmp_comps_free(&cp);
		return 0;
	}
	dir = cmp_walk_parent(c, &cp, true, path);
	name = cp.v[cp.n - 1];
	if (!dir)
		ret = c->oom;
	else if (strlen(name) > IMGFS_NAME_MAX) {
		cmp_unrepresentable(c, path, "name longer than 255 bytes");
		ret = c->oom;
	} else
		ret = add_named(c, a, ae, dir, name, path);
	cmp_comps_free(&cp);
	return ret < 0 ? ret : 0;
}

static void resolve_links(struct imgfs_compare *c)
{
	bool progress = true, left = true;
	struct exp_dentry *d;

	while (progress && left) {
		progress = left = false;
		for (d = c->all_dentries; d; d = d->next_all) {
			if (!d->link_target || d->inode || d->dead)
				continue;
			if (try_link(c, d, false))
				progress = true;
			else
				left = true;
		}
	}
	for (d = c->all_dentries; d; d = d->next_all)
		if (d->link_target && !d->inode && !d->dead) {
			try_link(c, d, true);
			d->dead = true;
		}
}

static int overlay_xattrs(struct exp_dentry *d)
{
	int ret = 0;

	if (d->opaque)
		ret = cmp_kv_set(d->inode, "trusted.overlay.opaque", "y", 1);
	if (!ret && d->whiteouts)
		ret = cmp_kv_set(d->inode, "trusted.overlay.origin", "", 0);
	return ret;
}

/* After the last entry: forward links, then the overlayfs xattrs. */
static int finish(struct imgfs_compare *c)
{
	struct exp_dentry *d;
	int ret = 0;

	resolve_links(c);
	for (d = c->all_dentries; d && !ret; d = d->next_all)
		if (!d->dead && cmp_is_dir(d))
			ret = overlay_xattrs(d);
	return ret ? ret : overlay_xattrs(c->root);
}

/*
 * The entry's names as its header blocks spell them, decoded here rather
 * than taken from the reader: 0, 1 when they cannot be, or -ENOMEM.
 */
static int own_names(struct imgfs_compare *c, struct imgfs_tar *t,
		     struct archive_entry *ae)
{
	size_t len;
	const uint8_t *hdr = tar_entry_headers(t, &len);
	char *path, *link;
	int ret = hdr ? cmp_tar_names(hdr, len, &path, &link) : -EINVAL;

	if (ret == -EINVAL)
		cmp_unrepresentable(c, archive_entry_pathname(ae),
				    "its header blocks cannot be read again");
	if (ret)
		return ret == -EINVAL ? 1 : ret;
	archive_entry_copy_pathname(ae, path);
	if (archive_entry_hardlink(ae) || archive_entry_symlink(ae))
		archive_entry_copy_link(ae, link);
	free(path);
	free(link);
	return 0;
}

/*
 * The tar is read through the library's tar reader, as mkfs.img reads it:
 * where it ends, and what it refuses, are the same. The names are not:
 * they are decoded apart (own_names()).
 */
int cmp_replay_tar(struct imgfs_compare *c, const char *tar,
		   struct imgfs_error *err)
{
	struct imgfs_tar *t = imgfs_tar_open(tar, err);
	int ret;

	if (!t)
		return err->code ? err->code : -EIO;
	ret = cmp_replay_opened(c, t, tar, err);
	imgfs_tar_close(t);
	return ret;
}

int cmp_replay_opened(struct imgfs_compare *c, struct imgfs_tar *t,
		      const char *tar, struct imgfs_error *err)
{
	struct imgfs_tar_options to = {
		.allow_missing_end = c->o.flags &
				     IMGFS_COMPARE_F_ALLOW_MISSING_END,
		.require_end = c->o.flags & IMGFS_COMPARE_F_REQUIRE_END,
		.warn = c->o.warn,
		.warn_arg = c->o.warn_arg,
	};
	struct archive_entry *ae;
	int r, ret = 0;

	c->pax_trunc = cmp_pax_sign_lost();
	while ((r = tar_next(t, &to, &ae, err)) > 0) {
		const char *path;

		ret = own_names(c, t, ae);
		if (ret < 0)
			break;
		if (ret) { /* reported */
			ret = 0;
			continue;
		}
		path = archive_entry_pathname(ae);
		if (!path) {
			cmp_unrepresentable(c, "?",
					    "path name cannot be decoded");
			continue;
		}
		ret = add_entry(c, tar_archive(t), ae, path);
		if (ret) {
			error_set(err, ret, "%s: %s", tar,
				  ret == -EIO
					  ? archive_error_string(tar_archive(t))
					  : strerror(-ret));
			break;
		}
	}
	if (r < 0)
		ret = r;
	c->res.archive_entries = imgfs_tar_entries(t);
	if (!ret)
		fflags_tally_warn(&c->fflags,
				  "file flags mkfs.img drops are on", c->o.warn,
				  c->o.warn_arg);
	if (!ret && (finish(c) || c->oom))
		ret = error_set(err, -ENOMEM, "out of memory");
	return ret;
}
