/* SPDX-License-Identifier: MIT */
/*
 * dm.h - dm-verity's hash area: where its parts lie (superblock.c), the
 * state of one being written (format.c) or checked (check.c).
 */
#ifndef IMGFS_LIB_VERITY_DM_H
#define IMGFS_LIB_VERITY_DM_H

#include "verity/verity.h"

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

/* 512, 1024, 2048 or 4096: what veritysetup and the kernel take */
bool verity_block_size_ok(uint32_t n);
/* Place the superblock and levels; -EINVAL or -EFBIG if they do not fit. */
int verity_layout(struct vlayout *l, uint64_t data_blocks, uint32_t dbs,
		  uint32_t hbs, uint64_t hash_offset);
/* The IMGFS_VERITY_SB_SIZE bytes of @v's superblock. */
void verity_sb_encode(const struct imgfs_verity *v, uint8_t *sb);
/* Parameters and layout of @v from the superblock at @hash_offset. */
int verity_sb_decode(struct imgfs_verity *v, const uint8_t *sb,
		     uint64_t hash_offset, struct imgfs_error *err);
void verity_fill_result(const struct imgfs_verity *v, const uint8_t *root,
			struct imgfs_verity_result *res);

#endif /* IMGFS_LIB_VERITY_DM_H */
