// SPDX-License-Identifier: MIT
/*
 * decompress.c - the four pcluster codecs (docs/format.md §9.14).
 *
 * Each decoder checks that a stream produces exactly the extent's bytes,
 * as the kernel does when it reads a whole extent, so that the checker can
 * rely on "decodes without error" meaning "the kernel reads it the same".
 * Decoder contexts are kept in struct imgfs_zdecoder for reuse: liblzma and
 * libzstd allocate their windows once per context, not once per pcluster.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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

#include "reader/zdata.h"

struct imgfs_zdecoder {
	bool lzma_ready;
	lzma_stream lzma;
#ifdef HAVE_ZLIB
	bool zlib_ready;
	z_stream zlib;
#endif
#ifdef HAVE_ZSTD
	ZSTD_DCtx *zstd;
#endif
};

struct imgfs_zdecoder *imgfs_zdecoder_new(void)
{
	struct imgfs_zdecoder *d = calloc(1, sizeof(*d));
	lzma_stream init = LZMA_STREAM_INIT;

	if (d)
		d->lzma = init;
	return d;
}

void imgfs_zdecoder_free(struct imgfs_zdecoder *d)
{
	if (!d)
		return;
	if (d->lzma_ready)
		lzma_end(&d->lzma);
#ifdef HAVE_ZLIB
	if (d->zlib_ready)
		inflateEnd(&d->zlib);
#endif
#ifdef HAVE_ZSTD
	ZSTD_freeDCtx(d->zstd);
#endif
	free(d);
}

const char *imgfs_zalg_name(unsigned int alg)
{
	static const char *const names[IMGFS_COMPR_MAX] = {
		[IMGFS_COMPR_LZ4] = "lz4",
		[IMGFS_COMPR_LZMA] = "lzma",
		[IMGFS_COMPR_DEFLATE] = "deflate",
		[IMGFS_COMPR_ZSTD] = "zstd",
	};

	return alg < IMGFS_COMPR_MAX ? names[alg] : "?";
}

static int corrupt(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int corrupt(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -IMGFS_EFSCORRUPTED;
}

/*
 * With zero padding the stream is exactly the pcluster's tail and must
 * decode to exactly the extent (LZ4_decompress_safe); without it the
 * stream is left-aligned and followed by garbage, so only a prefix decode
 * is possible, as in the kernel.
 */
static int dec_lz4(const uint8_t *in, size_t inlen, uint8_t *out,
		   size_t outlen, bool partial, bool exact_input, char *why,
		   size_t whylen)
{
	int n;

	if (partial || !exact_input)
		n = LZ4_decompress_safe_partial((const char *)in, (char *)out,
						(int)inlen, (int)outlen,
						(int)outlen);
	else
		n = LZ4_decompress_safe((const char *)in, (char *)out,
					(int)inlen, (int)outlen);
	if (n < 0)
		return corrupt(why, whylen,
			       "corrupt LZ4 stream (%zu bytes), or it decodes to more than %zu bytes",
			       inlen, outlen);
	if ((size_t)n != outlen)
		return corrupt(why, whylen,
			       "LZ4 stream decodes to %d bytes instead of %zu",
			       n, outlen);
	return 0;
}

static const char *lzma_ret_str(lzma_ret r)
{
	switch (r) {
	case LZMA_MEM_ERROR:
		return "out of memory";
	case LZMA_OPTIONS_ERROR:
		return "unsupported properties";
	case LZMA_DATA_ERROR:
		return "corrupt data";
	case LZMA_BUF_ERROR:
		return "truncated stream";
	default:
		return "decoder error";
	}
}

/* MicroLZMA (liblzma >= 5.3): the kernel's LZMA pcluster format. */
static int dec_lzma(struct imgfs_zdecoder *d, const struct imgfs_zconfig *cfg,
		    const uint8_t *in, size_t inlen, uint8_t *out,
		    size_t outlen, bool partial, char *why, size_t whylen)
{
	lzma_stream *s = &d->lzma;
	lzma_ret r;
	int i;

	r = lzma_microlzma_decoder(s, inlen, outlen, !partial,
				   cfg->lzma_dict_size);
	if (r == LZMA_MEM_ERROR)
		return -ENOMEM;
	if (r != LZMA_OK)
		return corrupt(why, whylen, "MicroLZMA decoder setup: %s",
			       lzma_ret_str(r));
	d->lzma_ready = true;
	s->next_in = in;
	s->avail_in = inlen;
	s->next_out = out;
	s->avail_out = outlen;
	/* All input is there: a few calls settle it (liblzma reports
	 * LZMA_BUF_ERROR once no progress is possible). */
	for (i = 0; i < 4 && r == LZMA_OK; i++)
		r = lzma_code(s, LZMA_RUN);
	if (r == LZMA_MEM_ERROR)
		return -ENOMEM;
	if (r != LZMA_OK && r != LZMA_STREAM_END)
		return corrupt(why, whylen,
			       "MicroLZMA stream (%zu bytes): %s after %llu of %zu bytes",
			       inlen, lzma_ret_str(r),
			       (unsigned long long)s->total_out, outlen);
	if (s->total_out != outlen)
		return corrupt(why, whylen,
			       "MicroLZMA stream (%zu bytes) ends after %llu bytes instead of %zu",
			       inlen, (unsigned long long)s->total_out, outlen);
	if (!partial && r != LZMA_STREAM_END)
		return corrupt(why, whylen,
			       "MicroLZMA stream (%zu bytes) does not end with the extent",
			       inlen);
	return 0;
}

