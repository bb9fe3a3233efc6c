// SPDX-License-Identifier: MIT
/*
 * stats.c - the statistics view of dump.img (--stats); the numbers come
 * from imgfs_stats_gather().
 */
#include <inttypes.h>
#include <string.h>

#include "imgfs/format.h"
#include "imgfs/stats.h"
#include "dump.h"

/* File type keys, indexed by enum imgfs_file_type. */
static const char *const type_keys[IMGFS_FT_MAX] = {
	[IMGFS_FT_UNKNOWN] = "unknown",	 [IMGFS_FT_REG_FILE] = "regular",
	[IMGFS_FT_DIR] = "directory",	 [IMGFS_FT_CHRDEV] = "chardev",
	[IMGFS_FT_BLKDEV] = "blockdev",	 [IMGFS_FT_FIFO] = "fifo",
	[IMGFS_FT_SOCK] = "socket",	 [IMGFS_FT_SYMLINK] = "symlink",
};

/* Order in which the types are printed. */
static const unsigned int type_order[] = {
	IMGFS_FT_REG_FILE, IMGFS_FT_DIR,  IMGFS_FT_SYMLINK, IMGFS_FT_CHRDEV,
	IMGFS_FT_BLKDEV,   IMGFS_FT_FIFO, IMGFS_FT_SOCK,    IMGFS_FT_UNKNOWN,
};

#define NR_TYPES (sizeof(type_order) / sizeof(type_order[0]))

/* Bounds of size bucket @k: [lo, hi] inclusive. */
static void bucket_bounds(unsigned int k, uint64_t *lo, uint64_t *hi)
{
	if (!k) {
		*lo = *hi = 0;
		return;
	}
	*lo = 1ull << (k - 1);
	*hi = k == 64 ? UINT64_MAX : (1ull << k) - 1;
}

static unsigned int last_bucket(const struct imgfs_stats *st)
{
	unsigned int k = IMGFS_STATS_SIZE_BUCKETS;

	while (k > 1 && !st->size_hist[k - 1])
		k--;
	return k;
}

static void human(uint64_t v, char *buf)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB",
					     "PiB", "EiB" };
	unsigned int u = 0;

	while (u < 6 && v >= 1024 && !(v & 1023)) {
		v >>= 10;
		u++;
	}
	snprintf(buf, 32, "%" PRIu64 " %s", v, units[u]);
}

static void percent(FILE *f, uint64_t num, uint64_t den)
{
	if (den)
		fprintf(f, " (%.2f%%)", 100.0 * (double)num / (double)den);
	fputc('\n', f);
}

static void text_hist(FILE *f, const struct imgfs_stats *st)
{
	unsigned int k, n = last_bucket(st), w;
	uint64_t max = 0, lo, hi;
	char a[32], b[32], label[80];

	for (k = 0; k < n; k++)
		if (st->size_hist[k] > max)
			max = st->size_hist[k];
	fputs("Regular file sizes:\n", f);
	for (k = 0; k < n; k++) {
		bucket_bounds(k, &lo, &hi);
		human(lo, a);
		if (!k) {
			snprintf(label, sizeof(label), "empty");
		} else if (k == 64) {
			snprintf(label, sizeof(label), ">= %s", a);
		} else {
			human(hi + 1, b);
			snprintf(label, sizeof(label), "[%s, %s)", a, b);
		}
		fprintf(f, "  %-22s %10" PRIu64, label, st->size_hist[k]);
		w = max ? (unsigned int)(40 * st->size_hist[k] / max) : 0;
		if (w)
			fputc(' ', f);
		while (w--)
			fputc('#', f);
		fputc('\n', f);
	}
}

static void text_compression(FILE *f, const struct imgfs_stats *st)
{
	unsigned int a;

	fprintf(f, "Compressed files:        %" PRIu64 " (%" PRIu64
		   " %s in %" PRIu64 " %s", st->compressed_files,
		st->compressed_file_bytes,
		plural(st->compressed_file_bytes, "byte", "bytes"),
		st->compressed_blocks,
		plural(st->compressed_blocks, "block", "blocks"));
	if (st->compressed_unmapped)
		fprintf(f, ", %" PRIu64 " not mappable by this reader",
			st->compressed_unmapped);
	fputs(")\n", f);
	if (st->raw_extents)
		fprintf(f, "  stored raw %" PRIu64 " %s, %" PRIu64 " %s\n",
			st->raw_extents,
			plural(st->raw_extents, "pcluster", "pclusters"),
			st->raw_bytes, plural(st->raw_bytes, "byte", "bytes"));
	if (st->packed_size)
		fprintf(f, "  packed inode %" PRIu64 " %s of fragments\n",
			st->packed_size,
			plural(st->packed_size, "byte", "bytes"));
	for (a = 0; a < IMGFS_COMPR_MAX; a++) {
		const struct imgfs_stats_alg *s = &st->algs[a];

		if (!s->extents)
			continue;
		fprintf(f, "  %-8s %" PRIu64 " %s, %" PRIu64 " %s, %" PRIu64
			   " -> %" PRIu64 " %s",
			imgfs_compr_alg_name(a), s->files,
			plural(s->files, "file", "files"), s->extents,
			plural(s->extents, "extent", "extents"),
			s->logical_bytes, s->stored_bytes,
			plural(s->stored_bytes, "byte", "bytes"));
		if (s->logical_bytes)
			fprintf(f, ", ratio %.4f", (double)s->stored_bytes /
						      (double)s->logical_bytes);
		fputc('\n', f);
	}
}

