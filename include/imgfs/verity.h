/* SPDX-License-Identifier: MIT */
/*
 * imgfs/verity.h - dm-verity hash trees and fs-verity file digests (SHA-256).
 *
 * dm-verity: the hash area is what "veritysetup format --hash-offset=N"
 * writes (format version 1, hash type 1, sha256): at the hash offset a
 * 512-byte verity superblock, zero-padded to one hash block, then the tree
 * levels from the top (the level just below the root) down to level 0 (the
 * hashes of the data blocks). Every hash is SHA-256(salt || block); a level's
 * last block is zero-padded; the root hash is the hash of the single block of
 * the top level, or of the only data block when there is just one.
 *
 * The tree is computed while the data is fed in order (imgfs_verity_update),
 * holding one pending block per level. Finished hash blocks go to their
 * final place in @hash_fd at once when the data size is announced up front
 * (imgfs_verity_params.data_size); otherwise the level sizes, hence their
 * offsets, are only known at the end, so each level is spilled to its own
 * unlinked temporary file and copied into place by imgfs_verity_finish.
 * Memory never grows with the data.
 *
 * fs-verity: the digest "fsverity digest FILE" prints (sha256, 4096-byte
 * blocks, no salt): SHA-256 of the 256-byte fsverity_descriptor holding the
 * Merkle tree root and the file size. Only the root is kept, not the tree.
 *
 * Every object is a context; nothing is shared, so contexts can be used from
 * several threads at once (one thread per context). Functions return 0 or a
 * negative errno and record the first failure's message in @err.
 */
#ifndef IMGFS_VERITY_H
#define IMGFS_VERITY_H

#include <stddef.h>
#include <stdint.h>

#include "imgfs/api.h"
#include "imgfs/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IMGFS_VERITY_DIGEST_SIZE 32 /* SHA-256 */
#define IMGFS_VERITY_SALT_MAX 256 /* what the superblock holds */
#define IMGFS_VERITY_DEFAULT_SALT_SIZE 32 /* derived salts */
#define IMGFS_VERITY_SB_SIZE 512
/* imgfs_verity_params.head_size: at most this many bytes */
#define IMGFS_VERITY_HEAD_MAX 4096
/* imgfs_verity_params.hash_offset: just after the data (see there) */
#define IMGFS_VERITY_HASH_OFFSET_AUTO UINT64_MAX
/* imgfs_verity_check: no mismatch found */
#define IMGFS_VERITY_NONE UINT64_MAX

/*
 * What to build. Start from IMGFS_VERITY_PARAMS_INIT (no hash fd, offset
 * right after the data, everything else zero: defaults) and set what you
 * need.
 */
struct imgfs_verity_params {
	/* 512, 1024, 2048 or 4096; 0: 4096 */
	uint32_t data_block_size;
	/* 512, 1024, 2048 or 4096; 0: 4096 */
	uint32_t hash_block_size;
	/*
	 * Bytes that will be fed. 0: not known yet (levels are spilled to
	 * temporary files). When known, feeding a different amount is an
	 * error at imgfs_verity_finish. A last partial data block is hashed
	 * zero-padded: the device must read zeros there (true when the tree
	 * goes into the same file after the data, a hole or zeros).
	 */
	uint64_t data_size;
	/*
	 * Where the superblock goes in @hash_fd, a multiple of 512.
	 * IMGFS_VERITY_HASH_OFFSET_AUTO: the data size rounded up to the
	 * data block size, then to the hash block size (the tree in the
	 * same file right after the data).
	 */
	uint64_t hash_offset;
	/* receives superblock and tree; -1: compute the root hash only */
	int hash_fd;
	/*
	 * Salt and superblock UUID. @salt NULL: @salt_size bytes (0: the
	 * default IMGFS_VERITY_DEFAULT_SALT_SIZE) derived from @seed with
	 * imgfs_verity_derive(); @salt non-NULL with @salt_size 0: no salt
	 * (veritysetup's "--salt=-"). @uuid NULL: derived from @seed.
	 */
	const uint8_t *salt;
	size_t salt_size;
	const uint8_t *uuid; /* 16 bytes */
	/* seed for what is derived, e.g. the image's UUID and size; the
	 * same seed gives the same salt and UUID (NULL: an empty seed) */
	const void *seed;
	size_t seed_size;
	/* directory for spilled levels; NULL: $TMPDIR, else /tmp */
	const char *tmpdir;
	/*
	 * For a writer that writes its header last (an EROFS superblock):
	 * the first @head_size bytes (at most IMGFS_VERITY_HEAD_MAX) are not
	 * fed; imgfs_verity_update() starts at offset @head_size, and
	 * imgfs_verity_set_head() gives them before imgfs_verity_finish().
	 * The data blocks they touch are hashed then, and the first block
	 * of each level, written with a placeholder until then, is redone:
	 * the rest of the tree is built as the data streams in. 0: none.
	 */
	uint64_t head_size;
};

