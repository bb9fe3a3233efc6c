// SPDX-License-Identifier: MIT
/*
 * fuzz_dump.c - libFuzzer target: every dump.img view on an arbitrary image.
 *
 * The input is opened as an in-memory image (checksum and unknown features
 * ignored, as dump.img does) and each view runs in text and in JSON, its
 * output going to /dev/null: superblock, statistics (the whole-tree walk),
 * a recursive listing, and the inode view of the root and of the first
 * entries met. Built with the views of dump/ (not dump/main.c) and libimgfs:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -include config.h \
 *     -I include -I lib -I dump tests/fuzz/fuzz_dump.c dump/json.c \
 *     dump/util.c dump/super.c dump/inode.c dump/ls.c dump/stats.c \
 *     lib/[a-z]*.c $(pkg-config --libs libarchive liblz4 liblzma uuid \
 *     libxxhash libzstd libcrypto zlib) -lpthread
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "imgfs/stats.h"
#include "dump.h"

#define MAX_INODES 8

struct picks {
	uint64_t nids[MAX_INODES];
	unsigned int n;
};

static int pick_entry(void *arg, const struct imgfs_walk_entry *e)
{
	struct picks *p = arg;

	if (p->n < MAX_INODES)
		p->nids[p->n++] = e->inode->nid;
	return p->n < MAX_INODES ? 0 : 1;
}

static void views(struct dump_ctx *ctx, const struct picks *p)
{
	struct dump_target t = { "/", ctx->sb->root_nid };
	unsigned int i;

	if (ctx->json) {
		json_init(&ctx->j, ctx->out);
		json_obj_open(&ctx->j, NULL);
	}
	dump_superblock(ctx);
	imgfs_error_clear(&ctx->err);
	dump_stats(ctx);
	imgfs_error_clear(&ctx->err);
	dump_ls(ctx, &t, true);
	for (i = 0; i < p->n; i++) {
		t.path = NULL;
		t.nid = p->nids[i];
		imgfs_error_clear(&ctx->err);
		dump_inode(ctx, &t);
	}
	if (ctx->json) {
		json_obj_close(&ctx->j);
		json_finish(&ctx->j);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dump_ctx ctx = { .prog = "fuzz" };
	struct imgfs_walk_options o = {
		.struct_size = sizeof(o),
		.entry = pick_entry,
	};
	struct picks p = { .n = 0 };

	imgfs_error_clear(&ctx.err);
	if (imgfs_image_open_mem(data, size, IMGFS_OPEN_IGNORE_CHECKSUM |
						    IMGFS_OPEN_IGNORE_FEATURES,
				 &ctx.img, &ctx.err))
		return 0;
	ctx.sb = imgfs_image_sb(ctx.img);
	ctx.out = fopen("/dev/null", "w");
	if (!ctx.out) {
		imgfs_image_close(ctx.img);
		return 0;
	}
	p.nids[p.n++] = ctx.sb->root_nid;
	o.arg = &p;
	imgfs_walk(ctx.img, ctx.sb->root_nid, "/", &o, &ctx.err);
	ctx.json = false;
	views(&ctx, &p);
	ctx.json = true;
	views(&ctx, &p);
	fclose(ctx.out);
	imgfs_image_close(ctx.img);
	return 0;
}
