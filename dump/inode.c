// SPDX-License-Identifier: MIT
/*
 * inode.c - the inode view of dump.img (--path / --nid).
 *
 * The inode itself must be readable; its parts (xattrs, symlink target,
 * extents) are shown each on its own, so one damaged part still leaves the
 * others visible. A damaged part makes the view fail (exit status 1) once
 * everything else is printed; a layout the reader cannot map yet does not.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json_object.h>

#include "frontend/error.h"
#include "imgfs/format.h"
#include "frontend/json_str.h"
#include "imgfs/stats.h"
#include "dump.h"

bool inode_is_device(const struct imgfs_inode *inode)
{
	uint32_t t = inode->mode & 0170000;

	return t == 0020000 || t == 0060000;
}

int read_symlink(struct dump_ctx *ctx, const struct imgfs_inode *inode,
		 char **target, size_t *len)
{
	size_t size = IMGFS_SYMLINK_MAX + 1;
	ssize_t n;
	char *buf;

	*target = NULL;
	buf = malloc(size);
	if (!buf)
		return fe_error_set(&ctx->err, -ENOMEM, "out of memory");
	n = imgfs_readlink(ctx->img, inode, buf, size, &ctx->err);
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	*target = buf;
	*len = (size_t)n;
	return 0;
}

/* @prefix, then a reader message (it may quote names), escaped. */
static void msg_line(FILE *f, const char *prefix, const char *msg)
{
	fputs(prefix, f);
	print_escaped(f, msg, strlen(msg), ESC_NAME);
	fputc('\n', f);
}

static const char *type_name(const struct imgfs_inode *inode)
{
	const char *n = imgfs_mode_type_name(inode->mode);

	return n ? n : "unknown";
}

void json_inode_basics(struct json_object *o, const struct imgfs_inode *inode)
{
	struct json_object *rdev;
	char buf[48];

	fe_rec_u64(o, "nid", inode->nid);
	fe_rec_str(o, "type", type_name(inode));
	fe_rec_u64(o, "mode", inode->mode);
	snprintf(buf, sizeof(buf), "%04o", inode->mode & 07777);
	fe_rec_str(o, "permissions", buf);
	mode_string(inode->mode, buf);
	fe_rec_str(o, "mode_string", buf);
	fe_rec_u64(o, "uid", inode->uid);
	fe_rec_u64(o, "gid", inode->gid);
	fe_rec_u64(o, "size", inode->size);
	fe_rec_u64(o, "nlink", inode->nlink);
	fe_rec_i64(o, "mtime", inode->mtime);
	fe_rec_u64(o, "mtime_nsec", inode->mtime_nsec);
	iso_time(inode->mtime, inode->mtime_nsec, true, buf);
	fe_rec_str(o, "mtime_iso", buf);
	if (inode_is_device(inode)) {
		rdev = fe_rec_new();
		fe_rec_u64(rdev, "major", imgfs_dev_major(inode->rdev));
		fe_rec_u64(rdev, "minor", imgfs_dev_minor(inode->rdev));
		fe_rec_set(o, "rdev", rdev);
	} else {
		fe_rec_null(o, "rdev");
	}
}

/* --- text --- */

