// SPDX-License-Identifier: MIT
/*
 * dump_walk.c - depth-first walk of an image tree on top of the reader.
 *
 * Directories are listed one at a time; the subdirectories met while
 * listing are kept in a frame and walked after the listing, so the order is
 * that of "ls -R" and the C stack does not grow with the tree depth (a
 * corrupt image can chain as many directories as it has inodes).
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
	char *path;
};

/* Subdirectories of one listed directory, still to walk. */
struct frame {
	struct subdir *dirs;
	size_t nr, cap, next;
};

struct walk {
	struct imgfs_image *img;
	const struct imgfs_walk_options *opts;
	struct imgfs_error *err;
	struct nid_set seen;
	/* the directory being listed */
	const char *path;
	const struct imgfs_inode *dir;
	unsigned int depth;
	uint64_t entries;
	struct frame *cur; /* where its subdirectories go */
	char *buf; /* path of the current entry */
	size_t buf_cap;
};

static void frame_free(struct frame *f)
{
	size_t i;

	for (i = 0; i < f->nr; i++)
		free(f->dirs[i].path);
	free(f->dirs);
	memset(f, 0, sizeof(*f));
}

static int frame_push(struct frame *f, uint64_t nid, const char *path)
{
	if (f->nr == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		struct subdir *d = realloc(f->dirs, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		f->dirs = d;
		f->cap = cap;
	}
	f->dirs[f->nr].path = strdup(path);
	if (!f->dirs[f->nr].path)
		return -ENOMEM;
	f->dirs[f->nr++].nid = nid;
	return 0;
}

/* Build "<dir path>/<name>" in w->buf. */
static int entry_path(struct walk *w, const char *name, size_t len,
		      const char **out_name)
{
	size_t plen = strlen(w->path);
	size_t need;

	if (plen == 1 && w->path[0] == '/')
		plen = 0;
	need = plen + 1 + len + 1;
	if (need > w->buf_cap) {
		char *b = realloc(w->buf, need);

		if (!b)
			return -ENOMEM;
		w->buf = b;
		w->buf_cap = need;
	}
	memcpy(w->buf, w->path, plen);
	w->buf[plen] = '/';
	memcpy(w->buf + plen + 1, name, len);
	w->buf[plen + 1 + len] = '\0';
	*out_name = w->buf + plen + 1;
	return 0;
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
	struct imgfs_inode inode;
	int ret, added;

	if (is_dot(de))
		return 0;
	ret = imgfs_inode_read(w->img, de->nid, &inode, w->err);
	if (ret)
		return ret;
	ret = entry_path(w, de->name, de->name_len, &e.name);
	if (ret)
		return imgfs_error_set(w->err, ret, "out of memory");
	added = nid_set_add(&w->seen, de->nid);
	if (added < 0)
		return imgfs_error_set(w->err, added, "out of memory");
	w->entries++;
	e.path = w->buf;
	e.name_len = de->name_len;
	e.inode = &inode;
	e.parent_nid = w->dir->nid;
	e.file_type = de->file_type;
	e.depth = w->depth + 1;
	e.first = added;
	if (w->opts->entry) {
		ret = w->opts->entry(w->opts->arg, &e);
		if (ret)
			return ret;
	}
	if (added && imgfs_inode_is_dir(&inode) &&
	    !(w->opts->flags & IMGFS_WALK_NO_RECURSE)) {
		ret = frame_push(w->cur, de->nid, w->buf);
		if (ret)
			return imgfs_error_set(w->err, ret, "out of memory");
	}
	return 0;
}

/* List directory @nid at @path; its subdirectories go to @f. */
static int walk_list(struct walk *w, uint64_t nid, const char *path,
		     unsigned int depth, struct frame *f)
{
	const struct imgfs_walk_options *o = w->opts;
	struct imgfs_inode dir;
	int ret;

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
	w->path = path;
	w->dir = &dir;
	w->depth = depth;
	w->entries = 0;
	w->cur = f;
	ret = imgfs_dir_iterate(w->img, &dir, walk_dirent, w, w->err);
	if (ret)
		return ret;
	if (o->dir_end)
		ret = o->dir_end(o->arg, path, &dir, w->entries);
	return ret;
}

static int walk_run(struct walk *w, uint64_t start_nid, const char *start)
{
	struct frame *stack = NULL, *f;
	size_t depth = 0, cap = 0, i;
	struct frame first = { 0 };
	int ret;

	ret = nid_set_add(&w->seen, start_nid);
	if (ret < 0)
		return imgfs_error_set(w->err, ret, "out of memory");
	ret = walk_list(w, start_nid, start, 0, &first);
	if (ret || !first.nr) {
		frame_free(&first);
		return ret;
	}
	stack = malloc(8 * sizeof(*stack));
	if (!stack) {
		frame_free(&first);
		return imgfs_error_set(w->err, -ENOMEM, "out of memory");
	}
	cap = 8;
	stack[depth++] = first;
	while (depth && !ret) {
		struct subdir *d;

		f = &stack[depth - 1];
		if (f->next == f->nr) {
			frame_free(f);
			depth--;
			continue;
		}
		if (depth == cap) {
			struct frame *s = realloc(stack, 2 * cap * sizeof(*s));

			if (!s) {
				ret = imgfs_error_set(w->err, -ENOMEM,
						      "out of memory");
				break;
			}
			stack = s;
			cap *= 2;
			f = &stack[depth - 1];
		}
		d = &f->dirs[f->next++];
		memset(&stack[depth], 0, sizeof(stack[depth]));
		ret = walk_list(w, d->nid, d->path, (unsigned int)depth,
				&stack[depth]);
		depth++;
	}
	for (i = 0; i < depth; i++)
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
	free(w.buf);
	return ret;
}
