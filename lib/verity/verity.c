// SPDX-License-Identifier: MIT
/*
 * dm-verity hash areas (the format veritysetup writes) and fs-verity file
 * digests, both SHA-256 through OpenSSL's EVP interface.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json_object.h>
#include <json-c/json_tokener.h>

#include "util/tmpfile.h"
#include "verity/verity.h"
#include "util/error.h"

#define DIGEST IMGFS_VERITY_DIGEST_SIZE
#define IO_CHUNK (256 * 1024)

/* ---- small helpers ---- */

static int is_block_size(uint32_t n)
{
	return n >= 512 && n <= 4096 && !(n & (n - 1));
}

static uint64_t round_up(uint64_t n, uint64_t a)
{
	return (n + a - 1) / a * a;
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, v);
	put_le16(p + 2, v >> 16);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, v);
	put_le32(p + 4, v >> 32);
}

static uint32_t get_le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const uint8_t *p)
{
	return get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

void imgfs_verity_hex(const uint8_t *bytes, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * len] = '\0';
}

static int pwrite_full(int fd, const void *buf, size_t len, uint64_t off,
		       struct imgfs_error *err)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return imgfs_error_set(
				err, n < 0 ? -errno : -EIO,
				"verity: writing at offset %" PRIu64 ": %s",
				off, strerror(n < 0 ? errno : EIO));
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

/* Read up to @len bytes; returns how many (short only at end of file). */
static ssize_t pread_some(int fd, void *buf, size_t len, uint64_t off,
			  struct imgfs_error *err)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + got, len - got,
				  (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return imgfs_error_set(
				err, -errno,
				"verity: reading at offset %" PRIu64 ": %s",
				off + got, strerror(errno));
		if (n == 0)
			break;
		got += n;
	}
	return got;
}

static int pread_full(int fd, void *buf, size_t len, uint64_t off,
		      const char *what, struct imgfs_error *err)
{
	ssize_t n = pread_some(fd, buf, len, off, err);

	if (n < 0)
		return n;
	if ((size_t)n < len)
		return imgfs_error_set(err, -EBADMSG,
				       "verity: %s at offset %" PRIu64
				       " is past the end of the file",
				       what, off + n);
	return 0;
}

static int sha256(const void *a, size_t alen, const void *b, size_t blen,
		  uint8_t *out)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) &&
		 EVP_DigestUpdate(c, a, alen) && EVP_DigestUpdate(c, b, blen) &&
		 EVP_DigestFinal_ex(c, out, NULL);

	EVP_MD_CTX_free(c);
	return ok ? 0 : -ENOMEM;
}

/* ---- the tree engine ---- */

