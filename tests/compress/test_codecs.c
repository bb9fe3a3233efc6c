// SPDX-License-Identifier: MIT
/*
 * The compression backends: every "destsize" result must fit the
 * pcluster, decode with the library's own decoder (the format the kernel
 * reads: raw LZ4 block, MicroLZMA, raw DEFLATE, one Zstandard frame) to
 * exactly the input prefix it claims, and must not depend on what the
 * context compressed before. The reader's side of the same algorithm
 * must take what the writer's side wrote: the configuration record reads
 * back, and our decoder, set up from it, gives the input back.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <lz4.h>
#include <lzma.h>
#ifdef HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

#include "imgfs/format.h"
#include "codec/codec.h"
#include "../unit/unit.h"

#define DATA_LEN (1u << 20)

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Text-like runs, random runs and zero runs, mixed. */
static uint8_t *make_data(void)
{
	static const char *words[] = { "erofs ", "block ", "cluster ",
				       "image\n", "layer ", "0123456789 " };
	uint8_t *d = malloc(DATA_LEN);
	uint32_t s = 12345;
	size_t pos = 0;

	while (pos < DATA_LEN) {
		size_t run = 1 + rnd(&s) % 30000, kind = rnd(&s) % 4;

		if (run > DATA_LEN - pos)
			run = DATA_LEN - pos;
		for (size_t i = 0; i < run; i++) {
			const char *w = words[(pos + i) / 7 % 6];

			if (kind == 0)
				d[pos + i] = (uint8_t)rnd(&s);
			else if (kind == 1)
				d[pos + i] = 0;
			else
				d[pos + i] = (uint8_t)w[(pos + i) % 6];
		}
		pos += run;
	}
	return d;
}

#ifdef HAVE_ZSTD
/* The window a decoder must provide for a frame (RFC 8878, 3.1.1.1). */
static uint64_t zstd_window(const uint8_t *c, size_t clen)
{
	static const unsigned int fcs_len[4] = { 1, 2, 4, 8 };
	unsigned int fhd, wd;
	uint64_t fcs = 0, base;

	if (clen < 6 || imgfs_get_le32(c) != 0xFD2FB528u)
		return UINT64_MAX;
	fhd = c[4];
	if (!(fhd & 0x20)) { /* a window descriptor follows */
		wd = c[5];
		base = 1ull << (10 + (wd >> 3));
		return base + base / 8 * (wd & 7);
	}
	/* single segment: the window is the content size */
	for (unsigned int i = 0; i < fcs_len[fhd >> 6]; i++)
		fcs |= (uint64_t)c[5 + (fhd & 3 ? 4 : 0) + i] << (8 * i);
	return (fhd >> 6) == 1 ? fcs + 256 : fcs;
}
#endif

static bool decode(const struct imgfs_zcfg *cfg, const uint8_t *c,
		   size_t clen, uint8_t *out, size_t outlen)
{
	switch (cfg->alg) {
	case IMGFS_COMPR_LZ4:
		return LZ4_decompress_safe((const char *)c, (char *)out,
					   (int)clen, (int)outlen) ==
		       (int)outlen;
	case IMGFS_COMPR_LZMA: {
		lzma_stream strm = LZMA_STREAM_INIT;
		lzma_ret r;

		if (lzma_microlzma_decoder(&strm, clen, outlen, 1,
					   cfg->dictsize) != LZMA_OK)
			return false;
		strm.next_in = c;
		strm.avail_in = clen;
		strm.next_out = out;
		strm.avail_out = outlen;
		r = lzma_code(&strm, LZMA_FINISH);
		lzma_end(&strm);
		return r == LZMA_STREAM_END && !strm.avail_out;
	}
#ifdef HAVE_ZLIB
	case IMGFS_COMPR_DEFLATE: {
		z_stream zs = { 0 };
		int r;

		if (inflateInit2(&zs, -15) != Z_OK)
			return false;
		zs.next_in = (Bytef *)c;
		zs.avail_in = (uInt)clen;
		zs.next_out = out;
		zs.avail_out = (uInt)outlen;
		r = inflate(&zs, Z_FINISH);
		inflateEnd(&zs);
		return r == Z_STREAM_END && !zs.avail_out && !zs.avail_in;
	}
#endif
#ifdef HAVE_ZSTD
	case IMGFS_COMPR_ZSTD:
		if (zstd_window(c, clen) > cfg->dictsize)
			return false;
		return ZSTD_decompress(out, outlen, c, clen) == outlen;
#endif
	}
	return false;
}

