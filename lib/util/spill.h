/* SPDX-License-Identifier: MIT */
/*
 * spill.h - a spill file (not installed): an unlinked temporary file that
 * takes what would not fit in memory, appended to and read back at the
 * offsets the appends returned. It is made on the first append, so a run
 * that never spills makes no file.
 */
#ifndef IMGFS_SPILL_H
#define IMGFS_SPILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/error.h"

/* All zeros is a valid spill: closed, empty, unnamed until init. */
struct imgfs_spill {
	int fd; /* valid when open */
	bool open;
	uint64_t size; /* bytes appended: the next offset */
	const char *prefix; /* its name where O_TMPFILE is missing */
	const char *what; /* in messages, e.g. "the xattr spill file" */
};

/* Name a spill ($TMPDIR or /tmp); @prefix and @what must outlive it. */
void spillfile_init(struct imgfs_spill *s, const char *prefix,
		    const char *what);

/* Make the file now, if not yet made: to learn early whether it can be. */
int spillfile_open(struct imgfs_spill *s, struct imgfs_error *err);

/* Append @len bytes; their offset goes to *@off (may be NULL). */
int spillfile_append(struct imgfs_spill *s, const void *buf, size_t len,
		     uint64_t *off, struct imgfs_error *err);

/* Read back @len bytes at @off, all of them. */
int spillfile_read(const struct imgfs_spill *s, void *buf, size_t len,
		   uint64_t off, struct imgfs_error *err);

/* Start again empty (the file stays); on failure, after what is there. */
void spillfile_empty(struct imgfs_spill *s);

/* Close the file; the spill is empty again and may be reused. */
void spillfile_close(struct imgfs_spill *s);

#endif /* IMGFS_SPILL_H */
