// SPDX-License-Identifier: MIT
/*
 * The name tables of on-disk values: feature bits (docs/format.md §3.4),
 * data layouts (§4.1), compression algorithms (§9.14) and file types.
 */
#include "imgfs/format.h"

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
