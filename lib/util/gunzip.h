/* SPDX-License-Identifier: MIT */
/*
 * gunzip.h - checked gzip decoding (not installed): ISA-L's inflate when
 * the build has it, zlib's otherwise, with the same bytes out and every
 * member's CRC-32 and length trailer verified either way.
 */
#ifndef IMGFS_GUNZIP_H
#define IMGFS_GUNZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct imgfs_gunzip;

struct imgfs_gunzip *gunzip_new(void);
void gunzip_free(struct imgfs_gunzip *g);
/* Expect the start of a new member (its header) next. */
void gunzip_member(struct imgfs_gunzip *g);
/*
 * Decode from *@in (*@in_len bytes; both advanced past what was used)
 * into @out, whose room *@out_len becomes the bytes written. Returns 1
 * when the member (trailer included) has ended, 0 when more input or
 * output room is needed, or -EINVAL with *@why naming the damage.
 */
int gunzip_step(struct imgfs_gunzip *g, const uint8_t **in, size_t *in_len,
		uint8_t *out, size_t *out_len, const char **why);

/*
 * Raw input for a stream: *@buf and its length, 0 at the end, or -errno
 * (the callback keeps its own message).
 */
typedef long (*imgfs_gunzip_in_fn)(void *arg, const uint8_t **buf);

/*
 * A decoder's raw input, shared by the gzip and zstd streams: what the
 * callback gave and the decoder has not used yet.
 */
struct imgfs_raw_input {
	imgfs_gunzip_in_fn in;
	void *arg;
	const uint8_t *next; /* raw bytes not yet used */
	size_t avail;
	uint64_t pos; /* raw offset of @next */
	bool eof;
};

/* Ask the callback for more when nothing is left: 0, or its -errno. */
int raw_input_fill(struct imgfs_raw_input *r);
/* @n bytes at @next were used. */
static inline void raw_input_used(struct imgfs_raw_input *r, size_t n)
{
	r->next += n;
	r->avail -= n;
	r->pos += n;
}

/* A whole gzip input: its members one after the other, nothing else. */
struct imgfs_gunzip_stream {
	struct imgfs_gunzip *gz;
	struct imgfs_raw_input raw;
	bool in_member, done;
};

int gunzip_stream_init(struct imgfs_gunzip_stream *s, imgfs_gunzip_in_fn in,
		       void *arg);
void gunzip_stream_end(struct imgfs_gunzip_stream *s);
/*
 * Up to @size decoded bytes into @out: their count, 0 at the end of the
 * last member, -errno from the input callback, or -EINVAL with @msg set.
 */
long gunzip_read(struct imgfs_gunzip_stream *s, uint8_t *out, size_t size,
		 char *msg, size_t msglen);
/* Whether @p (@n bytes) starts like a gzip member. */
bool gunzip_magic(const uint8_t *p, size_t n);
/* "1f 8b 00 ..." of up to 8 bytes, for messages naming unexpected data. */
void hex_bytes(char *out, size_t size, const uint8_t *p, size_t n);

#endif /* IMGFS_GUNZIP_H */
