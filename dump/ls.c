// SPDX-License-Identifier: MIT
/*
 * ls.c - the listing (--ls, -R) and contents (--cat) views of dump.img.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/error.h"
#include "imgfs/format.h"
#include "imgfs/stats.h"
#include "dump.h"

/* One "ls -l" line: mode, links, owner, size or device, mtime, name. */
static int text_line(struct dump_ctx *ctx, const struct imgfs_inode *inode,
		     const char *name, size_t name_len)
{
	FILE *f = ctx->out;
	char mode[11], when[48], size[48];
	char *target = NULL;
	size_t tlen = 0;
	int ret = 0;

	mode_string(inode->mode, mode);
	iso_time(inode->mtime, 0, false, when);
	if (inode_is_device(inode))
		snprintf(size, sizeof(size), "%u, %u",
			 imgfs_dev_major(inode->rdev),
			 imgfs_dev_minor(inode->rdev));
	else
		snprintf(size, sizeof(size), "%" PRIu64, inode->size);
	if (imgfs_inode_is_symlink(inode))
		ret = read_symlink(ctx, inode, &target, &tlen);
	fprintf(f, "%s %4" PRIu32 " %6" PRIu32 " %6" PRIu32 " %10s %s ", mode,
		inode->nlink, inode->uid, inode->gid, size, when);
	print_escaped(f, name, name_len, ESC_NAME);
	if (target) {
		fputs(" -> ", f);
		print_escaped(f, target, tlen, ESC_NAME);
		free(target);
	}
	fputc('\n', f);
	return ret;
}

static int json_entry(struct dump_ctx *ctx, const struct imgfs_inode *inode,
		      const char *name, size_t name_len)
{
	struct json_object *o;
	char *target = NULL;
	size_t tlen = 0;
	int ret = 0;

	if (imgfs_inode_is_symlink(inode))
		ret = read_symlink(ctx, inode, &target, &tlen);
	if (ret)
		return ret;
	o = fe_rec_new();
	fe_rec_bytes(o, "name", name, name_len);
	json_inode_basics(o, inode);
	if (target)
		fe_rec_bytes(o, "target", target, tlen);
	else
		fe_rec_null(o, "target");
	free(target);
	json_put(&ctx->j, NULL, o);
	return 0;
}

/* A listed directory's object, open for its entries. */
static void json_dir_open(struct dump_ctx *ctx, const char *path, uint64_t nid)
{
	struct json_object *o = fe_rec_new();

	fe_rec_str(o, "path", path);
	fe_rec_u64(o, "nid", nid);
	json_obj_open(&ctx->j, NULL);
	json_put_members(&ctx->j, o);
	json_arr_open(&ctx->j, "entries");
}

struct ls_state {
	struct dump_ctx *ctx;
	bool recursive;
	bool listed_one; /* a directory was printed (text: blank line) */
};

static int ls_dir_begin(void *arg, const char *path,
			const struct imgfs_inode *dir)
{
	struct ls_state *s = arg;
	struct dump_ctx *ctx = s->ctx;

	if (ctx->json) {
		json_dir_open(ctx, path, dir->nid);
		return 0;
	}
	if (s->listed_one)
		fputc('\n', ctx->out);
	s->listed_one = true;
	if (s->recursive) {
		print_escaped(ctx->out, path, strlen(path), ESC_NAME);
		fputs(":\n", ctx->out);
	}
	return 0;
}

static int ls_entry(void *arg, const struct imgfs_walk_entry *e)
{
	struct ls_state *s = arg;

	if (s->ctx->json)
		return json_entry(s->ctx, e->inode, e->name, e->name_len);
	return text_line(s->ctx, e->inode, e->name, e->name_len);
}

static int ls_dir_end(void *arg, const char *path,
		      const struct imgfs_inode *dir, uint64_t entries)
{
	struct ls_state *s = arg;

	if (s->ctx->json) {
		json_arr_close(&s->ctx->j);
		json_obj_close(&s->ctx->j);
	}
	return 0;
}

/* A file that is not a directory is listed alone, under its path. */
static int ls_file(struct dump_ctx *ctx, const struct imgfs_inode *inode,
		   const char *path)
{
	int ret;

	if (!ctx->json)
		return text_line(ctx, inode, path, strlen(path));
	json_dir_open(ctx, path, inode->nid);
	ret = json_entry(ctx, inode, path, strlen(path));
	json_arr_close(&ctx->j);
	json_obj_close(&ctx->j);
	return ret;
}

