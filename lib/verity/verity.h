/* SPDX-License-Identifier: MIT */
/*
 * verity.h - the hash tree engine shared by dm-verity and fs-verity
 * (tree.c), and the whole reads and writes both make (io.c).
 *
 * Data is fed in order; each full data block is hashed (salt first) and its
 * digest appended to level 0; a full level block is handed to @emit, hashed
 * and appended to the level above. Only one pending block per level is
 * held. Both formats pad the last block of every level with zeros and take
 * as root the hash of the one block of the top level (of the only data
 * block when there is one).
 */
#ifndef IMGFS_LIB_VERITY_H
#define IMGFS_LIB_VERITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "imgfs/error.h"
#include "imgfs/verity.h"

#define DIGEST IMGFS_VERITY_DIGEST_SIZE
#define IO_CHUNK (256 * 1024)

/* 64-bit block counts with 16 hashes per 512-byte block, and the root */
#define VT_MAX_LEVELS 17

struct vt;
/* a finished block of tree level @level, its @index within the level */
typedef int (*vt_emit_fn)(struct vt *t, unsigned int level, uint64_t index,
			  const uint8_t *block, struct imgfs_error *err);
/* the digest of data block @index */
typedef int (*vt_leaf_fn)(struct vt *t, uint64_t index, const uint8_t *digest,
			  struct imgfs_error *err);

struct vt {
	EVP_MD_CTX *salted; /* state after the salt, copied for each block */
	EVP_MD_CTX *work;
	uint32_t dbs, hbs;
	uint8_t *dbuf; /* pending partial data block */
	size_t dfill;
	uint64_t fed, data_blocks;
	uint8_t *lv[VT_MAX_LEVELS + 1];
	size_t lvfill[VT_MAX_LEVELS + 1];
	uint64_t lvcount[VT_MAX_LEVELS + 1]; /* blocks emitted per level */
	/*
	 * The first @head_blocks data blocks are hashed last (their first
	 * head_size bytes come from imgfs_verity_set_head()): placeholder
	 * digests stand in for them, and the first block of each level is
	 * kept in @held as it was emitted, to be redone at the end.
	 */
	uint64_t head_blocks;
	uint8_t *headbuf; /* head_blocks data blocks */
	bool head_given;
	uint8_t *held[VT_MAX_LEVELS + 1];
	vt_emit_fn emit; /* NULL: nothing stored */
	vt_leaf_fn leaf;
	void *arg;
};

/* salt: hashed before each block (dm-verity's; fs-verity has none) */
int vt_init(struct vt *t, uint32_t dbs, uint32_t hbs, const uint8_t *salt,
	    size_t salt_size, struct imgfs_error *err);
void vt_release(struct vt *t);
int vt_update(struct vt *t, const uint8_t *p, size_t len,
	      struct imgfs_error *err);
/* The head's data blocks are complete: placeholders take their place. */
int vt_head_placeholders(struct vt *t, struct imgfs_error *err);
/* Pad the last data block, flush every level, and return the root. */
int vt_finish(struct vt *t, uint8_t *root, struct imgfs_error *err);
/* Levels below the root for @blocks data blocks (0 for one block). */
unsigned int vt_levels(uint64_t blocks, uint32_t hbs);

/* Feed [0, @size) of @fd to @feed; @size UINT64_MAX: up to its end. */
int vt_feed_fd(int fd, uint64_t size,
	       int (*feed)(void *, const void *, size_t,
			   struct imgfs_error *),
	       void *ctx, struct imgfs_error *err);
/* Read all @len bytes at @off; a short file is damage (-EBADMSG). */
int vt_pread(int fd, void *buf, size_t len, uint64_t off, const char *what,
	     struct imgfs_error *err);
/* Write all @len bytes at @off. */
int vt_pwrite(int fd, const void *buf, size_t len, uint64_t off,
	      struct imgfs_error *err);

static inline uint64_t vt_round_up(uint64_t n, uint64_t a)
{
	return (n + a - 1) / a * a;
}

#endif /* IMGFS_LIB_VERITY_H */
