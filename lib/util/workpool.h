/* SPDX-License-Identifier: MIT */
/*
 * workpool.h - a fixed set of worker threads running submitted work items
 * in submission order (first come, first served).
 *
 * The submitter owns every work item: it allocates it, submits it, waits
 * for it and frees it. The pool only links queued items and flags them
 * done. Each worker thread has one private pointer ("local") that work
 * functions may use for per-thread state such as compressor contexts; the
 * pool frees it with the callback given at creation when it is destroyed.
 */
#ifndef IMGFS_WORKPOOL_H
#define IMGFS_WORKPOOL_H

#include <stdbool.h>

#include "imgfs/error.h"

struct imgfs_workpool;

struct imgfs_work {
	struct imgfs_work *next; /* queue link, owned by the pool */
	/* runs in a worker thread; @local is that thread's private slot */
	void (*run)(struct imgfs_work *work, void **local);
	bool done; /* read it through workpool_wait/done only */
};

/*
 * Start @nthreads workers (at least one). @local_free (may be NULL) is
 * called on each non-NULL thread-local pointer at destruction. Returns
 * NULL with @err set when threads cannot be created or memory runs out.
 */
struct imgfs_workpool *workpool_create(unsigned int nthreads,
				       void (*local_free)(void *local),
				       struct imgfs_error *err);

/* Queue @work (its run function set) behind every earlier item. */
void workpool_submit(struct imgfs_workpool *p, struct imgfs_work *work);

/* Block until @work has run. */
void workpool_wait(struct imgfs_workpool *p, struct imgfs_work *work);

/* Has @work run? Never blocks for long. */
bool workpool_done(struct imgfs_workpool *p, struct imgfs_work *work);

/*
 * Stop the workers: items still queued are dropped without running (their
 * owner frees them), running ones finish first. NULL is allowed.
 */
void workpool_destroy(struct imgfs_workpool *p);

#endif /* IMGFS_WORKPOOL_H */
