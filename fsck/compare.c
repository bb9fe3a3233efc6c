// SPDX-License-Identifier: MIT
/*
 * compare.c - fsck.img --compare: does the image represent a tar exactly?
 *
 * The tar is replayed into an expected tree with the rules mkfs.img
 * documents (independently of the writer's code, so that a bug there shows
 * up as a difference here):
 * - paths: leading "/" and "./" dropped, empty and "." components ignored,
 *   ".." removes the previous component but never climbs above the root;
 *   a path ending in "/", "." or ".." must be a directory's, and no
 *   whiteout's ("a/.wh.." would whiteout "." and is refused);
 * - a later entry for a path replaces the earlier one (and its subtree),
 *   except that a directory over a directory only updates its metadata;
 * - missing parents are implied directories: 0755, owner 0:0, mtime = the
 *   image build time;
 * - OCI whiteouts (unless --keep-whiteouts): ".wh.NAME" becomes a char
 *   device 0:0 (mode 0, owner and mtime of the entry) named NAME, and its
 *   directory gets trusted.overlay.origin = ""; ".wh..wh..opq" gives its
 *   directory trusted.overlay.opaque = "y";
 * - hard links point at the inode the target path holds when the link is
 *   read, or, for forward references, at the end of the archive;
 * - owners: --all-root, then --force-uid/gid, then the offsets.
 * The image side comes from the checker's walk (paths, inodes, SHA-256).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>

#include "imgfs/format.h"
#include "imgfs/source.h"
#include "imgfs/stats.h"
#include "format/acl.h"
#include "fsck.h"

#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"
#define WH_META ".wh..wh."

struct kv {
	char *name;
	uint8_t *value;
	size_t len;
};

struct exp_inode {
	uint32_t mode, uid, gid;
	int64_t mtime;
	uint32_t nsec;
	uint64_t size;
	unsigned long major, minor;
	char *symlink;
	uint8_t sha256[IMGFS_SHA256_SIZE];
	struct kv *xattrs;
	size_t nr_xattrs;
	bool matched; /* an image nid was bound to it */
	uint64_t nid;
	struct img_entry *first; /* the image entry first bound to it */
	struct exp_inode *next_all;
};

struct exp_dentry {
	char *name;
	struct exp_dentry *parent;
	struct exp_inode *inode; /* NULL: hard link not resolved yet */
	char *link_target;
	char *entry_path;
	bool dead, opaque, whiteouts;
	struct exp_dentry **children;
	size_t nr_children, cap_children;
	struct exp_dentry *hash_next;
	struct exp_dentry *next_all;
};

/*
 * One path of the image, as the checker met it: its name and its parent
 * directory's entry (full paths are built only to print them, so memory
 * does not grow with depth times path length).
 */
struct img_entry {
	char *name; /* "" for the root */
	struct img_entry *parent; /* NULL for the root */
	struct imgfs_inode inode;
	bool have_sha;
	uint8_t sha256[IMGFS_SHA256_SIZE];
	bool seen;
	struct exp_inode *bound; /* expected inode matched to this nid */
	struct img_entry *hash_next;
};

/* Open-addressing table of image entries keyed by their inode's nid. */
struct nid_tab {
	struct img_entry **v;
	size_t nr, cap;
};

struct fsck_compare {
	struct imgfs_image *img;
	struct fsck_compare_opts o;
	struct fsck_out *out;
	int64_t build_time;
	/* libarchive gives "-1.5" as -1 s + 0.5 s (see pax_sign_lost) */
	bool pax_trunc;
	/* expected tree */
	struct exp_dentry *root;
	struct exp_dentry **dbuckets;
	size_t nr_dbuckets, nr_dentries;
	struct exp_dentry *all_dentries;
	struct exp_inode *all_inodes;
	/* image side, hashed by (parent, name) */
	struct img_entry **ibuckets;
	size_t nr_ibuckets, nr_ientries;
	struct img_entry *iroot;
	/* nid -> first image entry met with it, for hard-link grouping */
	struct nid_tab by_nid;
	/* nid -> image entry of each directory, to find entries' parents */
	struct nid_tab dirs;
	/* paths built for messages */
	char *pbuf, *pbuf2;
	size_t pbuf_cap, pbuf2_cap;
	int oom;
};

/* ---- hashing */

static uint64_t fnv(const void *p, size_t len, uint64_t h)
{
	const uint8_t *b = p;

	while (len--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

static size_t dhash(const struct exp_dentry *parent, const char *name,
		    size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uintptr_t)parent;

	return (size_t)fnv(name, len, h);
}

static int dgrow(struct fsck_compare *c)
{
	size_t n = c->nr_dbuckets ? c->nr_dbuckets * 2 : 1024, i;
	struct exp_dentry **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (i = 0; i < c->nr_dbuckets; i++) {
		struct exp_dentry *d = c->dbuckets[i], *next;

		for (; d; d = next) {
			size_t h = dhash(d->parent, d->name, strlen(d->name)) &
				   (n - 1);

			next = d->hash_next;
			d->hash_next = b[h];
			b[h] = d;
		}
	}
	free(c->dbuckets);
	c->dbuckets = b;
	c->nr_dbuckets = n;
	return 0;
}

static struct exp_dentry *dlookup(struct fsck_compare *c,
				  struct exp_dentry *dir, const char *name,
				  size_t len)
{
	struct exp_dentry *d;

	d = c->dbuckets[dhash(dir, name, len) & (c->nr_dbuckets - 1)];
	for (; d; d = d->hash_next)
		if (d->parent == dir && !d->dead && strlen(d->name) == len &&
		    !memcmp(d->name, name, len))
			return d;
	return NULL;
}

static struct exp_dentry *dadd(struct fsck_compare *c, struct exp_dentry *dir,
			       const char *name, size_t len,
			       struct exp_inode *inode)
{
	struct exp_dentry *d;
	size_t h;

	if (c->nr_dentries * 4 >= c->nr_dbuckets * 3 && dgrow(c))
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d || !(d->name = strndup(name, len))) {
		free(d);
		return NULL;
	}
	d->parent = dir;
	d->inode = inode;
	d->next_all = c->all_dentries;
	c->all_dentries = d;
	if (dir->nr_children == dir->cap_children) {
		size_t cap = dir->cap_children ? dir->cap_children * 2 : 8;
		struct exp_dentry **ch = realloc(dir->children,
						 cap * sizeof(*ch));

		if (!ch)
			return NULL;
		dir->children = ch;
		dir->cap_children = cap;
	}
	dir->children[dir->nr_children++] = d;
	h = dhash(dir, name, len) & (c->nr_dbuckets - 1);
	d->hash_next = c->dbuckets[h];
	c->dbuckets[h] = d;
	c->nr_dentries++;
	return d;
}

