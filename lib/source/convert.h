/* SPDX-License-Identifier: MIT */
/*
 * source/convert.h - a libarchive entry as struct iter_entry, shared by
 * the sources built on libarchive (tar streams, directory trees, the
 * entries lib/stack picks).
 */
#ifndef IMGFS_SOURCE_CONVERT_H
#define IMGFS_SOURCE_CONVERT_H

#include "source/iter.h"

/* The converted entry and what it owns, kept from one entry to the next. */
struct entry_conv {
	struct iter_entry out;
	struct imgfs_xattr_pair *xattrs;
	uint8_t *acl[2]; /* encoded ACL values */
	struct imgfs_data_range *sparse;
	/* how libarchive reads negative pax times: 0 not yet known */
	int8_t pax_time_truncated;
	imgfs_warn_fn warn;
	void *warn_arg;
};

/*
 * Convert @ae, read from @a (whose format tells whether pax times apply),
 * into @c->out, its path @path (NULL: not decodable, nothing else is
 * converted). A conversion error sets @err and @c->out.bad (the caller
 * reports it after its own checks of the entry).
 */
void entry_conv_set(struct entry_conv *c, struct archive *a,
		    struct archive_entry *ae, const char *path,
		    struct imgfs_error *err);

/* Free what the last entry owned. */
void entry_conv_release(struct entry_conv *c);

/* The shared part of the libarchive sources: the current entry's data. */
struct la_iter {
	struct entry_iter it;
	struct archive *a; /* the current entry's reader */
	const char *path; /* for messages */
	bool stream; /* a tar stream: blocks carry their stream offsets */
	uint64_t data_read; /* bytes of the current entry handed out */
	struct entry_conv conv;
};

/* Make @ae, read from @a, the current entry of @l: converted, no data
 * read yet. */
const struct iter_entry *la_iter_take(struct la_iter *l, struct archive *a,
				      struct archive_entry *ae,
				      struct imgfs_error *err);

/* it.read of the libarchive sources (the others are the source's). */
int la_iter_read(struct entry_iter *it, struct iter_block *b,
		 struct imgfs_error *err);

#endif /* IMGFS_SOURCE_CONVERT_H */
