// SPDX-License-Identifier: MIT
/*
 * order.c - the parallel data check's ordered queue.
 *
 * With several threads, regular files' contents are read by workers
 * (data.c's jobs) while the walk goes on. Whatever the walk finds after a
 * file whose job has not been finished yet (findings, entries for the entry
 * callback) is copied into one FIFO behind that job; the queue is emptied
 * from its head as jobs complete, so the callbacks see exactly the
 * sequence of a one-thread check, whatever the thread count and timing.
 *
 * The queue is bounded by fixed counts, not by the thread count: the walk
 * waits for the oldest job when it holds too many jobs or events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check/internal.h"
#include "util/error.h"

/* Jobs and events queued before the walk waits for the oldest job. */
#define QUEUE_JOBS_MAX 256u
#define QUEUE_EVENTS_MAX 16384u
/* A batch goes to the pool when it holds this many files or bytes. */
#define BATCH_JOBS 32u
#define BATCH_BYTES (512u << 10)

enum event_kind {
	EVENT_PROBLEM,
	EVENT_ENTRY,
	EVENT_JOB,
};

struct check_event {
	struct check_event *next;
	enum event_kind kind;
	struct imgfs_check_problem p; /* EVENT_PROBLEM */
	struct imgfs_check_entry e; /* EVENT_ENTRY, inode below */
	struct imgfs_inode inode;
	struct check_node *n;
	struct check_job *job; /* EVENT_JOB */
	char strings[]; /* the copied strings */
};

/* A new event with room for the strings @a and @b (either may be NULL). */
static struct check_event *event_new(struct check_ctx *c, enum event_kind kind,
				     const char *a, const char *b,
				     const char **ca, const char **cb)
{
	size_t la = a ? strlen(a) + 1 : 0, lb = b ? strlen(b) + 1 : 0;
	struct check_event *ev = malloc(sizeof(*ev) + la + lb);

	if (!ev) {
		c->fatal = error_set(c->err, -ENOMEM, "out of memory");
		return NULL;
	}
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	*ca = a ? memcpy(ev->strings, a, la) : NULL;
	*cb = b ? memcpy(ev->strings + la, b, lb) : NULL;
	return ev;
}

void check_deliver_problem(struct check_ctx *c,
			   const struct imgfs_check_problem *p)
{
	if (p->severity == IMGFS_CHECK_ERROR)
		c->res->errors++;
	else if (p->severity == IMGFS_CHECK_WARNING)
		c->res->warnings++;
	else
		c->res->notes++;
	if (c->opts.report)
		c->opts.report(c->opts.report_arg, p);
}

static void event_append(struct check_ctx *c, struct check_event *ev)
{
	if (c->ev_tail)
		c->ev_tail->next = ev;
	else
		c->ev_head = ev;
	c->ev_tail = ev;
	c->nr_events++;
	if (ev->kind == EVENT_JOB)
		c->nr_jobs++;
}

void check_queue_problem(struct check_ctx *c,
			 const struct imgfs_check_problem *p)
{
	struct check_event *ev;
	const char *path, *msg;

	ev = event_new(c, EVENT_PROBLEM, p->path, p->msg, &path, &msg);
	if (!ev)
		return;
	ev->p = *p;
	ev->p.path = path;
	ev->p.msg = msg;
	event_append(c, ev);
	check_queue_flush(c, false);
}

int check_queue_entry(struct check_ctx *c, const struct imgfs_check_entry *e,
		      struct check_node *n)
{
	struct check_event *ev;
	const char *path, *link_to;

	ev = event_new(c, EVENT_ENTRY, e->path, e->link_to, &path, &link_to);
	if (!ev)
		return c->fatal;
	ev->e = *e;
	ev->e.path = path;
	ev->e.link_to = link_to;
	ev->inode = *e->inode;
	ev->e.inode = &ev->inode;
	ev->n = n;
	event_append(c, ev);
	check_queue_flush(c, false);
	return 0;
}

struct imgfs_workpool *check_pool(struct check_ctx *c)
{
	if (c->pool)
		return c->pool;
	c->pool = workpool_create(c->threads, free, c->err);
	if (!c->pool)
		c->fatal = c->err->code ? c->err->code : -ENOMEM;
	return c->pool;
}