static struct exp_inode *inew(struct fsck_compare *c)
{
	struct exp_inode *i = calloc(1, sizeof(*i));

	if (!i)
		return NULL;
	i->next_all = c->all_inodes;
	c->all_inodes = i;
	return i;
}

static bool is_dir(const struct exp_dentry *d)
{
	return d->inode && (d->inode->mode & 0170000) == 0040000;
}

/* ---- image side */

static size_t ihash(const struct img_entry *parent, const char *name,
		    size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uintptr_t)parent;

	return (size_t)fnv(name, len, h * 0x100000001b3ull);
}

static struct img_entry *ilookup(struct fsck_compare *c,
				 const struct img_entry *parent,
				 const char *name)
{
	size_t len = strlen(name);
	struct img_entry *e;

	if (!c->nr_ibuckets)
		return NULL;
	for (e = c->ibuckets[ihash(parent, name, len) & (c->nr_ibuckets - 1)];
	     e; e = e->hash_next)
		if (e->parent == parent && !strcmp(e->name, name))
			return e;
	return NULL;
}

static int igrow(struct fsck_compare *c)
{
	size_t n = c->nr_ibuckets ? c->nr_ibuckets * 2 : 1024, i;
	struct img_entry **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (i = 0; i < c->nr_ibuckets; i++) {
		struct img_entry *e = c->ibuckets[i], *next;

		for (; e; e = next) {
			size_t h = ihash(e->parent, e->name, strlen(e->name)) &
				   (n - 1);

			next = e->hash_next;
			e->hash_next = b[h];
			b[h] = e;
		}
	}
	free(c->ibuckets);
	c->ibuckets = b;
	c->nr_ibuckets = n;
	return 0;
}

static size_t nid_slot(uint64_t nid, size_t cap)
{
	return (size_t)((nid * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static int tab_grow(struct nid_tab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024, i, j;
	struct img_entry **v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		if (!t->v[i])
			continue;
		for (j = nid_slot(t->v[i]->inode.nid, cap); v[j];
		     j = (j + 1) & (cap - 1))
			;
		v[j] = t->v[i];
	}
	free(t->v);
	t->v = v;
	t->cap = cap;
	return 0;
}

/* The entry with @nid in @t, or NULL. */
static struct img_entry *tab_find(const struct nid_tab *t, uint64_t nid)
{
	size_t i;

	if (!t->cap)
		return NULL;
	for (i = nid_slot(nid, t->cap); t->v[i]; i = (i + 1) & (t->cap - 1))
		if (t->v[i]->inode.nid == nid)
			return t->v[i];
	return NULL;
}

/* The entry of @ie's nid already in @t, or NULL after adding @ie. */
static struct img_entry *tab_bind(struct nid_tab *t, struct img_entry *ie,
				  int *oom)
{
	struct img_entry *old = tab_find(t, ie->inode.nid);
	size_t i;

	if (old)
		return old;
	if ((t->nr + 1) * 2 > t->cap && tab_grow(t)) {
		*oom = -ENOMEM;
		return NULL;
	}
	for (i = nid_slot(ie->inode.nid, t->cap); t->v[i];
	     i = (i + 1) & (t->cap - 1))
		;
	t->v[i] = ie;
	t->nr++;
	return NULL;
}

/* The path of @e ("/" for the root), in *@buf grown as needed; "?" when
 * out of memory. */
static const char *img_path(struct fsck_compare *c, const struct img_entry *e,
			    char **buf, size_t *cap)
{
	const struct img_entry *p;
	size_t len = 0, pos, l;
	char *b;

	for (p = e; p->parent; p = p->parent)
		len += 1 + strlen(p->name);
	if (len + 2 > *cap) {
		b = realloc(*buf, len + 2);
		if (!b) {
			c->oom = -ENOMEM;
			return "?";
		}
		*buf = b;
		*cap = len + 2;
	}
	if (!len)
		return strcpy(*buf, "/");
	(*buf)[len] = '\0';
	for (p = e, pos = len; p->parent; p = p->parent) {
		l = strlen(p->name);
		pos -= l;
		memcpy(*buf + pos, p->name, l);
		(*buf)[--pos] = '/';
	}
	return *buf;
}

int fsck_compare_entry(void *arg, const struct imgfs_check_entry *ce)
{
	struct fsck_compare *c = arg;
	struct img_entry *e, *parent = NULL;
	const char *name = "";
	size_t h;

	if (strcmp(ce->path, "/")) {
		parent = tab_find(&c->dirs, ce->parent_nid);
		name = strrchr(ce->path, '/') + 1;
		if (!parent) /* the checker hands out parents first */
			return -EUCLEAN;
	}
	if (c->nr_ientries * 4 >= c->nr_ibuckets * 3 && igrow(c))
		return -ENOMEM;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->name = strdup(name))) {
		free(e);
		return -ENOMEM;
	}
	e->parent = parent;
	e->inode = *ce->inode;
	if (ce->sha256) {
		e->have_sha = true;
		memcpy(e->sha256, ce->sha256, sizeof(e->sha256));
	}
	h = ihash(parent, e->name, strlen(e->name)) & (c->nr_ibuckets - 1);
	e->hash_next = c->ibuckets[h];
	c->ibuckets[h] = e;
	c->nr_ientries++;
	if (!parent)
		c->iroot = e;
	if (imgfs_inode_is_dir(ce->inode) && !ce->link_to &&
	    !tab_find(&c->dirs, ce->inode->nid)) {
		tab_bind(&c->dirs, e, &c->oom);
		if (c->oom)
			return c->oom;
	}
	return 0;
}

