// SPDX-License-Identifier: MIT
/*
 * Entry intake: turn libarchive entries into dentries and inodes.
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
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "imgfs/format.h"
#include "imgfs/source.h"
#include "format/acl.h"
#include "writer/internal.h"

#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"
#define WH_META ".wh..wh."
#define SYMLINK_MAX 4095

struct imgfs_pending_link {
	struct imgfs_pending_link *next;
	struct imgfs_dentry *dentry; /* placeholder in the tree */
	char *target;
	char *path;
};

/* A sanitised path: offsets of its components inside a private copy. */
struct clean_path {
	char *buf;
	uint32_t *off;
	uint16_t *len;
	size_t n;
};

static void clean_path_free(struct clean_path *cp)
{
	free(cp->buf);
	free(cp->off);
	free(cp->len);
}

static int clean_path_parse(const char *path, struct clean_path *cp,
			    struct imgfs_error *err)
{
	size_t plen = strlen(path), i = 0;

	memset(cp, 0, sizeof(*cp));
	cp->buf = strdup(path);
	cp->off = malloc((plen / 2 + 1) * sizeof(*cp->off));
	cp->len = malloc((plen / 2 + 1) * sizeof(*cp->len));
	if (!cp->buf || !cp->off || !cp->len) {
		clean_path_free(cp);
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	}
	while (i < plen) {
		size_t start, n;

		while (i < plen && path[i] == '/')
			i++;
		start = i;
		while (i < plen && path[i] != '/')
			i++;
		n = i - start;
		if (!n || (n == 1 && path[start] == '.'))
			continue;
		if (n == 2 && path[start] == '.' && path[start + 1] == '.') {
			if (cp->n)
				cp->n--;
			continue;
		}
		if (n > IMGFS_NAME_MAX) {
			clean_path_free(cp);
			return imgfs_error_set(err, -ENAMETOOLONG,
					       "%s: path component of %zu bytes exceeds the 255-byte limit",
					       path, n);
		}
		cp->off[cp->n] = (uint32_t)start;
		cp->len[cp->n] = (uint16_t)n;
		cp->n++;
	}
	return 0;
}

static struct imgfs_node *implied_dir(struct imgfs_writer *w)
{
	struct imgfs_node *inode = imgfs_node_new(&w->tree);

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
					const struct clean_path *cp,
					bool create, const char *path,
					int *ret, struct imgfs_error *err)
{
	struct imgfs_dentry *dir = w->tree.root;

	for (size_t i = 0; i + 1 < cp->n; i++) {
		const char *name = cp->buf + cp->off[i];
		struct imgfs_dentry *d;
		struct imgfs_node *inode;

		d = imgfs_tree_lookup(&w->tree, dir, name, cp->len[i]);
		if (d && (!d->inode || !imgfs_node_is_dir(d->inode))) {
			*ret = imgfs_error_set(err, -ENOTDIR,
					       "%s: parent \"%.*s\" is not a directory",
					       path, (int)cp->len[i], name);
			return NULL;
		}
		if (!d && !create) {
			*ret = -ENOENT;
			return NULL;
		}
		if (!d) {
			inode = implied_dir(w);
			d = inode ? imgfs_tree_add(&w->tree, dir, name,
						   cp->len[i], inode) :
				    NULL;
			if (!d) {
				*ret = imgfs_error_set(err, -ENOMEM,
						       "out of memory");
				return NULL;
			}
			d->implied = true;
			inode->dir = d;
		}
		dir = d;
	}
	return dir;
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

static void writer_warn(struct imgfs_writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Hand a warning to the caller's callback, if there is one. */
static void writer_warn(struct imgfs_writer *w, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int n;

	if (!w->opts.warn)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(msg = malloc((size_t)n + 1)))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, (size_t)n + 1, fmt, ap);
	va_end(ap);
	w->opts.warn(msg, w->opts.warn_arg);
	free(msg);
}