static void text_stats(FILE *f, const struct imgfs_stats *st)
{
	unsigned int i;

	fprintf(f, "Inodes:                  %" PRIu64 " (%" PRIu64 " %s, %" PRIu64
		   " extra hard %s)\n",
		st->inodes, st->paths, plural(st->paths, "path", "paths"),
		st->hardlinks, plural(st->hardlinks, "link", "links"));
	for (i = 0; i < NR_TYPES; i++)
		if (st->by_type[type_order[i]])
			fprintf(f, "  %-22s %" PRIu64 "\n",
				type_keys[type_order[i]],
				st->by_type[type_order[i]]);
	fputs("Data layouts:\n", f);
	for (i = 0; i < IMGFS_LAYOUT_MAX; i++)
		if (st->by_layout[i])
			fprintf(f, "  %-22s %" PRIu64 "\n", imgfs_layout_name(i),
				st->by_layout[i]);
	fprintf(f, "Xattrs:                  %" PRIu64 "\n", st->xattrs);
	text_hist(f, st);
	fprintf(f, "File bytes:              %" PRIu64 " (largest file %" PRIu64
		   ")\n", st->file_bytes, st->max_file_size);
	fprintf(f, "  stored plainly         %" PRIu64 " (%" PRIu64
		   " inline)\n", st->plain_bytes, st->inline_bytes);
	fprintf(f, "  in holes               %" PRIu64 "\n", st->hole_bytes);
	fprintf(f, "  in fragments           %" PRIu64 "\n",
		st->fragment_bytes);
	fprintf(f, "Extents:                 %" PRIu64 "\n", st->extents);
	fprintf(f, "Image bytes:             %" PRIu64 "\n", st->image_bytes);
	fprintf(f, "  data                   %" PRIu64, st->data_bytes);
	percent(f, st->data_bytes, st->image_bytes);
	fprintf(f, "  metadata               %" PRIu64, st->metadata_bytes);
	percent(f, st->metadata_bytes, st->image_bytes);
	fprintf(f, "    inodes and xattrs    %" PRIu64 "\n", st->inode_bytes);
	fprintf(f, "    directories          %" PRIu64 "\n", st->dir_bytes);
	fprintf(f, "    symlinks             %" PRIu64 "\n", st->symlink_bytes);
	fprintf(f, "  other                  %" PRIu64, st->other_bytes);
	percent(f, st->other_bytes, st->image_bytes);
	fprintf(f, "Lost to block alignment: %" PRIu64 "\n", st->slack_bytes);
	text_compression(f, st);
	fputs("Largest directories:\n", f);
	for (i = 0; i < st->nr_top_dirs; i++) {
		fprintf(f, "  %10" PRIu64 "  ", st->top_dirs[i].entries);
		print_escaped(f, st->top_dirs[i].path,
			      strlen(st->top_dirs[i].path), ESC_NAME);
		fputc('\n', f);
	}
}

static struct json_object *json_hist(const struct imgfs_stats *st)
{
	struct json_object *arr = fe_rec_array(), *o;
	unsigned int k, n = last_bucket(st);
	uint64_t lo, hi;

	for (k = 0; k < n; k++) {
		bucket_bounds(k, &lo, &hi);
		o = fe_rec_new();
		fe_rec_u64(o, "min", lo);
		fe_rec_u64(o, "max", hi);
		fe_rec_u64(o, "count", st->size_hist[k]);
		fe_rec_append(arr, o);
	}
	return arr;
}

static struct json_object *json_algs(const struct imgfs_stats *st)
{
	struct json_object *arr = fe_rec_array(), *o;
	unsigned int a;