static void text_basics(FILE *f, const struct dump_target *t,
			const struct imgfs_inode *inode,
			const struct imgfs_sb_info *sb)
{
	char buf[48], num[48];

	fprintf(f, "%-16s ", "Path:");
	if (t->path)
		print_escaped(f, t->path, strlen(t->path), ESC_NAME);
	else
		fputs("(by nid)", f);
	fputc('\n', f);
	fprintf(f, "%-16s %" PRIu64 " (byte %" PRIu64 ")\n", "NID:",
		inode->nid, inode->pos);
	fprintf(f, "%-16s %s\n", "Type:", type_name(inode));
	mode_string(inode->mode, buf);
	fprintf(f, "%-16s %04o (%s)\n", "Mode:", inode->mode & 07777, buf);
	fprintf(f, "%-16s uid %" PRIu32 ", gid %" PRIu32 "\n", "Owner:",
		inode->uid, inode->gid);
	fprintf(f, "%-16s %" PRIu64 "\n", "Size:", inode->size);
	fprintf(f, "%-16s %" PRIu32 "\n", "Links:", inode->nlink);
	iso_time(inode->mtime, inode->mtime_nsec, true, buf);
	imgfs_time_decimal(inode->mtime, inode->mtime_nsec, num);
	fprintf(f, "%-16s %s (%s)\n", "Mtime:", buf, num);
	fprintf(f, "%-16s %s (%u bytes, i_format 0x%04x)\n", "Inode format:",
		inode->version == IMGFS_INODE_EXTENDED ? "extended" : "compact",
		inode->inode_size, inode->i_format);
	fprintf(f, "%-16s %s (%u)\n", "Data layout:",
		imgfs_layout_name(inode->layout) ?: "unknown", inode->layout);
	fprintf(f, "%-16s %" PRIu32 "\n", "Inode number:", inode->ino);
	fprintf(f, "%-16s %u %s (i_xattr_icount %u)\n", "Xattr area:",
		inode->xattr_isize, plural(inode->xattr_isize, "byte", "bytes"),
		inode->xattr_icount);
	if (inode_is_device(inode))
		fprintf(f, "%-16s %u:%u\n", "Device:",
			imgfs_dev_major(inode->rdev),
			imgfs_dev_minor(inode->rdev));
	if (imgfs_inode_is_compressed(inode))
		fprintf(f, "%-16s %" PRIu64 " (%" PRIu64 " %s)\n",
			"Compressed blocks:", inode->startblk,
			inode->startblk << sb->blkszbits,
			plural(inode->startblk << sb->blkszbits, "byte",
			       "bytes"));
	else if (inode->layout == IMGFS_LAYOUT_CHUNK_BASED)
		fprintf(f, "%-16s %llu bytes (format 0x%04x)\n", "Chunk size:",
			1ull << inode->chunkbits, inode->chunk_format);
	else if (inode->startblk_null)
		fprintf(f, "%-16s none\n", "Start block:");
	else if (inode->layout != IMGFS_LAYOUT_FLAT_INLINE || inode->size >
		 (uint64_t)sb->blksz)
		fprintf(f, "%-16s %" PRIu64 "\n", "Start block:",
			inode->startblk);
}

static void text_flags(FILE *f, unsigned int flags)
{
	if (flags & IMGFS_EXTENT_F_PARTIAL)
		fputs(" partial", f);
	if (flags & IMGFS_EXTENT_F_SHARED)
		fputs(" shared", f);
	if (flags & IMGFS_EXTENT_F_RAW)
		fputs(" raw", f);
}

/* Extents are shown as runs: adjacent chunks merged (imgfs_extent_merge). */
struct ext_walk {
	struct dump_ctx *ctx;
	uint64_t count;
	struct imgfs_extent run;
	bool have_run;
	void (*emit)(struct ext_walk *w, const struct imgfs_extent *e);
};

static int ext_collect(void *arg, const struct imgfs_extent *e)
{
	struct ext_walk *w = arg;

	if (w->have_run && imgfs_extent_merge(&w->run, e))
		return 0;
	if (w->have_run)
		w->emit(w, &w->run);
	w->run = *e;
	w->have_run = true;
	return 0;
}

/* Iterate @inode's extents, emitting runs; the last one too on failure. */
static int ext_iterate(struct ext_walk *w, const struct imgfs_inode *inode,
		       struct imgfs_error *e)
{
	int ret = imgfs_extent_iterate(w->ctx->img, inode, ext_collect, w, e);

	if (w->have_run)
		w->emit(w, &w->run);
	return ret;
}

struct xattr_walk {
	struct dump_ctx *ctx;
	unsigned int count;
};