/* One ustar header block of the probe archive below. */
static void probe_header(char *h, char type, size_t size)
{
	unsigned int sum = 0;

	memset(h, 0, 512);
	h[0] = 'p';
	memcpy(h + 100, "0000644", 7);
	snprintf(h + 124, 12, "%011zo", size);
	h[156] = type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum);
}

/*
 * libarchive (3.6 to at least 3.8) reads the pax time "-1.5" as -1 s plus
 * 0.5 s: integer part truncated toward zero, fraction added as if it were
 * positive. Whether the library in use does so is learnt once per writer
 * from a two-header pax archive holding exactly that time.
 */
static bool pax_time_truncated(struct imgfs_writer *w)
{
	static const char rec[] = "14 mtime=-1.5\n";
	char tar[5 * 512];
	struct archive *a;
	struct archive_entry *e;

	if (w->pax_time_truncated)
		return w->pax_time_truncated > 0;
	w->pax_time_truncated = -1;
	probe_header(tar, 'x', sizeof(rec) - 1);
	memset(tar + 512, 0, 4 * 512);
	memcpy(tar + 512, rec, sizeof(rec) - 1);
	probe_header(tar + 1024, '0', 0);
	a = archive_read_new();
	if (!a)
		return false;
	archive_read_support_format_tar(a);
	if (archive_read_open_memory(a, tar, sizeof(tar)) == ARCHIVE_OK &&
	    archive_read_next_header(a, &e) == ARCHIVE_OK &&
	    archive_entry_mtime(e) == -1 &&
	    archive_entry_mtime_nsec(e) == 500000000)
		w->pax_time_truncated = 1;
	archive_read_free(a);
	return w->pax_time_truncated > 0;
}

/*
 * The entry's mtime as seconds and nanoseconds counted from the earlier
 * whole second (-1.5 s is -2 s + 500000000 ns), as stat() shows it.
 */
static void entry_mtime(struct imgfs_writer *w, struct archive *a,
			struct archive_entry *e, const char *path, int64_t *sec,
			uint32_t *nsec)
{
	int64_t s = archive_entry_mtime(e);
	long ns = archive_entry_mtime_nsec(e);

	if (ns < 0 || ns >= 1000000000L) {
		s += ns / 1000000000L;
		ns %= 1000000000L;
		if (ns < 0) {
			s--;
			ns += 1000000000L;
		}
	}
	/* only tar carries fractional times as text (pax) */
	if (s <= 0 && s > INT64_MIN && ns > 0 && a &&
	    (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) ==
		    ARCHIVE_FORMAT_TAR &&
	    pax_time_truncated(w)) {
		if (s < 0) {
			s--;
			ns = 1000000000L - ns;
		} else {
			/* "-0.5" arrived as 0 s + 0.5 s: its sign is lost */
			writer_warn(w, "%s: mtime 0.%09ld s may have been -0.%09ld s in the archive (libarchive reads pax times between -1 and 0 s without their sign)",
				    path, ns, ns);
		}
	}
	*sec = s;
	*nsec = (uint32_t)ns;
}

static int set_owner_time(struct imgfs_writer *w, struct imgfs_node *inode,
			  struct archive *a, struct archive_entry *e,
			  const char *path, struct imgfs_error *err)
{
	const struct imgfs_mkfs_options *o = &w->opts;

	if (map_id(archive_entry_uid(e), o->all_root, o->force_uid,
		   o->uid_offset, &inode->uid) ||
	    map_id(archive_entry_gid(e), o->all_root, o->force_gid,
		   o->gid_offset, &inode->gid))
		return imgfs_error_set(err, -ERANGE,
				       "%s: uid %lld / gid %lld out of range after mapping",
				       path, (long long)archive_entry_uid(e),
				       (long long)archive_entry_gid(e));
	if (archive_entry_mtime_is_set(e)) {
		entry_mtime(w, a, e, path, &inode->mtime, &inode->mtime_nsec);
	} else {
		inode->mtime = w->build_time;
		inode->mtime_nsec = 0;
	}
	return 0;
}