static int vt_init(struct vt *t, uint32_t dbs, uint32_t hbs,
		   const uint8_t *salt, size_t salt_size,
		   struct imgfs_error *err)
{
	memset(t, 0, sizeof(*t));
	t->dbs = dbs;
	t->hbs = hbs;
	t->salted = EVP_MD_CTX_new();
	t->work = EVP_MD_CTX_new();
	t->dbuf = malloc(dbs);
	if (!t->salted || !t->work || !t->dbuf)
		return imgfs_error_set(err, -ENOMEM, "verity: out of memory");
	if (!EVP_DigestInit_ex(t->salted, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(t->salted, salt, salt_size))
		return imgfs_error_set(err, -EIO,
				       "verity: SHA-256 unavailable");
	return 0;
}

static void vt_release(struct vt *t)
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
		return imgfs_error_set(err, -EIO, "verity: SHA-256 failed");
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
			return imgfs_error_set(err, -ENOMEM,
					       "verity: out of memory");
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
		return imgfs_error_set(err, -EFBIG, "verity: tree too deep");
	if (!t->lv[level]) {
		t->lv[level] = malloc(t->hbs);
		if (!t->lv[level])
			return imgfs_error_set(err, -ENOMEM,
					       "verity: out of memory");
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

/* The head's data blocks are complete: placeholders take their place. */
static int vt_head_placeholders(struct vt *t, struct imgfs_error *err)
{
	static const uint8_t none[DIGEST];
	int ret = 0;

	for (uint64_t i = 0; i < t->head_blocks && !ret; i++)
		ret = vt_push(t, 0, none, err);
	t->data_blocks += t->head_blocks;
	return ret;
}

static int vt_update(struct vt *t, const uint8_t *p, size_t len,
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

/* Levels below the root for @blocks data blocks (0 for one block). */
static unsigned int vt_levels(uint64_t blocks, uint32_t hbs)
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
			return imgfs_error_set(err, -EFBIG,
					       "verity: tree too deep");
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
	uint64_t n = round_up(t->fed, t->dbs) / t->dbs;
	int ret = 0;

	memset(t->headbuf + t->fed, 0, hend - t->fed);
	t->head_blocks = 0;
	for (uint64_t i = 0; i < n && !ret; i++)
		ret = vt_data_block(t, t->headbuf + i * t->dbs, err);
	return ret;
}

/* Pad the last data block, flush every level, and return the root. */
static int vt_finish(struct vt *t, uint8_t *root, struct imgfs_error *err)
{
	unsigned int levels;
	int ret;

	if (t->head_blocks && !t->head_given)
		return imgfs_error_set(err, -EINVAL,
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
		return imgfs_error_set(err, -EIO,
				       "verity: internal error: no root");
	memcpy(root, t->lv[levels], DIGEST);
	return 0;
}

/* ---- dm-verity ---- */

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

/* Where the superblock, the levels and the end of the hash area are. */
struct vlayout {
	uint64_t data_blocks;
	uint64_t hash_offset, tree_offset, hash_end;
	unsigned int levels;
	uint64_t level_off[VT_MAX_LEVELS]; /* byte offset of each level */
};

struct imgfs_verity {
	struct vt t;
	uint32_t dbs, hbs;
	uint64_t announced; /* data size given up front, 0 if not */
	uint64_t hash_offset; /* IMGFS_VERITY_HASH_OFFSET_AUTO until known */
	uint64_t head_size; /* given by imgfs_verity_set_head() */
	int hash_fd;
	uint8_t salt[IMGFS_VERITY_SALT_MAX];
	size_t salt_size;
	uint8_t uuid[16];
	struct vlayout lay; /* valid from the start when the size is known */
	int spill[VT_MAX_LEVELS]; /* per-level temporary files, or -1 */
	char *tmpdir;
	int done;
};

static int vlayout_compute(struct vlayout *l, uint64_t data_blocks,
			   uint32_t dbs, uint32_t hbs, uint64_t hash_offset)
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
		hash_offset = round_up(data_blocks * dbs, hbs);
	}
	l->hash_offset = hash_offset;
	if (hash_offset > UINT64_MAX / 2)
		return -EFBIG;
	l->tree_offset = round_up(hash_offset + IMGFS_VERITY_SB_SIZE, hbs);
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

static int open_spill(struct imgfs_verity *v, struct imgfs_error *err)
{
	int fd = imgfs_tmpfile_open(v->tmpdir, "imgfs-verity");

	if (fd < 0)
		return imgfs_error_set(err, -errno,
				       "verity: temporary file in %s: %s",
				       v->tmpdir, strerror(errno));
	return fd;
}

static int dm_emit(struct vt *t, unsigned int level, uint64_t index,
		   const uint8_t *block, struct imgfs_error *err)
{
	struct imgfs_verity *v = t->arg;

	if (v->announced) {
		if (level >= v->lay.levels)
			return imgfs_error_set(
				err, -EIO,
				"verity: more data than the %" PRIu64
				" bytes announced",
				v->announced);
		return pwrite_full(v->hash_fd, block, v->hbs,
				   v->lay.level_off[level] + index * v->hbs,
				   err);
	}
	if (level >= VT_MAX_LEVELS)
		return imgfs_error_set(err, -EFBIG, "verity: tree too deep");
	if (v->spill[level] < 0) {
		v->spill[level] = open_spill(v, err);
		if (v->spill[level] < 0)
			return v->spill[level];
	}
	return pwrite_full(v->spill[level], block, v->hbs, index * v->hbs, err);
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
		if (sha256(tag, sizeof(tag), seed, seed_size, d))
			memset(d, 0, sizeof(d));
		memcpy(salt + off, d,
		       salt_size - off < DIGEST ? salt_size - off : DIGEST);
	}
	if (!uuid)
		return;
	if (sha256(uuid_tag, sizeof(uuid_tag) - 1, seed, seed_size, d))
		memset(d, 0, sizeof(d));
	memcpy(uuid, d, 16);
	uuid[6] = (uuid[6] & 0x0f) | 0x80; /* version 8: custom */
	uuid[8] = (uuid[8] & 0x3f) | 0x80; /* RFC variant */
}

static int check_params(const struct imgfs_verity_params *p, uint32_t dbs,
			uint32_t hbs, struct imgfs_error *err)
{
	if (!is_block_size(dbs) || !is_block_size(hbs))
		return imgfs_error_set(
			err, -EINVAL,
			"verity: block sizes must be 512, 1024, 2048 or 4096 (data %u, hash %u)",
			dbs, hbs);
	if (p->salt_size > IMGFS_VERITY_SALT_MAX)
		return imgfs_error_set(
			err, -EINVAL,
			"verity: salt of %zu bytes, at most %d fit",
			p->salt_size, IMGFS_VERITY_SALT_MAX);
	if (p->hash_offset != IMGFS_VERITY_HASH_OFFSET_AUTO &&
	    p->hash_offset % 512)
		return imgfs_error_set(err, -EINVAL,
				       "verity: hash offset %" PRIu64
				       " is not a multiple of 512",
				       p->hash_offset);
	if (p->head_size > IMGFS_VERITY_HEAD_MAX)
		return imgfs_error_set(err, -EINVAL,
				       "verity: head of %" PRIu64
				       " bytes, at most %d can be given last",
				       p->head_size, IMGFS_VERITY_HEAD_MAX);
	return 0;
}

static int dm_setup(struct imgfs_verity *v, const struct imgfs_verity_params *p,
		    struct imgfs_error *err)
{
	const char *dir = imgfs_tmpdir(p->tmpdir);
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
		return imgfs_error_set(err, -ENOMEM, "verity: out of memory");
	if (v->announced) {
		ret = vlayout_compute(&v->lay,
				      round_up(v->announced, v->dbs) / v->dbs,
				      v->dbs, v->hbs, v->hash_offset);
		if (ret)
			return imgfs_error_set(
				err, ret,
				"verity: no hash area for %" PRIu64
				" bytes at offset %" PRIu64,
				v->announced, v->hash_offset);
	}
	ret = vt_init(&v->t, v->dbs, v->hbs, v->salt, v->salt_size, err);
	v->t.emit = v->hash_fd >= 0 ? dm_emit : NULL;
	v->t.arg = v;
	v->head_size = p->head_size;
	if (!ret && p->head_size) {
		v->t.head_blocks = round_up(p->head_size, v->dbs) / v->dbs;
		v->t.headbuf = calloc(v->t.head_blocks, v->dbs);
		if (!v->t.headbuf)
			ret = imgfs_error_set(err, -ENOMEM,
					      "verity: out of memory");
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
		return imgfs_error_set(err, -ENOMEM, "verity: out of memory");
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
		return imgfs_error_set(err, -EINVAL,
				       "verity: update after finish");
	if (v->announced && len > v->announced - v->t.fed)
		return imgfs_error_set(err, -EINVAL,
				       "verity: more data than the %" PRIu64
				       " bytes announced",
				       v->announced);
	return vt_update(&v->t, buf, len, err);
}

static void encode_sb(const struct imgfs_verity *v, uint8_t *sb)
{
	memset(sb, 0, IMGFS_VERITY_SB_SIZE);
	memcpy(sb, SB_MAGIC, 8);
	put_le32(sb + SB_VERSION, 1);
	put_le32(sb + SB_HASH_TYPE, 1);
	memcpy(sb + SB_UUID, v->uuid, 16);
	memcpy(sb + SB_ALGORITHM, "sha256", 6);
	put_le32(sb + SB_DATA_BLOCK_SIZE, v->dbs);
	put_le32(sb + SB_HASH_BLOCK_SIZE, v->hbs);
	put_le64(sb + SB_DATA_BLOCKS, v->lay.data_blocks);
	put_le16(sb + SB_SALT_SIZE, (uint16_t)v->salt_size);
	memcpy(sb + SB_SALT, v->salt, v->salt_size);
}

/* The superblock, zero-padded up to the first tree block. */
static int write_sb(struct imgfs_verity *v, struct imgfs_error *err)
{
	size_t len = v->lay.tree_offset - v->lay.hash_offset;
	uint8_t *buf = calloc(1, len);
	int ret;

	if (!buf)
		return imgfs_error_set(err, -ENOMEM, "verity: out of memory");
	encode_sb(v, buf);
	ret = pwrite_full(v->hash_fd, buf, len, v->lay.hash_offset, err);
	free(buf);
	return ret;
}

/* Copy each spilled level to its place, now that the sizes are known. */
static int place_spilled(struct imgfs_verity *v, struct imgfs_error *err)
{
	uint8_t *buf = malloc(IO_CHUNK);
	int ret = buf ? 0
		      : imgfs_error_set(err, -ENOMEM, "verity: out of memory");

	for (unsigned int i = 0; !ret && i < v->lay.levels; i++) {
		uint64_t len = v->t.lvcount[i] * v->hbs;

		for (uint64_t off = 0; !ret && off < len; off += IO_CHUNK) {
			size_t n = len - off < IO_CHUNK ? len - off : IO_CHUNK;

			ret = pread_full(v->spill[i], buf, n, off,
					 "spilled tree level", err);
			if (!ret)
				ret = pwrite_full(v->hash_fd, buf, n,
						  v->lay.level_off[i] + off,
						  err);
		}
		close(v->spill[i]);
		v->spill[i] = -1;
	}
	free(buf);
	return ret;
}

static void fill_result(const struct imgfs_verity *v, const uint8_t *root,
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

int imgfs_verity_set_head(struct imgfs_verity *v, const void *buf, size_t len,
			  struct imgfs_error *err)
{
	if (v->done || !v->head_size || v->t.head_given)
		return imgfs_error_set(err, -EINVAL,
				       "verity: no head expected here");
	if (len != v->head_size)
		return imgfs_error_set(err, -EINVAL,
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
		return imgfs_error_set(err, -EINVAL, "verity: finished twice");
	v->done = 1;
	if (v->announced && v->t.fed != v->announced)
		return imgfs_error_set(err, -EINVAL,
				       "verity: %" PRIu64 " bytes fed, %" PRIu64
				       " announced",
				       v->t.fed, v->announced);
	if (!v->t.fed)
		return imgfs_error_set(
			err, -EINVAL,
			"verity: no data: dm-verity needs at least one data block");
	if (!v->announced) {
		ret = vlayout_compute(&v->lay,
				      round_up(v->t.fed, v->dbs) / v->dbs,
				      v->dbs, v->hbs, v->hash_offset);
		if (ret)
			return imgfs_error_set(
				err, ret,
				"verity: no hash area for %" PRIu64 " bytes",
				v->t.fed);
	}
	ret = vt_finish(&v->t, root, err);
	if (!ret && v->hash_fd >= 0 && !v->announced)
		ret = place_spilled(v, err);
	if (!ret && v->hash_fd >= 0)
		ret = write_sb(v, err);
	if (!ret)
		fill_result(v, root, res);
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

/* Feed [0, @size) of @fd to @feed. */
static int feed_fd(int fd, uint64_t size,
		   int (*feed)(void *, const void *, size_t,
			       struct imgfs_error *),
		   void *ctx, struct imgfs_error *err)
{
	uint8_t *buf = malloc(IO_CHUNK);
	int ret = buf ? 0
		      : imgfs_error_set(err, -ENOMEM, "verity: out of memory");

	for (uint64_t off = 0; !ret && off < size;) {
		size_t want = size - off < IO_CHUNK ? size - off : IO_CHUNK;
		ssize_t n = pread_some(fd, buf, want, off, err);

		if (n < 0)
			ret = n;
		else if (n == 0 && size != UINT64_MAX)
			ret = imgfs_error_set(
				err, -EIO,
				"verity: the data ends at %" PRIu64
				", before %" PRIu64,
				off, size);
		else if (n == 0)
			break;
		else
			ret = feed(ctx, buf, n, err);
		off += n > 0 ? n : 0;
	}
	free(buf);
	return ret;
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
		return imgfs_error_set(
			err, -EINVAL,
			"verity: no data: dm-verity needs at least one data block");
	p.data_size = data_size;
	p.head_size = 0; /* everything is read in order here */
	ret = imgfs_verity_create(&v, &p, err);
	if (ret)
		return ret;
	if (p.hash_fd == data_fd &&
	    v->lay.hash_offset < v->lay.data_blocks * v->dbs)
		ret = imgfs_error_set(err, -EINVAL,
				      "verity: hash offset %" PRIu64
				      " is inside the data (%" PRIu64 " bytes)",
				      v->lay.hash_offset,
				      v->lay.data_blocks * v->dbs);
	if (!ret)
		ret = feed_fd(data_fd, data_size, feed_dm, v, err);
	if (!ret)
		ret = imgfs_verity_finish(v, res, err);
	imgfs_verity_free(v);
	return ret;
}

int imgfs_verity_sidecar_json(const struct imgfs_verity_result *res, char *buf,
			      size_t size)
{
	/* written by json-c, like every JSON document of the project */
	struct json_object *doc = json_object_new_object();
	const char *text;
	int n = -ENOMEM;

	if (!doc ||
	    json_object_object_add(doc, "roothash",
				   json_object_new_string(res->root_hex)) ||
	    json_object_object_add(doc, "hashoffset",
				   json_object_new_uint64(res->hash_offset)))
		goto out;
	text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
	if (!text)
		goto out;
	n = snprintf(buf, size, "%s\n", text);
	if (n < 0 || (size_t)n >= size)
		n = -ENOSPC;
out:
	json_object_put(doc);
	return n;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int imgfs_verity_parse_root(const char *hex, uint8_t root_hash[DIGEST])
{
	if (strlen(hex) != 2 * DIGEST)
		return -EINVAL;
	for (int i = 0; i < DIGEST; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		root_hash[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* JSON's white space only (mkfs.img ends the sidecar with a newline). */
static bool only_space(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\n\r", p[i]) || !p[i])
			return false;
	return true;
}

int imgfs_verity_sidecar_parse(const char *json, size_t len,
			       uint8_t root_hash[DIGEST], uint64_t *hash_offset,
			       struct imgfs_error *err)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *doc = NULL, *root, *off;
	int ret = 0;

	if (!tok)
		return imgfs_error_set(err, -ENOMEM, "verity: out of memory");
	if (len <= INT_MAX)
		doc = json_tokener_parse_ex(tok, json, (int)len);
	if (!doc || json_tokener_get_error(tok) != json_tokener_success ||
	    !json_object_is_type(doc, json_type_object))
		ret = imgfs_error_set(err, -EBADMSG,
				      "dm-verity sidecar: not a JSON object");
	else if (!only_space(json + json_tokener_get_parse_end(tok),
			     len - json_tokener_get_parse_end(tok)))
		ret = imgfs_error_set(
			err, -EBADMSG,
			"dm-verity sidecar: bytes after the JSON object (at offset %zu)",
			json_tokener_get_parse_end(tok));
	else if (!json_object_object_get_ex(doc, "roothash", &root) ||
		 !json_object_is_type(root, json_type_string) ||
		 imgfs_verity_parse_root(json_object_get_string(root),
					 root_hash))
		ret = imgfs_error_set(err, -EBADMSG,
				      "dm-verity sidecar: \"roothash\" is not %d hex digits",
				      2 * DIGEST);
	else if (!json_object_object_get_ex(doc, "hashoffset", &off) ||
		 !json_object_is_type(off, json_type_int) ||
		 json_object_get_int64(off) < 0)
		ret = imgfs_error_set(err, -EBADMSG,
				      "dm-verity sidecar: \"hashoffset\" is not a byte offset");
	else
		*hash_offset = (uint64_t)json_object_get_int64(off);
	json_object_put(doc);
	json_tokener_free(tok);
	return ret;
}

/* ---- dm-verity: checking a hash area ---- */

struct vcheck {
	struct imgfs_verity v; /* parameters from the superblock */
	struct imgfs_verity_check *chk;
	uint8_t *stored; /* the stored level-0 block holding the next digests */
	uint64_t stored_index;
	uint8_t *cmp;
};

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

static int parse_sb(struct imgfs_verity *v, const uint8_t *sb,
		    uint64_t hash_offset, struct imgfs_error *err)
{
	uint32_t version = get_le32(sb + SB_VERSION);
	uint32_t type = get_le32(sb + SB_HASH_TYPE);
	uint64_t blocks = get_le64(sb + SB_DATA_BLOCKS);
	size_t salt_size = sb[SB_SALT_SIZE] | sb[SB_SALT_SIZE + 1] << 8;

	if (memcmp(sb, SB_MAGIC, 8))
		return imgfs_error_set(
			err, -EBADMSG,
			"dm-verity: no verity superblock at offset %" PRIu64,
			hash_offset);
	if (version != 1 || type != 1)
		return imgfs_error_set(
			err, -EBADMSG,
			"dm-verity: superblock version %u, hash type %u (only 1 and 1 are known)",
			version, type);
	if (!is_sha256(sb + SB_ALGORITHM))
		return imgfs_error_set(
			err, -EBADMSG,
			"dm-verity: hash algorithm is not sha256");
	v->dbs = get_le32(sb + SB_DATA_BLOCK_SIZE);
	v->hbs = get_le32(sb + SB_HASH_BLOCK_SIZE);
	if (!is_block_size(v->dbs) || !is_block_size(v->hbs) ||
	    salt_size > IMGFS_VERITY_SALT_MAX || !blocks)
		return imgfs_error_set(
			err, -EBADMSG,
			"dm-verity: unsupported superblock (data block %u, hash block %u, salt %zu bytes, %" PRIu64
			" data blocks)",
			v->dbs, v->hbs, salt_size, blocks);
	memcpy(v->uuid, sb + SB_UUID, 16);
	memcpy(v->salt, sb + SB_SALT, salt_size);
	v->salt_size = salt_size;
	if (vlayout_compute(&v->lay, blocks, v->dbs, v->hbs, hash_offset))
		return imgfs_error_set(err, -EBADMSG,
				       "dm-verity: %" PRIu64
				       " data blocks do not fit a hash area",
				       blocks);
	return 0;
}

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
		return imgfs_error_set(err, -EIO,
				       "dm-verity: internal error: level %u",
				       level);
	ret = pread_full(c->v.hash_fd, c->cmp, c->v.hbs, off, "hash block",
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
		ret = pread_full(c->v.hash_fd, c->stored, c->v.hbs, off,
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

	fill_result(&c->v, root, &chk->info);
	chk->root_ok = !expected || !memcmp(expected, root, DIGEST);
	if (expected)
		imgfs_verity_hex(expected, DIGEST, want);
	/* with one data block, the root is that block's hash */
	if (!chk->root_ok && !c->v.lay.levels) {
		chk->bad_data_block = 0;
		return imgfs_error_set(
			err, -EBADMSG,
			"dm-verity: the only data block hashes to %s, not to the root hash %s",
			chk->info.root_hex, want);
	}
	if (chk->bad_data_block != IMGFS_VERITY_NONE)
		return imgfs_error_set(err, -EBADMSG,
				       "dm-verity: data block %" PRIu64
				       " (offset %" PRIu64
				       ") does not match its hash",
				       chk->bad_data_block,
				       chk->bad_data_block * c->v.dbs);
	if (chk->bad_level != IMGFS_VERITY_NONE)
		return imgfs_error_set(err, -EBADMSG,
				       "dm-verity: hash block %" PRIu64
				       " of tree level %" PRIu64
				       " does not match the level below",
				       chk->bad_hash_block, chk->bad_level);
	if (!chk->root_ok)
		return imgfs_error_set(err, -EBADMSG,
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
		return imgfs_error_set(err, -errno, "dm-verity: data size: %s",
				       strerror(errno));
	if ((uint64_t)end < v->lay.data_blocks * v->dbs)
		return imgfs_error_set(err, -EBADMSG,
				       "dm-verity: the data is %" PRIu64
				       " bytes, the superblock says %" PRIu64
				       " blocks of %u",
				       (uint64_t)end, v->lay.data_blocks,
				       v->dbs);
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
		return imgfs_error_set(err, -ENOMEM, "verity: out of memory");
	c->chk = chk;
	c->stored_index = IMGFS_VERITY_NONE;
	c->v.hash_fd = hash_fd;
	ret = pread_full(hash_fd, sb, sizeof(sb), hash_offset,
			 "verity superblock", err);
	if (!ret)
		ret = parse_sb(&c->v, sb, hash_offset, err);
	if (!ret) {
		c->stored = malloc(c->v.hbs);
		c->cmp = malloc(c->v.hbs);
		if (!c->stored || !c->cmp)
			ret = imgfs_error_set(err, -ENOMEM,
					      "verity: out of memory");
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
		ret = feed_fd(data_fd, c->v.lay.data_blocks * c->v.dbs, feed_vt,
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

/* ---- fs-verity ---- */

#define FSV_BLOCK 4096
#define FSV_DESC_SIZE 256

struct imgfs_fsverity {
	struct vt t;
	int done;
};

int imgfs_fsverity_create(struct imgfs_fsverity **out, struct imgfs_error *err)
{
	struct imgfs_fsverity *f = calloc(1, sizeof(*f));
	int ret;

	*out = NULL;
	if (!f)
		return imgfs_error_set(err, -ENOMEM,
				       "fs-verity: out of memory");
	ret = vt_init(&f->t, FSV_BLOCK, FSV_BLOCK, NULL, 0, err);
	if (ret) {
		imgfs_fsverity_free(f);
		return ret;
	}
	*out = f;
	return 0;
}

int imgfs_fsverity_update(struct imgfs_fsverity *f, const void *buf, size_t len,
			  struct imgfs_error *err)
{
	if (f->done)
		return imgfs_error_set(err, -EINVAL,
				       "fs-verity: update after finish");
	return vt_update(&f->t, buf, len, err);
}

int imgfs_fsverity_finish(struct imgfs_fsverity *f,
			  uint8_t digest[IMGFS_VERITY_DIGEST_SIZE],
			  struct imgfs_error *err)
{
	uint8_t desc[FSV_DESC_SIZE] = { 0 };
	int ret = 0;

	if (f->done)
		return imgfs_error_set(err, -EINVAL,
				       "fs-verity: finished twice");
	f->done = 1;
	/* the fsverity_descriptor; an empty file's root hash is all zeros */
	desc[0] = 1; /* version */
	desc[1] = 1; /* FS_VERITY_HASH_ALG_SHA256 */
	desc[2] = 12; /* log2 of the block size */
	put_le64(desc + 8, f->t.fed);
	if (f->t.fed)
		ret = vt_finish(&f->t, desc + 16, err);
	if (!ret && sha256(desc, sizeof(desc), "", 0, digest))
		ret = imgfs_error_set(err, -EIO, "fs-verity: SHA-256 failed");
	return ret;
}

void imgfs_fsverity_free(struct imgfs_fsverity *f)
{
	if (!f)
		return;
	vt_release(&f->t);
	free(f);
}

static int feed_fsv(void *ctx, const void *buf, size_t len,
		    struct imgfs_error *err)
{
	return imgfs_fsverity_update(ctx, buf, len, err);
}

int imgfs_fsverity_digest_fd(int fd, uint8_t digest[IMGFS_VERITY_DIGEST_SIZE],
			     struct imgfs_error *err)
{
	struct imgfs_fsverity *f;
	int ret = imgfs_fsverity_create(&f, err);

	if (ret)
		return ret;
	ret = feed_fd(fd, UINT64_MAX, feed_fsv, f, err);
	if (!ret)
		ret = imgfs_fsverity_finish(f, digest, err);
	imgfs_fsverity_free(f);
	return ret;
}
