// SPDX-License-Identifier: MIT
/*
 * superblock.c - dm-verity's on-disk layout: the superblock veritysetup
 * writes and reads (encoded and decoded here only), where each tree level
 * lies after it, and the result that describes both.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "imgfs/format.h"
#include "util/error.h"
#include "verity/dm.h"

/* offsets in the verity superblock (veritysetup's struct verity_sb) */
#define SB_MAGIC "verity\0\0"
#define SB_VERSION 8
#define SB_HASH_TYPE 12
#define SB_UUID 16
#define SB_ALGORITHM 32
#define SB_ALGORITHM_SIZE 32
#define SB_DATA_BLOCK_SIZE 64
#define SB_HASH_BLOCK_SIZE 68
#define SB_DATA_BLOCKS 72
#define SB_SALT_SIZE 80
#define SB_SALT 88

bool verity_block_size_ok(uint32_t n)
{
	return n >= 512 && n <= 4096 && !(n & (n - 1));
}

int verity_layout(struct vlayout *l, uint64_t data_blocks, uint32_t dbs,
		  uint32_t hbs, uint64_t hash_offset)
{
	uint64_t size = data_blocks, pos, sizes[VT_MAX_LEVELS];
	uint32_t fan = hbs / DIGEST;

	if (!data_blocks)
		return -EINVAL;
	l->data_blocks = data_blocks;
	l->levels = vt_levels(data_blocks, hbs);
	if (l->levels > VT_MAX_LEVELS)
		return -EFBIG;
	if (hash_offset == IMGFS_VERITY_HASH_OFFSET_AUTO) {
		if (data_blocks > UINT64_MAX / 2 / dbs)
			return -EFBIG;
		hash_offset = vt_round_up(data_blocks * dbs, hbs);
	}
	l->hash_offset = hash_offset;
	if (hash_offset > UINT64_MAX / 2)
		return -EFBIG;
	l->tree_offset = vt_round_up(hash_offset + IMGFS_VERITY_SB_SIZE, hbs);
	for (unsigned int i = 0; i < l->levels; i++) {
		size = size / fan + (size % fan != 0);
		sizes[i] = size;
	}
	/* veritysetup stores the top level first, level 0 last */
	pos = l->tree_offset;
	for (unsigned int i = l->levels; i-- > 0;) {
		l->level_off[i] = pos;
		if (sizes[i] > (UINT64_MAX / 2 - pos) / hbs)
			return -EFBIG;
		pos += sizes[i] * hbs;
	}
	l->hash_end = pos;
	return 0;
}

void verity_sb_encode(const struct imgfs_verity *v, uint8_t *sb)
{
	memset(sb, 0, IMGFS_VERITY_SB_SIZE);
	memcpy(sb, SB_MAGIC, 8);
	imgfs_put_le32(sb + SB_VERSION, 1);
	imgfs_put_le32(sb + SB_HASH_TYPE, 1);
	memcpy(sb + SB_UUID, v->uuid, 16);
	memcpy(sb + SB_ALGORITHM, "sha256", 6);
	imgfs_put_le32(sb + SB_DATA_BLOCK_SIZE, v->dbs);
	imgfs_put_le32(sb + SB_HASH_BLOCK_SIZE, v->hbs);
	imgfs_put_le64(sb + SB_DATA_BLOCKS, v->lay.data_blocks);
	imgfs_put_le16(sb + SB_SALT_SIZE, (uint16_t)v->salt_size);
	memcpy(sb + SB_SALT, v->salt, v->salt_size);
}

/*
 * Does the superblock's algorithm field name SHA-256? As veritysetup
 * reads it: the name ends at its first NUL (or after 32 bytes), and the
 * crypto library looks it up (OpenSSL: in any case).
 */
static bool is_sha256(const uint8_t *field)
{
	char name[SB_ALGORITHM_SIZE + 1];
	EVP_MD *md;
	bool yes;

	memcpy(name, field, SB_ALGORITHM_SIZE);
	name[SB_ALGORITHM_SIZE] = '\0';
	md = EVP_MD_fetch(NULL, name, NULL);
	yes = md && EVP_MD_is_a(md, "SHA2-256");
	EVP_MD_free(md);
	return yes;
}

int verity_sb_decode(struct imgfs_verity *v, const uint8_t *sb,
		     uint64_t hash_offset, struct imgfs_error *err)
{
	uint32_t version = imgfs_get_le32(sb + SB_VERSION);
	uint32_t type = imgfs_get_le32(sb + SB_HASH_TYPE);
	uint64_t blocks = imgfs_get_le64(sb + SB_DATA_BLOCKS);
	size_t salt_size = imgfs_get_le16(sb + SB_SALT_SIZE);

	if (memcmp(sb, SB_MAGIC, 8))
		return error_set(
			err, -EBADMSG,
			"dm-verity: no verity superblock at offset %" PRIu64,
			hash_offset);
	if (version != 1 || type != 1)
		return error_set(
			err, -EBADMSG,
			"dm-verity: superblock version %u, hash type %u (only 1 and 1 are known)",
			version, type);
	if (!is_sha256(sb + SB_ALGORITHM))
		return error_set(err, -EBADMSG,
				 "dm-verity: hash algorithm is not sha256");
	v->dbs = imgfs_get_le32(sb + SB_DATA_BLOCK_SIZE);
	v->hbs = imgfs_get_le32(sb + SB_HASH_BLOCK_SIZE);
	if (!verity_block_size_ok(v->dbs) || !verity_block_size_ok(v->hbs) ||
	    salt_size > IMGFS_VERITY_SALT_MAX || !blocks)
		return error_set(
			err, -EBADMSG,
			"dm-verity: unsupported superblock (data block %u, hash block %u, salt %zu bytes, %" PRIu64
			" data blocks)",
			v->dbs, v->hbs, salt_size, blocks);
	memcpy(v->uuid, sb + SB_UUID, 16);
	memcpy(v->salt, sb + SB_SALT, salt_size);
	v->salt_size = salt_size;
	if (verity_layout(&v->lay, blocks, v->dbs, v->hbs, hash_offset))
		return error_set(err, -EBADMSG,
				 "dm-verity: %" PRIu64
				 " data blocks do not fit a hash area",
				 blocks);
	return 0;
}

void verity_fill_result(const struct imgfs_verity *v, const uint8_t *root,
			struct imgfs_verity_result *res)
{
	const uint8_t *u = v->uuid;

	memset(res, 0, sizeof(*res));
	memcpy(res->root_hash, root, DIGEST);
	imgfs_verity_hex(root, DIGEST, res->root_hex);
	res->data_block_size = v->dbs;
	res->hash_block_size = v->hbs;
	res->data_blocks = v->lay.data_blocks;
	res->hash_offset = v->lay.hash_offset;
	res->tree_offset = v->lay.tree_offset;
	res->hash_end = v->lay.hash_end;
	res->levels = v->lay.levels;
	memcpy(res->salt, v->salt, v->salt_size);
	res->salt_size = v->salt_size;
	if (v->salt_size)
		imgfs_verity_hex(v->salt, v->salt_size, res->salt_hex);
	else
		strcpy(res->salt_hex, "-");
	memcpy(res->uuid, u, 16);
	snprintf(
		res->uuid_str, sizeof(res->uuid_str),
		"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		u[10], u[11], u[12], u[13], u[14], u[15]);
}
