// SPDX-License-Identifier: MIT
/*
 * walk.c - the tree walker of imgfs/walk.h, on top of the reader.
 *
 * Directories are listed one at a time; the subdirectories met while
 * listing are kept (nid and name) and walked after the listing, so the C
 * stack does not grow with the tree depth (a corrupt image can chain as
 * many directories as it has inodes). In "ls -R" order they are kept in a
 * frame per depth; breadth first, in one record per directory naming its
 * parent's record. One path buffer, grown and cut as the walk moves,
 * holds the current path. A u64 map of the NIDs met detects hard links
 * and loops.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "imgfs/walk.h"
#include "reader/dir.h"
#include "util/hashtab.h"
#include "util/sized.h"
#include "util/vec.h"
#include "util/error.h"

struct subdir {
	uint64_t nid;
	uint64_t serial;
	size_t name; /* offset in the frame's (or the walk's) name pool */
	size_t len;
	size_t parent; /* breadth first: the parent's record */
	unsigned int depth; /* breadth first: the directory's own depth */
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
	struct imgfs_walk_options o;
	struct imgfs_error *err;
	struct imgfs_u64map seen;
	uint64_t serials; /* directories numbered so far */
	/* the directory being listed */
	const struct imgfs_inode *dir;
	uint64_t dir_serial;
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

static void frame_reset(struct frame *f, size_t path_len)
{
	f->nr = f->next = f->names_len = 0;
	f->path_len = path_len;
}