#define IMGFS_VERITY_PARAMS_INIT                                             \
	{                                                                    \
		.hash_offset = IMGFS_VERITY_HASH_OFFSET_AUTO, .hash_fd = -1, \
	}

/* What was built, or (imgfs_verity_verify_fd) what the superblock says. */
struct imgfs_verity_result {
	uint8_t root_hash[IMGFS_VERITY_DIGEST_SIZE];
	char root_hex[2 * IMGFS_VERITY_DIGEST_SIZE + 1];
	uint32_t data_block_size, hash_block_size;
	uint64_t data_blocks;
	uint64_t hash_offset; /* the superblock: veritysetup's --hash-offset */
	uint64_t tree_offset; /* first tree block, after the superblock's */
	uint64_t hash_end; /* end of the tree: the file size when appended */
	unsigned int levels; /* 0 when there is one data block */
	uint8_t salt[IMGFS_VERITY_SALT_MAX];
	size_t salt_size;
	char salt_hex[2 * IMGFS_VERITY_SALT_MAX + 1]; /* "-" when empty */
	uint8_t uuid[16];
	char uuid_str[37]; /* 8-4-4-4-12 lowercase */
};

struct imgfs_verity;

/*
 * Start a tree. Checks the parameters (block sizes, salt size, offset
 * alignment, and with a known data size that the hash area fits in 64
 * bits). Returns 0 and sets *@out, or a negative errno.
 */
IMGFS_API
int imgfs_verity_create(struct imgfs_verity **out,
			const struct imgfs_verity_params *params,
			struct imgfs_error *err);

/* Feed the next @len bytes of data (any chunking gives the same tree). */
IMGFS_API
int imgfs_verity_update(struct imgfs_verity *v, const void *buf, size_t len,
			struct imgfs_error *err);

/*
 * The first params->head_size bytes of the data (see there), @len being
 * exactly that; once, any time before imgfs_verity_finish().
 */
IMGFS_API
int imgfs_verity_set_head(struct imgfs_verity *v, const void *buf, size_t len,
			  struct imgfs_error *err);

/*
 * Complete the tree: write the last blocks of every level, the superblock
 * (padded to one hash block) and, when the size was not known, copy the
 * spilled levels into place; fill @res. Empty data is an error (dm-verity
 * needs one data block). Nothing is synced: fsync @hash_fd as needed.
 * On failure the hash area may be partly written: discard the file (mkfs
 * writes to a temporary file anyway). The context can only be freed
 * afterwards.
 */
IMGFS_API
int imgfs_verity_finish(struct imgfs_verity *v, struct imgfs_verity_result *res,
			struct imgfs_error *err);

/* Free @v (NULL is fine), removing any spill files. */
IMGFS_API
void imgfs_verity_free(struct imgfs_verity *v);

/*
 * Read @data_size bytes of data from @data_fd from offset 0 and build the
 * tree as above (params->data_size is ignored). When params->hash_fd is
 * @data_fd, the hash area must not overlap the data.
 */
IMGFS_API
int imgfs_verity_format_fd(int data_fd, uint64_t data_size,
			   const struct imgfs_verity_params *params,
			   struct imgfs_verity_result *res,
			   struct imgfs_error *err);

