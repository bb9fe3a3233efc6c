// SPDX-License-Identifier: MIT
/*
 * super.c - the superblock view of dump.img.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "imgfs/format.h"
#include "imgfs/stats.h"
#include "dump.h"

static const char *checksum_status(const struct imgfs_sb_info *sb)
{
	if (!(sb->feature_compat & IMGFS_FEATURE_COMPAT_SB_CHKSUM))
		return "absent";
	return sb->checksum == sb->checksum_calc ? "ok" : "bad";
}

static void uuid_string(const uint8_t *u, char *buf)
{
	snprintf(buf, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* Name of feature bit @mask, or "0x..." for bits we do not know. */
static const char *feature_name(bool incompat, uint32_t mask, char *buf)
{
	const char *n = incompat ? imgfs_feature_incompat_name(mask) :
				   imgfs_feature_compat_name(mask);

	if (n)
		return n;
	snprintf(buf, 16, "0x%" PRIx32, mask);
	return buf;
}

static void text_features(FILE *f, const char *label, uint32_t bits,
			  bool incompat)
{
	char buf[16];
	int i;

	fprintf(f, "%-24s", label);
	if (!bits)
		fputs(" none", f);
	for (i = 0; i < 32; i++)
		if (bits & (1u << i))
			fprintf(f, " %s", feature_name(incompat, 1u << i, buf));
	fprintf(f, " (0x%" PRIx32 ")\n", bits);
}

static struct json_object *json_features(uint32_t bits, bool incompat)
{
	struct json_object *a = fe_rec_array();
	char buf[16];
	int i;

	for (i = 0; i < 32; i++)
		if (bits & (1u << i))
			fe_rec_append_str(a, feature_name(incompat, 1u << i, buf));
	return a;
}

static void text_algs(FILE *f, uint32_t algs)
{
	unsigned int a;

	fprintf(f, "%-24s", "Compression:");
	if (!algs)
		fputs(" none", f);
	for (a = 0; a < 16; a++) {
		const char *n = imgfs_compr_alg_name(a);

		if (!(algs & (1u << a)))
			continue;
		if (n)
			fprintf(f, " %s", n);
		else
			fprintf(f, " unknown-%u", a);
	}
	fputc('\n', f);
}

static struct json_object *json_algs(uint32_t algs)
{
	struct json_object *arr = fe_rec_array();
	char buf[16];
	unsigned int a;

	for (a = 0; a < 16; a++) {
		const char *n = imgfs_compr_alg_name(a);

		if (!(algs & (1u << a)))
			continue;
		if (!n) {
			snprintf(buf, sizeof(buf), "unknown-%u", a);
			n = buf;
		}
		fe_rec_append_str(arr, n);
	}
	return arr;
}

/* Image creation time (epoch + build_time), checked for overflow. */
static void build_when(const struct imgfs_sb_info *sb, char *buf)
{
	int64_t t;

	if (__builtin_add_overflow(sb->epoch, (int64_t)sb->build_time, &t))
		t = sb->epoch;
	iso_time(t, 0, false, buf);
}

static void text_sb(struct dump_ctx *ctx, const struct imgfs_sb_info *sb)
{
	FILE *f = ctx->out;
	char uuid[37], when[48];

	uuid_string(sb->uuid, uuid);
	build_when(sb, when);
	fprintf(f, "%-24s 0x%08" PRIx32 "\n", "Magic:", sb->magic);
	fprintf(f, "%-24s %" PRIu32 " (blkszbits %u)\n", "Block size:",
		sb->blksz, sb->blkszbits);
	fprintf(f, "%-24s %u bytes (%u extension %s)\n", "Superblock size:",
		sb->sb_size, sb->sb_extslots,
		plural(sb->sb_extslots, "slot", "slots"));
	text_features(f, "Compatible features:", sb->feature_compat, false);
	text_features(f, "Incompatible features:", sb->feature_incompat, true);
	fprintf(f, "%-24s %s\n", "UUID:", uuid);
	fprintf(f, "%-24s ", "Label:");
	print_escaped(f, sb->label, strlen(sb->label), ESC_VALUE);
	fputc('\n', f);
	fprintf(f, "%-24s %s (epoch %" PRId64 " + %" PRIu32 " s)\n",
		"Build time:", when, sb->epoch, sb->build_time);
	fprintf(f, "%-24s %" PRIu32 "\n", "Fixed mtime nsec:", sb->fixed_nsec);
	fprintf(f, "%-24s %" PRIu64 "\n", "Inodes:", sb->inos);
	fprintf(f, "%-24s %" PRIu64 "\n", "Root nid:", sb->root_nid);
	fprintf(f, "%-24s %" PRIu32 "\n", "Meta block address:",
		sb->meta_blkaddr);
	fprintf(f, "%-24s %" PRIu32 "\n", "Xattr block address:",
		sb->xattr_blkaddr);
	fprintf(f, "%-24s %" PRIu64 " (%" PRIu64 " %s)\n", "Blocks:",
		sb->blocks, sb->blocks << sb->blkszbits,
		plural(sb->blocks << sb->blkszbits, "byte", "bytes"));
	fprintf(f, "%-24s %" PRIu64 " %s\n", "Image size:", sb->image_size,
		plural(sb->image_size, "byte", "bytes"));
	fprintf(f, "%-24s %s (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32
		   ")\n", "Checksum:", checksum_status(sb), sb->checksum,
		sb->checksum_calc);
	text_algs(f, imgfs_sb_compr_algs(sb));
	fprintf(f, "%-24s %" PRIu64 "\n", "Packed nid:", sb->packed_nid);
	fprintf(f, "%-24s %u", "Extra devices:", sb->extra_devices);
	if (sb->extra_devices)
		fprintf(f, " (table at byte %u)", sb->devt_slotoff * 128u);
	fprintf(f, "\n%-24s %u", "Long xattr prefixes:",
		sb->xattr_prefix_count);
	if (sb->xattr_prefix_count)
		fprintf(f, " (table at byte %" PRIu64 ")",
			(uint64_t)sb->xattr_prefix_start * 4);
	fputc('\n', f);
}

