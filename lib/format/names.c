// SPDX-License-Identifier: MIT
/*
 * dump_names.c - names of on-disk values (docs/format.md §3.4,
 * §4.1, §9.14) and
 * other small helpers for front ends that describe an image.
 */
#include <inttypes.h>
#include <stdio.h>

#include "imgfs/format.h"
#include "imgfs/stats.h"

struct bit_name {
	uint32_t mask;
	const char *name;
};

/* Names as the kernel lists them in /sys/fs/erofs/features where it does. */
static const struct bit_name compat_names[] = {
	{ IMGFS_FEATURE_COMPAT_SB_CHKSUM, "sb_chksum" },
	{ IMGFS_FEATURE_COMPAT_MTIME, "mtime" },
	{ IMGFS_FEATURE_COMPAT_XATTR_FILTER, "xattr_filter" },
	{ IMGFS_FEATURE_COMPAT_SHARED_EA_IN_METABOX, "shared_ea_in_metabox" },
	{ IMGFS_FEATURE_COMPAT_PLAIN_XATTR_PFX, "plain_xattr_pfx" },
	{ IMGFS_FEATURE_COMPAT_ISHARE_XATTRS, "ishare_xattrs" },
};

static const struct bit_name incompat_names[] = {
	{ IMGFS_FEATURE_INCOMPAT_ZERO_PADDING, "zero_padding" },
	{ IMGFS_FEATURE_INCOMPAT_COMPR_CFGS, "compr_cfgs" },
	{ IMGFS_FEATURE_INCOMPAT_CHUNKED_FILE, "chunked_file" },
	{ IMGFS_FEATURE_INCOMPAT_DEVICE_TABLE, "device_table" },
	{ IMGFS_FEATURE_INCOMPAT_ZTAILPACKING, "ztailpacking" },
	{ IMGFS_FEATURE_INCOMPAT_FRAGMENTS, "fragments" },
	{ IMGFS_FEATURE_INCOMPAT_XATTR_PREFIXES, "xattr_prefixes" },
	{ IMGFS_FEATURE_INCOMPAT_48BIT, "48bit" },
	{ IMGFS_FEATURE_INCOMPAT_METABOX, "metabox" },
};

static const char *bit_lookup(const struct bit_name *t, size_t n,
			      uint32_t mask)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i].mask == mask)
			return t[i].name;
	return NULL;
}

const char *imgfs_feature_compat_name(uint32_t mask)
{
	return bit_lookup(compat_names,
			  sizeof(compat_names) / sizeof(compat_names[0]), mask);
}

const char *imgfs_feature_incompat_name(uint32_t mask)
{
	return bit_lookup(incompat_names,
			  sizeof(incompat_names) / sizeof(incompat_names[0]),
			  mask);
}

const char *imgfs_layout_name(unsigned int layout)
{
	static const char *const names[IMGFS_LAYOUT_MAX] = {
		[IMGFS_LAYOUT_FLAT_PLAIN] = "flat_plain",
		[IMGFS_LAYOUT_COMPRESSED_FULL] = "compressed_full",
		[IMGFS_LAYOUT_FLAT_INLINE] = "flat_inline",
		[IMGFS_LAYOUT_COMPRESSED_COMPACT] = "compressed_compact",
		[IMGFS_LAYOUT_CHUNK_BASED] = "chunk_based",
	};

	return layout < IMGFS_LAYOUT_MAX ? names[layout] : NULL;
}

const char *imgfs_compr_alg_name(unsigned int alg)
{
	static const char *const names[IMGFS_COMPR_MAX] = {
		[IMGFS_COMPR_LZ4] = "lz4",
		[IMGFS_COMPR_LZMA] = "lzma",
		[IMGFS_COMPR_DEFLATE] = "deflate",
		[IMGFS_COMPR_ZSTD] = "zstd",
	};

	return alg < IMGFS_COMPR_MAX ? names[alg] : NULL;
}

const char *imgfs_extent_kind_name(enum imgfs_extent_kind kind)
{
	switch (kind) {
	case IMGFS_EXTENT_HOLE:
		return "hole";
	case IMGFS_EXTENT_PLAIN:
		return "plain";
	case IMGFS_EXTENT_INLINE:
		return "inline";
	case IMGFS_EXTENT_COMPRESSED:
		return "compressed";
	case IMGFS_EXTENT_FRAGMENT:
		return "fragment";
	}
	return NULL;
}

const char *imgfs_mode_type_name(uint32_t mode)
{
	switch (mode & 0170000) {
	case 0100000:
		return "regular";
	case 0040000:
		return "directory";
	case 0120000:
		return "symlink";
	case 0020000:
		return "chardev";
	case 0060000:
		return "blockdev";
	case 0010000:
		return "fifo";
	case 0140000:
		return "socket";
	}
	return NULL;
}

uint32_t imgfs_sb_compr_algs(const struct imgfs_sb_info *sb)
{
	if (sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_COMPR_CFGS)
		return sb->compr_algs;
	if ((sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_ZERO_PADDING) ||
	    sb->lz4_max_distance)
		return 1u << IMGFS_COMPR_LZ4;
	return 0;
}

bool imgfs_extent_merge(struct imgfs_extent *run,
			const struct imgfs_extent *next)
{
	if (run->kind != next->kind || run->flags != next->flags ||
	    run->device != next->device ||
	    run->logical + run->length != next->logical)
		return false;
	if (run->kind == IMGFS_EXTENT_PLAIN &&
	    (run->length != run->plen || run->pos + run->plen != next->pos))
		return false;
	if (run->kind != IMGFS_EXTENT_HOLE && run->kind != IMGFS_EXTENT_PLAIN)
		return false;
	run->length += next->length;
	run->plen += next->plen;
	return true;
}

void imgfs_time_decimal(int64_t sec, uint32_t nsec,
			char buf[IMGFS_TIME_DECIMAL_MAX])
{
	if (nsec >= 1000000000u)
		snprintf(buf, IMGFS_TIME_DECIMAL_MAX,
			 "%" PRId64 " s + %" PRIu32 " ns", sec, nsec);
	else if (sec < 0 && nsec)
		snprintf(buf, IMGFS_TIME_DECIMAL_MAX, "-%" PRIu64 ".%09" PRIu32,
			 (uint64_t)(-1 - sec), 1000000000u - nsec);
	else
		snprintf(buf, IMGFS_TIME_DECIMAL_MAX, "%" PRId64 ".%09" PRIu32,
			 sec, nsec);
}
