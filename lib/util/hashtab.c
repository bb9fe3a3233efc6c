// SPDX-License-Identifier: MIT
/*
 * hashtab.c - a chained table of embedded nodes, and an open-addressing
 * map of 64-bit keys. Both grow by doubling; bucket and slot indexes are
 * the low bits of the hash, so hashes must mix into their low bits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashtab.h"

#define HASHTAB_FIRST 256u
#define U64MAP_FIRST 256u

/*
 * Doubling splits bucket i into buckets i and i + old: each node is
 * appended to its new chain, so nodes of equal hash keep their order
 * (newest first) across growth.
 */
static int hashtab_grow(struct imgfs_hashtab *t)
{
	size_t old = t->nr_buckets, n = old ? old * 2 : HASHTAB_FIRST;
	struct imgfs_hnode **b;

	if (n < old || n > SIZE_MAX / sizeof(*b))
		return -ENOMEM;
	b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < old; i++) {
		struct imgfs_hnode **tail[2] = { &b[i], &b[i + old] };
		struct imgfs_hnode *h = t->buckets[i];

		while (h) {
			struct imgfs_hnode *next = h->next;
			int high = (h->hash & old) != 0;

			h->next = NULL;
			*tail[high] = h;
			tail[high] = &h->next;
			h = next;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nr_buckets = n;
	return 0;
}

int hashtab_insert(struct imgfs_hashtab *t, struct imgfs_hnode *n,
		   uint64_t hash)
{
	struct imgfs_hnode **b;

	if (t->count >= t->nr_buckets / 4 * 3 && hashtab_grow(t))
		return -ENOMEM;
	b = &t->buckets[hash & (t->nr_buckets - 1)];
	n->hash = hash;
	n->next = *b;
	*b = n;
	t->count++;
	return 0;
}

static struct imgfs_hnode *same_hash(struct imgfs_hnode *n, uint64_t hash)
{
	while (n && n->hash != hash)
		n = n->next;
	return n;
}

struct imgfs_hnode *hashtab_first(const struct imgfs_hashtab *t, uint64_t hash)
{
	if (!t->nr_buckets)
		return NULL;
	return same_hash(t->buckets[hash & (t->nr_buckets - 1)], hash);
}

struct imgfs_hnode *hashtab_next(const struct imgfs_hnode *n)
{
	return same_hash(n->next, n->hash);
}

struct imgfs_hnode *hashtab_find(const struct imgfs_hashtab *t, uint64_t hash,
				 imgfs_hash_eq_fn eq, const void *key)
{
	struct imgfs_hnode *n;

	for (n = hashtab_first(t, hash); n; n = hashtab_next(n))
		if (eq(n, key))
			return n;
	return NULL;
}

void hashtab_free(struct imgfs_hashtab *t)
{
	free(t->buckets);
	memset(t, 0, sizeof(*t));
}

uint64_t hash_bytes(uint64_t seed, const void *p, size_t len)
{
	const uint8_t *s = p;
	uint64_t h = 0xcbf29ce484222325ull ^ seed;

	for (size_t i = 0; i < len; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	/* FNV's low bits are weak for short keys: fold the high ones in */
	return h ^ (h >> 29);
}

uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* The slot of @key, or the empty slot where it would go. */
static size_t u64map_slot(const struct imgfs_u64map *m, uint64_t key)
{
	size_t i = (size_t)hash_u64(key) & (m->cap - 1);

	while (m->used[i] && m->slots[i].key != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int u64map_grow(struct imgfs_u64map *m)
{
	struct imgfs_u64map n = { .cap = m->cap ? m->cap * 2 : U64MAP_FIRST };

	if (n.cap < m->cap || n.cap > SIZE_MAX / sizeof(*n.slots))
		return -ENOMEM;
	n.slots = malloc(n.cap * sizeof(*n.slots));
	n.used = calloc(n.cap, 1);
	if (!n.slots || !n.used) {
		free(n.slots);
		free(n.used);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->used[i])
			continue;
		j = u64map_slot(&n, m->slots[i].key);
		n.used[j] = 1;
		n.slots[j] = m->slots[i];
	}
	n.count = m->count;
	u64map_free(m);
	*m = n;
	return 0;
}

uint64_t *u64map_find_or_add(struct imgfs_u64map *m, uint64_t key,
			     uint64_t value, bool *added)
{
	size_t i;

	/* at most half full: probes stay short */
	if (m->count >= m->cap / 2 && u64map_grow(m))
		return NULL;
	i = u64map_slot(m, key);
	*added = !m->used[i];
	if (*added) {
		m->used[i] = 1;
		m->slots[i].key = key;
		m->slots[i].value = value;
		m->count++;
	}
	return &m->slots[i].value;
}

int u64map_add(struct imgfs_u64map *m, uint64_t key, uint64_t value)
{
	bool added;

	if (!u64map_find_or_add(m, key, value, &added))
		return -ENOMEM;
	return added;
}

bool u64map_get(const struct imgfs_u64map *m, uint64_t key, uint64_t *value)
{
	size_t i;

	if (!m->cap)
		return false;
	i = u64map_slot(m, key);
	if (!m->used[i])
		return false;
	if (value)
		*value = m->slots[i].value;
	return true;
}

bool u64map_set(struct imgfs_u64map *m, uint64_t key, uint64_t value)
{
	size_t i;

	if (!m->cap)
		return false;
	i = u64map_slot(m, key);
	if (!m->used[i])
		return false;
	m->slots[i].value = value;
	return true;
}

void u64map_free(struct imgfs_u64map *m)
{
	free(m->slots);
	free(m->used);
	memset(m, 0, sizeof(*m));
}
