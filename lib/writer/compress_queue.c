// SPDX-License-Identifier: MIT
/*
 * compress_queue.c - the ordered job queue. The writer's thread queues
 * jobs in file order and retires finished ones strictly in that order, so
 * block addresses, and the image, never depend on the number of workers or
 * on timing. Memory stays bounded: the queue holds at most two segments
 * per encoder plus two, and reading waits for the oldest job when full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "writer/compress_int.h"
#include "writer/internal.h"

void zjob_free(struct zjob *j)
{
	free(j->in);
	free(j->out);
	free(j->ext);
	free(j->tail);
	free(j);
}

void zfile_free(struct zfile *f)
{
	free(f->path);
	free(f->ext);
	free(f->tail);
	free(f);
}

/* A whole file in one job: store it, or point it at an earlier copy. */
static int retire_whole(struct imgfs_writer *w, struct imgfs_compressor *c,
			struct zjob *j, struct imgfs_error *err)
{
	struct zfile *f = j->file;
	struct zseen *e = zseen_find(c, f->inode->size, j->digest);
	bool shared = false;
	int ret;

	if (e && zseen_share(c, f, e->inode, &shared))
		return error_set(err, -ENOMEM, "out of memory");
	if (shared) {
		if (j->frag)
			c->frag_reserved -= j->len;
		return 0;
	}
	ret = zjob_commit(w, c, j, err);
	if (!ret)
		ret = zfile_finish(c, f, err);
	if (!ret && !e && zseen_add(c, f->inode, j->digest))
		ret = error_set(err, -ENOMEM, "out of memory");
	return ret;
}

int zq_retire_head(struct imgfs_writer *w, struct imgfs_compressor *c,
		   struct imgfs_error *err)
{
	struct zjob *j = c->head;
	struct zfile *f = j->file;
	bool last = j->last;
	int ret;

	workpool_wait(c->pool, &j->work);
	c->head = j->next;
	if (!c->head)
		c->tail = NULL;
	c->queued_bytes -= j->len;
	c->queued_jobs--;
	f->pending--;
	if (j->err)
		ret = error_set(err, j->err,
				"%s: compressing data at offset %llu: %s",
				f->path, (unsigned long long)j->off,
				j->why ? j->why : "failed");
	else if (j->digest_ok && f != c->packed)
		ret = retire_whole(w, c, j, err);
	else
		ret = zjob_commit(w, c, j, err);
	if (!ret && last && !(j->digest_ok && f != c->packed))
		ret = zfile_finish(c, f, err);
	zjob_free(j);
	if (ret)
		f->aborted = true;
	if (!f->pending && (last || f->aborted)) {
		if (f == c->packed)
			c->packed = NULL;
		zfile_free(f);
	}
	return ret;
}

/* Write what is done already, without waiting. */
int zq_retire_done(struct imgfs_writer *w, struct imgfs_compressor *c,
		   struct imgfs_error *err)
{
	int ret = 0;

	while (!ret && c->head && workpool_done(c->pool, &c->head->work))
		ret = zq_retire_head(w, c, err);
	return ret;
}

/* Bounded memory: wait for the oldest jobs while the queue is full. */
int zq_make_room(struct imgfs_writer *w, struct imgfs_compressor *c, size_t len,
		 struct imgfs_error *err)
{
	int ret;

	while (c->head && (c->queued_bytes + len > c->max_bytes ||
			   c->queued_jobs >= c->max_jobs)) {
		ret = zq_retire_head(w, c, err);
		if (ret)
			return ret;
	}
	return 0;
}

struct zjob *zjob_new(struct imgfs_compressor *c, struct zfile *f, uint64_t off,
		      size_t len)
{
	struct zjob *j = calloc(1, sizeof(*j));

	if (j)
		j->in = malloc(len);
	if (!j || !j->in) {
		free(j);
		return NULL;
	}
	j->work.run = zjob_run;
	j->p = &c->p;
	j->ctxs = &c->ctxs;
	j->file = f;
	j->off = off;
	j->len = len;
	return j;
}

void zjob_queue(struct imgfs_compressor *c, struct zjob *j)
{
	if (c->tail)
		c->tail->next = j;
	else
		c->head = j;
	c->tail = j;
	c->queued_bytes += j->len;
	c->queued_jobs++;
	j->file->pending++;
	workpool_submit(c->pool, &j->work);
}

int compressor_flush(struct imgfs_writer *w, struct imgfs_error *err)
{
	struct imgfs_compressor *c = w->compressor;
	int ret = 0;

	while (!ret && c && c->head)
		ret = zq_retire_head(w, c, err);
	return ret;
}

/* Jobs never retired and the packed inode's file, at destruction. */
void zq_drop(struct imgfs_compressor *c)
{
	if (c->packed && !c->packed->pending)
		zfile_free(c->packed);
	while (c->head) {
		struct zjob *j = c->head;
		struct zfile *f = j->file;

		c->head = j->next;
		zjob_free(j);
		if (!--f->pending)
			zfile_free(f);
	}
}
