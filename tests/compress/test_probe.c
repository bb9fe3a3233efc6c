// SPDX-License-Identifier: MIT
/*
 * The incompressibility probe (lib/codec/probe.c): what it calls
 * incompressible must really be so for liblzma at its default preset
 * (the most thorough encoder we have), and anything with repeats, even
 * far apart, or with a skewed byte distribution must be left to the
 * encoders. Through the encoders' destsize: probed data comes back as
 * "store these bytes raw", compressible data is compressed.
 */
#include <stdlib.h>
#include <string.h>

#include <lzma.h>
#include <zlib.h>

#include "codec/codec.h"
#include "../unit/unit.h"

#define PCL (128u << 10)

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

static void fill_random(uint8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd(&seed);
}

/* Words from a small vocabulary: low entropy, many repeats. */
static void fill_text(uint8_t *p, size_t n, uint64_t seed)
{
	static const char *const words[] = { "the ",	"image ", "layer ",
					     "kernel ", "mount ", "block ",
					     "of ",	"and ",	  "data ",
					     "\n" };
	size_t i = 0;

	while (i < n) {
		const char *w = words[rnd(&seed) % 10];

		for (; *w && i < n; w++)
			p[i++] = (uint8_t)*w;
	}
}

/* Bytes liblzma (preset 6, MicroLZMA as the writer uses it) saves. */
static long lzma_saving(const uint8_t *src, size_t len)
{
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_options_lzma opt;
	uint8_t *out = malloc(len);
	long saved = -1;

	if (out && !lzma_lzma_preset(&opt, 6)) {
		opt.dict_size = 4 * PCL;
		if (lzma_microlzma_encoder(&s, &opt) == LZMA_OK) {
			s.next_in = src;
			s.avail_in = len;
			s.next_out = out;
			s.avail_out = len;
			if (lzma_code(&s, LZMA_FINISH) == LZMA_STREAM_END)
				saved = (long)s.total_in - (long)s.total_out;
		}
	}
	lzma_end(&s);
	free(out);
	return saved;
}

/*
 * @n bytes of deflated text at @p: already-compressed data, as in a .gz
 * (the deflate stream of enough text to fill them). Returns @n, or 0.
 */
static size_t fill_deflated(uint8_t *p, size_t n)
{
	size_t tlen = 8 * n;
	uint8_t *text = malloc(tlen);
	uLongf out = compressBound(tlen);
	uint8_t *z = malloc(out);

	fill_text(text, tlen, 7);
	/* vary the words: real .gz bodies are not so regular */
	for (size_t i = 0; i < tlen; i += 7)
		text[i] ^= (uint8_t)(i * 131 >> 9);
	if (compress2(z, &out, text, tlen, 9) != Z_OK || out < n)
		n = 0;
	else
		memcpy(p, z, n);
	free(text);
	free(z);
	return n;
}

static void check_probe(struct imgfs_zprobe *pr)
{
	uint8_t *buf = malloc(2 * PCL);
	size_t n;

	/* random: incompressible, and liblzma agrees */
	fill_random(buf, PCL, 1);
	CHECK(zprobe_incompressible(pr, buf, PCL));
	CHECK(lzma_saving(buf, PCL) < (long)(PCL / 128));

	/* deflated text: incompressible, and liblzma agrees */
	n = fill_deflated(buf, PCL);
	CHECK(n == PCL);
	CHECK(zprobe_incompressible(pr, buf, n));
	CHECK(lzma_saving(buf, n) < (long)(n / 128));

	/* too short to judge: always left to the encoder */
	fill_random(buf, 1024, 2);
	CHECK(!zprobe_incompressible(pr, buf, 1024));

	/* a random 16 KiB block repeated: flat histogram, many matches */
	fill_random(buf, 16384, 3);
	for (size_t i = 16384; i < PCL; i++)
		buf[i] = buf[i - 16384];
	CHECK(!zprobe_incompressible(pr, buf, PCL));
	CHECK(lzma_saving(buf, PCL) > (long)(PCL / 2));

	/*
	 * One pcluster of 4 KiB, random but for 40 bytes seen before at an
	 * odd distance: the 1/128 a pcluster must save is 32 bytes, so the
	 * repeat alone makes it worth compressing, wherever it starts.
	 */
	for (size_t at = 1001; at < 1005; at++) {
		fill_random(buf, 4096, 11);
		memcpy(buf + at, buf + 100, 40);
		CHECK(!zprobe_incompressible(pr, buf, 4096));
	}
	/* 8 bytes repeated are too few to matter */
	fill_random(buf, 4096, 12);
	memcpy(buf + 1001, buf + 100, 8);
	CHECK(zprobe_incompressible(pr, buf, 4096));

	/* repeats 100 KiB apart: beyond LZ4's reach, not LZMA's */
	fill_random(buf, 100 << 10, 4);
	memcpy(buf + (100 << 10), buf, PCL - (100 << 10));
	CHECK(!zprobe_incompressible(pr, buf, PCL));

	/* no repeats but 7 bits a byte: entropy coding saves 1/8 */
	fill_random(buf, PCL, 5);
	for (size_t i = 0; i < PCL; i++)
		buf[i] &= 0x7f;
	CHECK(!zprobe_incompressible(pr, buf, PCL));
	CHECK(lzma_saving(buf, PCL) > (long)(PCL / 16));

	/* text */
	fill_text(buf, PCL, 6);
	CHECK(!zprobe_incompressible(pr, buf, PCL));

	/* the verdict does not depend on what was probed before */
	fill_random(buf, PCL, 8);
	memcpy(buf + PCL, buf, PCL);
	CHECK(zprobe_incompressible(pr, buf + PCL, PCL));
	free(buf);
}

/* Through each encoder: raw for random data, compressed for text. */
static void check_encoder(const struct imgfs_zalg *alg)
{
	struct imgfs_zcfg cfg = {
		.level = -1,
		.pclustersize = PCL,
		.blkszbits = 12,
	};
	struct imgfs_error err = { 0 };
	size_t len = 4 * PCL, in;
	uint8_t *src = malloc(len), *dst = malloc(PCL);
	const char *why = NULL;
	void *ctx;
	ssize_t r;

	if (!alg->destsize)
		return; /* not built in */
	cfg.alg = alg->alg;
	CHECK(!alg->setup(&cfg, &err));
	ctx = alg->ctx_new(&cfg);
	CHECK(ctx != NULL);
	if (!ctx)
		return;
	fill_random(src, len, 9);
	in = len;
	r = alg->destsize(ctx, src, &in, dst, PCL, &why);
	if (alg == &zalg_zstd)
		CHECK(r == 0 || in < PCL); /* no probe at 128 KiB */
	else
		CHECK(r == 0 && in == PCL / 2);
	in = len;
	r = alg->destsize(ctx, src, &in, dst, 4096, &why);
	CHECK(r == 0 && in == 4096);
	fill_text(src, len, 10);
	in = len;
	r = alg->destsize(ctx, src, &in, dst, PCL, &why);
	CHECK(r > 0 && r <= (ssize_t)PCL && in > 2 * PCL);
	alg->ctx_free(ctx);
	free(src);
	free(dst);
}

int main(void)
{
	struct imgfs_zprobe *pr = malloc(sizeof(*pr));

	check_probe(pr);
	free(pr);
	check_encoder(&zalg_lzma);
	check_encoder(&zalg_lz4hc);
	check_encoder(&zalg_zstd);
	check_encoder(&zalg_deflate);
	return unit_done("test_probe");
}
