// SPDX-License-Identifier: MIT
/*
 * compress_pool.c - the encoder contexts the worker threads share (an
 * lzma,9 one holds about 90 MB): made on demand, at most one per CPU the
 * process may use, as no more can run at once; and the work a thread does
 * for one job: take a context, compress the segment, give it back, and
 * digest a whole file for dedupe.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "util/error.h"
#include "util/sha256.h"
#include "writer/compress_int.h"

static void zworker_free(void *local)
{
	struct zworker *wk = local;

	if (wk->ctx)
		wk->alg->ctx_free(wk->ctx);
	free(wk->buf);
	free(wk);
}

static struct zworker *zworker_new(const struct zparams *p)
{
	struct zworker *wk = calloc(1, sizeof(*wk));

	if (!wk)
		return NULL;
	wk->alg = p->alg;
	wk->buf = malloc(p->pcluster);
	wk->ctx = p->alg->ctx_new(&p->cfg);
	if (!wk->buf || !wk->ctx) {
		zworker_free(wk);
		return NULL;
	}
	return wk;
}

/* An idle context, a new one while fewer than max exist, or wait. */
static struct zworker *ctx_get(struct zctxs *cs, const struct zparams *p)
{
	struct zworker *wk;

	pthread_mutex_lock(&cs->lock);
	while (!cs->free && cs->created >= cs->max)
		pthread_cond_wait(&cs->freed, &cs->lock);
	wk = cs->free;
	if (wk) {
		cs->free = wk->next;
		pthread_mutex_unlock(&cs->lock);
		return wk;
	}
	cs->created++;
	pthread_mutex_unlock(&cs->lock);
	wk = zworker_new(p);
	if (!wk) {
		pthread_mutex_lock(&cs->lock);
		cs->created--;
		pthread_cond_signal(&cs->freed);
		pthread_mutex_unlock(&cs->lock);
	}
	return wk;
}

static void ctx_put(struct zctxs *cs, struct zworker *wk)
{
	pthread_mutex_lock(&cs->lock);
	wk->next = cs->free;
	cs->free = wk;
	pthread_cond_signal(&cs->freed);
	pthread_mutex_unlock(&cs->lock);
}

void zjob_run(struct imgfs_work *work, void **local)
{
	struct zjob *j = (struct zjob *)work;
	struct zworker *wk;

	(void)local;
	wk = ctx_get(j->ctxs, j->p);
	if (!wk) {
		j->err = -ENOMEM;
		j->why = "out of memory for a compressor";
		return;
	}
	j->err = zseg_compress(j, wk);
	ctx_put(j->ctxs, wk);
	/* a whole file: its digest finds earlier copies */
	if (!j->err && !j->off && j->last && j->frag)
		j->digest_ok = !sha256_join(j->in, j->len, NULL, 0, j->digest);
	if (j->err && !j->why)
		j->why = j->err == -ENOMEM ? "out of memory" :
					     "compressor failed";
}

int zctxs_init(struct zctxs *cs, unsigned int max, struct imgfs_error *err)
{
	cs->max = max;
	if (pthread_mutex_init(&cs->lock, NULL))
		return error_set(err, -ENOMEM, "cannot create a lock");
	if (pthread_cond_init(&cs->freed, NULL)) {
		pthread_mutex_destroy(&cs->lock);
		return error_set(err, -ENOMEM, "cannot create a condition");
	}
	return 0;
}

void zctxs_destroy(struct zctxs *cs)
{
	while (cs->free) {
		struct zworker *wk = cs->free;

		cs->free = wk->next;
		zworker_free(wk);
	}
	pthread_cond_destroy(&cs->freed);
	pthread_mutex_destroy(&cs->lock);
}