/* Block address of a block-aligned storage position, else -1. */
static int64_t ext_block(const struct imgfs_sb_info *sb,
			 const struct imgfs_extent *e)
{
	if (e->kind != IMGFS_EXTENT_PLAIN && e->kind != IMGFS_EXTENT_COMPRESSED)
		return -1;
	if (e->pos & (sb->blksz - 1))
		return -1;
	return (int64_t)(e->pos >> sb->blkszbits);
}

static const char *ext_kind(const struct imgfs_extent *e, char *buf)
{
	const char *k = imgfs_extent_kind_name(e->kind) ?: "unknown";
	const char *a;

	if (e->kind != IMGFS_EXTENT_COMPRESSED)
		return k;
	a = imgfs_compr_alg_name(e->algorithm);
	if (a)
		snprintf(buf, 32, "%s", a);
	else
		snprintf(buf, 32, "alg-%u", e->algorithm);
	return buf;
}

static void text_extent(struct ext_walk *w, const struct imgfs_extent *e)
{
	FILE *f = w->ctx->out;
	int64_t blk = ext_block(w->ctx->sb, e);
	char buf[32];

	fprintf(f, "  %6" PRIu64 " %12" PRIu64 " %12" PRIu64 "  %-10s",
		w->count++, e->logical, e->length, ext_kind(e, buf));
	if (e->kind == IMGFS_EXTENT_HOLE) {
		fputs(" -\n", f);
		return;
	}
	fprintf(f, " %12" PRIu64, e->pos);
	if (blk >= 0)
		fprintf(f, " %10" PRId64, blk);
	else
		fprintf(f, " %10s", "-");
	fprintf(f, " %10" PRIu64, e->plen);
	if (e->device)
		fprintf(f, " dev%u", e->device);
	text_flags(f, e->flags);
	fputc('\n', f);
}

static int text_xattr(void *arg, const struct imgfs_xattr_info *x)
{
	struct xattr_walk *w = arg;
	FILE *f = w->ctx->out;

	w->count++;
	fputs("  ", f);
	if (x->name_len)
		print_escaped(f, x->name, x->name_len, ESC_NAME);
	else {
		fprintf(f, "<index 0x%02x>", x->name_index);
		print_escaped(f, x->suffix, x->suffix_len, ESC_NAME);
	}
	fputs(" = \"", f);
	print_escaped(f, x->value, x->value_size, ESC_VALUE);
	fputc('"', f);
	if (x->shared)
		fprintf(f, " (shared #%" PRIu32 ")", x->shared_id);
	fputc('\n', f);
	return 0;
}

/* Run a part; keep the first real failure in ctx->err. */
static int part_result(struct dump_ctx *ctx, int ret, struct imgfs_error *e,
		       int *failed)
{
	if (ret >= 0 || ret == -EOPNOTSUPP)
		return ret;
	if (!*failed)
		*failed = fe_error_set(&ctx->err, ret, "%s", e->msg);
	return ret;
}

