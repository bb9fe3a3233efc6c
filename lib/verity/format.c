// SPDX-License-Identifier: MIT
/*
 * format.c - writing a dm-verity hash area as veritysetup format does: the
 * tree levels in place when the data size is known up front, else spilled
 * to one temporary file per level and copied into place at the end; then
 * the superblock.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "util/sha256.h"
#include "util/tmpfile.h"
#include "verity/dm.h"

static int open_spill(struct imgfs_verity *v, struct imgfs_error *err)
{
	int fd = tmpfile_open(v->tmpdir, "imgfs-verity");

	if (fd < 0)
		return error_set(err, -errno,
				 "verity: temporary file in %s: %s", v->tmpdir,
				 strerror(errno));
	return fd;
}

static int dm_emit(struct vt *t, unsigned int level, uint64_t index,
		   const uint8_t *block, struct imgfs_error *err)
{
	struct imgfs_verity *v = t->arg;

	if (v->announced) {
		if (level >= v->lay.levels)
			return error_set(err, -EIO,
					 "verity: more data than the %" PRIu64
					 " bytes announced",
					 v->announced);
		return vt_pwrite(v->hash_fd, block, v->hbs,
				   v->lay.level_off[level] + index * v->hbs,
				   err);
	}
	if (level >= VT_MAX_LEVELS)
		return error_set(err, -EFBIG, "verity: tree too deep");
	if (v->spill[level] < 0) {
		v->spill[level] = open_spill(v, err);
		if (v->spill[level] < 0)
			return v->spill[level];
	}
	return vt_pwrite(v->spill[level], block, v->hbs, index * v->hbs, err);
}

void imgfs_verity_derive(const void *seed, size_t seed_size, uint8_t *salt,
			 size_t salt_size, uint8_t uuid[16])
{
	static const char salt_tag[] = "imgfs dm-verity salt ";
	static const char uuid_tag[] = "imgfs dm-verity uuid";
	uint8_t tag[sizeof(salt_tag)], d[DIGEST];

	if (!seed)
		seed = "";
	/* SHA-256(tag || counter || seed), as many as the salt needs */
	memcpy(tag, salt_tag, sizeof(salt_tag));
	for (size_t off = 0; salt && off < salt_size; off += DIGEST) {
		tag[sizeof(salt_tag) - 1] = (uint8_t)(off / DIGEST);
		if (sha256_join(tag, sizeof(tag), seed, seed_size, d))
			memset(d, 0, sizeof(d));
		memcpy(salt + off, d,
		       salt_size - off < DIGEST ? salt_size - off : DIGEST);
	}
	if (!uuid)
		return;
	if (sha256_join(uuid_tag, sizeof(uuid_tag) - 1, seed, seed_size, d))
		memset(d, 0, sizeof(d));
	memcpy(uuid, d, 16);
	uuid[6] = (uuid[6] & 0x0f) | 0x80; /* version 8: custom */
	uuid[8] = (uuid[8] & 0x3f) | 0x80; /* RFC variant */
}

static int check_params(const struct imgfs_verity_params *p, uint32_t dbs,
			uint32_t hbs, struct imgfs_error *err)
{
	if (!verity_block_size_ok(dbs) || !verity_block_size_ok(hbs))
		return error_set(
			err, -EINVAL,
			"verity: block sizes must be 512, 1024, 2048 or 4096 (data %u, hash %u)",
			dbs, hbs);
	if (p->salt_size > IMGFS_VERITY_SALT_MAX)
		return error_set(err, -EINVAL,
				 "verity: salt of %zu bytes, at most %d fit",
				 p->salt_size, IMGFS_VERITY_SALT_MAX);
	if (p->hash_offset != IMGFS_VERITY_HASH_OFFSET_AUTO &&
	    p->hash_offset % 512)
		return error_set(err, -EINVAL,
				 "verity: hash offset %" PRIu64
				 " is not a multiple of 512",
				 p->hash_offset);
	if (p->head_size > IMGFS_VERITY_HEAD_MAX)
		return error_set(err, -EINVAL,
				 "verity: head of %" PRIu64
				 " bytes, at most %d can be given last",
				 p->head_size, IMGFS_VERITY_HEAD_MAX);
	return 0;
}