static void check_alg(const struct imgfs_zalg *alg, uint32_t pcluster,
		      unsigned int bits, const uint8_t *data)
{
	struct imgfs_zcfg cfg = { .level = -1, .pclustersize = pcluster,
				  .blkszbits = bits, .alg = alg->alg };
	struct imgfs_error err = { 0 };
	uint8_t *c1 = malloc(cfg.pclustersize), *c2, *out = malloc(DATA_LEN);
	void *ctx, *fresh;
	size_t pos = 0, calls = 0, total = 0;
	uint8_t rec[16] = { 0 };
	struct imgfs_zconfig zc = { .zero_padding = true };
	struct imgfs_zdecoder *dec = zdecoder_new();
	char why2[256];
	unsigned int reclen;

	if (alg->setup(&cfg, &err)) {
		printf("%s: skipped (%s)\n", alg->name, err.msg);
		zdecoder_free(dec);
		free(c1);
		free(out);
		return;
	}
	c2 = malloc(cfg.pclustersize);
	ctx = alg->ctx_new(&cfg);
	CHECK(ctx != NULL);
	reclen = alg->cfg_record(&cfg, rec);
	CHECK(reclen > 0 && reclen <= sizeof(rec));
	/* one decoder per on-disk id, whichever encoder wrote the record */
	CHECK(zalg_by_id(alg->alg)->cfg_parse == alg->cfg_parse);
	CHECK(alg->cfg_parse(&zc, rec, reclen, bits, why2, sizeof(why2)) == 0);
	CHECK(dec != NULL);
	while (pos < DATA_LEN) {
		size_t in = DATA_LEN - pos, in2;
		const char *why = NULL;
		ssize_t n, n2;

		/* offsets that are not block aligned as well */
		if (in > 16 * (size_t)cfg.pclustersize)
			in = 16 * (size_t)cfg.pclustersize + calls % 3;
		in2 = in;
		n = alg->destsize(ctx, data + pos, &in, c1, cfg.pclustersize,
				  &why);
		CHECK(n >= 0 && (size_t)n <= cfg.pclustersize);
		CHECK(in > 0 && in <= in2);
		if (n < 0 || !in)
			break;
		if (!n) {
			/* probed incompressible: a raw pcluster's worth */
			CHECK(in <= cfg.pclustersize);
			pos += in;
			calls++;
			continue;
		}
		CHECK(decode(&cfg, c1, (size_t)n, out, in));
		CHECK(!memcmp(out, data + pos, in));
		memset(out, 0, in);
		CHECK(zdecode(dec, &zc, alg->alg, c1, (size_t)n, out, in, false,
			      true, why2, sizeof(why2)) == 0);
		CHECK(!memcmp(out, data + pos, in));
		/* history independence: a fresh context gives the same bytes */
		if (calls % 5 == 0) {
			fresh = alg->ctx_new(&cfg);
			n2 = alg->destsize(fresh, data + pos, &in2, c2,
					   cfg.pclustersize, &why);
			CHECK(n2 == n && in2 == in);
			CHECK(n2 == n && !memcmp(c1, c2, (size_t)n));
			alg->ctx_free(fresh);
		}
		pos += in;
		total += (size_t)n;
		calls++;
	}
	printf("%s pcluster %u: %zu pclusters, %zu -> %zu bytes\n", alg->name,
	       cfg.pclustersize, calls, (size_t)DATA_LEN, total);
	alg->ctx_free(ctx);
	zdecoder_free(dec);
	free(c1);
	free(c2);
	free(out);
}

static void check_setup(void)
{
	struct imgfs_zcfg cfg = { .level = -1, .pclustersize = 65536,
				  .blkszbits = 12 };
	struct imgfs_error err = { 0 };

	CHECK(zalg_lzma.setup(&cfg, &err) == 0);
	CHECK(cfg.dictsize == 4 * 65536 && cfg.level == 6);
	cfg.dictsize = 16u << 20;
	CHECK(zalg_lzma.setup(&cfg, &err) == -EINVAL);
	cfg.dictsize = 0;
	cfg.level = 13;
	CHECK(zalg_lz4hc.setup(&cfg, &err) == -EINVAL);
	cfg.level = 3;
	CHECK(zalg_lz4.setup(&cfg, &err) == -EINVAL);
	/* LZ4 pclusters are capped at 256 blocks of 512 bytes (6.18) */
	cfg.level = -1;
	cfg.blkszbits = 9;
	cfg.pclustersize = 1u << 20;
	CHECK(zalg_lz4.setup(&cfg, &err) == 0);
	CHECK(cfg.pclustersize == 256 * 512);
}

int main(void)
{
	const struct imgfs_zalg *algs[] = { &zalg_lz4, &zalg_lz4hc, &zalg_lzma,
					    &zalg_deflate, &zalg_zstd };
	uint8_t *data = make_data();

	check_setup();
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		check_alg(algs[i], 4096, 12, data);
		check_alg(algs[i], 512, 9, data);
		check_alg(algs[i], 131072, 12, data);
	}
	free(data);
	return unit_done("test_codecs");
}
