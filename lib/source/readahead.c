// SPDX-License-Identifier: MIT
/*
 * Decoding ahead of the readers (source/readahead.h). Chunks are
 * numbered in order: the thread fills chunk @filled once every chunk
 * @nslots or more behind it was given back by every reader still
 * reading; a reader takes its chunk @taken and gives back all but the
 * last two it took. Each side signals the other only when it waits, so
 * a stream that flows costs no wake-ups.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "source/readahead.h"

struct ra_reader {
	uint64_t taken, released; /* chunk numbers */
	bool left;
};

struct readahead {
	readahead_fill_fn fill;
	void *arg;
	size_t chunk;
	unsigned int nslots;
	unsigned int nreaders;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t space; /* the thread waits for a slot */
	pthread_cond_t data; /* readers wait for a chunk, finish for the end */
	bool thread_waits;
	unsigned int data_waiters;
	uint64_t filled;
	bool end, failed, stop, done;
	size_t *len;
	uint8_t *data_area;
	struct ra_reader *rd;
};

static uint8_t *slot(struct readahead *r, uint64_t n)
{
	return r->data_area + (size_t)(n % r->nslots) * r->chunk;
}

/* The oldest chunk some reader may still read: @filled when none. */
static uint64_t oldest_held(const struct readahead *r)
{
	uint64_t min = r->filled;

	for (unsigned int i = 0; i < r->nreaders; i++)
		if (!r->rd[i].left && r->rd[i].released < min)
			min = r->rd[i].released;
	return min;
}

static void *decode_thread(void *arg)
{
	struct readahead *r = arg;
	bool end = false;
	long n;

	/* cancellable only inside the raw reads (source/tar.c) */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_mutex_lock(&r->lock);
	while (!end && !r->stop) {
		uint64_t at = r->filled;

		if (at - oldest_held(r) >= r->nslots) {
			r->thread_waits = true;
			pthread_cond_wait(&r->space, &r->lock);
			r->thread_waits = false;
			continue;
		}
		pthread_mutex_unlock(&r->lock);
		n = r->fill(r->arg, slot(r, at), r->chunk, &end);
		pthread_mutex_lock(&r->lock);
		if (n < 0) {
			r->failed = true;
			end = true;
		} else {
			r->len[at % r->nslots] = (size_t)n;
			r->filled++;
			r->end = end;
		}
		if (r->data_waiters)
			pthread_cond_broadcast(&r->data);
	}
	r->done = true;
	if (r->data_waiters)
		pthread_cond_broadcast(&r->data);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

struct readahead *readahead_start(readahead_fill_fn fill, void *arg,
				  size_t chunk, unsigned int nslots,
				  unsigned int readers)
{
	struct readahead *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return NULL;
	r->fill = fill;
	r->arg = arg;
	r->chunk = chunk;
	r->nslots = nslots;
	r->nreaders = readers;
	r->len = calloc(nslots, sizeof(*r->len));
	r->data_area = malloc(chunk * nslots);
	r->rd = calloc(readers ? readers : 1, sizeof(*r->rd));
	if (!r->len || !r->data_area || !r->rd)
		goto fail;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->space, NULL);
	pthread_cond_init(&r->data, NULL);
	ret = pthread_create(&r->thread, NULL, decode_thread, r);
	if (!ret)
		return r;
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->space);
	pthread_cond_destroy(&r->data);
	errno = ret;
fail:
	free(r->rd);
	free(r->data_area);
	free(r->len);
	free(r);
	return NULL;
}

/* Reader @d gives back its chunks before @upto. */
static void give_back(struct readahead *r, struct ra_reader *d, uint64_t upto)
{
	if (upto <= d->released)
		return;
	d->released = upto;
	if (r->thread_waits)
		pthread_cond_signal(&r->space);
}

int readahead_next(struct readahead *r, unsigned int reader,
		   const uint8_t **buf, size_t *len, bool *end)
{
	struct ra_reader *d = &r->rd[reader];
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	/* the chunk taken before the last one is done with */
	if (d->taken > d->released + 1)
		give_back(r, d, d->taken - 1);
	while (r->filled == d->taken && !r->failed && !r->end) {
		r->data_waiters++;
		pthread_cond_wait(&r->data, &r->lock);
		r->data_waiters--;
	}
	if (r->filled > d->taken) {
		*buf = slot(r, d->taken);
		*len = r->len[d->taken % r->nslots];
		d->taken++;
		*end = r->end && d->taken == r->filled;
	} else if (r->end) {
		/* asked again after the end: nothing more, never a wait */
		*buf = NULL;
		*len = 0;
		*end = true;
	} else {
		ret = -1;
	}
	pthread_mutex_unlock(&r->lock);
	return ret;
}

void readahead_leave(struct readahead *r, unsigned int reader)
{
	pthread_mutex_lock(&r->lock);
	r->rd[reader].left = true;
	if (r->thread_waits)
		pthread_cond_signal(&r->space);
	pthread_mutex_unlock(&r->lock);
}

int readahead_finish(struct readahead *r)
{
	int ret;

	pthread_mutex_lock(&r->lock);
	while (!r->done) {
		r->data_waiters++;
		pthread_cond_wait(&r->data, &r->lock);
		r->data_waiters--;
	}
	ret = r->failed ? -1 : 0;
	pthread_mutex_unlock(&r->lock);
	return ret;
}

void readahead_free(struct readahead *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_signal(&r->space);
	pthread_mutex_unlock(&r->lock);
	/* a writer may keep the pipe open: the thread must not wait on it */
	pthread_cancel(r->thread);
	pthread_join(r->thread, NULL);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->space);
	pthread_cond_destroy(&r->data);
	free(r->rd);
	free(r->data_area);
	free(r->len);
	free(r);
}