static int set_xattrs(struct imgfs_writer *w, struct imgfs_node *inode,
		      struct archive_entry *e, const char *path,
		      struct imgfs_error *err)
{
	static const int acl_types[] = { ARCHIVE_ENTRY_ACL_TYPE_ACCESS,
					 ARCHIVE_ENTRY_ACL_TYPE_DEFAULT };
	static const char *const acl_names[] = { "system.posix_acl_access",
						 "system.posix_acl_default" };
	const char *name;
	const void *value;
	size_t size;
	int ret, mask;

	/* libarchive keeps the owning group's bits in the mode; the kernel
	 * shows the ACL mask there */
	mask = imgfs_acl_mask_perm(e);
	if (mask >= 0)
		inode->mode = (inode->mode & ~070u) | ((unsigned int)mask << 3);
	archive_entry_xattr_reset(e);
	while (archive_entry_xattr_next(e, &name, &value, &size) ==
	       ARCHIVE_OK) {
		ret = imgfs_xattr_set(&w->xattrs, inode, name, value, size,
				      path, err);
		if (ret)
			return ret;
	}
	for (int i = 0; i < 2; i++) {
		uint8_t *buf = NULL;
		long len = imgfs_acl_encode(e, acl_types[i], &buf, path, err);

		if (len < 0)
			return (int)len;
		if (!len)
			continue;
		ret = imgfs_xattr_set(&w->xattrs, inode, acl_names[i], buf,
				      (size_t)len, path, err);
		free(buf);
		if (ret)
			return ret;
	}
	return imgfs_xattr_check_inode(inode, w->opts.shared_xattr_min, path,
				       err);
}

/* File flags (immutable, nodump, ...) cannot be stored: refuse, or drop
 * them when asked to. Only flags libarchive can name count, so internal
 * attributes of the source filesystem (ext4's extents flag) do not. */
static int check_file_flags(struct imgfs_writer *w, struct archive_entry *e,
			    const char *path, struct imgfs_error *err)
{
	const char *text = archive_entry_fflags_text(e);

	if (!text || !*text || w->opts.ignore_file_flags)
		return 0;
	return imgfs_error_set(err, -EOPNOTSUPP,
			       "%s: file flags (%s) cannot be stored in EROFS (--ignore-file-flags drops them)",
			       path, text);
}

static int check_type(struct archive_entry *e, const char *path,
		      struct imgfs_error *err)
{
	switch (archive_entry_filetype(e)) {
	case AE_IFREG:
	case AE_IFDIR:
	case AE_IFLNK:
	case AE_IFCHR:
	case AE_IFBLK:
	case AE_IFIFO:
	case AE_IFSOCK:
		return 0;
	}
	return imgfs_error_set(err, -EOPNOTSUPP,
			       "%s: unsupported entry type (mode %o)", path,
			       (unsigned int)archive_entry_mode(e));
}

static int fill_special(struct imgfs_node *inode, struct archive_entry *e,
			const char *path, struct imgfs_error *err)
{
	unsigned long major, minor;
	const char *target;
	size_t len;

	switch (inode->mode & 0170000) {
	case 0120000:
		target = archive_entry_symlink(e);
		len = target ? strlen(target) : 0;
		if (!len || len > SYMLINK_MAX)
			return imgfs_error_set(err, -EINVAL,
					       "%s: symlink target length %zu is outside 1..%d",
					       path, len, SYMLINK_MAX);
		inode->symlink = strdup(target);
		if (!inode->symlink)
			return imgfs_error_set(err, -ENOMEM, "out of memory");
		inode->size = len;
		return 0;
	case 0020000:
	case 0060000:
		major = archive_entry_rdevmajor(e);
		minor = archive_entry_rdevminor(e);
		if (major > 0xFFF || minor > 0xFFFFF)
			return imgfs_error_set(err, -ERANGE,
					       "%s: device %lu:%lu cannot be encoded",
					       path, major, minor);
		inode->rdev = imgfs_encode_dev((unsigned int)major,
					       (unsigned int)minor);
		return 0;
	}
	return 0;
}