static int dm_setup(struct imgfs_verity *v, const struct imgfs_verity_params *p,
		    struct imgfs_error *err)
{
	const char *dir = temp_dir(p->tmpdir);
	int ret;

	v->hash_fd = p->hash_fd;
	v->hash_offset = p->hash_offset;
	v->announced = p->data_size;
	v->salt_size = p->salt_size ? p->salt_size
				    : IMGFS_VERITY_DEFAULT_SALT_SIZE;
	imgfs_verity_derive(p->seed, p->seed_size, v->salt, v->salt_size,
			    v->uuid);
	if (p->salt) {
		memcpy(v->salt, p->salt, p->salt_size);
		v->salt_size = p->salt_size;
	}
	if (p->uuid)
		memcpy(v->uuid, p->uuid, 16);
	v->tmpdir = strdup(dir);
	if (!v->tmpdir)
		return error_set(err, -ENOMEM, "verity: out of memory");
	if (v->announced) {
		ret = verity_layout(&v->lay,
				      vt_round_up(v->announced, v->dbs) / v->dbs,
				      v->dbs, v->hbs, v->hash_offset);
		if (ret)
			return error_set(err, ret,
					 "verity: no hash area for %" PRIu64
					 " bytes at offset %" PRIu64,
					 v->announced, v->hash_offset);
	}
	ret = vt_init(&v->t, v->dbs, v->hbs, v->salt, v->salt_size, err);
	v->t.emit = v->hash_fd >= 0 ? dm_emit : NULL;
	v->t.arg = v;
	v->head_size = p->head_size;
	if (!ret && p->head_size) {
		v->t.head_blocks = vt_round_up(p->head_size, v->dbs) / v->dbs;
		v->t.headbuf = calloc(v->t.head_blocks, v->dbs);
		if (!v->t.headbuf)
			ret = error_set(err, -ENOMEM, "verity: out of memory");
		/* updates start after the head */
		v->t.fed = p->head_size;
		if (!ret && v->t.fed == v->t.head_blocks * v->dbs)
			ret = vt_head_placeholders(&v->t, err);
	}
	return ret;
}

int imgfs_verity_create(struct imgfs_verity **out,
			const struct imgfs_verity_params *params,
			struct imgfs_error *err)
{
	uint32_t dbs = params->data_block_size ? params->data_block_size : 4096;
	uint32_t hbs = params->hash_block_size ? params->hash_block_size : 4096;
	struct imgfs_verity *v;
	int ret;

	*out = NULL;
	ret = check_params(params, dbs, hbs, err);
	if (ret)
		return ret;
	v = calloc(1, sizeof(*v));
	if (!v)
		return error_set(err, -ENOMEM, "verity: out of memory");
	for (int i = 0; i < VT_MAX_LEVELS; i++)
		v->spill[i] = -1;
	v->dbs = dbs;
	v->hbs = hbs;
	ret = dm_setup(v, params, err);
	if (ret) {
		imgfs_verity_free(v);
		return ret;
	}
	*out = v;
	return 0;
}

int imgfs_verity_update(struct imgfs_verity *v, const void *buf, size_t len,
			struct imgfs_error *err)
{
	if (v->done)
		return error_set(err, -EINVAL, "verity: update after finish");
	if (v->announced && len > v->announced - v->t.fed)
		return error_set(err, -EINVAL,
				 "verity: more data than the %" PRIu64
				 " bytes announced",
				 v->announced);
	return vt_update(&v->t, buf, len, err);
}

/* The superblock, zero-padded up to the first tree block. */
static int write_sb(struct imgfs_verity *v, struct imgfs_error *err)
{
	size_t len = v->lay.tree_offset - v->lay.hash_offset;
	uint8_t *buf = calloc(1, len);
	int ret;

	if (!buf)
		return error_set(err, -ENOMEM, "verity: out of memory");
	verity_sb_encode(v, buf);
	ret = vt_pwrite(v->hash_fd, buf, len, v->lay.hash_offset, err);
	free(buf);
	return ret;
}

