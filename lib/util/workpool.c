// SPDX-License-Identifier: MIT
/*
 * Worker threads behind one FIFO. One mutex guards the queue and every
 * item's done flag; the submitter waits on a second condition variable,
 * woken whenever any item completes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/workpool.h"
#include "util/error.h"

struct worker {
	struct imgfs_workpool *pool;
	pthread_t thread;
	void *local;
	bool started;
};

struct imgfs_workpool {
	pthread_mutex_t lock;
	pthread_cond_t has_work; /* queue became non-empty, or stopping */
	pthread_cond_t work_done; /* some item completed */
	struct imgfs_work *head, *tail;
	bool stop;
	void (*local_free)(void *local);
	unsigned int nthreads;
	struct worker workers[];
};

static struct imgfs_work *take(struct imgfs_workpool *p)
{
	struct imgfs_work *work;

	while (!p->head && !p->stop)
		pthread_cond_wait(&p->has_work, &p->lock);
	if (p->stop)
		return NULL;
	work = p->head;
	p->head = work->next;
	if (!p->head)
		p->tail = NULL;
	return work;
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct imgfs_workpool *p = wk->pool;
	struct imgfs_work *work;

	pthread_mutex_lock(&p->lock);
	while ((work = take(p))) {
		pthread_mutex_unlock(&p->lock);
		work->run(work, &wk->local);
		pthread_mutex_lock(&p->lock);
		work->done = true;
		pthread_cond_broadcast(&p->work_done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct imgfs_workpool *workpool_create(unsigned int nthreads,
				       void (*local_free)(void *local),
				       struct imgfs_error *err)
{
	struct imgfs_workpool *p;
	int ret;

	if (!nthreads)
		nthreads = 1;
	p = calloc(1, sizeof(*p) + nthreads * sizeof(p->workers[0]));
	if (!p) {
		error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->has_work, NULL);
	pthread_cond_init(&p->work_done, NULL);
	p->local_free = local_free;
	p->nthreads = nthreads;
	for (unsigned int i = 0; i < nthreads; i++) {
		p->workers[i].pool = p;
		ret = pthread_create(&p->workers[i].thread, NULL, worker_main,
				     &p->workers[i]);
		if (ret) {
			error_set(err, -ret,
				  "starting compression thread %u: %s", i + 1,
				  strerror(ret));
			workpool_destroy(p);
			return NULL;
		}
		p->workers[i].started = true;
	}
	return p;
}

void workpool_submit(struct imgfs_workpool *p, struct imgfs_work *work)
{
	work->next = NULL;
	work->done = false;
	pthread_mutex_lock(&p->lock);
	if (p->tail)
		p->tail->next = work;
	else
		p->head = work;
	p->tail = work;
	pthread_cond_signal(&p->has_work);
	pthread_mutex_unlock(&p->lock);
}

void workpool_wait(struct imgfs_workpool *p, struct imgfs_work *work)
{
	pthread_mutex_lock(&p->lock);
	while (!work->done)
		pthread_cond_wait(&p->work_done, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

bool workpool_done(struct imgfs_workpool *p, struct imgfs_work *work)
{
	bool done;

	pthread_mutex_lock(&p->lock);
	done = work->done;
	pthread_mutex_unlock(&p->lock);
	return done;
}

void workpool_destroy(struct imgfs_workpool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	p->head = p->tail = NULL;
	pthread_cond_broadcast(&p->has_work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned int i = 0; i < p->nthreads; i++) {
		if (!p->workers[i].started)
			continue;
		pthread_join(p->workers[i].thread, NULL);
		if (p->workers[i].local && p->local_free)
			p->local_free(p->workers[i].local);
	}
	pthread_cond_destroy(&p->work_done);
	pthread_cond_destroy(&p->has_work);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