static void batch_work(struct imgfs_work *work, void **local)
{
	struct check_batch *b = (struct check_batch *)work;

	for (struct check_job *job = b->head; job; job = job->next)
		job->ops->run(job, local);
}

static void batch_submit(struct check_ctx *c, struct check_batch *b)
{
	if (b->submitted)
		return;
	b->submitted = true;
	if (c->batch == b)
		c->batch = NULL;
	workpool_submit(c->pool, &b->work);
}

/* Into @b's list, behind the jobs stored before it or at the same place. */
static void batch_insert(struct check_batch *b, struct check_job *job)
{
	struct check_job **p = &b->head;

	if (b->tail && b->tail->where > job->where)
		while (*p && (*p)->where <= job->where)
			p = &(*p)->next;
	else
		p = b->tail ? &b->tail->next : &b->head;
	job->next = *p;
	*p = job;
	if (!job->next)
		b->tail = job;
}

int check_queue_job(struct check_ctx *c, struct check_job *job)
{
	struct check_event *ev = calloc(1, sizeof(*ev));
	struct check_batch *b = c->batch;

	if (!ev || (!b && !(b = calloc(1, sizeof(*b))))) {
		free(ev);
		return c->fatal = error_set(c->err, -ENOMEM, "out of memory");
	}
	if (!check_pool(c)) {
		if (b != c->batch)
			free(b);
		free(ev);
		return c->fatal;
	}
	if (!c->batch) {
		b->work.run = batch_work;
		c->batch = b;
	}
	batch_insert(b, job);
	b->jobs++;
	b->bytes += job->inode.size;
	job->batch = b;
	ev->kind = EVENT_JOB;
	ev->job = job;
	event_append(c, ev);
	if (b->jobs >= BATCH_JOBS || b->bytes >= BATCH_BYTES)
		batch_submit(c, b);
	check_queue_flush(c, false);
	return 0;
}

/* A job was delivered (or dropped): free it, and its batch after the
 * batch's last. */
static void job_done(struct check_job *job)
{
	struct check_batch *b = job->batch;

	job->ops->free(job);
	if (!--b->jobs)
		free(b);
}

int check_call_entry(struct check_ctx *c, struct imgfs_check_entry *e,
		     struct check_node *n)
{
	int ret;

	e->sha256 = n->have_digest ? n->sha256 : NULL;
	e->data_ok = n->data_ok;
	ret = c->opts.entry(c->opts.entry_arg, e);
	if (!ret)
		return 0;
	c->res->stopped = true;
	c->stop = ret < 0 ? ret : 1;
	return c->stop;
}

/* Hand @ev to the callbacks (or drop it once the walk was stopped). */
static void deliver(struct check_ctx *c, struct check_event *ev)
{
	switch (ev->kind) {
	case EVENT_PROBLEM:
		if (!c->stop)
			check_deliver_problem(c, &ev->p);
		break;
	case EVENT_ENTRY:
		if (!c->stop)
			check_call_entry(c, &ev->e, ev->n);
		break;
	case EVENT_JOB:
		batch_submit(c, ev->job->batch);
		workpool_wait(c->pool, &ev->job->batch->work);
		if (!c->stop) {
			c->delivering = true;
			ev->job->ops->finish(c, ev->job);
			c->delivering = false;
		}
		job_done(ev->job);
		break;
	}
}

static bool over_bounds(const struct check_ctx *c)
{
	return c->nr_jobs > QUEUE_JOBS_MAX || c->nr_events > QUEUE_EVENTS_MAX;
}

void check_queue_flush(struct check_ctx *c, bool wait)
{
	struct check_event *ev;

	if (c->delivering)
		return; /* a job being finished reports straight out */
	while ((ev = c->ev_head)) {
		if (ev->kind == EVENT_JOB && !wait && !over_bounds(c) &&
		    (!ev->job->batch->submitted ||
		     !workpool_done(c->pool, &ev->job->batch->work)))
			break;
		c->ev_head = ev->next;
		if (!c->ev_head)
			c->ev_tail = NULL;
		c->nr_events--;
		if (ev->kind == EVENT_JOB)
			c->nr_jobs--;
		/* delivering may queue nothing: the head is already out */
		deliver(c, ev);
		free(ev);
	}
}

void check_queue_free(struct check_ctx *c)
{
	c->stop = c->stop ? c->stop : 1; /* drop, but wait for the jobs */
	check_queue_flush(c, true);
}