static int text_inode(struct dump_ctx *ctx, const struct dump_target *t,
		      const struct imgfs_inode *inode)
{
	FILE *f = ctx->out;
	struct ext_walk w = { .ctx = ctx, .emit = text_extent };
	struct xattr_walk xw = { ctx, 0 };
	struct imgfs_error e;
	int failed = 0, ret;

	text_basics(f, t, inode, ctx->sb);
	if (imgfs_inode_is_symlink(inode)) {
		char *target;
		size_t len;

		imgfs_error_clear(&ctx->err);
		ret = read_symlink(ctx, inode, &target, &len);
		fprintf(f, "%-16s ", "Target:");
		if (ret) {
			e = ctx->err;
			imgfs_error_clear(&ctx->err);
			part_result(ctx, ret, &e, &failed);
			msg_line(f, "unreadable: ", e.msg);
		} else {
			print_escaped(f, target, len, ESC_NAME);
			fputc('\n', f);
			free(target);
		}
	}
	fputs("Xattrs:\n", f);
	imgfs_error_clear(&e);
	ret = imgfs_xattr_iterate(ctx->img, inode, true, text_xattr, &xw, &e);
	if (part_result(ctx, ret, &e, &failed) < 0)
		msg_line(f, "  unreadable: ", e.msg);
	else if (!xw.count)
		fputs("  (none)\n", f);
	fprintf(f, "Extents:\n  %6s %12s %12s  %-10s %12s %10s %10s  flags\n",
		"#", "logical", "length", "kind", "physical", "block",
		"plen");
	imgfs_error_clear(&e);
	ret = ext_iterate(&w, inode, &e);
	if (part_result(ctx, ret, &e, &failed) < 0)
		msg_line(f,
			 ret == -EOPNOTSUPP ? "  not available: "
					    : "  unreadable: ",
			 e.msg);
	fprintf(f, "  %" PRIu64 " extent%s\n", w.count, w.count == 1 ? "" : "s");
	return failed;
}

/* --- JSON --- */

static void json_extent(struct ext_walk *w, const struct imgfs_extent *e)
{
	struct json_object *o = fe_rec_new(), *flags = fe_rec_array();
	int64_t blk = ext_block(w->ctx->sb, e);
	const char *alg;

	w->count++;
	fe_rec_u64(o, "logical", e->logical);
	fe_rec_u64(o, "length", e->length);
	fe_rec_str(o, "kind", imgfs_extent_kind_name(e->kind) ?: "unknown");
	if (e->kind == IMGFS_EXTENT_HOLE) {
		fe_rec_null(o, "pos");
		fe_rec_null(o, "block");
		fe_rec_u64(o, "plen", 0);
	} else {
		fe_rec_u64(o, "pos", e->pos);
		if (blk >= 0)
			fe_rec_u64(o, "block", (uint64_t)blk);
		else
			fe_rec_null(o, "block");
		fe_rec_u64(o, "plen", e->plen);
	}
	fe_rec_u64(o, "device", e->device);
	alg = e->kind == IMGFS_EXTENT_COMPRESSED ?
		      imgfs_compr_alg_name(e->algorithm) : NULL;
	fe_rec_str(o, "algorithm", alg);
	if (e->flags & IMGFS_EXTENT_F_PARTIAL)
		fe_rec_append_str(flags, "partial");
	if (e->flags & IMGFS_EXTENT_F_SHARED)
		fe_rec_append_str(flags, "shared");
	if (e->flags & IMGFS_EXTENT_F_RAW)
		fe_rec_append_str(flags, "raw");
	fe_rec_set(o, "flags", flags);
	json_put(&w->ctx->j, NULL, o);
}

static int json_xattr(void *arg, const struct imgfs_xattr_info *x)
{
	struct json_object *o = fe_rec_new();

	fe_rec_bytes(o, "name", x->name, x->name_len);
	fe_rec_u64(o, "name_index", x->name_index);
	fe_rec_bytes(o, "suffix", x->suffix, x->suffix_len);
	fe_rec_bytes(o, "value", x->value, x->value_size);
	fe_rec_u64(o, "value_size", x->value_size);
	fe_rec_bool(o, "shared", x->shared);
	json_put(&((struct dump_ctx *)arg)->j, NULL, o);
	return 0;
}

static void json_layout_info(struct json_object *o,
			     const struct imgfs_inode *inode)
{
	bool compressed = imgfs_inode_is_compressed(inode);

	if (compressed || inode->layout == IMGFS_LAYOUT_CHUNK_BASED ||
	    inode->startblk_null)
		fe_rec_null(o, "startblk");
	else
		fe_rec_u64(o, "startblk", inode->startblk);
	if (compressed)
		fe_rec_u64(o, "compressed_blocks", inode->startblk);
	else
		fe_rec_null(o, "compressed_blocks");
	if (inode->layout == IMGFS_LAYOUT_CHUNK_BASED)
		fe_rec_u64(o, "chunk_size", 1ull << inode->chunkbits);
	else
		fe_rec_null(o, "chunk_size");
}