	for (a = 0; a < IMGFS_COMPR_MAX; a++) {
		const struct imgfs_stats_alg *s = &st->algs[a];

		if (!s->extents)
			continue;
		o = fe_rec_new();
		fe_rec_str(o, "name", imgfs_compr_alg_name(a));
		fe_rec_u64(o, "files", s->files);
		fe_rec_u64(o, "extents", s->extents);
		fe_rec_u64(o, "logical_bytes", s->logical_bytes);
		fe_rec_u64(o, "stored_bytes", s->stored_bytes);
		rec_ratio(o, "ratio", s->stored_bytes, s->logical_bytes);
		fe_rec_append(arr, o);
	}
	return arr;
}

static struct json_object *json_compression(const struct imgfs_stats *st)
{
	struct json_object *o = fe_rec_new();

	fe_rec_u64(o, "files", st->compressed_files);
	fe_rec_u64(o, "file_bytes", st->compressed_file_bytes);
	fe_rec_u64(o, "blocks", st->compressed_blocks);
	fe_rec_u64(o, "unmapped_files", st->compressed_unmapped);
	fe_rec_u64(o, "raw_extents", st->raw_extents);
	fe_rec_u64(o, "raw_bytes", st->raw_bytes);
	fe_rec_u64(o, "packed_size", st->packed_size);
	fe_rec_set(o, "algorithms", json_algs(st));
	return o;
}

static struct json_object *json_top_dirs(const struct imgfs_stats *st)
{
	struct json_object *arr = fe_rec_array(), *o;
	unsigned int i;

	for (i = 0; i < st->nr_top_dirs; i++) {
		o = fe_rec_new();
		fe_rec_str(o, "path", st->top_dirs[i].path);
		fe_rec_u64(o, "nid", st->top_dirs[i].nid);
		fe_rec_u64(o, "entries", st->top_dirs[i].entries);
		fe_rec_append(arr, o);
	}
	return arr;
}

static struct json_object *json_counts(const struct imgfs_stats *st)
{
	struct json_object *types = fe_rec_new();
	unsigned int i;

	for (i = 0; i < NR_TYPES; i++)
		fe_rec_u64(types, type_keys[type_order[i]],
			st->by_type[type_order[i]]);
	return types;
}

static struct json_object *json_layouts(const struct imgfs_stats *st)
{
	struct json_object *layouts = fe_rec_new();
	unsigned int i;

	for (i = 0; i < IMGFS_LAYOUT_MAX; i++)
		fe_rec_u64(layouts, imgfs_layout_name(i), st->by_layout[i]);
	return layouts;
}

static void json_stats(struct json *j, const struct imgfs_stats *st)
{
	struct json_object *o = fe_rec_new();

	fe_rec_u64(o, "inodes", st->inodes);
	fe_rec_u64(o, "paths", st->paths);
	fe_rec_u64(o, "hardlinks", st->hardlinks);
	fe_rec_set(o, "types", json_counts(st));
	fe_rec_set(o, "layouts", json_layouts(st));
	fe_rec_u64(o, "xattrs", st->xattrs);
	fe_rec_set(o, "size_histogram", json_hist(st));
	fe_rec_u64(o, "file_bytes", st->file_bytes);
	fe_rec_u64(o, "max_file_size", st->max_file_size);
	fe_rec_u64(o, "plain_bytes", st->plain_bytes);
	fe_rec_u64(o, "inline_bytes", st->inline_bytes);
	fe_rec_u64(o, "hole_bytes", st->hole_bytes);
	fe_rec_u64(o, "fragment_bytes", st->fragment_bytes);
	fe_rec_u64(o, "extents", st->extents);
	fe_rec_u64(o, "image_bytes", st->image_bytes);
	fe_rec_u64(o, "data_bytes", st->data_bytes);
	fe_rec_u64(o, "metadata_bytes", st->metadata_bytes);
	fe_rec_u64(o, "inode_bytes", st->inode_bytes);
	fe_rec_u64(o, "dir_bytes", st->dir_bytes);
	fe_rec_u64(o, "symlink_bytes", st->symlink_bytes);
	fe_rec_u64(o, "other_bytes", st->other_bytes);
	fe_rec_u64(o, "slack_bytes", st->slack_bytes);
	fe_rec_set(o, "compression", json_compression(st));
	fe_rec_set(o, "largest_dirs", json_top_dirs(st));
	json_put(j, "stats", o);
}

int dump_stats(struct dump_ctx *ctx)
{
	struct imgfs_stats *st;
	int ret;

	ret = imgfs_stats_gather(ctx->img, &st, &ctx->err);
	if (ret)
		return ret;
	if (ctx->json)
		json_stats(&ctx->j, st);
	else
		text_stats(ctx->out, st);
	imgfs_stats_free(st);
	return 0;
}