struct fsck_compare *fsck_compare_new(struct imgfs_image *img,
				      const struct fsck_compare_opts *o,
				      struct fsck_out *out)
{
	struct fsck_compare *c = calloc(1, sizeof(*c));
	const struct imgfs_sb_info *sb = imgfs_image_sb(img);
	struct exp_inode *ri;

	if (!c)
		return NULL;
	c->img = img;
	c->o = *o;
	c->out = out;
	c->build_time = sb->epoch + (int64_t)sb->build_time;
	c->root = calloc(1, sizeof(*c->root));
	ri = inew(c);
	if (!c->root || !ri || dgrow(c) || !(c->root->name = strdup(""))) {
		fsck_compare_free(c);
		return NULL;
	}
	ri->mode = 0040755;
	ri->mtime = c->build_time;
	c->root->inode = ri;
	return c;
}

/* ---- replaying the archive */

struct comps {
	char *buf;
	char **v;
	size_t n;
};

static int split_path(const char *path, struct comps *cp)
{
	char *p, *save = NULL;

	memset(cp, 0, sizeof(*cp));
	cp->buf = strdup(path);
	cp->v = calloc(strlen(path) / 2 + 2, sizeof(*cp->v));
	if (!cp->buf || !cp->v)
		return -ENOMEM;
	for (p = strtok_r(cp->buf, "/", &save); p;
	     p = strtok_r(NULL, "/", &save)) {
		if (!strcmp(p, "."))
			continue;
		if (!strcmp(p, "..")) {
			if (cp->n)
				cp->n--;
			continue;
		}
		cp->v[cp->n++] = p;
	}
	return 0;
}

static void comps_free(struct comps *cp)
{
	free(cp->buf);
	free(cp->v);
}

static void unrepresentable(struct fsck_compare *c, const char *path,
			    const char *why)
{
	fsck_difference(c->out, path, "unrepresentable", "%s", why);
}

static struct exp_dentry *walk_parent(struct fsck_compare *c,
				      const struct comps *cp, bool create,
				      const char *path)
{
	struct exp_dentry *dir = c->root, *d;
	size_t i;

	for (i = 0; i + 1 < cp->n; i++) {
		d = dlookup(c, dir, cp->v[i], strlen(cp->v[i]));
		if (d && !is_dir(d)) {
			if (create)
				unrepresentable(c, path,
						"a parent is not a directory (mkfs.img refuses the archive)");
			return NULL;
		}
		if (!d && !create)
			return NULL;
		if (!d) {
			struct exp_inode *in = inew(c);

			if (!in) {
				c->oom = -ENOMEM;
				return NULL;
			}
			in->mode = 0040755;
			in->mtime = c->build_time;
			d = dadd(c, dir, cp->v[i], strlen(cp->v[i]), in);
			if (!d) {
				c->oom = -ENOMEM;
				return NULL;
			}
		}
		dir = d;
	}
	return dir;
}

static bool map_id(int64_t id, bool all_root, int64_t force, int64_t off,
		   uint32_t *out)
{
	if (all_root)
		id = 0;
	if (force >= 0)
		id = force;
	id += off;
	if (id < 0 || id > (int64_t)UINT32_MAX)
		return false;
	*out = (uint32_t)id;
	return true;
}

/* Write a 512-byte ustar header named "t" into @blk. */
static void ustar_block(char *blk, int typeflag, unsigned int size)
{
	unsigned int sum = 0, i;

	memset(blk, 0, 512);
	snprintf(blk, 100, "t");
	snprintf(blk + 100, 8, "%07o", 0644u);
	snprintf(blk + 108, 8, "%07o", 0u);
	snprintf(blk + 116, 8, "%07o", 0u);
	snprintf(blk + 124, 12, "%011o", size);
	snprintf(blk + 136, 12, "%011o", 0u);
	blk[156] = (char)typeflag;
	memcpy(blk + 257, "ustar", 5);
	blk[263] = '0';
	blk[264] = '0';
	for (i = 0; i < 512; i++)
		sum += (i >= 148 && i < 156) ? ' ' : (unsigned char)blk[i];
	snprintf(blk + 148, 7, "%06o", sum);
	blk[155] = ' ';
}

/*
 * POSIX pax times are decimal numbers: "mtime=-1.5" is 1.5 s before the
 * epoch. libarchive hands such a time out as -1 s and +500000000 ns (the
 * sign applied to the whole seconds only). Ask the library in use, with a
 * pax archive holding exactly that record.
 */
