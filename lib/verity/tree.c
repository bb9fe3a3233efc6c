// SPDX-License-Identifier: MIT
/*
 * tree.c - the hash tree engine: data blocks in, digests up the levels,
 * each finished tree block handed to the format's emit callback, and the
 * root at the end. Neither dm-verity nor fs-verity is known here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/sha256.h"
#include "verity/verity.h"

int vt_init(struct vt *t, uint32_t dbs, uint32_t hbs, const uint8_t *salt,
	    size_t salt_size, struct imgfs_error *err)
{
	memset(t, 0, sizeof(*t));
	t->dbs = dbs;
	t->hbs = hbs;
	t->salted = sha256_new();
	t->work = EVP_MD_CTX_new();
	t->dbuf = malloc(dbs);
	if (!t->salted || !t->work || !t->dbuf)
		return error_set(err, -ENOMEM, "verity: out of memory");
	if (!EVP_DigestUpdate(t->salted, salt, salt_size))
		return error_set(err, -EIO, "verity: SHA-256 unavailable");
	return 0;
}

void vt_release(struct vt *t)
{
	EVP_MD_CTX_free(t->salted);
	EVP_MD_CTX_free(t->work);
	free(t->dbuf);
	free(t->headbuf);
	for (int i = 0; i <= VT_MAX_LEVELS; i++) {
		free(t->lv[i]);
		free(t->held[i]);
	}
	memset(t, 0, sizeof(*t));
}

static int vt_hash(struct vt *t, const uint8_t *block, size_t len, uint8_t *out,
		   struct imgfs_error *err)
{
	if (!EVP_MD_CTX_copy_ex(t->work, t->salted) ||
	    !EVP_DigestUpdate(t->work, block, len) ||
	    !EVP_DigestFinal_ex(t->work, out, NULL))
		return error_set(err, -EIO, "verity: SHA-256 failed");
	return 0;
}

static int vt_push(struct vt *t, unsigned int level, const uint8_t *digest,
		   struct imgfs_error *err);

/* Zero-pad the pending block of @level, emit it, and push its hash up. */
static int vt_close_block(struct vt *t, unsigned int level,
			  struct imgfs_error *err)
{
	uint8_t up[DIGEST];
	int ret;

	memset(t->lv[level] + t->lvfill[level], 0, t->hbs - t->lvfill[level]);
	/* a first block holding placeholders is redone once the head is in */
	if (t->head_blocks && !t->lvcount[level]) {
		if (!t->held[level])
			t->held[level] = malloc(t->hbs);
		if (!t->held[level])
			return error_set(err, -ENOMEM, "verity: out of memory");
		memcpy(t->held[level], t->lv[level], t->hbs);
	}
	if (t->emit) {
		ret = t->emit(t, level, t->lvcount[level], t->lv[level], err);
		if (ret)
			return ret;
	}
	t->lvcount[level]++;
	t->lvfill[level] = 0;
	ret = vt_hash(t, t->lv[level], t->hbs, up, err);
	return ret ? ret : vt_push(t, level + 1, up, err);
}

/* Append a digest to @level; a full block goes out and up. */
static int vt_push(struct vt *t, unsigned int level, const uint8_t *digest,
		   struct imgfs_error *err)
{
	if (level > VT_MAX_LEVELS)
		return error_set(err, -EFBIG, "verity: tree too deep");
	if (!t->lv[level]) {
		t->lv[level] = malloc(t->hbs);
		if (!t->lv[level])
			return error_set(err, -ENOMEM, "verity: out of memory");
	}
	memcpy(t->lv[level] + t->lvfill[level], digest, DIGEST);
	t->lvfill[level] += DIGEST;
	if (t->lvfill[level] + DIGEST <= t->hbs)
		return 0;
	return vt_close_block(t, level, err);
}

static int vt_data_block(struct vt *t, const uint8_t *block,
			 struct imgfs_error *err)
{
	uint8_t d[DIGEST];
	int ret = vt_hash(t, block, t->dbs, d, err);

	if (!ret && t->leaf)
		ret = t->leaf(t, t->data_blocks, d, err);
	if (!ret)
		ret = vt_push(t, 0, d, err);
	t->data_blocks++;
	return ret;
}

int vt_head_placeholders(struct vt *t, struct imgfs_error *err)
{
	static const uint8_t none[DIGEST];
	int ret = 0;

	for (uint64_t i = 0; i < t->head_blocks && !ret; i++)
		ret = vt_push(t, 0, none, err);
	t->data_blocks += t->head_blocks;
	return ret;
}