/* Copy each spilled level to its place, now that the sizes are known. */
static int place_spilled(struct imgfs_verity *v, struct imgfs_error *err)
{
	uint8_t *buf = malloc(IO_CHUNK);
	int ret = buf ? 0 : error_set(err, -ENOMEM, "verity: out of memory");

	for (unsigned int i = 0; !ret && i < v->lay.levels; i++) {
		uint64_t len = v->t.lvcount[i] * v->hbs;

		for (uint64_t off = 0; !ret && off < len; off += IO_CHUNK) {
			size_t n = len - off < IO_CHUNK ? len - off : IO_CHUNK;

			ret = vt_pread(v->spill[i], buf, n, off,
					 "spilled tree level", err);
			if (!ret)
				ret = vt_pwrite(v->hash_fd, buf, n,
						  v->lay.level_off[i] + off,
						  err);
		}
		close(v->spill[i]);
		v->spill[i] = -1;
	}
	free(buf);
	return ret;
}

int imgfs_verity_set_head(struct imgfs_verity *v, const void *buf, size_t len,
			  struct imgfs_error *err)
{
	if (v->done || !v->head_size || v->t.head_given)
		return error_set(err, -EINVAL, "verity: no head expected here");
	if (len != v->head_size)
		return error_set(err, -EINVAL,
				 "verity: head of %zu bytes, %" PRIu64
				 " announced",
				 len, v->head_size);
	memcpy(v->t.headbuf, buf, len);
	v->t.head_given = true;
	return 0;
}

int imgfs_verity_finish(struct imgfs_verity *v, struct imgfs_verity_result *res,
			struct imgfs_error *err)
{
	uint8_t root[DIGEST];
	int ret;

	if (v->done)
		return error_set(err, -EINVAL, "verity: finished twice");
	v->done = 1;
	if (v->announced && v->t.fed != v->announced)
		return error_set(err, -EINVAL,
				 "verity: %" PRIu64 " bytes fed, %" PRIu64
				 " announced",
				 v->t.fed, v->announced);
	if (!v->t.fed)
		return error_set(
			err, -EINVAL,
			"verity: no data: dm-verity needs at least one data block");
	if (!v->announced) {
		ret = verity_layout(&v->lay,
				      vt_round_up(v->t.fed, v->dbs) / v->dbs,
				      v->dbs, v->hbs, v->hash_offset);
		if (ret)
			return error_set(err, ret,
					 "verity: no hash area for %" PRIu64
					 " bytes",
					 v->t.fed);
	}
	ret = vt_finish(&v->t, root, err);
	if (!ret && v->hash_fd >= 0 && !v->announced)
		ret = place_spilled(v, err);
	if (!ret && v->hash_fd >= 0)
		ret = write_sb(v, err);
	if (!ret)
		verity_fill_result(v, root, res);
	return ret;
}

void imgfs_verity_free(struct imgfs_verity *v)
{
	if (!v)
		return;
	vt_release(&v->t);
	for (int i = 0; i < VT_MAX_LEVELS; i++)
		if (v->spill[i] >= 0)
			close(v->spill[i]);
	free(v->tmpdir);
	free(v);
}

static int feed_dm(void *ctx, const void *buf, size_t len,
		   struct imgfs_error *err)
{
	return imgfs_verity_update(ctx, buf, len, err);
}

int imgfs_verity_format_fd(int data_fd, uint64_t data_size,
			   const struct imgfs_verity_params *params,
			   struct imgfs_verity_result *res,
			   struct imgfs_error *err)
{
	struct imgfs_verity_params p = *params;
	struct imgfs_verity *v;
	int ret;

	if (!data_size)
		return error_set(
			err, -EINVAL,
			"verity: no data: dm-verity needs at least one data block");
	p.data_size = data_size;
	p.head_size = 0; /* everything is read in order here */
	ret = imgfs_verity_create(&v, &p, err);
	if (ret)
		return ret;
	if (p.hash_fd == data_fd &&
	    v->lay.hash_offset < v->lay.data_blocks * v->dbs)
		ret = error_set(err, -EINVAL,
				"verity: hash offset %" PRIu64
				" is inside the data (%" PRIu64 " bytes)",
				v->lay.hash_offset,
				v->lay.data_blocks * v->dbs);
	if (!ret)
		ret = vt_feed_fd(data_fd, data_size, feed_dm, v, err);
	if (!ret)
		ret = imgfs_verity_finish(v, res, err);
	imgfs_verity_free(v);
	return ret;
}
