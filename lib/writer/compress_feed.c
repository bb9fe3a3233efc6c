// SPDX-License-Identifier: MIT
/*
 * compress_feed.c - a file's data in: cut into segments of a size set by
 * the pcluster size alone, each a job queued in file order; and the room
 * for an inline tail decided before the data is seen.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "writer/compress_int.h"
#include "writer/compress_map.h"
#include "writer/internal.h"

/* The file being read and the segment being filled. */
struct feeder {
	struct imgfs_writer *w;
	struct imgfs_compressor *c;
	struct zfile *f;
	struct zjob *cur;
	uint64_t pos; /* file bytes placed so far */
};

static int start_job(struct feeder *fd, struct imgfs_error *err)
{
	struct imgfs_compressor *c = fd->c;
	uint64_t left = fd->f->inode->size - fd->pos;
	size_t len = left < c->seg_size ? (size_t)left : c->seg_size;
	int ret = zq_make_room(fd->w, c, len, err);

	if (ret)
		return ret;
	fd->cur = zjob_new(c, fd->f, fd->pos, len);
	if (!fd->cur)
		return error_set(err, -ENOMEM, "out of memory");
	return 0;
}

static int submit_job(struct feeder *fd, struct imgfs_error *err)
{
	struct imgfs_compressor *c = fd->c;
	struct zjob *j = fd->cur;

	fd->cur = NULL;
	j->last = fd->pos == fd->f->inode->size;
	j->tail_room = j->last ? fd->f->tail_room : 0;
	j->flat_room = j->last ? fd->f->flat_room : 0;
	/* fragment offsets are 32-bit in compact maps: stay below 4 GiB */
	if (j->last && fd->f->frag &&
	    c->frag_reserved + j->len < UINT32_MAX) {
		j->frag = true;
		c->frag_reserved += j->len;
	}
	zjob_queue(c, j);
	return zq_retire_done(fd->w, c, err);
}

/* Place @n bytes of file data (zeros when @src is NULL). */
static int feed(struct feeder *fd, const uint8_t *src, uint64_t n,
		struct imgfs_error *err)
{
	int ret;

	while (n) {
		struct zjob *j;
		size_t k;

		if (!fd->cur) {
			ret = start_job(fd, err);
			if (ret)
				return ret;
		}
		j = fd->cur;
		k = j->len - j->filled;
		if (k > n)
			k = (size_t)n;
		if (src) {
			memcpy(j->in + j->filled, src, k);
			src += k;
		} else {
			memset(j->in + j->filled, 0, k);
		}
		j->filled += k;
		fd->pos += k;
		n -= k;
		if (j->filled == j->len) {
			ret = submit_job(fd, err);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * Room for an inline tail such that the inode, its largest possible
 * xattr area (nothing shared), the alignment padding and the map fit in
 * front of it within one block: the layout can then always place it, at
 * the start of a block if need be.
 */
static uint32_t tail_room(const struct imgfs_compressor *c,
			  const struct imgfs_node *inode)
{
	uint64_t nlc = zdiv_up(inode->size, c->p.bs);
	uint64_t need = IMGFS_INODE_EXTENDED_SIZE + 4;
	const struct imgfs_node_xattrs *x = &inode->xattrs;

	if (!c->ztailpacking || nlc > c->p.bs)
		return 0;
	if (x->count)
		need += IMGFS_XATTR_IBODY_HEADER_SIZE;
	for (uint32_t i = 0; i < x->count; i++)
		need += imgfs_xattr_entry_size(x->items[i]->name_len,
					       x->items[i]->value_len);
	need += zmap_compact_size_max(nlc);
	return need < c->p.bs ? (uint32_t)(c->p.bs - need) : 0;
}

/* A file being fed to the compressors (see compress_begin()). */
struct imgfs_compress_stream {
	struct feeder fd;
	/* once its last job is queued, the file belongs to the jobs and
	 * may be gone: only its size is looked at here */
	uint64_t size;
};

int compress_begin(struct imgfs_writer *w, struct imgfs_node *inode,
		   const char *path, uint32_t inline_room,
		   struct imgfs_compress_stream **out, struct imgfs_error *err)
{
	struct imgfs_compressor *c = w->compressor;
	struct imgfs_compress_stream *s = calloc(1, sizeof(*s));

	if (s)
		s->fd.f = calloc(1, sizeof(*s->fd.f));
	if (s && s->fd.f)
		s->fd.f->path = strdup(path);
	if (!s || !s->fd.f || !s->fd.f->path) {
		if (s)
			free(s->fd.f);
		free(s);
		return error_set(err, -ENOMEM, "out of memory");
	}
	s->fd.w = w;
	s->fd.c = c;
	s->fd.f->inode = inode;
	s->size = inode->size;
	s->fd.f->frag = c->fragments;
	if (!c->fragments) {
		s->fd.f->tail_room = tail_room(c, inode);
		/* a flat file has no map: all of @inline_room is there */
		s->fd.f->flat_room = c->inline_data ? inline_room : 0;
	}
	*out = s;
	return 0;
}

int compress_put(struct imgfs_compress_stream *s, const void *buf, uint64_t len,
		 struct imgfs_error *err)
{
	return feed(&s->fd, buf, len, err);
}

int compress_end(struct imgfs_compress_stream *s, struct imgfs_error *err)
{
	int ret = feed(&s->fd, NULL, s->size - s->fd.pos, err);

	if (ret) {
		compress_abort(s);
		return ret;
	}
	/* the file now belongs to its jobs */
	free(s);
	return 0;
}

void compress_abort(struct imgfs_compress_stream *s)
{
	if (!s)
		return;
	if (s->fd.pos == s->size && s->size) {
		free(s); /* every job is queued: they own the file */
		return;
	}
	if (s->fd.cur)
		zjob_free(s->fd.cur);
	s->fd.f->aborted = true;
	if (!s->fd.f->pending)
		zfile_free(s->fd.f);
	free(s);
}