int vt_update(struct vt *t, const uint8_t *p, size_t len,
	      struct imgfs_error *err)
{
	uint64_t hend = t->head_blocks * t->dbs;
	int ret;

	/* what shares a data block with the head waits with it */
	if (t->fed < hend) {
		size_t n = hend - t->fed < len ? hend - t->fed : len;

		memcpy(t->headbuf + t->fed, p, n);
		t->fed += n;
		p += n;
		len -= n;
		if (t->fed == hend) {
			ret = vt_head_placeholders(t, err);
			if (ret)
				return ret;
		}
	}
	t->fed += len;
	while (len) {
		if (!t->dfill && len >= t->dbs) {
			/* whole blocks straight from the caller's buffer */
			ret = vt_data_block(t, p, err);
			p += t->dbs;
			len -= t->dbs;
		} else {
			size_t n = t->dbs - t->dfill < len ? t->dbs - t->dfill
							   : len;

			memcpy(t->dbuf + t->dfill, p, n);
			t->dfill += n;
			p += n;
			len -= n;
			ret = 0;
			if (t->dfill == t->dbs) {
				t->dfill = 0;
				ret = vt_data_block(t, t->dbuf, err);
			}
		}
		if (ret)
			return ret;
	}
	return 0;
}

unsigned int vt_levels(uint64_t blocks, uint32_t hbs)
{
	unsigned int bits = 0, levels = 0;

	while ((32u << (bits + 1)) <= hbs)
		bits++;
	while (levels * bits < 64 && (blocks - 1) >> (levels * bits))
		levels++;
	return levels;
}

/*
 * Hash the head's data blocks into their level-0 slots, then redo the
 * first block of each level that was already closed with a placeholder
 * (emit it again, and put its hash in the first slot of the level above),
 * up to the first level whose first block is still pending.
 */
static int vt_fix_head(struct vt *t, struct imgfs_error *err)
{
	uint64_t k = t->head_blocks;
	unsigned int level = 0;
	uint8_t d[DIGEST];
	int ret;

	t->head_blocks = 0;
	for (uint64_t i = 0; i < k; i++) {
		uint8_t *slot = t->lvcount[0] ? t->held[0] : t->lv[0];

		ret = vt_hash(t, t->headbuf + i * t->dbs, t->dbs,
			      slot + i * DIGEST, err);
		if (ret)
			return ret;
	}
	while (t->lvcount[level]) {
		if (level >= VT_MAX_LEVELS)
			return error_set(err, -EFBIG, "verity: tree too deep");
		if (t->emit) {
			ret = t->emit(t, level, 0, t->held[level], err);
			if (ret)
				return ret;
		}
		ret = vt_hash(t, t->held[level], t->hbs, d, err);
		if (ret)
			return ret;
		level++;
		memcpy(t->lvcount[level] ? t->held[level] : t->lv[level], d,
		       DIGEST);
	}
	return 0;
}

/* The data ended inside the head's blocks: hash them in order now. */
static int vt_short_head(struct vt *t, struct imgfs_error *err)
{
	uint64_t hend = t->head_blocks * t->dbs;
	uint64_t n = vt_round_up(t->fed, t->dbs) / t->dbs;
	int ret = 0;

	memset(t->headbuf + t->fed, 0, hend - t->fed);
	t->head_blocks = 0;
	for (uint64_t i = 0; i < n && !ret; i++)
		ret = vt_data_block(t, t->headbuf + i * t->dbs, err);
	return ret;
}

int vt_finish(struct vt *t, uint8_t *root, struct imgfs_error *err)
{
	unsigned int levels;
	int ret;

	if (t->head_blocks && !t->head_given)
		return error_set(
			err, -EINVAL,
			"verity: the head of the data was never given");
	if (t->head_blocks && t->fed < t->head_blocks * t->dbs) {
		ret = vt_short_head(t, err);
		if (ret)
			return ret;
	}
	if (t->dfill) {
		memset(t->dbuf + t->dfill, 0, t->dbs - t->dfill);
		t->dfill = 0;
		ret = vt_data_block(t, t->dbuf, err);
		if (ret)
			return ret;
	}
	if (t->head_blocks) {
		ret = vt_fix_head(t, err);
		if (ret)
			return ret;
	}
	levels = vt_levels(t->data_blocks, t->hbs);
	for (unsigned int i = 0; i < levels; i++) {
		if (!t->lvfill[i])
			continue;
		ret = vt_close_block(t, i, err);
		if (ret)
			return ret;
	}
	if (t->lvfill[levels] != DIGEST)
		return error_set(err, -EIO, "verity: internal error: no root");
	memcpy(root, t->lv[levels], DIGEST);
	return 0;
}