static struct json_object *json_checksum(const struct imgfs_sb_info *sb)
{
	struct json_object *c = fe_rec_new();

	fe_rec_str(c, "status", checksum_status(sb));
	fe_rec_u64(c, "stored", sb->checksum);
	fe_rec_u64(c, "computed", sb->checksum_calc);
	return c;
}

static void json_sb(struct dump_ctx *ctx, const struct imgfs_sb_info *sb)
{
	struct json_object *o = fe_rec_new();
	char uuid[37], when[48];

	uuid_string(sb->uuid, uuid);
	build_when(sb, when);
	fe_rec_u64(o, "magic", sb->magic);
	fe_rec_u64(o, "block_size", sb->blksz);
	fe_rec_u64(o, "blkszbits", sb->blkszbits);
	fe_rec_u64(o, "sb_size", sb->sb_size);
	fe_rec_u64(o, "sb_extslots", sb->sb_extslots);
	fe_rec_u64(o, "feature_compat", sb->feature_compat);
	fe_rec_u64(o, "feature_incompat", sb->feature_incompat);
	fe_rec_set(o, "features_compat", json_features(sb->feature_compat, false));
	fe_rec_set(o, "features_incompat",
		json_features(sb->feature_incompat, true));
	fe_rec_str(o, "uuid", uuid);
	fe_rec_str(o, "label", sb->label);
	fe_rec_i64(o, "epoch", sb->epoch);
	fe_rec_u64(o, "build_time", sb->build_time);
	fe_rec_str(o, "build_time_iso", when);
	fe_rec_u64(o, "fixed_nsec", sb->fixed_nsec);
	fe_rec_u64(o, "inodes", sb->inos);
	fe_rec_u64(o, "root_nid", sb->root_nid);
	fe_rec_u64(o, "meta_blkaddr", sb->meta_blkaddr);
	fe_rec_u64(o, "xattr_blkaddr", sb->xattr_blkaddr);
	fe_rec_u64(o, "blocks", sb->blocks);
	fe_rec_u64(o, "image_size", sb->image_size);
	fe_rec_set(o, "checksum", json_checksum(sb));
	fe_rec_set(o, "compression_algorithms",
		json_algs(imgfs_sb_compr_algs(sb)));
	fe_rec_u64(o, "lz4_max_distance", sb->lz4_max_distance);
	fe_rec_u64(o, "packed_nid", sb->packed_nid);
	fe_rec_u64(o, "extra_devices", sb->extra_devices);
	fe_rec_u64(o, "devt_slotoff", sb->devt_slotoff);
	fe_rec_u64(o, "dirblkbits", sb->dirblkbits);
	fe_rec_u64(o, "xattr_prefix_count", sb->xattr_prefix_count);
	fe_rec_u64(o, "xattr_prefix_start", sb->xattr_prefix_start);
	fe_rec_u64(o, "xattr_filter_reserved", sb->xattr_filter_reserved);
	json_put(&ctx->j, "superblock", o);
}

int dump_superblock(struct dump_ctx *ctx)
{
	if (ctx->json)
		json_sb(ctx, ctx->sb);
	else
		text_sb(ctx, ctx->sb);
	return 0;
}