static bool pax_sign_lost(void)
{
	const char rec[] = "14 mtime=-1.5\n";
	struct archive_entry *ae;
	struct archive *a;
	char img[2560] = { 0 };
	bool lost = false;

	ustar_block(img, 'x', sizeof(rec) - 1);
	memcpy(img + 512, rec, sizeof(rec) - 1);
	ustar_block(img + 1024, '0', 0);
	a = archive_read_new();
	if (!a)
		return false;
	archive_read_support_format_tar(a);
	if (archive_read_open_memory(a, img, sizeof(img)) == ARCHIVE_OK &&
	    archive_read_next_header(a, &ae) == ARCHIVE_OK)
		lost = archive_entry_mtime(ae) == -1 &&
		       archive_entry_mtime_nsec(ae) == 500000000;
	archive_read_free(a);
	return lost;
}

/*
 * The mtime stat() must show: whole seconds rounded down, nanoseconds
 * counted up from there (-1.5 s is -2 s + 500000000 ns).
 */
static void tar_mtime(const struct fsck_compare *c, struct archive_entry *ae,
		      int64_t *sec, uint32_t *nsec)
{
	int64_t s = archive_entry_mtime(ae);
	int64_t ns = archive_entry_mtime_nsec(ae);
	const int64_t giga = 1000000000;

	s += ns / giga - (ns % giga < 0);
	ns = (ns % giga + giga) % giga;
	if (c->pax_trunc && s < 0 && ns && s != INT64_MIN) {
		/* -S.F was read as -S + F: it is -(S + 1) + (1 - F) */
		s -= 1;
		ns = giga - ns;
	}
	*sec = s;
	*nsec = (uint32_t)ns;
}

static bool set_owner_time(struct fsck_compare *c, struct exp_inode *in,
			   struct archive_entry *ae, const char *path)
{
	if (!map_id(archive_entry_uid(ae), c->o.all_root, c->o.force_uid,
		    c->o.uid_offset, &in->uid) ||
	    !map_id(archive_entry_gid(ae), c->o.all_root, c->o.force_gid,
		    c->o.gid_offset, &in->gid)) {
		unrepresentable(c, path, "uid/gid out of range after mapping");
		return false;
	}
	if (archive_entry_mtime_is_set(ae)) {
		tar_mtime(c, ae, &in->mtime, &in->nsec);
	} else {
		in->mtime = c->build_time;
		in->nsec = 0;
	}
	return true;
}

static int kv_set(struct exp_inode *in, const char *name, const void *v,
		  size_t len)
{
	struct kv *x = NULL;
	size_t i;

	for (i = 0; i < in->nr_xattrs; i++)
		if (!strcmp(in->xattrs[i].name, name))
			x = &in->xattrs[i];
	if (!x) {
		x = realloc(in->xattrs, (in->nr_xattrs + 1) * sizeof(*x));
		if (!x)
			return -ENOMEM;
		in->xattrs = x;
		x = &in->xattrs[in->nr_xattrs++];
		x->name = strdup(name);
		x->value = NULL;
		if (!x->name)
			return -ENOMEM;
	}
	free(x->value);
	x->value = malloc(len ? len : 1);
	if (!x->value)
		return -ENOMEM;
	memcpy(x->value, v, len);
	x->len = len;
	return 0;
}

static void kv_clear(struct exp_inode *in)
{
	size_t i;

	for (i = 0; i < in->nr_xattrs; i++) {
		free(in->xattrs[i].name);
		free(in->xattrs[i].value);
	}
	free(in->xattrs);
	in->xattrs = NULL;
	in->nr_xattrs = 0;
}

/* POSIX ACL of @type as mkfs.img stores it (the library's own encoder). */
static int add_acl(struct fsck_compare *c, struct exp_inode *in,
		   struct archive_entry *ae, int type, const char *xname,
		   const char *path)
{
	struct imgfs_error err = { 0 };
	uint8_t *buf = NULL;
	long len = imgfs_acl_encode(ae, type, &buf, path, &err);
	int ret;

	if (len == -ENOMEM)
		return -ENOMEM;
	if (len < 0) {
		const char *why = err.msg;
		size_t n = strlen(path);

		/* the library's message starts with the path, as ours does */
		if (!strncmp(why, path, n) && !strncmp(why + n, ": ", 2))
			why += n + 2;
		unrepresentable(c, path, why);
		return 0;
	}
	if (!len)
		return 0;
	ret = kv_set(in, xname, buf, (size_t)len);
	free(buf);
	return ret;
}

static int set_xattrs(struct fsck_compare *c, struct exp_inode *in,
		      struct archive_entry *ae, const char *path)
{
	const char *name;
	const void *value;
	size_t size;
	int ret;

	archive_entry_xattr_reset(ae);
	while (archive_entry_xattr_next(ae, &name, &value, &size) ==
	       ARCHIVE_OK) {
		ret = kv_set(in, name, value, size);
		if (ret)
			return ret;
	}
	if (archive_entry_acl_types(ae) & ARCHIVE_ENTRY_ACL_TYPE_NFS4) {
		unrepresentable(c, path, "NFSv4 ACL");
		return 0;
	}
	ret = add_acl(c, in, ae, ARCHIVE_ENTRY_ACL_TYPE_ACCESS,
		      "system.posix_acl_access", path);
	if (!ret)
		ret = add_acl(c, in, ae, ARCHIVE_ENTRY_ACL_TYPE_DEFAULT,
			      "system.posix_acl_default", path);
	return ret;
}