int dump_ls(struct dump_ctx *ctx, const struct dump_target *t, bool recursive)
{
	struct ls_state s = { ctx, recursive, false };
	struct imgfs_walk_options o = {
		.struct_size = sizeof(o),
		.flags = recursive ? 0 : IMGFS_WALK_NO_RECURSE,
		.dir_begin = ls_dir_begin,
		.entry = ls_entry,
		.dir_end = ls_dir_end,
		.arg = &s,
	};
	const char *path = t->path ? t->path : "";
	struct imgfs_inode inode;
	char nidpath[32];
	int ret;

	ret = imgfs_inode_read(ctx->img, t->nid, &inode, &ctx->err);
	if (ret)
		return ret;
	if (!t->path) {
		snprintf(nidpath, sizeof(nidpath), "<nid %" PRIu64 ">", t->nid);
		path = nidpath;
	}
	if (ctx->json)
		json_arr_open(&ctx->j, "ls");
	if (imgfs_inode_is_dir(&inode))
		ret = imgfs_walk(ctx->img, t->nid, path[0] ? path : "/", &o,
				 &ctx->err);
	else
		ret = ls_file(ctx, &inode, path);
	if (ctx->json)
		json_arr_close(&ctx->j);
	return ret < 0 ? ret : 0;
}

/* --- contents --- */

#define CAT_CHUNK (64u * 1024u * 3u) /* a multiple of 3 for base64 */

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Encode @len bytes (a multiple of 3 except for the last piece). */
static size_t base64(const uint8_t *in, size_t len, char *out)
{
	size_t i, o = 0;

	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | in[i + 1] << 8 | in[i + 2];

		out[o++] = b64[v >> 18];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = b64[(v >> 6) & 63];
		out[o++] = b64[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)in[i] << 16;

		if (i + 1 < len)
			v |= in[i + 1] << 8;
		out[o++] = b64[v >> 18];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
		out[o++] = '=';
	}
	return o;
}

/* Fill @buf with up to CAT_CHUNK bytes at @off; returns the count. */
static ssize_t cat_fill(struct dump_ctx *ctx, const struct imgfs_inode *inode,
			uint64_t off, uint8_t *buf)
{
	size_t fill = 0;

	while (fill < CAT_CHUNK && off + fill < inode->size) {
		ssize_t n = imgfs_read(ctx->img, inode, off + fill, buf + fill,
				       CAT_CHUNK - fill, &ctx->err);

		if (n < 0)
			return n;
		if (n == 0)
			return fe_error_set(&ctx->err, -EIO,
					       "nid %" PRIu64 ": short read at %" PRIu64,
					       inode->nid, off + fill);
		fill += (size_t)n;
	}
	return (ssize_t)fill;
}

/* Copy the contents out; base64 pieces stay whole as chunks are full. */
static int cat_data(struct dump_ctx *ctx, const struct imgfs_inode *inode,
		    uint8_t *buf, char *enc)
{
	uint64_t off = 0;

	while (off < inode->size) {
		ssize_t n = cat_fill(ctx, inode, off, buf);

		if (n < 0)
			return (int)n;
		if (ctx->json)
			json_str_raw(&ctx->j, enc,
				     base64(buf, (size_t)n, enc));
		else if (fwrite(buf, 1, (size_t)n, ctx->out) != (size_t)n)
			return fe_error_set(&ctx->err, -EIO,
					       "writing to standard output failed");
		off += (uint64_t)n;
	}
	return 0;
}

int dump_cat(struct dump_ctx *ctx, const struct dump_target *t)
{
	struct imgfs_inode inode;
	uint8_t *buf;
	char *enc;
	int ret;

	ret = imgfs_inode_read(ctx->img, t->nid, &inode, &ctx->err);
	if (ret)
		return ret;
	if (!imgfs_inode_is_reg(&inode))
		return fe_error_set(&ctx->err, -EINVAL,
				       "%s (nid %" PRIu64 "): not a regular file (%s)",
				       t->path ? t->path : "", t->nid,
				       imgfs_mode_type_name(inode.mode) ?: "unknown");
	buf = malloc(CAT_CHUNK);
	enc = malloc(CAT_CHUNK / 3 * 4);
	if (!buf || !enc) {
		free(buf);
		free(enc);
		return fe_error_set(&ctx->err, -ENOMEM, "out of memory");
	}
	if (ctx->json) {
		struct json_object *o = fe_rec_new();

		fe_rec_str(o, "path", t->path);
		fe_rec_u64(o, "nid", t->nid);
		fe_rec_u64(o, "size", inode.size);
		fe_rec_str(o, "encoding", "base64");
		json_obj_open(&ctx->j, "cat");
		json_put_members(&ctx->j, o);
		json_str_begin(&ctx->j, "data");
	}
	ret = cat_data(ctx, &inode, buf, enc);
	if (ctx->json) {
		json_str_end(&ctx->j);
		json_obj_close(&ctx->j);
	}
	free(buf);
	free(enc);
	return ret;
}
