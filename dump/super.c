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

static void json_features(struct json *j, const char *key, uint32_t bits,
			  bool incompat)
{
	char buf[16];
	int i;

	json_arr_open(j, key);
	for (i = 0; i < 32; i++)
		if (bits & (1u << i))
			json_str(j, NULL, feature_name(incompat, 1u << i, buf));
	json_arr_close(j);
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

static void json_algs(struct json *j, uint32_t algs)
{
	char buf[16];
	unsigned int a;

	json_arr_open(j, "compression_algorithms");
	for (a = 0; a < 16; a++) {
		const char *n = imgfs_compr_alg_name(a);

		if (!(algs & (1u << a)))
			continue;
		if (!n) {
			snprintf(buf, sizeof(buf), "unknown-%u", a);
			n = buf;
		}
		json_str(j, NULL, n);
	}
	json_arr_close(j);
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
	fprintf(f, "%-24s %u bytes (%u extension slots)\n", "Superblock size:",
		sb->sb_size, sb->sb_extslots);
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
	fprintf(f, "%-24s %" PRIu64 " (%" PRIu64 " bytes)\n", "Blocks:",
		sb->blocks, sb->blocks << sb->blkszbits);
	fprintf(f, "%-24s %" PRIu64 " bytes\n", "Image size:", sb->image_size);
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

static void json_sb(struct dump_ctx *ctx, const struct imgfs_sb_info *sb)
{
	struct json *j = &ctx->j;
	char uuid[37], when[48];

	uuid_string(sb->uuid, uuid);
	build_when(sb, when);
	json_obj_open(j, "superblock");
	json_u64(j, "magic", sb->magic);
	json_u64(j, "block_size", sb->blksz);
	json_u64(j, "blkszbits", sb->blkszbits);
	json_u64(j, "sb_size", sb->sb_size);
	json_u64(j, "sb_extslots", sb->sb_extslots);
	json_u64(j, "feature_compat", sb->feature_compat);
	json_u64(j, "feature_incompat", sb->feature_incompat);
	json_features(j, "features_compat", sb->feature_compat, false);
	json_features(j, "features_incompat", sb->feature_incompat, true);
	json_str(j, "uuid", uuid);
	json_str(j, "label", sb->label);
	json_i64(j, "epoch", sb->epoch);
	json_u64(j, "build_time", sb->build_time);
	json_str(j, "build_time_iso", when);
	json_u64(j, "fixed_nsec", sb->fixed_nsec);
	json_u64(j, "inodes", sb->inos);
	json_u64(j, "root_nid", sb->root_nid);
	json_u64(j, "meta_blkaddr", sb->meta_blkaddr);
	json_u64(j, "xattr_blkaddr", sb->xattr_blkaddr);
	json_u64(j, "blocks", sb->blocks);
	json_u64(j, "image_size", sb->image_size);
	json_obj_open(j, "checksum");
	json_str(j, "status", checksum_status(sb));
	json_u64(j, "stored", sb->checksum);
	json_u64(j, "computed", sb->checksum_calc);
	json_obj_close(j);
	json_algs(j, imgfs_sb_compr_algs(sb));
	json_u64(j, "lz4_max_distance", sb->lz4_max_distance);
	json_u64(j, "packed_nid", sb->packed_nid);
	json_u64(j, "extra_devices", sb->extra_devices);
	json_u64(j, "devt_slotoff", sb->devt_slotoff);
	json_u64(j, "dirblkbits", sb->dirblkbits);
	json_u64(j, "xattr_prefix_count", sb->xattr_prefix_count);
	json_u64(j, "xattr_prefix_start", sb->xattr_prefix_start);
	json_u64(j, "xattr_filter_reserved", sb->xattr_filter_reserved);
	json_obj_close(j);
}

int dump_superblock(struct dump_ctx *ctx)
{
	if (ctx->json)
		json_sb(ctx, ctx->sb);
	else
		text_sb(ctx, ctx->sb);
	return 0;
}