static int read_content(struct fsck_compare *c, struct archive *a,
			struct exp_inode *in, const char *path)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	const void *buf;
	size_t len;
	int64_t off;
	uint64_t pos = 0;
	unsigned int n = 0;
	int r;
	static const uint8_t zeros[4096];

	if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(md);
		return -ENOMEM;
	}
	/* Sparse entries come as blocks at offsets: hash the gaps as zeros.
	 * mkfs.img refuses blocks out of order, overlapping or past the
	 * size (a sparse map it cannot store as read). */
	while ((r = archive_read_data_block(a, &buf, &len, &off)) ==
	       ARCHIVE_OK) {
		if (off < 0 || (uint64_t)off < pos || len > in->size ||
		    (uint64_t)off > in->size - len) {
			EVP_MD_CTX_free(md);
			unrepresentable(c, path,
					"sparse map out of order, overlapping or beyond the file size");
			return 1;
		}
		while (pos < (uint64_t)off) {
			size_t z = (uint64_t)off - pos < sizeof(zeros) ?
					   (size_t)((uint64_t)off - pos) :
					   sizeof(zeros);

			EVP_DigestUpdate(md, zeros, z);
			pos += z;
		}
		EVP_DigestUpdate(md, buf, len);
		pos += len;
	}
	if (r != ARCHIVE_EOF) {
		EVP_MD_CTX_free(md);
		return imgfs_error_set(NULL, -EIO, "read");
	}
	while (pos < in->size) {
		size_t z = in->size - pos < sizeof(zeros) ?
				   (size_t)(in->size - pos) : sizeof(zeros);

		EVP_DigestUpdate(md, zeros, z);
		pos += z;
	}
	EVP_DigestFinal_ex(md, in->sha256, &n);
	EVP_MD_CTX_free(md);
	return 0;
}

/* The mode mkfs.img stores: with an ACL mask, the group bits are the mask. */
static unsigned int tar_mode(struct archive_entry *ae)
{
	unsigned int mode = archive_entry_mode(ae);
	int mask = imgfs_acl_mask_perm(ae);

	return mask < 0 ? mode : (mode & ~070u) | ((unsigned int)mask << 3);
}

static int fill_inode(struct fsck_compare *c, struct archive *a,
		      struct archive_entry *ae, struct exp_inode *in,
		      const char *path)
{
	const char *target;

	in->mode = tar_mode(ae);
	if (!set_owner_time(c, in, ae, path))
		return 1;
	if (set_xattrs(c, in, ae, path))
		return -ENOMEM;
	switch (in->mode & 0170000) {
	case 0120000:
		target = archive_entry_symlink(ae);
		if (!target || !*target || strlen(target) > IMGFS_SYMLINK_MAX) {
			unrepresentable(c, path, "symlink target length not in 1..4095");
			return 1;
		}
		in->symlink = strdup(target);
		in->size = strlen(target);
		return in->symlink ? 0 : -ENOMEM;
	case 0020000:
	case 0060000:
		in->major = archive_entry_rdevmajor(ae);
		in->minor = archive_entry_rdevminor(ae);
		if (in->major > 0xFFF || in->minor > 0xFFFFF) {
			unrepresentable(c, path, "device number cannot be encoded");
			return 1;
		}
		return 0;
	case 0100000:
		if (archive_entry_size(ae) < 0) {
			unrepresentable(c, path, "negative size");
			return 1;
		}
		in->size = (uint64_t)archive_entry_size(ae);
		return read_content(c, a, in, path);
	case 0040000:
	case 0010000:
	case 0140000:
		return 0;
	}
	unrepresentable(c, path, "unsupported file type");
	return 1;
}

static struct exp_dentry *find_path(struct fsck_compare *c, const char *path)
{
	struct exp_dentry *dir, *d = NULL;
	struct comps cp;

	if (split_path(path, &cp)) {
		comps_free(&cp);
		c->oom = -ENOMEM;
		return NULL;
	}
	if (!cp.n) {
		d = c->root;
	} else {
		dir = walk_parent(c, &cp, false, path);
		if (dir)
			d = dlookup(c, dir, cp.v[cp.n - 1],
				    strlen(cp.v[cp.n - 1]));
	}
	comps_free(&cp);
	return d;
}

