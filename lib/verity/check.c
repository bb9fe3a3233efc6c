// SPDX-License-Identifier: MIT
/*
 * check.c - checking a dm-verity hash area: the tree is recomputed from the
 * data and each block compared with the stored one, so the report names the
 * first bad data block or tree level, not only a wrong root.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "verity/dm.h"

struct vcheck {
	struct imgfs_verity v; /* parameters from the superblock */
	struct imgfs_verity_check *chk;
	uint8_t *stored; /* the stored level-0 block holding the next digests */
	uint64_t stored_index;
	uint8_t *cmp;
};

static void note_level(struct imgfs_verity_check *chk, unsigned int level,
		       uint64_t index)
{
	if (chk->bad_level == IMGFS_VERITY_NONE || level < chk->bad_level) {
		chk->bad_level = level;
		chk->bad_hash_block = index;
	}
}

/* A recomputed tree block against the stored one. */
static int check_emit(struct vt *t, unsigned int level, uint64_t index,
		      const uint8_t *block, struct imgfs_error *err)
{
	struct vcheck *c = t->arg;
	uint64_t off = c->v.lay.level_off[level] + index * c->v.hbs;
	int ret;

	if (level >= c->v.lay.levels)
		return error_set(err, -EIO,
				 "dm-verity: internal error: level %u", level);
	ret = vt_pread(c->v.hash_fd, c->cmp, c->v.hbs, off, "hash block",
			 err);
	if (ret)
		return ret;
	if (memcmp(c->cmp, block, c->v.hbs))
		note_level(c->chk, level, index);
	return 0;
}

/* A data block's digest against the one stored in level 0. */
static int check_leaf(struct vt *t, uint64_t index, const uint8_t *digest,
		      struct imgfs_error *err)
{
	struct vcheck *c = t->arg;
	uint32_t fan = c->v.hbs / DIGEST;
	uint64_t block = index / fan;
	int ret;

	if (c->stored_index != block) {
		uint64_t off = c->v.lay.level_off[0] + block * c->v.hbs;

		if (!c->v.lay.levels) /* one data block: the root is its hash */
			return 0;
		ret = vt_pread(c->v.hash_fd, c->stored, c->v.hbs, off,
				 "hash block", err);
		if (ret)
			return ret;
		c->stored_index = block;
	}
	if (c->chk->bad_data_block == IMGFS_VERITY_NONE &&
	    memcmp(c->stored + index % fan * DIGEST, digest, DIGEST))
		c->chk->bad_data_block = index;
	return 0;
}

static int feed_vt(void *ctx, const void *buf, size_t len,
		   struct imgfs_error *err)
{
	return vt_update(ctx, buf, len, err);
}

static int check_report(struct vcheck *c, const uint8_t *root,
			const uint8_t *expected, struct imgfs_error *err)
{
	struct imgfs_verity_check *chk = c->chk;
	char want[2 * DIGEST + 1];

	verity_fill_result(&c->v, root, &chk->info);
	chk->root_ok = !expected || !memcmp(expected, root, DIGEST);
	if (expected)
		imgfs_verity_hex(expected, DIGEST, want);
	/* with one data block, the root is that block's hash */
	if (!chk->root_ok && !c->v.lay.levels) {
		chk->bad_data_block = 0;
		return error_set(
			err, -EBADMSG,
			"dm-verity: the only data block hashes to %s, not to the root hash %s",
			chk->info.root_hex, want);
	}
	if (chk->bad_data_block != IMGFS_VERITY_NONE)
		return error_set(err, -EBADMSG,
				 "dm-verity: data block %" PRIu64
				 " (offset %" PRIu64
				 ") does not match its hash",
				 chk->bad_data_block,
				 chk->bad_data_block * c->v.dbs);
	if (chk->bad_level != IMGFS_VERITY_NONE)
		return error_set(err, -EBADMSG,
				 "dm-verity: hash block %" PRIu64
				 " of tree level %" PRIu64
				 " does not match the level below",
				 chk->bad_hash_block, chk->bad_level);
	if (!chk->root_ok)
		return error_set(err, -EBADMSG,
				 "dm-verity: root hash %s, expected %s",
				 chk->info.root_hex, want);
	return 0;
}

/* A data device shorter than the superblock says is damage, not an I/O error.
 */
static int check_data_size(int fd, const struct imgfs_verity *v,
			   struct imgfs_error *err)
{
	off_t end = lseek(fd, 0, SEEK_END);

	if (end < 0)
		return error_set(err, -errno, "dm-verity: data size: %s",
				 strerror(errno));
	if ((uint64_t)end < v->lay.data_blocks * v->dbs)
		return error_set(err, -EBADMSG,
				 "dm-verity: the data is %" PRIu64
				 " bytes, the superblock says %" PRIu64
				 " blocks of %u",
				 (uint64_t)end, v->lay.data_blocks, v->dbs);
	return 0;
}

int imgfs_verity_verify_fd(int data_fd, int hash_fd, uint64_t hash_offset,
			   const uint8_t *root_hash,
			   struct imgfs_verity_check *chk,
			   struct imgfs_error *err)
{
	uint8_t sb[IMGFS_VERITY_SB_SIZE], root[DIGEST];
	struct vcheck *c = calloc(1, sizeof(*c));
	int ret;

	memset(chk, 0, sizeof(*chk));
	chk->bad_data_block = chk->bad_level = chk->bad_hash_block =
		IMGFS_VERITY_NONE;
	if (!c)
		return error_set(err, -ENOMEM, "verity: out of memory");
	c->chk = chk;
	c->stored_index = IMGFS_VERITY_NONE;
	c->v.hash_fd = hash_fd;
	ret = vt_pread(hash_fd, sb, sizeof(sb), hash_offset,
			 "verity superblock", err);
	if (!ret)
		ret = verity_sb_decode(&c->v, sb, hash_offset, err);
	if (!ret) {
		c->stored = malloc(c->v.hbs);
		c->cmp = malloc(c->v.hbs);
		if (!c->stored || !c->cmp)
			ret = error_set(err, -ENOMEM, "verity: out of memory");
	}
	if (!ret)
		ret = vt_init(&c->v.t, c->v.dbs, c->v.hbs, c->v.salt,
			      c->v.salt_size, err);
	c->v.t.emit = check_emit;
	c->v.t.leaf = check_leaf;
	c->v.t.arg = c;
	if (!ret)
		ret = check_data_size(data_fd, &c->v, err);
	if (!ret)
		ret = vt_feed_fd(data_fd, c->v.lay.data_blocks * c->v.dbs, feed_vt,
			      &c->v.t, err);
	if (!ret)
		ret = vt_finish(&c->v.t, root, err);
	if (!ret)
		ret = check_report(c, root, root_hash, err);
	vt_release(&c->v.t);
	free(c->stored);
	free(c->cmp);
	free(c);
	return ret;
}
