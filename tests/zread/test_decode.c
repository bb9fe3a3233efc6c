// SPDX-License-Identifier: MIT
/*
 * test_decode - the pcluster decoders of lib/codec/ on streams made
 * here with the same libraries: a stream must decode to exactly the
 * extent's length (shorter or longer is corruption), a partial reference
 * decodes a prefix, truncated or damaged streams fail, limits from the
 * compression configuration (Zstandard window) are enforced.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <lzma.h>
#ifdef HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

#include "codec/codec.h"
#include "../unit/unit.h"

#define N 20000

static uint8_t data[N];
static uint8_t out[N + 64];
static char why[256];

static void make_data(void)
{
	static const char words[] = "pcluster extent lcluster index block ";
	uint32_t x = 12345;
	size_t i;

	for (i = 0; i < N; i++) {
		x = x * 1103515245u + 12345u;
		data[i] = (x >> 24) % 7 ? (uint8_t)words[i % (sizeof(words) - 1)]
					: (uint8_t)(x >> 16);
	}
}

static struct imgfs_zconfig cfg = {
	.zero_padding = true,
	.lz4_max_pclusterblks = 256,
	.lzma_dict_size = 1u << 16,
	.deflate_windowbits = 15,
	.zstd_windowlog = 16,
};

static int dec(struct imgfs_zdecoder *d, unsigned int alg, const uint8_t *in,
	       size_t inlen, size_t outlen, bool partial, bool exact_input)
{
	memset(out, 0xAA, sizeof(out));
	why[0] = '\0';
	return zdecode(d, &cfg, alg, in, inlen, out, outlen, partial,
		       exact_input, why, sizeof(why));
}

/* The checks every codec must pass on a stream @s of all of data[]. */
static void common(struct imgfs_zdecoder *d, unsigned int alg,
		   const uint8_t *s, size_t len)
{
	CHECK(dec(d, alg, s, len, N, false, true) == 0);
	CHECK_BYTES(out, data, N);
	/* the extent is shorter than what the stream holds */
	CHECK(dec(d, alg, s, len, N - 1, false, true) == -IMGFS_EFSCORRUPTED);
	CHECK(why[0] != '\0');
	/* the extent is longer: the stream ends early */
	CHECK(dec(d, alg, s, len, N + 7, false, true) == -IMGFS_EFSCORRUPTED);
	/* a partial reference decodes a prefix */
	CHECK(dec(d, alg, s, len, 5000, true, true) == 0);
	CHECK_BYTES(out, data, 5000);
	CHECK(out[5000] == 0xAA);
	/* truncated stream */
	CHECK(dec(d, alg, s, len / 2, N, false, true) == -IMGFS_EFSCORRUPTED);
	/* reuse after errors */
	CHECK(dec(d, alg, s, len, N, false, true) == 0);
	CHECK_BYTES(out, data, N);
}

static void test_lz4(struct imgfs_zdecoder *d)
{
	int cap = LZ4_compressBound(N);
	uint8_t *s = malloc((size_t)cap + 100);
	int len = LZ4_compress_default((const char *)data, (char *)s, N, cap);

	CHECK(len > 0);
	common(d, IMGFS_COMPR_LZ4, s, (size_t)len);
	/* without zero padding the stream may be followed by garbage */
	memset(s + len, 0x5C, 100);
	CHECK(dec(d, IMGFS_COMPR_LZ4, s, (size_t)len + 100, N, false,
		  false) == 0);
	CHECK_BYTES(out, data, N);
	/* a damaged match offset */
	s[len / 2] ^= 0xFF;
	s[len / 2 + 1] ^= 0xFF;
	CHECK(dec(d, IMGFS_COMPR_LZ4, s, (size_t)len, N, false, true) != 0 ||
	      memcmp(out, data, N));
	free(s);
}

static void test_lzma(struct imgfs_zdecoder *d)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	lzma_options_lzma opt;
	uint8_t *s = malloc(2 * N);
	size_t len;

	CHECK(!lzma_lzma_preset(&opt, 6));
	opt.dict_size = cfg.lzma_dict_size;
	CHECK(lzma_microlzma_encoder(&strm, &opt) == LZMA_OK);
	strm.next_in = data;
	strm.avail_in = N;
	strm.next_out = s;
	strm.avail_out = 2 * N;
	CHECK(lzma_code(&strm, LZMA_FINISH) == LZMA_STREAM_END);
	CHECK(strm.total_in == N);
	len = (size_t)strm.total_out;
	lzma_end(&strm);
	CHECK(s[0] != 0); /* MicroLZMA: first byte is ~props */
	common(d, IMGFS_COMPR_LZMA, s, len);
	free(s);
}

#ifdef HAVE_ZLIB
static void test_deflate(struct imgfs_zdecoder *d)
{
	uLong cap = compressBound(N) + 64;
	uint8_t *s = malloc(cap);
	z_stream z = { 0 };

	CHECK(deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) ==
	      Z_OK);
	z.next_in = data;
	z.avail_in = N;
	z.next_out = s;
	z.avail_out = (uInt)cap;
	CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
	deflateEnd(&z);
	common(d, IMGFS_COMPR_DEFLATE, s, z.total_out);
	free(s);
}
#endif

#ifdef HAVE_ZSTD
static void test_zstd(struct imgfs_zdecoder *d)
{
	size_t cap = ZSTD_compressBound(N);
	uint8_t *s = malloc(cap);
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	size_t len;

	ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 15);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
	len = ZSTD_compress2(cc, s, cap, data, N);
	CHECK(!ZSTD_isError(len));
	common(d, IMGFS_COMPR_ZSTD, s, len);
	/* a frame needing a larger window than the image allows */
	cfg.zstd_windowlog = 12;
	CHECK(dec(d, IMGFS_COMPR_ZSTD, s, len, N, false, true) ==
	      -IMGFS_EFSCORRUPTED);
	cfg.zstd_windowlog = 16;
	ZSTD_freeCCtx(cc);
	free(s);
}
#endif

int main(void)
{
	struct imgfs_zdecoder *d = zdecoder_new();

	CHECK(d != NULL);
	make_data();
	test_lz4(d);
	test_lzma(d);
#ifdef HAVE_ZLIB
	test_deflate(d);
#endif
#ifdef HAVE_ZSTD
	test_zstd(d);
#endif
	CHECK(dec(d, 7, data, 10, 10, false, true) == -EOPNOTSUPP);
	zdecoder_free(d);
	return unit_done("test_decode");
}