/* Returns true when the link is settled (resolved or reported). */
static bool try_link(struct fsck_compare *c, struct exp_dentry *d, bool final)
{
	struct exp_dentry *t = find_path(c, d->link_target);

	if (!t || !t->inode) {
		if (final)
			unrepresentable(c, d->entry_path,
					"hard link target does not exist in the archive");
		return final;
	}
	if (is_dir(t)) {
		unrepresentable(c, d->entry_path, "hard link to a directory");
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

static int whiteout(struct fsck_compare *c, struct exp_dentry *dir,
		    const char *name, struct archive_entry *ae,
		    const char *path)
{
	struct exp_inode *in;
	struct exp_dentry *d;

	if (c->o.keep_whiteouts || strncmp(name, WH_PREFIX, strlen(WH_PREFIX)))
		return 0;
	if (dir_only_path(path)) {
		unrepresentable(c, path, "whiteout path ending in \"/\", \".\" or \"..\"");
		return 1;
	}
	if (!strcmp(name, WH_OPAQUE)) {
		dir->opaque = true;
		return 1;
	}
	if (!strncmp(name, WH_META, strlen(WH_META)) ||
	    !name[strlen(WH_PREFIX)]) {
		unrepresentable(c, path, "unknown whiteout meta-entry or empty whiteout");
		return 1;
	}
	name += strlen(WH_PREFIX);
	if (!strcmp(name, ".") || !strcmp(name, "..")) {
		unrepresentable(c, path, "whiteout for \".\" or \"..\"");
		return 1;
	}
	d = dlookup(c, dir, name, strlen(name));
	if (d)
		d->dead = true;
	in = inew(c);
	if (!in || !dadd(c, dir, name, strlen(name), in))
		return -ENOMEM;
	in->mode = 0020000;
	set_owner_time(c, in, ae, path);
	dir->whiteouts = true;
	return 1;
}

static int update_dir(struct fsck_compare *c, struct exp_dentry *d,
		      struct archive_entry *ae, const char *path)
{
	struct exp_inode *in = d->inode;

	in->mode = tar_mode(ae);
	set_owner_time(c, in, ae, path);
	kv_clear(in);
	return set_xattrs(c, in, ae, path);
}

static int add_entry(struct fsck_compare *c, struct archive *a,
		     struct archive_entry *ae, const char *path)
{
	const char *hardlink = archive_entry_hardlink(ae);
	const char *flags = archive_entry_fflags_text(ae);
	bool dir_entry = archive_entry_filetype(ae) == AE_IFDIR;
	struct exp_dentry *dir, *d;
	struct exp_inode *in;
	struct comps cp;
	const char *name;
	int ret;

	/* as mkfs.img refuses every such entry; the rest is still compared */
	if (flags && *flags && !c->o.ignore_file_flags)
		unrepresentable(c, path, "file flags cannot be stored");
	if (split_path(path, &cp)) {
		comps_free(&cp);
		return -ENOMEM;
	}
	if (!cp.n) {
		comps_free(&cp);
		if (!dir_entry) {
			unrepresentable(c, path, "entry for the root is not a directory");
			return 0;
		}
		return update_dir(c, c->root, ae, path);
	}
	if (dir_only_path(path) && (!dir_entry || hardlink)) {
		comps_free(&cp);
		unrepresentable(c, path, "path ending in \"/\", \".\" or \"..\" on an entry that is not a directory");
		return 0;
	}
	dir = walk_parent(c, &cp, true, path);
	name = cp.v[cp.n - 1];
	ret = c->oom;
	if (!dir || strlen(name) > IMGFS_NAME_MAX) {
		if (dir)
			unrepresentable(c, path, "name longer than 255 bytes");
		goto out;
	}
	ret = whiteout(c, dir, name, ae, path);
	if (ret)
		goto out;
	d = dlookup(c, dir, name, strlen(name));
	if (d && is_dir(d) && dir_entry && !hardlink) {
		ret = update_dir(c, d, ae, path);
		goto out;
	}
	if (d)
		d->dead = true;
	if (hardlink) {
		d = dadd(c, dir, name, strlen(name), NULL);
		if (!d || !(d->link_target = strdup(hardlink)) ||
		    !(d->entry_path = strdup(path))) {
			ret = -ENOMEM;
			goto out;
		}
		if (archive_entry_size_is_set(ae) && archive_entry_size(ae))
			unrepresentable(c, path, "hard link entry carrying data");
		try_link(c, d, false);
		goto out;
	}
	in = inew(c);
	if (!in || !dadd(c, dir, name, strlen(name), in)) {
		ret = -ENOMEM;
		goto out;
	}
	ret = fill_inode(c, a, ae, in, path);
	if (ret > 0)
		ret = 0;
out:
	comps_free(&cp);
	return ret < 0 ? ret : 0;
}

static void resolve_links(struct fsck_compare *c)
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

static int overlay_xattrs(struct fsck_compare *c)
{
	struct exp_dentry *d;
	int ret = 0;

	for (d = c->all_dentries; d && !ret; d = d->next_all) {
		if (d->dead || !is_dir(d))
			continue;
		if (d->opaque)
			ret = kv_set(d->inode, "trusted.overlay.opaque", "y", 1);
		if (!ret && d->whiteouts)
			ret = kv_set(d->inode, "trusted.overlay.origin", "", 0);
	}
	if (!ret && c->root->opaque)
		ret = kv_set(c->root->inode, "trusted.overlay.opaque", "y", 1);
	if (!ret && c->root->whiteouts)
		ret = kv_set(c->root->inode, "trusted.overlay.origin", "", 0);
	return ret;
}

static void compare_warning(const char *msg, void *arg)
{
	struct fsck_compare *c = arg;

	if (!c->out->quiet)
		fprintf(stderr, "fsck.img: warning: %s\n", msg);
}

/* The tar is read through the library's tar reader, as mkfs.img reads it:
 * where it ends, and what it refuses, are the same. */
static int read_archive(struct fsck_compare *c, const char *tar,
			struct imgfs_error *err)
{
	struct imgfs_tar_options to = {
		.allow_missing_end = c->o.allow_missing_end,
		.warn = compare_warning,
		.warn_arg = c,
	};
	struct imgfs_tar *t = imgfs_tar_open(tar, err);
	struct archive_entry *ae;
	int r, ret = 0;

	if (!t)
		return err->code ? err->code : -EIO;
	c->pax_trunc = pax_sign_lost();
	while ((r = imgfs_tar_next(t, &to, &ae, err)) > 0) {
		const char *path = archive_entry_pathname(ae);

		if (!path) {
			unrepresentable(c, "?", "path name cannot be decoded");
			continue;
		}
		ret = add_entry(c, imgfs_tar_archive(t), ae, path);
		if (ret) {
			imgfs_error_set(err, ret, "%s: %s", tar,
					ret == -EIO ?
						archive_error_string(imgfs_tar_archive(t)) :
						strerror(-ret));
			break;
		}
	}
	if (r < 0)
		ret = r;
	imgfs_tar_close(t);
	return ret;
}

/* ---- comparing */

static int kv_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kv *)a)->name, ((const struct kv *)b)->name);
}

struct img_xattrs {
	struct kv *v;
	size_t n;
	bool oom;
};