#ifdef HAVE_ZLIB
/* Is the stream finished once @outlen bytes are out? Probe for one more. */
static int inflate_more(z_stream *z)
{
	uint8_t extra;
	int r;

	z->next_out = &extra;
	z->avail_out = 1;
	r = inflate(z, Z_SYNC_FLUSH);
	if (r == Z_STREAM_END && z->avail_out)
		return 0;
	return 1;
}

/* Raw DEFLATE; the kernel always inflates with a 32 KiB window. */
static int dec_deflate(struct imgfs_zdecoder *d, const uint8_t *in,
		       size_t inlen, uint8_t *out, size_t outlen, bool partial,
		       char *why, size_t whylen)
{
	z_stream *z = &d->zlib;
	int r;

	if (!d->zlib_ready) {
		memset(z, 0, sizeof(*z));
		r = inflateInit2(z, -15);
		if (r == Z_MEM_ERROR)
			return -ENOMEM;
		if (r != Z_OK)
			return corrupt(why, whylen, "zlib setup failed (%d)", r);
		d->zlib_ready = true;
	} else if (inflateReset(z) != Z_OK) {
		return corrupt(why, whylen, "zlib reset failed");
	}
	z->next_in = (uint8_t *)in;
	z->avail_in = (uInt)inlen;
	z->next_out = out;
	z->avail_out = (uInt)outlen;
	r = inflate(z, Z_SYNC_FLUSH);
	if (r == Z_MEM_ERROR)
		return -ENOMEM;
	if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR)
		return corrupt(why, whylen,
			       "corrupt DEFLATE stream (%zu bytes): %s", inlen,
			       z->msg ? z->msg : "inflate error");
	if (z->total_out != outlen)
		return corrupt(why, whylen,
			       "DEFLATE stream (%zu bytes) ends after %lu bytes instead of %zu",
			       inlen, (unsigned long)z->total_out, outlen);
	if (!partial && r != Z_STREAM_END && inflate_more(z))
		return corrupt(why, whylen,
			       "DEFLATE stream (%zu bytes) does not end with the extent (%zu bytes)",
			       inlen, outlen);
	return 0;
}
#endif

#ifdef HAVE_ZSTD
/* After a full output buffer: does the frame end without more output? */
static int zstd_more(ZSTD_DCtx *dc, ZSTD_inBuffer *ib)
{
	uint8_t extra;
	int i;

	/* Each call consumes input or produces output, so this terminates
	 * quickly; the bound is only a guard. */
	for (i = 0; i < 64; i++) {
		ZSTD_outBuffer ob = { &extra, 1, 0 };
		size_t r = ZSTD_decompressStream(dc, &ob, ib);

		if (ZSTD_isError(r) || ob.pos)
			return 1;
		if (!r)
			return 0;
		if (ib->pos == ib->size)
			return 1;
	}
	return 1;
}

static int dec_zstd(struct imgfs_zdecoder *d, const struct imgfs_zconfig *cfg,
		    const uint8_t *in, size_t inlen, uint8_t *out,
		    size_t outlen, bool partial, char *why, size_t whylen)
{
	ZSTD_inBuffer ib = { in, inlen, 0 };
	ZSTD_outBuffer ob = { out, outlen, 0 };
	size_t r = 1;

	if (!d->zstd) {
		d->zstd = ZSTD_createDCtx();
		if (!d->zstd)
			return -ENOMEM;
	}
	ZSTD_DCtx_reset(d->zstd, ZSTD_reset_session_and_parameters);
	r = ZSTD_DCtx_setParameter(d->zstd, ZSTD_d_windowLogMax,
				   (int)cfg->zstd_windowlog);
	if (ZSTD_isError(r))
		return corrupt(why, whylen, "zstd window log %u: %s",
			       cfg->zstd_windowlog, ZSTD_getErrorName(r));
	while (ob.pos < ob.size) {
		size_t before = ib.pos + ob.pos;

		r = ZSTD_decompressStream(d->zstd, &ob, &ib);
		if (ZSTD_isError(r))
			return corrupt(why, whylen,
				       "Zstandard frame (%zu bytes): %s after %zu of %zu bytes",
				       inlen, ZSTD_getErrorName(r), ob.pos,
				       outlen);
		if (!r || ib.pos + ob.pos == before)
			break;
	}
	if (ob.pos != outlen)
		return corrupt(why, whylen,
			       "Zstandard frame (%zu bytes) ends after %zu bytes instead of %zu",
			       inlen, ob.pos, outlen);
	if (!partial && r && zstd_more(d->zstd, &ib))
		return corrupt(why, whylen,
			       "Zstandard frame (%zu bytes) does not end with the extent (%zu bytes)",
			       inlen, outlen);
	return 0;
}
#endif

int imgfs_zdecode(struct imgfs_zdecoder *d, const struct imgfs_zconfig *cfg,
		  unsigned int alg, const uint8_t *in, size_t inlen,
		  uint8_t *out, size_t outlen, bool partial, bool exact_input,
		  char *why, size_t whylen)
{
	switch (alg) {
	case IMGFS_COMPR_LZ4:
		return dec_lz4(in, inlen, out, outlen, partial, exact_input,
			       why, whylen);
	case IMGFS_COMPR_LZMA:
		return dec_lzma(d, cfg, in, inlen, out, outlen, partial, why,
				whylen);
#ifdef HAVE_ZLIB
	case IMGFS_COMPR_DEFLATE:
		return dec_deflate(d, in, inlen, out, outlen, partial, why,
				   whylen);
#endif
#ifdef HAVE_ZSTD
	case IMGFS_COMPR_ZSTD:
		return dec_zstd(d, cfg, in, inlen, out, outlen, partial, why,
				whylen);
#endif
	}
	snprintf(why, whylen, "%s decompression is not built in",
		 imgfs_zalg_name(alg));
	return -EOPNOTSUPP;
}