/* Largest inline tail that could follow this inode in one block. */
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
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	pl->dentry = d;
	pl->target = strdup(target);
	pl->path = strdup(path);
	if (!pl->target || !pl->path) {
		free(pl->target);
		free(pl->path);
		free(pl);
		return imgfs_error_set(err, -ENOMEM, "out of memory");
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
	struct clean_path cp;
	struct imgfs_dentry *dir, *d = NULL;

	*ret = clean_path_parse(target, &cp, err);
	if (*ret)
		return NULL;
	if (!cp.n) {
		d = w->tree.root;
	} else {
		dir = walk_parent(w, &cp, false, target, ret, err);
		if (*ret == -ENOENT)
			*ret = 0;
		if (dir)
			d = imgfs_tree_lookup(&w->tree, dir,
					      cp.buf + cp.off[cp.n - 1],
					      cp.len[cp.n - 1]);
	}
	clean_path_free(&cp);
	return d;
}

static int link_to(struct imgfs_dentry *d, struct imgfs_dentry *target,
		   const char *path, struct imgfs_error *err)
{
	if (imgfs_node_is_dir(target->inode))
		return imgfs_error_set(err, -EPERM,
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

int imgfs_writer_resolve_links(struct imgfs_writer *w, struct imgfs_error *err)
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
		return imgfs_error_set(err, -ENOENT,
				       "%s: hard link target \"%s\" does not exist in the archive",
				       w->pending->path, w->pending->target);
	return 0;
}

void imgfs_writer_free_links(struct imgfs_writer *w)
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
	struct archive *a;
	struct archive_entry *e;
	const char *path;
	struct imgfs_dentry *dir;
	const char *name;
	size_t name_len;
};

/* "." or "..": names that would make a directory entry point elsewhere. */
static bool is_dot_name(const char *name, size_t len)
{
	return (len == 1 && name[0] == '.') ||
	       (len == 2 && name[0] == '.' && name[1] == '.');
}

/*
 * Does @path, as the archive spells it, end in "/", "." or ".." (or is it
 * empty)? Such a path designates a directory through the path rules
 * ("a/." is "a", "a/b/.." is "a"), never a file of that name.
 */
static bool ends_in_dir_form(const char *path)
{
	const char *last = strrchr(path, '/');

	last = last ? last + 1 : path;
	return is_dot_name(last, strlen(last)) || !*last;
}

/* Apply a whiteout entry; returns 1 when the entry was consumed. */
static int handle_whiteout(struct entry_ctx *c, struct imgfs_error *err)
{
	struct imgfs_writer *w = c->w;
	struct imgfs_node *inode;
	struct imgfs_dentry *d;
	size_t plen = strlen(WH_PREFIX);
	int ret;

	if (w->opts.whiteouts != IMGFS_WHITEOUT_OVERLAY ||
	    c->name_len < plen || memcmp(c->name, WH_PREFIX, plen))
		return 0;
	if (ends_in_dir_form(c->path))
		return imgfs_error_set(err, -EINVAL,
				       "%s: whiteout path ends in \"/\", \".\" or \"..\"",
				       c->path);
	if (c->name_len == strlen(WH_OPAQUE) &&
	    !memcmp(c->name, WH_OPAQUE, c->name_len)) {
		c->dir->opaque = true;
		return 1;
	}
	if (c->name_len >= strlen(WH_META) &&
	    !memcmp(c->name, WH_META, strlen(WH_META)))
		return imgfs_error_set(err, -EINVAL,
				       "%s: unknown whiteout meta-entry (use --keep-whiteouts to store it verbatim)",
				       c->path);
	if (c->name_len == plen)
		return imgfs_error_set(err, -EINVAL,
				       "%s: whiteout without a name", c->path);
	if (is_dot_name(c->name + plen, c->name_len - plen))
		return imgfs_error_set(err, -EINVAL,
				       "%s: whiteout for \"%.*s\", which is not a file name",
				       c->path, (int)(c->name_len - plen),
				       c->name + plen);
	c->name += plen;
	c->name_len -= plen;
	d = imgfs_tree_lookup(&w->tree, c->dir, c->name, c->name_len);
	if (d)
		imgfs_tree_kill(&w->tree, d);
	inode = imgfs_node_new(&w->tree);
	if (!inode || !imgfs_tree_add(&w->tree, c->dir, c->name, c->name_len,
				      inode))
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	inode->mode = 0020000;
	ret = set_owner_time(w, inode, c->a, c->e, c->path, err);
	if (ret)
		return ret;
	c->dir->has_whiteouts = true;
	return 1;
}

