// SPDX-License-Identifier: MIT
/*
 * The library's hash tables and growable arrays, against plain arrays
 * searched linearly: colliding hashes, growth across many doublings,
 * keys 0 and UINT64_MAX, duplicates, and the vector's doubling.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashtab.h"
#include "util/vec.h"
#include "unit.h"

#define NR_RECORDS 20000u

struct record {
	struct imgfs_hnode node;
	char name[16];
	unsigned int serial;
};

static bool record_eq(const struct imgfs_hnode *n, const void *key)
{
	const struct record *r = imgfs_container_of(n, struct record, node);

	return !strcmp(r->name, key);
}

/* Half the records share 16 hashes: chains of equal hashes must work. */
static uint64_t record_hash(unsigned int i, const char *name)
{
	if (i % 2)
		return i % 16;
	return hash_bytes(0, name, strlen(name));
}

static void test_hashtab(void)
{
	struct record *recs = calloc(NR_RECORDS, sizeof(*recs));
	struct imgfs_hashtab t = { 0 };
	struct imgfs_hnode *n;
	unsigned int found = 0, i;
	char key[16];

	CHECK(hashtab_first(&t, 1) == NULL);
	for (i = 0; i < NR_RECORDS; i++) {
		snprintf(recs[i].name, sizeof(recs[i].name), "r%u", i);
		recs[i].serial = i;
		CHECK(!hashtab_insert(&t, &recs[i].node,
				      record_hash(i, recs[i].name)));
	}
	CHECK(t.count == NR_RECORDS);
	CHECK(t.nr_buckets >= NR_RECORDS && t.nr_buckets % 2 == 0);
	for (i = 0; i < NR_RECORDS; i++) {
		n = hashtab_find(&t, record_hash(i, recs[i].name), record_eq,
				 recs[i].name);
		found += n == &recs[i].node;
	}
	CHECK(found == NR_RECORDS);
	/* absent keys, one of them on a crowded hash */
	CHECK(!hashtab_find(&t, 3, record_eq, "r2"));
	snprintf(key, sizeof(key), "r%u", NR_RECORDS);
	CHECK(!hashtab_find(&t, hash_bytes(0, key, strlen(key)), record_eq,
			    key));
	/* first/next give every node of a hash, newest first, none other */
	found = 0;
	i = NR_RECORDS;
	for (n = hashtab_first(&t, 5); n; n = hashtab_next(n)) {
		struct record *r = imgfs_container_of(n, struct record, node);

		CHECK(r->serial % 16 == 5);
		CHECK(r->serial < i);
		i = r->serial;
		found++;
	}
	CHECK(found == NR_RECORDS / 16);
	hashtab_free(&t);
	CHECK(!t.buckets && !t.count);
	free(recs);
}

static void test_duplicates(void)
{
	struct record a = { .name = "x" }, b = { .name = "x" };
	struct imgfs_hashtab t = { 0 };

	CHECK(!hashtab_insert(&t, &a.node, 42));
	CHECK(!hashtab_insert(&t, &b.node, 42));
	CHECK(hashtab_find(&t, 42, record_eq, "x") == &b.node);
	CHECK(hashtab_next(&b.node) == &a.node);
	CHECK(hashtab_next(&a.node) == NULL);
	hashtab_free(&t);
}

static void test_u64map(void)
{
	struct imgfs_u64map m = { 0 };
	uint64_t v = 7, i, bad = 0;

	CHECK(!u64map_get(&m, 0, &v) && v == 7);
	CHECK(!u64map_set(&m, 0, 1));
	CHECK(u64map_add(&m, 0, 100) == 1);
	CHECK(u64map_add(&m, UINT64_MAX, 200) == 1);
	CHECK(u64map_add(&m, 0, 999) == 0);
	CHECK(u64map_get(&m, 0, &v) && v == 100);
	CHECK(u64map_get(&m, UINT64_MAX, &v) && v == 200);
	/* NIDs are often multiples of a power of two */
	for (i = 1; i <= 100000; i++)
		if (u64map_add(&m, i << 5, i) != 1)
			bad++;
	CHECK(!bad);
	CHECK(m.count == 100002);
	CHECK(m.count <= m.cap / 2);
	for (i = 1; i <= 100000; i++)
		if (!u64map_get(&m, i << 5, &v) || v != i ||
		    u64map_get(&m, (i << 5) + 1, NULL))
			bad++;
	CHECK(!bad);
	CHECK(u64map_set(&m, 64, 5) && u64map_get(&m, 64, &v) && v == 5);
	CHECK(u64map_get(&m, 0, &v) && v == 100);
	/* find or add: one value, written through the pointer */
	{
		bool added = false;
		uint64_t *p = u64map_find_or_add(&m, 7ull << 40, 1, &added);

		CHECK(p && added && *p == 1);
		*p = 2;
		p = u64map_find_or_add(&m, 7ull << 40, 9, &added);
		CHECK(p && !added && *p == 2);
		CHECK(u64map_get(&m, 7ull << 40, &v) && v == 2);
	}
	u64map_free(&m);
	CHECK(!m.slots && !m.cap && !u64map_get(&m, 0, NULL));
}

static void test_vec(void)
{
	uint32_t *a = NULL;
	size_t cap = 0, i, bad = 0;

	CHECK(!IMGFS_VEC_RESERVE(a, cap, 0, 8) && !a && cap == 0);
	CHECK(!IMGFS_VEC_RESERVE(a, cap, 1, 8) && a && cap == 8);
	CHECK(!IMGFS_VEC_RESERVE(a, cap, 8, 8) && cap == 8);
	CHECK(!IMGFS_VEC_RESERVE(a, cap, 9, 8) && cap == 16);
	CHECK(!IMGFS_VEC_RESERVE(a, cap, 1000, 8) && cap == 1024);
	for (i = 0; i < 1000; i++)
		a[i] = (uint32_t)i;
	CHECK(!IMGFS_VEC_RESERVE(a, cap, 5000, 8) && cap == 8192);
	for (i = 0; i < 1000; i++)
		bad += a[i] != i;
	CHECK(!bad);
	/* an impossible size fails cleanly and keeps the array */
	CHECK(IMGFS_VEC_RESERVE(a, cap, SIZE_MAX / 2, 8) == -ENOMEM);
	CHECK(cap == 8192 && a[999] == 999);
	free(a);
}

int main(void)
{
	test_hashtab();
	test_duplicates();
	test_u64map();
	test_vec();
	return unit_done("test_hashtab");
}
