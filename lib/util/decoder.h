/* SPDX-License-Identifier: MIT */
/*
 * decoder.h - the compressions the library decodes itself (not
 * installed): gzip (util/gunzip.h) and zstd (util/unzstd.h), told apart by
 * their first bytes, behind one interface. Every reader of a layer (the
 * tar reader, the OCI conversion's feed, the OCI layout check) decodes
 * them here, and leaves any other compression to libarchive's filters.
 */
#ifndef IMGFS_DECODER_H
#define IMGFS_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/gunzip.h"
#include "util/unzstd.h"

enum decoder_kind { DECODER_NONE, DECODER_GZIP, DECODER_ZSTD };

struct decoder {
	enum decoder_kind kind;
	union {
		struct imgfs_gunzip_stream gz;
		struct imgfs_unzstd_stream zs;
	};
};

/* Which decoder the input starting with @p (@n bytes) needs, if any. */
enum decoder_kind decoder_detect(const uint8_t *p, size_t n);
/* Start decoding @kind (not DECODER_NONE) from @in: 0 or -ENOMEM. */
int decoder_init(struct decoder *d, enum decoder_kind kind,
		 imgfs_gunzip_in_fn in, void *arg);
/* Free what decoder_init() took; safe on a zeroed @d. */
void decoder_end(struct decoder *d);
/*
 * Up to @size decoded bytes into @out: their count, 0 at the end of the
 * input, -errno from the input callback, or -EINVAL with @msg set.
 */
long decoder_read(struct decoder *d, uint8_t *out, size_t size, char *msg,
		  size_t msglen);

#endif /* IMGFS_DECODER_H */
