/* SPDX-License-Identifier: MIT */
/*
 * gunzip.h - checked gzip decoding (not installed): ISA-L's inflate when
 * the build has it, zlib's otherwise, with the same bytes out and every
 * member's CRC-32 and length trailer verified either way.
 */
#ifndef IMGFS_GUNZIP_H
#define IMGFS_GUNZIP_H

#include <stddef.h>
#include <stdint.h>

struct imgfs_gunzip;

struct imgfs_gunzip *imgfs_gunzip_new(void);
void imgfs_gunzip_free(struct imgfs_gunzip *g);
/* Expect the start of a new member (its header) next. */
void imgfs_gunzip_member(struct imgfs_gunzip *g);
/*
 * Decode from *@in (*@in_len bytes; both advanced past what was used)
 * into @out, whose room *@out_len becomes the bytes written. Returns 1
 * when the member (trailer included) has ended, 0 when more input or
 * output room is needed, or -EINVAL with *@why naming the damage.
 */
int imgfs_gunzip_step(struct imgfs_gunzip *g, const uint8_t **in,
		      size_t *in_len, uint8_t *out, size_t *out_len,
		      const char **why);

#endif /* IMGFS_GUNZIP_H */
