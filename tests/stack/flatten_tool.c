// SPDX-License-Identifier: MIT
/*
 * flatten_tool - imgfs_flatten_tars() and imgfs_flatten() from the
 * command line, for the tests in tests/stack.
 *
 * usage: flatten_tool [--opener] [-z ALG[,LEVEL]] [-C BYTES] [-b BYTES]
 *                     [-T SECONDS] [--inline-data] [--all-root]
 *                     IMAGE LAYER... (bottom first)
 *        flatten_tool --merge [-T SECONDS] IMAGE LAYER_IMAGE... (bottom first)
 *
 * -T also fixes the UUID, for byte-identical images. --opener reads the
 * layers through a struct imgfs_layer_opener of tar readers the caller
 * opens (what a caller verifying blobs as they stream does) and prints,
 * on standard output, "open N" and "close N" as the library asks for
 * them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include "frontend/error.h"
#include "imgfs/source.h"
#include "imgfs/stack.h"

struct layers {
	char **paths;
};

static int open_layer(void *arg, unsigned int layer, struct imgfs_tar **t,
		      struct imgfs_error *err)
{
	struct layers *l = arg;

	printf("open %u\n", layer);
	*t = imgfs_tar_open(l->paths[layer], err);
	return *t ? 0 : err->code;
}

static int close_layer(void *arg, unsigned int layer, struct imgfs_tar *t,
		       struct imgfs_error *err)
{
	(void)arg;
	(void)err;
	printf("close %u\n", layer);
	imgfs_tar_close(t);
	return 0;
}

static int parse_alg(const char *s, struct imgfs_mkfs_options *o)
{
	static const char *const names[] = { "lz4", "lz4hc", "lzma",
					     "deflate", "zstd" };
	static const enum imgfs_compr_kind kinds[] = {
		IMGFS_COMPRESS_LZ4, IMGFS_COMPRESS_LZ4HC, IMGFS_COMPRESS_LZMA,
		IMGFS_COMPRESS_DEFLATE, IMGFS_COMPRESS_ZSTD
	};
	const char *comma = strchr(s, ',');
	size_t len = comma ? (size_t)(comma - s) : strlen(s);

	for (size_t i = 0; i < 5; i++)
		if (strlen(names[i]) == len && !strncmp(s, names[i], len)) {
			o->compress = kinds[i];
			if (comma)
				o->compress_level = atoi(comma + 1);
			return 0;
		}
	return -1;
}

int main(int argc, char **argv)
{
	struct imgfs_mkfs_options o;
	struct imgfs_mkfs_stats st;
	struct imgfs_error err;
	bool opener = false, merge = false;
	int i = 1, ret;

	imgfs_mkfs_options_init(&o);
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--opener")) {
			opener = true;
		} else if (!strcmp(a, "--merge")) {
			merge = true;
		} else if (!strcmp(a, "--inline-data")) {
			o.inline_data = true;
		} else if (!strcmp(a, "--all-root")) {
			o.all_root = true;
		} else if (!strcmp(a, "-z") && v && !parse_alg(v, &o)) {
			i++;
		} else if (!strcmp(a, "-C") && v) {
			o.pcluster_size = (uint32_t)strtoul(v, NULL, 0);
			i++;
		} else if (!strcmp(a, "-b") && v) {
			o.blkszbits = (unsigned int)__builtin_ctz(
				(unsigned int)strtoul(v, NULL, 0));
			i++;
		} else if (!strcmp(a, "-T") && v) {
			o.have_build_time = true;
			o.build_time = strtoll(v, NULL, 0);
			o.have_uuid = true;
			memset(o.uuid, 0x5a, sizeof(o.uuid));
			i++;
		} else {
			fprintf(stderr, "flatten_tool: bad option %s\n", a);
			return 2;
		}
	}
	if (argc - i < 2) {
		fputs("usage: flatten_tool [OPTIONS] IMAGE LAYER...\n", stderr);
		return 2;
	}
	if (merge) {
		ret = imgfs_merge_images(&o, (unsigned int)(argc - i - 1),
					 (const char *const *)argv + i + 1,
					 argv[i], &st, &err);
	} else if (opener) {
		struct layers l = { argv + i + 1 };
		struct imgfs_layer_opener op = { open_layer, close_layer, &l };

		ret = imgfs_flatten(&o, (unsigned int)(argc - i - 1), &op,
				    argv[i], &st, &err);
	} else {
		ret = imgfs_flatten_tars(&o, (unsigned int)(argc - i - 1),
					 (const char *const *)argv + i + 1,
					 argv[i], &st, &err);
	}
	if (ret) {
		fprintf(stderr, "flatten_tool: %s\n", err.msg);
		return 1;
	}
	fprintf(stderr, "flatten_tool: %s: %llu entries, %llu inodes\n",
		argv[i], (unsigned long long)st.entries,
		(unsigned long long)st.inodes);
	return 0;
}
