// SPDX-License-Identifier: MIT
/* The compressions decoded in the library, behind one interface. */
#include <errno.h>

#include "util/decoder.h"

enum decoder_kind decoder_detect(const uint8_t *p, size_t n)
{
	if (gunzip_magic(p, n))
		return DECODER_GZIP;
	if (unzstd_magic(p, n))
		return DECODER_ZSTD;
	return DECODER_NONE;
}

int decoder_init(struct decoder *d, enum decoder_kind kind,
		 imgfs_gunzip_in_fn in, void *arg)
{
	d->kind = kind;
	switch (kind) {
	case DECODER_GZIP:
		return gunzip_stream_init(&d->gz, in, arg);
	case DECODER_ZSTD:
		return unzstd_stream_init(&d->zs, in, arg);
	default:
		return -EINVAL;
	}
}

void decoder_end(struct decoder *d)
{
	if (d->kind == DECODER_GZIP)
		gunzip_stream_end(&d->gz);
	else if (d->kind == DECODER_ZSTD)
		unzstd_stream_end(&d->zs);
	d->kind = DECODER_NONE;
}

long decoder_read(struct decoder *d, uint8_t *out, size_t size, char *msg,
		  size_t msglen)
{
	switch (d->kind) {
	case DECODER_GZIP:
		return gunzip_read(&d->gz, out, size, msg, msglen);
	case DECODER_ZSTD:
		return unzstd_read(&d->zs, out, size, msg, msglen);
	default:
		return -EINVAL; /* nothing started */
	}
}
