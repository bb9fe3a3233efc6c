/* SPDX-License-Identifier: MIT */
/*
 * imgfs/extract.h - write an image's tree into a directory, safely.
 *
 * Everything is created relative to directory fds opened with O_NOFOLLOW,
 * one component at a time, so no path string is ever resolved (any depth
 * works, past PATH_MAX too). Each node is created with O_EXCL, mkdirat(),
 * symlinkat(), mknodat() or linkat(), which never follow a symlink, and
 * its metadata (owner, mode, xattrs with POSIX ACLs, times) goes through
 * an fd of that very node. Neither a hostile image (names such as "..",
 * links out of the tree) nor another process swapping names for symlinks
 * while the extraction runs can make it write outside the directory.
 * Directory metadata is applied at the end, deepest first, so read-only
 * modes and mtimes survive the creation of the children.
 *
 * Memory grows with the number of directories (one record each, with its
 * name) and hard-linked inodes, never with file data. Nothing is global:
 * extractions may run side by side in threads (the process's limit on
 * open files is raised to its hard limit once, as deep trees need fds).
 */
#ifndef IMGFS_EXTRACT_H
#define IMGFS_EXTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/api.h"
#include "imgfs/check.h"
#include "imgfs/error.h"
#include "imgfs/reader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a notice is about. */
enum imgfs_extract_notice_kind {
	/*
	 * @path, or part of its metadata, could not be written: @what says
	 * which step ("create", "chmod", an xattr name, a message of the
	 * reader...), @errnum why. Counted in imgfs_extract_result.failures.
	 */
	IMGFS_EXTRACT_FAILED = 0,
	/*
	 * The file at @path would go beyond the data limit: nothing more is
	 * written (@limit and @written are set, @errnum is EFBIG). Counted
	 * as a failure.
	 */
	IMGFS_EXTRACT_LIMIT_REACHED,
	/* Not root: device node @path was not created. */
	IMGFS_EXTRACT_DEVICE_SKIPPED,
	/* Not root: owners are not restored (told once). */
	IMGFS_EXTRACT_NO_OWNERS,
	/* Not root: some xattrs are not restored, e.g. @what on @path (told
	 * once). */
	IMGFS_EXTRACT_NO_XATTRS,
};

/* One notice, valid only during the callback. */
struct imgfs_extract_notice {
	enum imgfs_extract_notice_kind kind;
	const char *path; /* "/a/b"; NULL for IMGFS_EXTRACT_NO_OWNERS */
	const char *what; /* see the kinds; may be NULL */
	int errnum; /* a positive errno (FAILED, LIMIT_REACHED), else 0 */
	uint64_t limit; /* IMGFS_EXTRACT_LIMIT_REACHED: the limit */
	uint64_t written; /* ... and the file data bytes written before */
};

typedef void (*imgfs_extract_notice_fn)(void *arg,
					const struct imgfs_extract_notice *n);

/* imgfs_extract_options.flags */
enum {
	/* the directory may hold files already: whatever is at a name the
	 * image uses is removed (never followed) and replaced */
	IMGFS_EXTRACT_F_OVERWRITE = 1u << 0,
};

struct imgfs_extract_options {
	size_t struct_size; /* sizeof(struct imgfs_extract_options) */
	unsigned int flags; /* IMGFS_EXTRACT_F_* */
	/* at most this many bytes of file data in all (0: no limit); the
	 * file that would exceed it is reported and the extraction stops */
	uint64_t limit;
	/* failures and warnings, in order; may be NULL */
	imgfs_extract_notice_fn notice;
	void *notice_arg;
};

struct imgfs_extract_result {
	size_t struct_size; /* set by the library (docs/architecture.md) */
	uint64_t entries; /* paths written or attempted, the root excluded */
	uint64_t failures; /* IMGFS_EXTRACT_FAILED and _LIMIT_REACHED */
	uint64_t data_bytes; /* file data bytes written */
	bool limit_reached; /* the extraction stopped at the data limit */
};

/* Fill @o with the defaults: no flags, no limit, no callback. */
IMGFS_API
void imgfs_extract_options_init(struct imgfs_extract_options *o);

/*
 * Extract the tree of the open image @img into the directory @dir (created
 * with mode 0700 if missing; it must be empty unless
 * IMGFS_EXTRACT_F_OVERWRITE is set). Entries that cannot be written go to
 * @o->notice and are counted in @res; the rest is still written (entries
 * of the image that cannot be read are failures too). Returns 0 when the
 * extraction ran, whatever failed on the way; -ENOTEMPTY when @dir is not
 * empty and overwriting was not asked for; another negative errno with
 * @err set when it could not run (@dir cannot be created or opened, the
 * image root cannot be read, out of memory). @o may be NULL.
 */
IMGFS_API
int imgfs_extract(struct imgfs_image *img, const char *dir,
		  const struct imgfs_extract_options *o,
		  struct imgfs_extract_result *res, struct imgfs_error *err);

/*
 * Step by step, to extract while checking (the image data is then read
 * once more only for the files written): create the extraction, run
 * imgfs_check_image() with imgfs_extract_check_entry() called from its
 * entry callback, then imgfs_extract_finish().
 */
struct imgfs_extract;

/*
 * A new extraction of @img (which must outlive it) into @dir, with options
 * @o (copied; may be NULL). Returns 0 with *@x set, or a negative errno
 * as imgfs_extract() (nothing is written then).
 */
IMGFS_API
int imgfs_extract_new(struct imgfs_image *img, const char *dir,
		      const struct imgfs_extract_options *o,
		      struct imgfs_extract **x, struct imgfs_error *err);

/*
 * Entry callback for imgfs_check_image() (@extract is the struct
 * imgfs_extract): writes the path @e. Entries must come parents first,
 * the root first, as the checker hands them. Returns 0, 1 to stop the
 * walk when the data limit is reached, or -ENOMEM.
 */
IMGFS_API
int imgfs_extract_check_entry(void *extract, const struct imgfs_check_entry *e);

/*
 * Apply the directories' metadata (deepest first), close every fd and
 * fill @res (may be NULL). Returns 0 or a negative errno. Call it once;
 * then free @x.
 */
IMGFS_API
int imgfs_extract_finish(struct imgfs_extract *x,
			 struct imgfs_extract_result *res,
			 struct imgfs_error *err);

/* Free @x (NULL is ignored), closing what imgfs_extract_finish() did not. */
IMGFS_API
void imgfs_extract_free(struct imgfs_extract *x);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_EXTRACT_H */