/* A part's failure: its message (it may quote names), or null. */
static void json_part_error(struct json *j, const char *key, int ret,
			    const struct imgfs_error *e)
{
	json_put(j, key, ret < 0 ? fe_json_checked(fe_json_bytes(
					   e->msg, strlen(e->msg))) : NULL);
}

/* The symlink target and its error, into record @o. */
static void json_target(struct dump_ctx *ctx, struct json_object *o,
			const struct imgfs_inode *inode, int *failed)
{
	struct imgfs_error e;
	char *target;
	size_t len;
	int ret;

	if (!imgfs_inode_is_symlink(inode)) {
		fe_rec_null(o, "target");
		fe_rec_null(o, "target_error");
		return;
	}
	imgfs_error_clear(&ctx->err);
	ret = read_symlink(ctx, inode, &target, &len);
	e = ctx->err;
	imgfs_error_clear(&ctx->err);
	if (ret) {
		fe_rec_null(o, "target");
		part_result(ctx, ret, &e, failed);
		fe_rec_str(o, "target_error", e.msg);
	} else {
		fe_rec_bytes(o, "target", target, len);
		free(target);
		fe_rec_null(o, "target_error");
	}
}

static struct json_object *json_inode_head(struct dump_ctx *ctx,
					   const struct dump_target *t,
					   const struct imgfs_inode *inode,
					   int *failed)
{
	struct json_object *o = fe_rec_new();

	fe_rec_str(o, "path", t->path);
	json_inode_basics(o, inode);
	fe_rec_u64(o, "pos", inode->pos);
	fe_rec_str(o, "format", inode->version == IMGFS_INODE_EXTENDED ?
				     "extended" : "compact");
	fe_rec_u64(o, "inode_size", inode->inode_size);
	fe_rec_u64(o, "i_format", inode->i_format);
	fe_rec_u64(o, "layout", inode->layout);
	fe_rec_str(o, "layout_name", imgfs_layout_name(inode->layout));
	fe_rec_u64(o, "ino", inode->ino);
	fe_rec_u64(o, "xattr_icount", inode->xattr_icount);
	fe_rec_u64(o, "xattr_size", inode->xattr_isize);
	json_layout_info(o, inode);
	json_target(ctx, o, inode, failed);
	return o;
}

/* Xattrs and extents are streamed: an inode may have very many extents. */
static int json_inode(struct dump_ctx *ctx, const struct dump_target *t,
		      const struct imgfs_inode *inode)
{
	struct json *j = &ctx->j;
	struct ext_walk w = { .ctx = ctx, .emit = json_extent };
	struct imgfs_error e;
	int failed = 0, ret;

	json_obj_open(j, "inode");
	json_put_members(j, json_inode_head(ctx, t, inode, &failed));
	json_arr_open(j, "xattrs");
	imgfs_error_clear(&e);
	ret = imgfs_xattr_iterate(ctx->img, inode, true, json_xattr, ctx, &e);
	part_result(ctx, ret, &e, &failed);
	json_arr_close(j);
	json_part_error(j, "xattrs_error", ret, &e);
	json_arr_open(j, "extents");
	imgfs_error_clear(&e);
	ret = ext_iterate(&w, inode, &e);
	part_result(ctx, ret, &e, &failed);
	json_arr_close(j);
	json_part_error(j, "extents_error", ret, &e);
	json_obj_close(j);
	return failed;
}

int dump_inode(struct dump_ctx *ctx, const struct dump_target *t)
{
	struct imgfs_inode inode;
	int ret;

	ret = imgfs_inode_read(ctx->img, t->nid, &inode, &ctx->err);
	if (ret)
		return ret;
	if (ctx->json)
		return json_inode(ctx, t, &inode);
	return text_inode(ctx, t, &inode);
}
