// SPDX-License-Identifier: MIT
/*
 * The decoded stream's ring (source/readahead.h) with several readers:
 * each reads every byte in order while another lags, the chunk taken
 * before the last stays intact, a reader that leaves holds nobody up,
 * the stream is read to its end once every reader left (or when there
 * was none), and a failure reaches every reader where it happened.
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/readahead.h"
#include "unit.h"

#define CHUNK 4096u
#define NR_FULL 700u
#define TAIL 1234u
#define TOTAL ((uint64_t)NR_FULL * CHUNK + TAIL)

static uint8_t byte_at(uint64_t k)
{
	return (uint8_t)(k * 7 + (k >> 9) + (k >> 17));
}

struct source {
	uint64_t pos;
	unsigned int calls;
	unsigned int fail_at; /* the call that fails; 0: none */
};

static long fill(void *arg, uint8_t *p, size_t chunk, bool *end)
{
	struct source *s = arg;
	size_t n = chunk;

	if (++s->calls == s->fail_at)
		return -1;
	if (TOTAL - s->pos <= chunk) {
		n = (size_t)(TOTAL - s->pos);
		*end = true;
	}
	for (size_t i = 0; i < n; i++)
		p[i] = byte_at(s->pos + i);
	s->pos += n;
	return (long)n;
}

struct reader {
	struct readahead *r;
	unsigned int id;
	unsigned int stop_after; /* leave after so many chunks; 0: read all */
	unsigned int lag_every; /* yield every so many chunks; 0: never */
	/* results */
	uint64_t bytes;
	unsigned int chunks;
	bool in_order, prev_intact, saw_end, failed, after_end_empty;
};

static bool matches(const uint8_t *p, size_t n, uint64_t at)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != byte_at(at + i))
			return false;
	return true;
}

static void *read_all(void *arg)
{
	struct reader *rd = arg;
	const uint8_t *buf, *prev = NULL;
	size_t len, prev_len = 0;
	uint64_t prev_at = 0;
	bool end = false;

	rd->in_order = rd->prev_intact = true;
	while (!end) {
		if (rd->stop_after && rd->chunks == rd->stop_after) {
			readahead_leave(rd->r, rd->id);
			return NULL;
		}
		if (readahead_next(rd->r, rd->id, &buf, &len, &end)) {
			rd->failed = true;
			break;
		}
		/* the chunk before this one may still be read */
		if (prev && !matches(prev, prev_len, prev_at))
			rd->prev_intact = false;
		if (!matches(buf, len, rd->bytes))
			rd->in_order = false;
		if (!end && len != CHUNK)
			rd->in_order = false;
		prev = buf;
		prev_len = len;
		prev_at = rd->bytes;
		rd->bytes += len;
		rd->chunks++;
		if (rd->lag_every && rd->chunks % rd->lag_every == 0)
			for (int i = 0; i < 20; i++)
				sched_yield();
	}
	if (end) {
		rd->saw_end = true;
		rd->after_end_empty =
			!readahead_next(rd->r, rd->id, &buf, &len, &end) &&
			!len && end;
	}
	readahead_leave(rd->r, rd->id);
	return NULL;
}

/* @n readers with @rd's settings, run to the end; finish()'s result. */
static int run(struct source *s, struct reader *rd, unsigned int n,
	       unsigned int nslots)
{
	struct readahead *r = readahead_start(fill, s, CHUNK, nslots, n);
	pthread_t th[4];
	int ret;

	CHECK(r != NULL);
	if (!r)
		return -2;
	for (unsigned int i = 0; i < n; i++) {
		rd[i].r = r;
		rd[i].id = i;
		CHECK(!pthread_create(&th[i], NULL, read_all, &rd[i]));
	}
	for (unsigned int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	ret = readahead_finish(r);
	readahead_free(r);
	return ret;
}

static void test_two_readers(void)
{
	struct source s = { 0 };
	struct reader rd[2] = { { .lag_every = 0 }, { .lag_every = 3 } };

	CHECK(run(&s, rd, 2, 6) == 0);
	for (int i = 0; i < 2; i++) {
		CHECK(rd[i].bytes == TOTAL);
		CHECK(rd[i].chunks == NR_FULL + 1);
		CHECK(rd[i].in_order);
		CHECK(rd[i].prev_intact);
		CHECK(rd[i].saw_end);
		CHECK(rd[i].after_end_empty);
		CHECK(!rd[i].failed);
	}
	CHECK(s.calls == NR_FULL + 1);
}

static void test_one_leaves(void)
{
	struct source s = { 0 };
	struct reader rd[2] = { { .lag_every = 5 }, { .stop_after = 10 } };

	/* reader 1 stops after 10 chunks: the ring goes on for reader 0 */
	CHECK(run(&s, rd, 2, 4) == 0);
	CHECK(rd[0].bytes == TOTAL && rd[0].in_order && rd[0].prev_intact);
	CHECK(rd[1].chunks == 10 && rd[1].in_order && !rd[1].saw_end);
	CHECK(s.pos == TOTAL);
}

static void test_all_leave_early(void)
{
	struct source s = { 0 };
	struct reader rd[2] = { { .stop_after = 3 }, { .stop_after = 1 } };

	/* the rest is read through once nobody reads */
	CHECK(run(&s, rd, 2, 4) == 0);
	CHECK(s.pos == TOTAL && s.calls == NR_FULL + 1);
}

static void test_no_reader(void)
{
	struct source s = { 0 };

	CHECK(run(&s, NULL, 0, 3) == 0);
	CHECK(s.pos == TOTAL && s.calls == NR_FULL + 1);
}

static void test_failure(void)
{
	struct source s = { .fail_at = 51 };
	struct reader rd[2] = { { .lag_every = 2 }, { 0 } };

	CHECK(run(&s, rd, 2, 5) == -1);
	for (int i = 0; i < 2; i++) {
		CHECK(rd[i].failed);
		CHECK(rd[i].chunks == 50);
		CHECK(rd[i].in_order && rd[i].prev_intact);
		CHECK(!rd[i].saw_end);
	}
}

static void test_single_reader(void)
{
	struct source s = { 0 };
	struct reader rd[1] = { { .lag_every = 7 } };

	CHECK(run(&s, rd, 1, 3) == 0);
	CHECK(rd[0].bytes == TOTAL && rd[0].in_order && rd[0].prev_intact &&
	      rd[0].saw_end);
}

int main(void)
{
	for (int i = 0; i < 3; i++) {
		test_two_readers();
		test_one_leaves();
		test_all_leave_early();
		test_no_reader();
		test_failure();
		test_single_reader();
	}
	return unit_done("test_readahead");
}
