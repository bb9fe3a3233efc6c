// SPDX-License-Identifier: MIT
/*
 * compare/match.c - the expected tree against the image: depth first over
 * the expected tree, each path looked up in the image and compared
 * attribute by attribute; then the image paths no expected path matched.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "compare/internal.h"
#include "imgfs/stats.h"
#include "util/vec.h"

struct img_xattrs {
	struct cmp_kv *v;
	size_t n, cap;
};

static int collect_xattr(void *arg, const struct imgfs_xattr_info *x)
{
	struct img_xattrs *ix = arg;
	struct cmp_kv *v;

	if (IMGFS_VEC_RESERVE(ix->v, ix->cap, ix->n + 1, 8))
		return -ENOMEM;
	v = &ix->v[ix->n];
	v->name = strdup(x->name);
	v->value = malloc(x->value_size ? x->value_size : 1);
	if (!v->name || !v->value) {
		free(v->name);
		free(v->value);
		return -ENOMEM;
	}
	memcpy(v->value, x->value, x->value_size);
	v->len = x->value_size;
	ix->n++;
	return 0;
}

/* Both lists sorted by name, merged. */
static void diff_xattrs(struct imgfs_compare *c, const char *path,
			struct exp_inode *in, const struct img_xattrs *ix)
{
	size_t i = 0, j = 0;

	while (i < in->nr_xattrs || j < ix->n) {
		int r = i == in->nr_xattrs ? 1
			: j == ix->n
				? -1
				: strcmp(in->xattrs[i].name, ix->v[j].name);

		if (r < 0) {
			cmp_diff(c, path, IMGFS_COMPARE_XATTR,
				 "%s missing from the image",
				 in->xattrs[i++].name);
		} else if (r > 0) {
			cmp_diff(c, path, IMGFS_COMPARE_XATTR,
				 "%s in the image but not in the archive",
				 ix->v[j++].name);
		} else {
			if (in->xattrs[i].len != ix->v[j].len ||
			    memcmp(in->xattrs[i].value, ix->v[j].value,
				   ix->v[j].len))
				cmp_diff(
					c, path, IMGFS_COMPARE_XATTR,
					"%s value differs (%zu bytes in the archive, %zu in the image)",
					ix->v[j].name, in->xattrs[i].len,
					ix->v[j].len);
			i++;
			j++;
		}
	}
}

static void compare_xattrs(struct imgfs_compare *c, const char *path,
			   struct exp_inode *in, const struct imgfs_inode *ii)
{
	struct img_xattrs ix = { 0 };
	struct imgfs_error err = { 0 };
	size_t k;

	if (imgfs_xattr_iterate(c->img, ii, false, collect_xattr, &ix, &err) <
	    0) {
		cmp_diff(c, path, IMGFS_COMPARE_XATTR,
			 "image xattrs unreadable: %s",
			 err.code ? err.msg : "out of memory");
		goto out;
	}
	if (ix.n > 1)
		qsort(ix.v, ix.n, sizeof(*ix.v), cmp_kv_cmp);
	if (in->nr_xattrs > 1)
		qsort(in->xattrs, in->nr_xattrs, sizeof(*in->xattrs),
		      cmp_kv_cmp);
	diff_xattrs(c, path, in, &ix);
out:
	for (k = 0; k < ix.n; k++) {
		free(ix.v[k].name);
		free(ix.v[k].value);
	}
	free(ix.v);
}

static void compare_links(struct imgfs_compare *c, const char *path,
			  struct exp_inode *in, struct img_entry *ie)
{
	struct img_entry *first;

	if (!in->matched) {
		in->matched = true;
		in->nid = ie->inode.nid;
		in->first = ie;
	} else if (in->nid != ie->inode.nid) {
		cmp_diff(
			c, path, IMGFS_COMPARE_HARDLINK,
			"should be a hard link to %s, but is a separate inode in the image",
			cmp_image_path(c, in->first, &c->pbuf2, &c->pbuf2_cap));
	}
	ie->bound = in;
	first = cmp_image_bind_nid(c, ie);
	if (first && first->bound != in)
		cmp_diff(
			c, path, IMGFS_COMPARE_HARDLINK,
			"is a hard link to %s in the image, but not in the archive",
			cmp_image_path(c, first, &c->pbuf2, &c->pbuf2_cap));
}

static void compare_content(struct imgfs_compare *c, const char *path,
			    struct exp_inode *in, struct img_entry *ie)
{
	struct imgfs_error err = { 0 };
	int ret;

	if (in->size != ie->inode.size) {
		cmp_diff(c, path, IMGFS_COMPARE_SIZE,
			 "%" PRIu64 " bytes in the archive, %" PRIu64
			 " in the image",
			 in->size, ie->inode.size);
		return;
	}
	ret = cmp_image_digest(c, ie, &err);
	if (ret == -ENOMEM)
		c->oom = ret;
	else if (ret && err.code) /* our own read */
		cmp_diff(c, path, IMGFS_COMPARE_CONTENT,
			 "image data could not be read: %s", err.msg);
	else if (ret) /* the checker's */
		cmp_diff(c, path, IMGFS_COMPARE_CONTENT,
			 "image data could not be read");
	else if (memcmp(in->sum, ie->sum, sizeof(in->sum)))
		cmp_diff(c, path, IMGFS_COMPARE_CONTENT,
			 "data differs (%s mismatch)", cmp_digest_name(c));
}

static void compare_symlink(struct imgfs_compare *c, const char *path,
			    struct exp_inode *in, const struct imgfs_inode *ii)
{
	char target[IMGFS_SYMLINK_MAX + 1];
	struct imgfs_error err = { 0 };

