// SPDX-License-Identifier: MIT
/*
 * dump_walk.c - depth-first walk of an image tree on top of the reader.
 *
 * Directories are listed one at a time; the subdirectories met while
 * listing are kept (nid and name) in a frame and walked after the listing,
 * so the order is that of "ls -R" and the C stack does not grow with the
 * tree depth (a corrupt image can chain as many directories as it has
 * inodes). One path buffer, grown and cut as the walk goes down and up,
 * holds the current path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "imgfs/stats.h"

/* Open-addressing set of NIDs: each inode is reported first once. */
struct nid_set {
	uint64_t *keys;
	uint8_t *used;
	size_t cap; /* power of two */
	size_t count;
};

static size_t nid_hash(uint64_t nid, size_t cap)
{
	nid ^= nid >> 33;
	nid *= 0xff51afd7ed558ccdull;
	nid ^= nid >> 33;
	return (size_t)nid & (cap - 1);
}

static int nid_set_grow(struct nid_set *s)
{
	size_t cap = s->cap ? s->cap * 2 : 1024, i, h;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint8_t *used = calloc(cap, 1);

	if (!keys || !used) {
		free(keys);
		free(used);
		return -ENOMEM;
	}
	for (i = 0; i < s->cap; i++) {
		if (!s->used[i])
			continue;
		for (h = nid_hash(s->keys[i], cap); used[h]; h = (h + 1) & (cap - 1))
			;
		used[h] = 1;
		keys[h] = s->keys[i];
	}
	free(s->keys);
	free(s->used);
	s->keys = keys;
	s->used = used;
	s->cap = cap;
	return 0;
}

/* Add @nid: 1 if it was new, 0 if already there, -ENOMEM. */
static int nid_set_add(struct nid_set *s, uint64_t nid)
{
	size_t h;
	int ret;

	if ((s->count + 1) * 2 > s->cap) {
		ret = nid_set_grow(s);
		if (ret)
			return ret;
	}
	for (h = nid_hash(nid, s->cap); s->used[h]; h = (h + 1) & (s->cap - 1))
		if (s->keys[h] == nid)
			return 0;
	s->used[h] = 1;
	s->keys[h] = nid;
	s->count++;
	return 1;
}

static void nid_set_free(struct nid_set *s)
{
	free(s->keys);
	free(s->used);
}

struct subdir {
	uint64_t nid;
	size_t name; /* offset in the frame's name pool */
	size_t len;
};

/*
 * Subdirectories of one listed directory, still to walk. Only their names
 * are kept: the full path lives once, in the walk's path buffer, so memory
 * grows with the depth and the directories' widths, not depth squared.
 */
struct frame {
	struct subdir *dirs;
	size_t nr, cap, next;
	char *names;
	size_t names_len, names_cap;
	size_t path_len; /* length of the directory's path in the buffer */
};

/* A growable string holding the path of the directory being walked. */
struct path_buf {
	char *s;
	size_t len, cap;
};

struct walk {
	struct imgfs_image *img;
	const struct imgfs_walk_options *opts;
	struct imgfs_error *err;
	struct nid_set seen;
	/* the directory being listed */
	const struct imgfs_inode *dir;
	unsigned int depth;
	uint64_t entries;
	struct frame *cur; /* where its subdirectories go */
	struct path_buf path;
};

static void frame_free(struct frame *f)
{
	free(f->dirs);
	free(f->names);
	memset(f, 0, sizeof(*f));
}

