/* SPDX-License-Identifier: MIT */
/*
 * hashtab.h - the library's hash tables (not installed).
 *
 * struct imgfs_hashtab is a chained table of nodes embedded in the caller's
 * records (as the kernel's hlist): the caller computes the 64-bit hash,
 * owns and frees the records, and compares keys itself while walking the
 * nodes that carry the same hash. No record is ever allocated or moved by
 * the table, so pointers to records stay valid, and growing costs one
 * bucket array. Nothing iterates a table: callers keep their own lists
 * when they need an order, so the table's layout never shows in output.
 *
 * struct imgfs_u64map maps 64-bit keys (NIDs) to 64-bit values with open
 * addressing and no per-entry allocation: the shape of every "which NIDs
 * have we met" set of the reader's users.
 */
#ifndef IMGFS_HASHTAB_H
#define IMGFS_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define imgfs_container_of(ptr, type, member)                               \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct imgfs_hnode {
	struct imgfs_hnode *next;
	uint64_t hash;
};

struct imgfs_hashtab {
	struct imgfs_hnode **buckets;
	size_t nr_buckets; /* a power of two, 0 until the first insertion */
	size_t count;
};

/* Key comparison for hashtab_find(): true when @n holds @key. */
typedef bool (*imgfs_hash_eq_fn)(const struct imgfs_hnode *n, const void *key);

/*
 * Add @n with @hash (duplicates are allowed: the caller decides). Grows
 * the table when it is 3/4 full. Returns 0, or -ENOMEM with nothing added.
 */
int hashtab_insert(struct imgfs_hashtab *t, struct imgfs_hnode *n,
		   uint64_t hash);

/* The most recently inserted node with @hash, or NULL. */
struct imgfs_hnode *hashtab_first(const struct imgfs_hashtab *t, uint64_t hash);

/* The next older node with the same hash as @n, or NULL. */
struct imgfs_hnode *hashtab_next(const struct imgfs_hnode *n);

/* The most recent node with @hash for which @eq(node, @key) holds. */
struct imgfs_hnode *hashtab_find(const struct imgfs_hashtab *t, uint64_t hash,
				 imgfs_hash_eq_fn eq, const void *key);

/* Free the bucket array; the nodes belong to the caller. */
void hashtab_free(struct imgfs_hashtab *t);

/* FNV-1a of @len bytes, started from @seed (0: the standard basis). */
uint64_t hash_bytes(uint64_t seed, const void *p, size_t len);

/* A 64-bit mix of @x whose low bits depend on all of its bits. */
uint64_t hash_u64(uint64_t x);

struct imgfs_u64map_slot {
	uint64_t key;
	uint64_t value;
};

struct imgfs_u64map {
	struct imgfs_u64map_slot *slots;
	uint8_t *used; /* one byte per slot: any key, 0 included, is valid */
	size_t cap; /* a power of two, 0 until the first insertion */
	size_t count;
};

/*
 * Add @key with @value. Returns 1 when added, 0 when @key was there
 * already (its value is left as it was), or -ENOMEM.
 */
int u64map_add(struct imgfs_u64map *m, uint64_t key, uint64_t value);

/*
 * The value of @key, added with @value when it was not there (*@added
 * says which): one probe for "find or insert". NULL on no memory. The
 * pointer is valid until the next addition.
 */
uint64_t *u64map_find_or_add(struct imgfs_u64map *m, uint64_t key,
			     uint64_t value, bool *added);

/* Whether @key is there; its value goes to *@value (may be NULL). */
bool u64map_get(const struct imgfs_u64map *m, uint64_t key, uint64_t *value);

/* Change the value of @key, which must be there; false if it is not. */
bool u64map_set(struct imgfs_u64map *m, uint64_t key, uint64_t value);

void u64map_free(struct imgfs_u64map *m);

#endif /* IMGFS_HASHTAB_H */