	if (!in->symlink) /* refused while replaying: already reported */
		return;
	if (imgfs_readlink(c->img, ii, target, sizeof(target), &err) < 0)
		cmp_diff(c, path, IMGFS_COMPARE_SYMLINK,
			 "target unreadable: %s", err.msg);
	else if (strcmp(target, in->symlink))
		cmp_diff(c, path, IMGFS_COMPARE_SYMLINK,
			 "target \"%s\" in the archive, \"%s\" in the image",
			 in->symlink, target);
}

static void compare_mtime(struct imgfs_compare *c, const char *path,
			  struct exp_inode *in, const struct imgfs_inode *ii)
{
	char want[IMGFS_TIME_DECIMAL_MAX], got[IMGFS_TIME_DECIMAL_MAX];

	if (in->mtime == ii->mtime && in->nsec == ii->mtime_nsec)
		return;
	imgfs_time_decimal(in->mtime, in->nsec, want);
	imgfs_time_decimal(ii->mtime, ii->mtime_nsec, got);
	cmp_diff(c, path, IMGFS_COMPARE_MTIME,
		 "%s in the archive, %s in the image", want, got);
}

static void compare_inode(struct imgfs_compare *c, const char *path,
			  struct exp_inode *in, struct img_entry *ie)
{
	const struct imgfs_inode *ii = &ie->inode;

	if ((in->mode & 07777) != (ii->mode & 07777))
		cmp_diff(c, path, IMGFS_COMPARE_MODE,
			 "%04o in the archive, %04o in the image",
			 in->mode & 07777, ii->mode & 07777);
	if (in->uid != ii->uid || in->gid != ii->gid)
		cmp_diff(c, path, IMGFS_COMPARE_OWNER,
			 "%u:%u in the archive, %u:%u in the image", in->uid,
			 in->gid, ii->uid, ii->gid);
	compare_mtime(c, path, in, ii);
	switch (in->mode & 0170000) {
	case 0100000:
		compare_content(c, path, in, ie);
		break;
	case 0120000:
		compare_symlink(c, path, in, ii);
		break;
	case 0020000:
	case 0060000:
		if (in->major != imgfs_dev_major(ii->rdev) ||
		    in->minor != imgfs_dev_minor(ii->rdev))
			cmp_diff(c, path, IMGFS_COMPARE_RDEV,
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

/* Compare expected dentry @d at @path with its image entry @ie (NULL:
 * missing). Returns whether its children are to be compared. */
static bool compare_one(struct imgfs_compare *c, struct exp_dentry *d,
			struct img_entry *ie, const char *path)
{
	if (!ie) {
		cmp_diff(c, path, IMGFS_COMPARE_MISSING,
			 "%s in the archive, absent from the image",
			 cmp_type_words(d->inode->mode));
		return false;
	}
	ie->seen = true;
	if ((d->inode->mode & 0170000) != (ie->inode.mode & 0170000)) {
		cmp_diff(c, path, IMGFS_COMPARE_TYPE,
			 "%s in the archive, %s in the image",
			 cmp_type_words(d->inode->mode),
			 cmp_type_words(ie->inode.mode));
		return false;
	}
	compare_inode(c, path, d->inode, ie);
	return cmp_is_dir(d);
}

/* A directory being compared: its next child and its path's length. */
struct cmp_frame {
	struct exp_dentry *d;
	struct img_entry *ie;
	size_t next, len;
};

static bool path_put(struct imgfs_compare *c, size_t len, const char *name)
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

/* Push a frame on the stack *@st of *@cap frames. */
static bool push(struct imgfs_compare *c, struct cmp_frame **st, size_t *n,
		 size_t *cap, struct cmp_frame f)
{
	if (IMGFS_VEC_RESERVE(*st, *cap, *n + 1, 64)) {
		c->oom = -ENOMEM;
		return false;
	}
	(*st)[(*n)++] = f;
	return true;
}

/*
 * Depth first over the expected tree, with an explicit stack (the depth
 * is not bounded) and one path buffer grown as needed.
 */
void cmp_match_tree(struct imgfs_compare *c)
{
	struct cmp_frame *st = NULL, f;
	size_t n = 0, cap = 0;

	if (!compare_one(c, c->root, c->iroot, "/"))
		return;
	f = (struct cmp_frame){ c->root, c->iroot, 0, 0 };
	if (!push(c, &st, &n, &cap, f))
		return;
	while (n) {
		struct cmp_frame *top = &st[n - 1];
		struct exp_dentry *ch;
		struct img_entry *ie;

		if (top->next == top->d->nr_children) {
			n--;
			continue;
		}
		ch = top->d->children[top->next++];
		if (ch->dead || !ch->inode || !path_put(c, top->len, ch->name))
			continue;
		ie = cmp_image_lookup(c, top->ie, ch->name);
		if (!compare_one(c, ch, ie, c->pbuf))
			continue;
		f = (struct cmp_frame){ ch, ie, 0,
					top->len + 1 + strlen(ch->name) };
		if (!push(c, &st, &n, &cap, f))
			break;
	}
	free(st);
}

/* In the order the image walk met them, so the output does not depend on
 * where entries landed in memory. */
void cmp_report_extra(struct imgfs_compare *c)
{
	struct img_entry *e;

	for (e = c->iall; e; e = e->next_all)
		if (!e->seen && (!e->parent || e->parent->seen))
			cmp_diff(c,
				 cmp_image_path(c, e, &c->pbuf2, &c->pbuf2_cap),
				 IMGFS_COMPARE_EXTRA,
				 "%s in the image, absent from the archive",
				 cmp_type_words(e->inode.mode));
}
