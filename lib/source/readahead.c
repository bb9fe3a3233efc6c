// SPDX-License-Identifier: MIT
/*
 * Decoding ahead of the tar reader (source/readahead.h). Chunks are
 * numbered in order: the thread fills chunk @filled once every chunk
 * more than @nslots behind it was given back, the reader takes chunk
 * @taken and gives back all but the last two it took.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "source/readahead.h"

struct readahead {
	readahead_fill_fn fill;
	void *arg;
	size_t chunk;
	unsigned int nslots;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t filled, taken, released; /* chunk numbers */
	bool end, failed, stop;
	size_t *len;
	uint8_t *data;
};

static uint8_t *slot(struct readahead *r, uint64_t n)
{
	return r->data + (size_t)(n % r->nslots) * r->chunk;
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

		if (at - r->released >= r->nslots) {
			pthread_cond_wait(&r->cond, &r->lock);
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
		pthread_cond_broadcast(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

struct readahead *readahead_start(readahead_fill_fn fill, void *arg,
				  size_t chunk, unsigned int nslots)
{
	struct readahead *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return NULL;
	r->fill = fill;
	r->arg = arg;
	r->chunk = chunk;
	r->nslots = nslots;
	r->len = calloc(nslots, sizeof(*r->len));
	r->data = malloc(chunk * nslots);
	if (!r->len || !r->data)
		goto fail;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	ret = pthread_create(&r->thread, NULL, decode_thread, r);
	if (!ret)
		return r;
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	errno = ret;
fail:
	free(r->data);
	free(r->len);
	free(r);
	return NULL;
}

int readahead_next(struct readahead *r, const uint8_t **buf, size_t *len,
		   bool *end)
{
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	/* the chunk taken before the last one is done with */
	if (r->taken > r->released + 1) {
		r->released = r->taken - 1;
		pthread_cond_broadcast(&r->cond);
	}
	while (r->filled == r->taken && !r->failed && !r->end)
		pthread_cond_wait(&r->cond, &r->lock);
	if (r->filled > r->taken) {
		*buf = slot(r, r->taken);
		*len = r->len[r->taken % r->nslots];
		r->taken++;
		*end = r->end && r->taken == r->filled;
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

void readahead_free(struct readahead *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	/* a writer may keep the pipe open: the thread must not wait on it */
	pthread_cancel(r->thread);
	pthread_join(r->thread, NULL);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r->data);
	free(r->len);
	free(r);
}