/* Update an existing directory from a later entry for the same path. */
static int update_dir(struct entry_ctx *c, struct imgfs_dentry *d,
		      struct imgfs_error *err)
{
	struct imgfs_node *inode = d->inode;
	int ret;

	inode->mode = archive_entry_mode(c->e);
	ret = set_owner_time(c->w, inode, c->a, c->e, c->path, err);
	if (ret)
		return ret;
	imgfs_xattr_clear(inode);
	d->implied = false;
	return set_xattrs(c->w, inode, c->e, c->path, err);
}

static int handle_entry(struct entry_ctx *c, struct imgfs_error *err)
{
	struct imgfs_writer *w = c->w;
	struct imgfs_node *inode;
	struct imgfs_dentry *d;
	const char *hardlink = archive_entry_hardlink(c->e);
	bool is_dir = archive_entry_filetype(c->e) == AE_IFDIR;
	int ret;

	ret = handle_whiteout(c, err);
	if (ret)
		return ret < 0 ? ret : 0;
	d = imgfs_tree_lookup(&w->tree, c->dir, c->name, c->name_len);
	if (d && d->inode && imgfs_node_is_dir(d->inode) && is_dir &&
	    !hardlink)
		return update_dir(c, d, err);
	if (d)
		imgfs_tree_kill(&w->tree, d);
	if (hardlink) {
		if (archive_entry_size_is_set(c->e) && archive_entry_size(c->e))
			return imgfs_error_set(err, -EOPNOTSUPP,
					       "%s: hard link entry carrying data is not supported",
					       c->path);
		d = imgfs_tree_add(&w->tree, c->dir, c->name, c->name_len,
				   NULL);
		if (!d)
			return imgfs_error_set(err, -ENOMEM, "out of memory");
		return handle_hardlink(w, d, hardlink, c->path, err);
	}
	ret = check_type(c->e, c->path, err);
	if (ret)
		return ret;
	inode = imgfs_node_new(&w->tree);
	if (!inode)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	inode->mode = archive_entry_mode(c->e);
	d = imgfs_tree_add(&w->tree, c->dir, c->name, c->name_len, inode);
	if (!d)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	if (is_dir)
		inode->dir = d;
	ret = set_owner_time(w, inode, c->a, c->e, c->path, err);
	if (!ret)
		ret = set_xattrs(w, inode, c->e, c->path, err);
	if (!ret)
		ret = fill_special(inode, c->e, c->path, err);
	if (ret || (inode->mode & 0170000) != 0100000)
		return ret;
	if (archive_entry_size(c->e) < 0)
		return imgfs_error_set(err, -EINVAL, "%s: negative size",
				       c->path);
	inode->size = (uint64_t)archive_entry_size(c->e);
	return imgfs_data_write_file(w, c->a, inode,
				     archive_entry_sparse_count(c->e) > 0 ?
					     c->e : NULL,
				     inline_room(w, inode), c->path, err);
}