static struct subdir *frame_push(struct frame *f, uint64_t nid,
				 const char *name, size_t len)
{
	struct subdir *d;

	if (IMGFS_VEC_RESERVE(f->dirs, f->cap, f->nr + 1, 2) ||
	    IMGFS_VEC_RESERVE(f->names, f->names_cap, f->names_len + len, 16))
		return NULL;
	/* the start directory is pushed with no name, before any buffer */
	if (len)
		memcpy(f->names + f->names_len, name, len);
	d = &f->dirs[f->nr++];
	memset(d, 0, sizeof(*d));
	d->nid = nid;
	d->name = f->names_len;
	d->len = len;
	f->names_len += len;
	return d;
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
	if (IMGFS_VEC_RESERVE(p->s, p->cap, base + 1 + len + 1, 256))
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

/* Keep the first failure: copy @e into w->err unless it holds one. */
static int pass_error(struct walk *w, const struct imgfs_error *e)
{
	if (!w->err->code)
		*w->err = *e;
	return e->code;
}

static bool may_enter(const struct walk *w, unsigned int depth)
{
	if (w->o.flags & IMGFS_WALK_NO_RECURSE)
		return false;
	return !w->o.max_depth || depth < w->o.max_depth;
}

/* Read the entry's inode: NULL with *@ret 0 when unreadable but the walk
 * goes on (IMGFS_WALK_CONTINUE), *@ret < 0 when it must stop. */
static struct imgfs_inode *entry_inode(struct walk *w,
				       const struct imgfs_dirent_info *de,
				       struct imgfs_inode *inode,
				       struct imgfs_error *e, int *ret)
{
	*ret = imgfs_inode_read(w->img, de->nid, inode, e);
	if (!*ret)
		return inode;
	if (*ret == -ENOMEM || !(w->o.flags & IMGFS_WALK_CONTINUE))
		*ret = pass_error(w, e);
	else
		*ret = 0;
	return NULL;
}

static int walk_dirent(void *arg, const struct imgfs_dirent_info *de)
{
	struct walk *w = arg;
	struct imgfs_walk_entry e = { .serial = IMGFS_WALK_NO_SERIAL };
	size_t dir_len = w->path.len;
	struct imgfs_error ierr = { 0 };
	struct imgfs_inode inode;
	struct subdir *sd;
	int ret, added = 0;
	bool dot = is_dot(de);

	if (dot && !(w->o.flags & IMGFS_WALK_DOTS))
		return 0;
	if (!dot) {
		e.inode = entry_inode(w, de, &inode, &ierr, &ret);
		if (ret)
			return ret;
		e.error = e.inode ? NULL : &ierr;
	}
	if (path_set(&w->path, dir_len, de->name, de->name_len))
		return error_set(w->err, -ENOMEM, "out of memory");
	if (!dot)
		added = u64map_add(&w->seen, de->nid, 0);
	if (added < 0) {
		ret = error_set(w->err, added, "out of memory");
		goto out;
	}
	if (!dot)
		w->entries++;
	e.path = w->path.s;
	e.name = w->path.s + w->path.len - de->name_len;
	e.name_len = de->name_len;
	e.parent_nid = w->dir->nid;
	e.file_type = de->file_type;
	e.depth = w->depth + 1;
	e.first = added;
	e.dirent = de;
	e.parent_serial = w->dir_serial;
	if (added && e.inode && imgfs_inode_is_dir(e.inode) &&
	    may_enter(w, e.depth))
		e.serial = ++w->serials;
	if (w->o.entry) {
		ret = w->o.entry(w->o.arg, &e);
		if (ret)
			goto out;
	}
	if (e.serial != IMGFS_WALK_NO_SERIAL) {
		sd = frame_push(w->cur, de->nid, de->name, de->name_len);
		if (!sd) {
			ret = error_set(w->err, -ENOMEM, "out of memory");
			goto out;
		}
		sd->serial = e.serial;
		sd->parent = w->dir_serial;
		sd->depth = e.depth;
	}
out:
	path_cut(&w->path, dir_len);
	return ret;
}

static int walk_bad_block(void *arg, uint64_t block, unsigned int entry,
			  const char *why)
{
	struct walk *w = arg;

	return w->o.bad_block(w->o.arg, w->path.s, w->dir, block, entry, why);
}

/* List the entries of @dir, whose path is in w->path. */
static int walk_entries(struct walk *w, const struct imgfs_inode *dir)
{
	struct imgfs_error e = { 0 };
	int ret;

	ret = dir_walk(w->img, dir, walk_dirent, w,
		       w->o.bad_block ? walk_bad_block : NULL, w, &e);
	if (ret >= 0 || !e.code)
		return ret; /* done, stopped, or failed in a callback */
	/* the reader's own failure: an unreadable or invalid block */
	if (ret == -ENOMEM || !(w->o.flags & IMGFS_WALK_CONTINUE))
		return pass_error(w, &e);
	return w->o.dir_error ? w->o.dir_error(w->o.arg, w->path.s, dir, &e)
			      : 0;
}

/* List directory @nid, whose path is in w->path; subdirectories go to @f. */
static int walk_list(struct walk *w, uint64_t nid, uint64_t serial,
		     unsigned int depth, struct frame *f)
{
	const struct imgfs_walk_options *o = &w->o;
	const char *path = w->path.s;
	struct imgfs_inode dir;
	int ret;

	ret = imgfs_inode_read(w->img, nid, &dir, w->err);
	if (ret)
		return ret;
	if (!imgfs_inode_is_dir(&dir))
		return error_set(w->err, -ENOTDIR,
				 "%s (nid %llu): not a directory", path,
				 (unsigned long long)nid);
	if (o->dir_begin) {
		ret = o->dir_begin(o->arg, path, &dir);
		if (ret)
			return ret;
	}
	w->dir = &dir;
	w->dir_serial = serial;
	w->depth = depth;
	w->entries = 0;
	w->cur = f;
	ret = walk_entries(w, &dir);
	if (ret)
		return ret;
	if (o->dir_end)
		ret = o->dir_end(o->arg, w->path.s, &dir, w->entries);
	return ret;
}

/*
 * "ls -R" order. Frames are kept (with their buffers) when popped and
 * reused by the next directory at that depth.
 */
static int walk_depth_first(struct walk *w, uint64_t start_nid)
{
	struct frame *stack = NULL, *f;
	size_t depth = 1, cap = 0, i;
	int ret;

	if (IMGFS_VEC_RESERVE(stack, cap, 1, 16))
		return error_set(w->err, -ENOMEM, "out of memory");
	memset(stack, 0, cap * sizeof(*stack));
	frame_reset(&stack[0], w->path.len);
	ret = walk_list(w, start_nid, 0, 0, &stack[0]);
	while (depth && !ret) {
		struct subdir *d;

		f = &stack[depth - 1];
		if (f->next == f->nr) {
			depth--;
			continue;
		}
		if (depth == cap) {
			size_t old = cap;

			if (IMGFS_VEC_RESERVE(stack, cap, depth + 1, 16)) {
				ret = error_set(w->err, -ENOMEM,
						"out of memory");
				break;
			}
			memset(stack + old, 0, (cap - old) * sizeof(*stack));
			f = &stack[depth - 1];
		}
		d = &f->dirs[f->next++];
		if (path_set(&w->path, f->path_len, f->names + d->name,
			     d->len)) {
			ret = error_set(w->err, -ENOMEM, "out of memory");
			break;
		}
		frame_reset(&stack[depth], w->path.len);
		ret = walk_list(w, d->nid, d->serial, (unsigned int)depth,
				&stack[depth]);
		depth++;
	}
	for (i = 0; i < cap; i++)
		frame_free(&stack[i]);
	free(stack);
	return ret;
}

/*
 * Breadth first, every directory to list is a record of one frame (index
 * = serial), named by its parent's record and its own name.
 */
struct bfs {
	struct frame all;
	size_t prev; /* record whose path is in the buffer */
	size_t prev_parent_len; /* length of its parent's path there */
};

/* Length of the path of record @i: "" for the start is its own path. */
static size_t bfs_path_len(const struct bfs *b, size_t start_len, size_t i)
{
	size_t len = start_len;

	for (; i; i = b->all.dirs[i].parent)
		len += 1 + b->all.dirs[i].len;
	return len;
}

static void bfs_path_fill(const struct bfs *b, char *s, size_t end, size_t i)
{
	for (; i; i = b->all.dirs[i].parent) {
		const struct subdir *d = &b->all.dirs[i];

		end -= d->len;
		memcpy(s + end, b->all.names + d->name, d->len);
		s[--end] = '/';
	}
}

/*
 * The path of record @i into w->path. Directories come level by level,
 * so the next one is most often a sibling or a child of the previous
 * one: then only its name is written, and a chain of directories costs
 * time linear in its depth, not quadratic. @start_len: the start's path.
 */
static int bfs_path(struct walk *w, struct bfs *b, size_t i, size_t start_len)
{
	const struct subdir *d = &b->all.dirs[i];
	size_t base;

	if (d->parent == b->prev) {
		base = w->path.len;
	} else if (d->parent == b->all.dirs[b->prev].parent) {
		base = b->prev_parent_len;
	} else {
		base = bfs_path_len(b, start_len, d->parent);
		if (IMGFS_VEC_RESERVE(w->path.s, w->path.cap, base + 1, 256))
			return -ENOMEM;
		bfs_path_fill(b, w->path.s, base, d->parent);
	}
	b->prev = i;
	b->prev_parent_len = base;
	/* the root's "/" is the separator of its children's paths */
	return path_set(&w->path, base, b->all.names + d->name, d->len);
}

static int walk_breadth_first(struct walk *w, uint64_t start_nid)
{
	struct bfs b = { 0 };
	size_t start_len = w->path.len, i;
	int ret;

	if (start_len == 1 && w->path.s[0] == '/')
		start_len = 0;
	if (!frame_push(&b.all, start_nid, "", 0))
		return error_set(w->err, -ENOMEM, "out of memory");
	ret = walk_list(w, start_nid, 0, 0, &b.all);
	for (i = 1; !ret && i < b.all.nr; i++) {
		struct subdir d = b.all.dirs[i];

		if (bfs_path(w, &b, i, start_len)) {
			ret = error_set(w->err, -ENOMEM, "out of memory");
			break;
		}
		/* new records go to the end of the same frame */
		ret = walk_list(w, d.nid, d.serial, d.depth, &b.all);
	}
	frame_free(&b.all);
	return ret;
}

int imgfs_walk(struct imgfs_image *img, uint64_t start_nid,
	       const char *start_path, const struct imgfs_walk_options *opts,
	       struct imgfs_error *err)
{
	struct walk w = { .img = img, .err = err };
	const char *start = start_path ? start_path : "/";
	size_t len = strlen(start);
	int ret;

	if (!opts)
		return error_set(err, -EINVAL, "no walk options");
	/* the first published struct ended with arg */
	ret = SIZED_IN(&w.o, opts, SIZED_UP_TO(struct imgfs_walk_options, arg),
		       "walk options", err);
	if (ret)
		return ret;
	if (u64map_add(&w.seen, start_nid, 0) < 0 ||
	    IMGFS_VEC_RESERVE(w.path.s, w.path.cap, len + 1, 256)) {
		ret = error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	memcpy(w.path.s, start, len + 1);
	w.path.len = len;
	if (w.o.flags & IMGFS_WALK_BREADTH_FIRST)
		ret = walk_breadth_first(&w, start_nid);
	else
		ret = walk_depth_first(&w, start_nid);
out:
	u64map_free(&w.seen);
	free(w.path.s);
	return ret;
}
