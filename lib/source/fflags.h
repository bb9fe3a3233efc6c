/* SPDX-License-Identifier: MIT */
/*
 * source/fflags.h - file flags (chattr attributes, pax SCHILY.fflags) in a
 * layer: which of them a user set on purpose, and a tally of the entries
 * that carried such flags, for the one warning at the end. The writer and
 * the comparison apply the same rule with it (README, "File flags").
 */
#ifndef IMGFS_SOURCE_FFLAGS_H
#define IMGFS_SOURCE_FFLAGS_H

#include <stddef.h>
#include <stdint.h>

#include "imgfs/writer.h"

/*
 * The flags of @text (libarchive's names, separated by commas, spaces or
 * tabs) that a user sets on purpose, comma-separated into @buf (@size
 * bytes, cut short with "..." if needed). Filesystem-internal flags and
 * names that say a flag is clear ("noschg", "dump") are left out; unknown
 * names count as a user's. Returns how many flags were kept.
 */
size_t fflags_user(const char *text, char *buf, size_t size);

/* Entries carrying user flags: how many, and the first few by name. */
struct imgfs_fflags_tally {
	uint64_t entries;
	char *first; /* "path (flags), ..." of the first IMGFS_FFLAGS_SHOWN */
	size_t len;
};

#define IMGFS_FFLAGS_SHOWN 3

/* Count the entry at @path with user flags @flags. Memory stays bounded:
 * only the first few are named. */
void fflags_tally_add(struct imgfs_fflags_tally *t, const char *path,
		      const char *flags);

/* The one warning "@what N entries: first ones..." through @warn (may be
 * NULL), when any entry was counted. */
void fflags_tally_warn(const struct imgfs_fflags_tally *t, const char *what,
		       imgfs_warn_fn warn, void *arg);

void fflags_tally_free(struct imgfs_fflags_tally *t);

#endif /* IMGFS_SOURCE_FFLAGS_H */
