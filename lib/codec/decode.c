// SPDX-License-Identifier: MIT
/*
 * decode.c - from an on-disk algorithm id to its decoder (docs/format.md
 * §9.14); the decoders themselves are in lib/codec/<alg>.c.
 *
 * Decoder states are kept in struct imgfs_zdecoder for reuse: liblzma and
 * libzstd allocate their windows once per state, not once per pcluster.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "codec/codec.h"

struct imgfs_zdecoder {
	void *dctx[IMGFS_COMPR_MAX]; /* by algorithm id */
};

const struct imgfs_zalg *zalg_by_id(unsigned int alg)
{
	switch (alg) {
	case IMGFS_COMPR_LZ4:
		return &zalg_lz4;
	case IMGFS_COMPR_LZMA:
		return &zalg_lzma;
	case IMGFS_COMPR_DEFLATE:
		return &zalg_deflate;
	case IMGFS_COMPR_ZSTD:
		return &zalg_zstd;
	}
	return NULL;
}

const char *zalg_name(unsigned int alg)
{
	const char *name = imgfs_compr_alg_name(alg); /* lib/format/names.c */

	return name ? name : "?";
}

struct imgfs_zdecoder *zdecoder_new(void)
{
	return calloc(1, sizeof(struct imgfs_zdecoder));
}

void zdecoder_free(struct imgfs_zdecoder *d)
{
	unsigned int alg;

	if (!d)
		return;
	for (alg = 0; alg < IMGFS_COMPR_MAX; alg++)
		if (d->dctx[alg])
			zalg_by_id(alg)->dctx_free(d->dctx[alg]);
	free(d);
}

int zdecode(struct imgfs_zdecoder *d, const struct imgfs_zconfig *cfg,
	    unsigned int alg, const uint8_t *in, size_t inlen, uint8_t *out,
	    size_t outlen, bool partial, bool exact_input, char *why,
	    size_t whylen)
{
	const struct imgfs_zalg *z = zalg_by_id(alg);

	if (!z || !z->decode) {
		snprintf(why, whylen, "%s decompression is not built in",
			 zalg_name(alg));
		return -EOPNOTSUPP;
	}
	return z->decode(&d->dctx[alg], cfg, in, inlen, out, outlen, partial,
			 exact_input, why, whylen);
}