static int collect_xattr(void *arg, const struct imgfs_xattr_info *x)
{
	struct img_xattrs *ix = arg;
	struct kv *v = realloc(ix->v, (ix->n + 1) * sizeof(*v));

	if (!v) {
		ix->oom = true;
		return -ENOMEM;
	}
	ix->v = v;
	v = &ix->v[ix->n];
	v->name = strdup(x->name);
	v->value = malloc(x->value_size ? x->value_size : 1);
	if (!v->name || !v->value) {
		free(v->name);
		free(v->value);
		ix->oom = true;
		return -ENOMEM;
	}
	memcpy(v->value, x->value, x->value_size);
	v->len = x->value_size;
	ix->n++;
	return 0;
}

static void compare_xattrs(struct fsck_compare *c, const char *path,
			   struct exp_inode *in, const struct imgfs_inode *ii)
{
	struct img_xattrs ix = { 0 };
	struct imgfs_error err = { 0 };
	size_t i = 0, j = 0, k;

	if (imgfs_xattr_iterate(c->img, ii, false, collect_xattr, &ix, &err) < 0) {
		fsck_difference(c->out, path, "xattr", "image xattrs unreadable: %s",
				err.code ? err.msg : "out of memory");
		goto out;
	}
	if (ix.n > 1)
		qsort(ix.v, ix.n, sizeof(*ix.v), kv_cmp);
	if (in->nr_xattrs > 1)
		qsort(in->xattrs, in->nr_xattrs, sizeof(*in->xattrs), kv_cmp);
	while (i < in->nr_xattrs || j < ix.n) {
		int r = i == in->nr_xattrs ? 1 : j == ix.n ? -1 :
			strcmp(in->xattrs[i].name, ix.v[j].name);

		if (r < 0) {
			fsck_difference(c->out, path, "xattr",
					"%s missing from the image",
					in->xattrs[i++].name);
		} else if (r > 0) {
			fsck_difference(c->out, path, "xattr",
					"%s in the image but not in the archive",
					ix.v[j++].name);
		} else {
			if (in->xattrs[i].len != ix.v[j].len ||
			    memcmp(in->xattrs[i].value, ix.v[j].value,
				   ix.v[j].len))
				fsck_difference(c->out, path, "xattr",
						"%s value differs (%zu bytes in the archive, %zu in the image)",
						ix.v[j].name, in->xattrs[i].len,
						ix.v[j].len);
			i++;
			j++;
		}
	}
out:
	for (k = 0; k < ix.n; k++) {
		free(ix.v[k].name);
		free(ix.v[k].value);
	}
	free(ix.v);
}

static void compare_links(struct fsck_compare *c, const char *path,
			  struct exp_inode *in, struct img_entry *ie)
{
	struct img_entry *first;

	if (!in->matched) {
		in->matched = true;
		in->nid = ie->inode.nid;
		in->first = ie;
	} else if (in->nid != ie->inode.nid) {
		fsck_difference(
			c->out, path, "hardlink",
			"should be a hard link to %s, but is a separate inode in the image",
			img_path(c, in->first, &c->pbuf2, &c->pbuf2_cap));
	}
	ie->bound = in;
	first = tab_bind(&c->by_nid, ie, &c->oom);
	if (first && first->bound != in)
		fsck_difference(
			c->out, path, "hardlink",
			"is a hard link to %s in the image, but not in the archive",
			img_path(c, first, &c->pbuf2, &c->pbuf2_cap));
}

static void compare_inode(struct fsck_compare *c, const char *path,
			  struct exp_inode *in, struct img_entry *ie)
{
	const struct imgfs_inode *ii = &ie->inode;
	char target[IMGFS_SYMLINK_MAX + 1];
	struct imgfs_error err = { 0 };

	if ((in->mode & 07777) != (ii->mode & 07777))
		fsck_difference(c->out, path, "mode", "%04o in the archive, %04o in the image",
				in->mode & 07777, ii->mode & 07777);
	if (in->uid != ii->uid || in->gid != ii->gid)
		fsck_difference(c->out, path, "owner",
				"%u:%u in the archive, %u:%u in the image",
				in->uid, in->gid, ii->uid, ii->gid);
	if (in->mtime != ii->mtime || in->nsec != ii->mtime_nsec) {
		char want[IMGFS_TIME_DECIMAL_MAX], got[IMGFS_TIME_DECIMAL_MAX];

		imgfs_time_decimal(in->mtime, in->nsec, want);
		imgfs_time_decimal(ii->mtime, ii->mtime_nsec, got);
		fsck_difference(c->out, path, "mtime",
				"%s in the archive, %s in the image", want,
				got);
	}
	switch (in->mode & 0170000) {
	case 0100000:
		if (in->size != ii->size)
			fsck_difference(c->out, path, "size",
					"%" PRIu64 " bytes in the archive, %" PRIu64 " in the image",
					in->size, ii->size);
		else if (!ie->have_sha)
			fsck_difference(c->out, path, "content",
					"image data could not be read");
		else if (memcmp(in->sha256, ie->sha256, sizeof(in->sha256)))
			fsck_difference(c->out, path, "content",
					"data differs (SHA-256 mismatch)");
		break;
	case 0120000:
		if (imgfs_readlink(c->img, ii, target, sizeof(target), &err) < 0)
			fsck_difference(c->out, path, "symlink",
					"target unreadable: %s", err.msg);
		else if (strcmp(target, in->symlink))
			fsck_difference(c->out, path, "symlink",
					"target \"%s\" in the archive, \"%s\" in the image",
					in->symlink, target);
		break;
	case 0020000:
	case 0060000:
		if (in->major != imgfs_dev_major(ii->rdev) ||
		    in->minor != imgfs_dev_minor(ii->rdev))
			fsck_difference(c->out, path, "rdev",
					"%lu:%lu in the archive, %u:%u in the image",
					in->major, in->minor,
					imgfs_dev_major(ii->rdev),
					imgfs_dev_minor(ii->rdev));
		break;
	}
	compare_xattrs(c, path, in, ii);
	if ((in->mode & 0170000) != 0040000)
		compare_links(c, path, in, ie);
}

