// SPDX-License-Identifier: MIT
/*
 * The compressors a writer can be asked for (enum imgfs_compr_kind) and
 * their names: one table, for the writer and for every command line that
 * names them (mkfs.img -z, the mkfs.erofs drop-in).
 */
#include <string.h>

#include "codec/codec.h"
#include "imgfs/writer.h"

static const struct {
	enum imgfs_compr_kind kind;
	const struct imgfs_zalg *alg;
} kinds[] = {
	{ IMGFS_COMPRESS_LZ4, &zalg_lz4 },
	{ IMGFS_COMPRESS_LZ4HC, &zalg_lz4hc },
	{ IMGFS_COMPRESS_LZMA, &zalg_lzma },
	{ IMGFS_COMPRESS_DEFLATE, &zalg_deflate },
	{ IMGFS_COMPRESS_ZSTD, &zalg_zstd },
};

#define NR_KINDS (sizeof(kinds) / sizeof(kinds[0]))

const struct imgfs_zalg *zalg_by_kind(enum imgfs_compr_kind kind)
{
	for (size_t i = 0; i < NR_KINDS; i++)
		if (kinds[i].kind == kind)
			return kinds[i].alg;
	return NULL;
}

const char *imgfs_compress_kind_name(enum imgfs_compr_kind kind)
{
	const struct imgfs_zalg *z = zalg_by_kind(kind);

	return z ? z->name : NULL;
}

int imgfs_compress_kind_parse(const char *name, enum imgfs_compr_kind *kind)
{
	for (size_t i = 0; i < NR_KINDS; i++) {
		if (!strcmp(name, kinds[i].alg->name)) {
			*kind = kinds[i].kind;
			return 0;
		}
	}
	return -1;
}