/* Findings of imgfs_verity_verify_fd. */
struct imgfs_verity_check {
	/* superblock's parameters; root_hash is the recomputed one */
	struct imgfs_verity_result info;
	/* first data block whose hash differs from the stored one */
	uint64_t bad_data_block;
	/* lowest tree level (0: above the data) with a differing block, and
	 * that block's index in the level; IMGFS_VERITY_NONE if none */
	uint64_t bad_level, bad_hash_block;
	/* the recomputed root equals the expected one (1 if none given) */
	int root_ok;
};

/*
 * Check a hash area the way the kernel would, over all the data: read the
 * superblock at @hash_offset in @hash_fd, hash every data block of @data_fd
 * and every tree level, compare each with the stored tree, and the root
 * with @root_hash (NULL: not compared). Fills @chk. Returns 0 when all
 * matches, -EBADMSG with a message naming the first mismatch (data block,
 * else tree level and block, else root), a bad superblock, or data or
 * tree cut short; another negative errno when reading fails. @data_fd
 * and @hash_fd may be the same file.
 */
IMGFS_API
int imgfs_verity_verify_fd(int data_fd, int hash_fd, uint64_t hash_offset,
			   const uint8_t *root_hash,
			   struct imgfs_verity_check *chk,
			   struct imgfs_error *err);

/*
 * Derive a salt (@salt_size bytes, at most IMGFS_VERITY_SALT_MAX) and a
 * UUID (RFC 9562 version 8) from @seed: the same seed gives the same tree.
 * Either output may be NULL.
 */
IMGFS_API
void imgfs_verity_derive(const void *seed, size_t seed_size, uint8_t *salt,
			 size_t salt_size, uint8_t uuid[16]);

/*
 * containerd's sidecar metadata for an EROFS layer with dm-verity (the
 * "LAYER.dmverity" file): {"roothash":"<hex>","hashoffset":N} and a newline,
 * N being the superblock offset. Writes at most @size bytes with a NUL;
 * returns the length, or -ENOSPC if @size is too small.
 */
IMGFS_API
int imgfs_verity_sidecar_json(const struct imgfs_verity_result *res, char *buf,
			      size_t size);

/*
 * Read such a sidecar (@len bytes at @json): the root hash and the hash
 * offset. Returns 0, or -EBADMSG with a message saying what is wrong.
 */
IMGFS_API
int imgfs_verity_sidecar_parse(const char *json, size_t len,
			       uint8_t root_hash[IMGFS_VERITY_DIGEST_SIZE],
			       uint64_t *hash_offset, struct imgfs_error *err);

/*
 * Parse @hex (exactly 2 * IMGFS_VERITY_DIGEST_SIZE hex digits, either
 * case) into @root_hash. Returns 0 or -EINVAL.
 */
IMGFS_API
int imgfs_verity_parse_root(const char *hex,
			    uint8_t root_hash[IMGFS_VERITY_DIGEST_SIZE]);

/* Lowercase hex of @len bytes into @out (2 * @len + 1 bytes). */
IMGFS_API
void imgfs_verity_hex(const uint8_t *bytes, size_t len, char *out);

/* fs-verity digests (sha256, 4096-byte blocks, no salt) */
struct imgfs_fsverity;

IMGFS_API
int imgfs_fsverity_create(struct imgfs_fsverity **out, struct imgfs_error *err);
/* Feed the file's next @len bytes. */
IMGFS_API
int imgfs_fsverity_update(struct imgfs_fsverity *f, const void *buf, size_t len,
			  struct imgfs_error *err);
/* The digest of all that was fed; the context can then only be freed. */
IMGFS_API
int imgfs_fsverity_finish(struct imgfs_fsverity *f,
			  uint8_t digest[IMGFS_VERITY_DIGEST_SIZE],
			  struct imgfs_error *err);
IMGFS_API
void imgfs_fsverity_free(struct imgfs_fsverity *f);
/* Digest of what @fd holds from offset 0 to its end (read with pread). */
IMGFS_API
int imgfs_fsverity_digest_fd(int fd, uint8_t digest[IMGFS_VERITY_DIGEST_SIZE],
			     struct imgfs_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_VERITY_H */