/* The archive entry names the root itself ("./", "/"): update it. */
static int handle_root(struct entry_ctx *c, struct imgfs_error *err)
{
	if (archive_entry_filetype(c->e) != AE_IFDIR)
		return imgfs_error_set(err, -EINVAL,
				       "%s: entry for the image root is not a directory",
				       c->path);
	return update_dir(c, c->w->tree.root, err);
}

int imgfs_writer_consume_entry(struct imgfs_writer *w, struct archive *a,
			       struct archive_entry *e, struct imgfs_error *err)
{
	struct entry_ctx c = { .w = w, .a = a, .e = e };
	struct clean_path cp;
	int ret = 0;

	c.path = archive_entry_pathname(e);
	if (!c.path)
		return imgfs_error_set(err, -EINVAL,
				       "entry %llu: path name cannot be decoded",
				       (unsigned long long)w->entries);
	ret = check_file_flags(w, e, c.path, err);
	if (ret)
		return ret;
	ret = clean_path_parse(c.path, &cp, err);
	if (ret)
		return ret;
	if (!cp.n) {
		ret = handle_root(&c, err);
		goto out;
	}
	if (ends_in_dir_form(c.path) &&
	    (archive_entry_filetype(e) != AE_IFDIR ||
	     archive_entry_hardlink(e))) {
		ret = imgfs_error_set(err, -EINVAL,
				      "%s: path ends in \"/\", \".\" or \"..\" but the entry is not a directory",
				      c.path);
		goto out;
	}
	c.dir = walk_parent(w, &cp, true, c.path, &ret, err);
	if (!c.dir)
		goto out;
	c.name = cp.buf + cp.off[cp.n - 1];
	c.name_len = cp.len[cp.n - 1];
	ret = handle_entry(&c, err);
out:
	clean_path_free(&cp);
	return ret;
}

void imgfs_writer_report_progress(struct imgfs_writer *w)
{
	struct imgfs_progress p;

	if (!w->opts.progress || w->entries < w->next_progress)
		return;
	w->next_progress = w->entries + 64;
	p.entries = w->entries;
	p.bytes_in = w->data_bytes;
	w->opts.progress(&p, w->opts.progress_arg);
}

static int feed_entry(struct imgfs_writer *w, struct archive *a,
		      struct archive_entry *e, struct imgfs_error *err)
{
	int ret;

	w->entries++;
	ret = imgfs_writer_consume_entry(w, a, e, err);
	if (!ret)
		imgfs_writer_report_progress(w);
	return ret;
}

int imgfs_writer_read_entries(struct imgfs_writer *w, struct archive *a,
			      struct imgfs_error *err)
{
	struct archive_entry *e;
	const char *msg;
	int r, ret;

	for (;;) {
		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			return 0;
		/* RETRY: a damaged header; WARN: part of the entry could not
		 * be decoded. Neither may be taken as a good entry. */
		if (r != ARCHIVE_OK) {
			msg = archive_error_string(a);
			return imgfs_error_set(err, -EIO,
					       "reading archive after %llu entries: %s",
					       (unsigned long long)w->entries,
					       msg ? msg : "unknown error");
		}
		ret = feed_entry(w, a, e, err);
		if (ret)
			return ret;
	}
}

int imgfs_writer_read_tar(struct imgfs_writer *w, struct imgfs_tar *t,
			  struct imgfs_error *err)
{
	struct imgfs_tar_options o = {
		.allow_missing_end = w->opts.allow_missing_end,
		.warn = w->opts.warn,
		.warn_arg = w->opts.warn_arg,
	};
	struct archive_entry *e;
	int r;

	while ((r = imgfs_tar_next(t, &o, &e, err)) > 0) {
		r = feed_entry(w, imgfs_tar_archive(t), e, err);
		if (r)
			return r;
	}
	return r;
}