static const char *kind(uint32_t mode)
{
	switch (mode & 0170000) {
	case 0040000:
		return "directory";
	case 0100000:
		return "regular file";
	case 0120000:
		return "symlink";
	case 0020000:
		return "character device";
	case 0060000:
		return "block device";
	case 0010000:
		return "FIFO";
	case 0140000:
		return "socket";
	}
	return "unknown";
}

/* Compare expected dentry @d at @path with its image entry @ie (NULL:
 * missing). Returns whether its children are to be compared. */
static bool compare_one(struct fsck_compare *c, struct exp_dentry *d,
			struct img_entry *ie, const char *path)
{
	if (!ie) {
		fsck_difference(c->out, path, "missing",
				"%s in the archive, absent from the image",
				kind(d->inode->mode));
		return false;
	}
	ie->seen = true;
	if ((d->inode->mode & 0170000) != (ie->inode.mode & 0170000)) {
		fsck_difference(c->out, path, "type",
				"%s in the archive, %s in the image",
				kind(d->inode->mode), kind(ie->inode.mode));
		return false;
	}
	compare_inode(c, path, d->inode, ie);
	return is_dir(d);
}

/* A directory being compared: its next child and its path's length. */
struct cmp_frame {
	struct exp_dentry *d;
	struct img_entry *ie;
	size_t next, len;
};

static bool path_put(struct fsck_compare *c, size_t len, const char *name)
{
	size_t nl = strlen(name);
	char *b;

	if (len + nl + 2 > c->pbuf_cap) {
		size_t cap = (len + nl + 2) * 2;

		b = realloc(c->pbuf, cap);
		if (!b) {
			c->oom = -ENOMEM;
			return false;
		}
		c->pbuf = b;
		c->pbuf_cap = cap;
	}
	c->pbuf[len] = '/';
	memcpy(c->pbuf + len + 1, name, nl + 1);
	return true;
}

/*
 * Depth first over the expected tree, with an explicit stack (the depth
 * is not bounded) and one path buffer grown as needed.
 */
static void compare_tree(struct fsck_compare *c)
{
	struct cmp_frame *st, *f;
	size_t n = 1, cap = 64;

	if (!compare_one(c, c->root, c->iroot, "/"))
		return;
	st = malloc(cap * sizeof(*st));
	if (!st) {
		c->oom = -ENOMEM;
		return;
	}
	st[0] = (struct cmp_frame){ c->root, c->iroot, 0, 0 };
	while (n) {
		struct exp_dentry *ch;
		struct img_entry *ie;

		f = &st[n - 1];
		if (f->next == f->d->nr_children) {
			n--;
			continue;
		}
		ch = f->d->children[f->next++];
		if (ch->dead || !ch->inode || !path_put(c, f->len, ch->name))
			continue;
		ie = ilookup(c, f->ie, ch->name);
		if (!compare_one(c, ch, ie, c->pbuf))
			continue;
		if (n == cap) {
			struct cmp_frame *v = realloc(st, 2 * cap * sizeof(*v));

			if (!v) {
				c->oom = -ENOMEM;
				break;
			}
			st = v;
			cap *= 2;
			f = &st[n - 1];
		}
		st[n] = (struct cmp_frame){ ch, ie, 0,
					    f->len + 1 + strlen(ch->name) };
		n++;
	}
	free(st);
}

static void report_extra(struct fsck_compare *c)
{
	size_t i;

	for (i = 0; i < c->nr_ibuckets; i++) {
		struct img_entry *e;

		for (e = c->ibuckets[i]; e; e = e->hash_next)
			if (!e->seen && (!e->parent || e->parent->seen))
				fsck_difference(
					c->out,
					img_path(c, e, &c->pbuf2,
						 &c->pbuf2_cap),
					"extra",
					"%s in the image, absent from the archive",
					kind(e->inode.mode));
	}
}

int fsck_compare_run(struct fsck_compare *c, const char *tar,
		     struct imgfs_error *err)
{
	int ret;

	ret = read_archive(c, tar, err);
	if (ret)
		return ret;
	resolve_links(c);
	ret = overlay_xattrs(c);
	if (ret || c->oom)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	compare_tree(c);
	report_extra(c);
	return c->oom ? imgfs_error_set(err, -ENOMEM, "out of memory") : 0;
}

void fsck_compare_free(struct fsck_compare *c)
{
	struct exp_inode *in, *ni;
	struct exp_dentry *d, *nd;
	size_t i;

	if (!c)
		return;
	for (in = c->all_inodes; in; in = ni) {
		ni = in->next_all;
		kv_clear(in);
		free(in->symlink);
		free(in);
	}
	for (d = c->all_dentries; d; d = nd) {
		nd = d->next_all;
		free(d->name);
		free(d->children);
		free(d->link_target);
		free(d->entry_path);
		free(d);
	}
	if (c->root) {
		free(c->root->name);
		free(c->root->children);
		free(c->root);
	}
	for (i = 0; i < c->nr_ibuckets; i++) {
		struct img_entry *e, *ne;

		for (e = c->ibuckets[i]; e; e = ne) {
			ne = e->hash_next;
			free(e->name);
			free(e);
		}
	}
	free(c->ibuckets);
	free(c->dbuckets);
	free(c->by_nid.v);
	free(c->dirs.v);
	free(c->pbuf);
	free(c->pbuf2);
	free(c);
}