static int grow(void **p, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t n = *cap ? *cap : first;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static int frame_push(struct frame *f, uint64_t nid, const char *name,
		      size_t len)
{
	if (grow((void **)&f->dirs, &f->cap, f->nr + 1, sizeof(*f->dirs), 2) ||
	    grow((void **)&f->names, &f->names_cap, f->names_len + len, 1, 16))
		return -ENOMEM;
	memcpy(f->names + f->names_len, name, len);
	f->dirs[f->nr].nid = nid;
	f->dirs[f->nr].name = f->names_len;
	f->dirs[f->nr++].len = len;
	f->names_len += len;
	return 0;
}

/*
 * Put "/<name>" after the first @base bytes of the path; the root's path
 * "/" has base 0, so its entries are "/name".
 */
static int path_set(struct path_buf *p, size_t base, const char *name,
		    size_t len)
{
	if (base == 1 && p->s[0] == '/')
		base = 0;
	if (grow((void **)&p->s, &p->cap, base + 1 + len + 1, 1, 256))
		return -ENOMEM;
	p->s[base] = '/';
	memcpy(p->s + base + 1, name, len);
	p->len = base + 1 + len;
	p->s[p->len] = '\0';
	return 0;
}

static void path_cut(struct path_buf *p, size_t len)
{
	p->len = len;
	p->s[len] = '\0';
}

static bool is_dot(const struct imgfs_dirent_info *de)
{
	return (de->name_len == 1 && de->name[0] == '.') ||
	       (de->name_len == 2 && de->name[0] == '.' && de->name[1] == '.');
}

static int walk_dirent(void *arg, const struct imgfs_dirent_info *de)
{
	struct walk *w = arg;
	struct imgfs_walk_entry e = { 0 };
	size_t dir_len = w->path.len;
	struct imgfs_inode inode;
	int ret, added;

	if (is_dot(de))
		return 0;
	ret = imgfs_inode_read(w->img, de->nid, &inode, w->err);
	if (ret)
		return ret;
	if (path_set(&w->path, dir_len, de->name, de->name_len))
		return imgfs_error_set(w->err, -ENOMEM, "out of memory");
	added = nid_set_add(&w->seen, de->nid);
	if (added < 0) {
		ret = imgfs_error_set(w->err, added, "out of memory");
		goto out;
	}
	w->entries++;
	e.path = w->path.s;
	e.name = w->path.s + w->path.len - de->name_len;
	e.name_len = de->name_len;
	e.inode = &inode;
	e.parent_nid = w->dir->nid;
	e.file_type = de->file_type;
	e.depth = w->depth + 1;
	e.first = added;
	if (w->opts->entry) {
		ret = w->opts->entry(w->opts->arg, &e);
		if (ret)
			goto out;
	}
	if (added && imgfs_inode_is_dir(&inode) &&
	    !(w->opts->flags & IMGFS_WALK_NO_RECURSE) &&
	    frame_push(w->cur, de->nid, de->name, de->name_len))
		ret = imgfs_error_set(w->err, -ENOMEM, "out of memory");
out:
	path_cut(&w->path, dir_len);
	return ret;
}

/* List directory @nid, whose path is in w->path; subdirectories go to @f. */
static int walk_list(struct walk *w, uint64_t nid, unsigned int depth,
		     struct frame *f)
{
	const struct imgfs_walk_options *o = w->opts;
	const char *path = w->path.s;
	struct imgfs_inode dir;
	int ret;

	f->nr = f->next = f->names_len = 0;
	f->path_len = w->path.len;
	ret = imgfs_inode_read(w->img, nid, &dir, w->err);
	if (ret)
		return ret;
	if (!imgfs_inode_is_dir(&dir))
		return imgfs_error_set(w->err, -ENOTDIR,
				       "%s (nid %llu): not a directory", path,
				       (unsigned long long)nid);
	if (o->dir_begin) {
		ret = o->dir_begin(o->arg, path, &dir);
		if (ret)
			return ret;
	}
	w->dir = &dir;
	w->depth = depth;
	w->entries = 0;
	w->cur = f;
	ret = imgfs_dir_iterate(w->img, &dir, walk_dirent, w, w->err);
	if (ret)
		return ret;
	if (o->dir_end)
		ret = o->dir_end(o->arg, w->path.s, &dir, w->entries);
	return ret;
}

/*
 * Frames are kept (with their buffers) when popped and reused by the next
 * directory at that depth.
 */
static int walk_run(struct walk *w, uint64_t start_nid, const char *start)
{
	struct frame *stack = NULL, *f;
	size_t depth = 1, cap = 0, i;
	int ret;

	ret = nid_set_add(&w->seen, start_nid);
	if (ret < 0)
		return imgfs_error_set(w->err, ret, "out of memory");
	if (grow((void **)&w->path.s, &w->path.cap, strlen(start) + 1, 1,
		 256) ||
	    grow((void **)&stack, &cap, 1, sizeof(*stack), 16))
		return imgfs_error_set(w->err, -ENOMEM, "out of memory");
	memset(stack, 0, cap * sizeof(*stack));
	strcpy(w->path.s, start);
	w->path.len = strlen(start);
	ret = walk_list(w, start_nid, 0, &stack[0]);
	while (depth && !ret) {
		struct subdir *d;

		f = &stack[depth - 1];
		if (f->next == f->nr) {
			depth--;
			continue;
		}
		if (depth == cap) {
			size_t old = cap;

			if (grow((void **)&stack, &cap, depth + 1,
				 sizeof(*stack), 16)) {
				ret = imgfs_error_set(w->err, -ENOMEM,
						      "out of memory");
				break;
			}
			memset(stack + old, 0, (cap - old) * sizeof(*stack));
			f = &stack[depth - 1];
		}
		d = &f->dirs[f->next++];
		if (path_set(&w->path, f->path_len, f->names + d->name,
			     d->len)) {
			ret = imgfs_error_set(w->err, -ENOMEM, "out of memory");
			break;
		}
		ret = walk_list(w, d->nid, (unsigned int)depth, &stack[depth]);
		depth++;
	}
	for (i = 0; i < cap; i++)
		frame_free(&stack[i]);
	free(stack);
	return ret;
}

int imgfs_walk(struct imgfs_image *img, uint64_t start_nid,
	       const char *start_path, const struct imgfs_walk_options *opts,
	       struct imgfs_error *err)
{
	struct walk w = { .img = img, .opts = opts, .err = err };
	int ret;

	if (!opts || opts->struct_size < sizeof(*opts))
		return imgfs_error_set(err, -EINVAL,
				       "walk options missing or too old");
	ret = walk_run(&w, start_nid, start_path ? start_path : "/");
	nid_set_free(&w.seen);
	free(w.path.s);
	return ret;
}
