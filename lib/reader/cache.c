// SPDX-License-Identifier: MIT
/*
 * cache.c - the last few 4 KiB units of a file image that small reads
 * touched. A walk reads inodes, inline tails, directory blocks and
 * compression indexes a few dozen bytes at a time, mostly one unit after
 * the other: one pread per unit instead of one per read halves the system
 * calls of a full check. Slots are direct-mapped, each with its own lock,
 * so threads reading different units do not wait for each other.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"
#include "util/fileio.h"

#define UNIT_BITS 12
#define UNIT (1u << UNIT_BITS)
#define SLOTS 64u
/* Larger reads go straight to the file: they would not be shared. */
#define SMALL_READ (UNIT / 2)

struct cache_slot {
	pthread_mutex_t lock;
	uint64_t unit; /* UINT64_MAX: empty */
	size_t len; /* bytes valid (the last unit may be short) */
	uint8_t data[UNIT];
};

struct img_cache {
	struct cache_slot slot[SLOTS];
};

int img_cache_init(struct imgfs_image *img)
{
	struct img_cache *c;

	if (img->mem)
		return 0;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (unsigned int i = 0; i < SLOTS; i++) {
		if (pthread_mutex_init(&c->slot[i].lock, NULL)) {
			while (i--)
				pthread_mutex_destroy(&c->slot[i].lock);
			free(c);
			return -ENOMEM;
		}
		c->slot[i].unit = UINT64_MAX;
		c->slot[i].len = 0;
	}
	img->cache = c;
	return 0;
}

void img_cache_free(struct imgfs_image *img)
{
	if (!img->cache)
		return;
	for (unsigned int i = 0; i < SLOTS; i++)
		pthread_mutex_destroy(&img->cache->slot[i].lock);
	free(img->cache);
	img->cache = NULL;
}

int img_cache_read(struct imgfs_image *img, void *buf, size_t len,
		   uint64_t off)
{
	uint64_t unit = off >> UNIT_BITS;
	size_t at = (size_t)(off & (UNIT - 1));
	struct cache_slot *s;
	ssize_t n;
	int ret = 0;

	if (!img->cache || len > SMALL_READ || at + len > UNIT)
		return 1;
	s = &img->cache->slot[unit % SLOTS];
	pthread_mutex_lock(&s->lock);
	if (s->unit != unit) {
		n = pread_full(img->fd, s->data, UNIT, unit << UNIT_BITS);
		if (n < 0) {
			s->unit = UINT64_MAX;
			ret = (int)n;
			goto out;
		}
		s->unit = unit;
		s->len = (size_t)n;
	}
	if (at + len > s->len)
		ret = -EIO; /* the file shrank under us */
	else
		memcpy(buf, s->data + at, len);
out:
	pthread_mutex_unlock(&s->lock);
	return ret;
}
