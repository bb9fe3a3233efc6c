/* SPDX-License-Identifier: MIT */
/*
 * imgfs/compare.h - does an image represent a tar layer exactly?
 *
 * The tar is replayed into an expected tree with the rules mkfs.img
 * documents (paths, later entries winning, implied parents, OCI
 * whiteouts, hard links, owner mapping), written independently of the
 * writer, so that a bug in either shows up as a difference. The tree is
 * then compared with the image path by path: type, mode, owner, mtime
 * with nanoseconds, size, content (SHA-256 by default), symlink target, device
 * number, every xattr (POSIX ACLs included) and hard-link groups. Entries
 * mkfs.img would refuse are reported as differences of kind
 * IMGFS_COMPARE_UNREPRESENTABLE, and the rest is still compared.
 *
 * The tar is read as imgfs_writer_add_tar() reads it (imgfs/source.h), so
 * where it ends and what is refused are the same as for mkfs.img. Memory grows
 * with the number of entries of the tar and of the image, never with file data.
 * Nothing is global: comparisons may run side by side in threads.
 */
#ifndef IMGFS_COMPARE_H
#define IMGFS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/api.h"
#include "imgfs/check.h"
#include "imgfs/error.h"
#include "imgfs/reader.h"
#include "imgfs/writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a difference is about; the names are stable (for JSON output). */
enum imgfs_compare_kind {
	IMGFS_COMPARE_MISSING = 0, /* "missing": in the tar, not the image */
	IMGFS_COMPARE_EXTRA, /* "extra": in the image, not the tar */
	IMGFS_COMPARE_TYPE, /* "type": file types differ */
	IMGFS_COMPARE_MODE, /* "mode": permission bits (07777) */
	IMGFS_COMPARE_OWNER, /* "owner": uid or gid */
	IMGFS_COMPARE_MTIME, /* "mtime": seconds or nanoseconds */
	IMGFS_COMPARE_SIZE, /* "size": regular file size */
	IMGFS_COMPARE_CONTENT, /* "content": data differs or is unreadable */
	IMGFS_COMPARE_SYMLINK, /* "symlink": target */
	IMGFS_COMPARE_RDEV, /* "rdev": device number */
	IMGFS_COMPARE_XATTR, /* "xattr": missing, extra or other value */
	IMGFS_COMPARE_HARDLINK, /* "hardlink": link groups differ */
	/* "unrepresentable": an entry mkfs.img refuses (the image cannot
	 * hold it as the tar says) */
	IMGFS_COMPARE_UNREPRESENTABLE,
	IMGFS_COMPARE_NR_KINDS
};

/* One difference, valid only during the report callback. */
struct imgfs_compare_difference {
	enum imgfs_compare_kind kind;
	/* "/a/b" for image-side paths and compared entries; the tar's own
	 * spelling for entries refused while replaying the tar ("?" when
	 * it cannot be decoded) */
	const char *path;
	const char *msg; /* what differs, in words; may quote names */
};

typedef void (*imgfs_compare_report_fn)(
	void *arg, const struct imgfs_compare_difference *d);

/* imgfs_compare_options.flags: how mkfs.img was told to convert the tar */
enum {
	/* --keep-whiteouts: .wh.* entries were stored as ordinary files */
	IMGFS_COMPARE_F_KEEP_WHITEOUTS = 1u << 0,
	/* deprecated: file_flags = IMGFS_FILE_FLAGS_IGNORE instead */
	IMGFS_COMPARE_F_IGNORE_FILE_FLAGS = 1u << 1,
	/* --all-root: every owner became 0:0 (before force and offsets) */
	IMGFS_COMPARE_F_ALL_ROOT = 1u << 2,
	/* --allow-missing-end: the tar may be empty (a warning goes to
	 * @warn); overrides IMGFS_COMPARE_F_REQUIRE_END */
	IMGFS_COMPARE_F_ALLOW_MISSING_END = 1u << 3,
	/* --require-end: a tar without its end-of-archive marker is an
	 * error (by default a warning goes to @warn) */
	IMGFS_COMPARE_F_REQUIRE_END = 1u << 4,
	/* contents compared by a 128-bit XXH3 keyed with a secret drawn
	 * for the comparison, not by SHA-256: several times faster, for an
	 * image one has just made (a difference goes unseen with a chance
	 * of 2^-128; SHA-256 also resists collisions made by someone who
	 * knows the key). The image side then reads the data itself,
	 * whatever the checker hashed */
	IMGFS_COMPARE_F_FAST_CONTENT = 1u << 5,
};

struct imgfs_compare_options {
	size_t struct_size; /* sizeof(struct imgfs_compare_options) */
	unsigned int flags; /* IMGFS_COMPARE_F_* */
	/* --force-uid/--force-gid: the owner every entry got, -1 to keep */
	int64_t force_uid;
	int64_t force_gid;
	/* --uid-offset/--gid-offset: added after all-root and force */
	int64_t uid_offset;
	int64_t gid_offset;
	/* every difference, in order; may be NULL (the counts remain) */
	imgfs_compare_report_fn report;
	void *report_arg;
	/* warnings about the tar stream (reading goes on); may be NULL */
	void (*warn)(const char *msg, void *arg);
	void *warn_arg;
	/* --file-flags: what mkfs.img did with file flags a user set.
	 * Filesystem-internal flags never differ; user flags are one warning
	 * (IMGFS_FILE_FLAGS_WARN, the default: count and first entries),
	 * an "unrepresentable" difference per entry (ERROR, as mkfs.img
	 * refuses them) or nothing (IGNORE) */
	enum imgfs_file_flags file_flags;
};

struct imgfs_compare_result {
	size_t struct_size; /* set by the library (docs/architecture.md) */
	uint64_t differences; /* all kinds */
	uint64_t by_kind[IMGFS_COMPARE_NR_KINDS];
	uint64_t archive_entries; /* tar entries read */
	uint64_t image_entries; /* image paths, the root included */
};

/* Fill @o with the defaults: no flags, owners kept, no callbacks. */
IMGFS_API
void imgfs_compare_options_init(struct imgfs_compare_options *o);

/*
 * Set the conversion rules of @o (whiteouts, owners, file flags, how the
 * tar may end) to those mkfs options @m convert with, deprecated fields
 * resolved; the callbacks of @o are left as they are. The one mapping
 * from the writer's options to the comparison's.
 */
IMGFS_API
void imgfs_compare_options_set_rules(struct imgfs_compare_options *o,
				     const struct imgfs_mkfs_options *m);

/* Stable name of @kind ("missing", "content", ...), "unknown" if none. */
IMGFS_API
const char *imgfs_compare_kind_name(enum imgfs_compare_kind kind);

/*
 * Compare the open image @img with the tar at @tar_path ("-" reads
 * standard input; any compression mkfs.img reads). Every difference goes
 * to @o->report and is counted in @res. Returns 0 when the comparison ran
 * (whatever it found), or a negative errno with @err set when it could not
 * (the tar cannot be opened or is damaged or truncated, the image cannot be
 * walked, out of memory). @o may be NULL (defaults, nothing reported).
 */
IMGFS_API
int imgfs_compare_tar(struct imgfs_image *img, const char *tar_path,
		      const struct imgfs_compare_options *o,
		      struct imgfs_compare_result *res,
		      struct imgfs_error *err);

/*
 * Step by step, to compare while checking (the image data is then read
 * once): create the comparison, run imgfs_check_image() with
 * IMGFS_CHECK_F_DIGEST and imgfs_compare_check_entry() called from its
 * entry callback, then imgfs_compare_run() with the tar.
 *
 * To read the tar once while the image is made from it: create the
 * comparison without an image, give the tar (the same stream the writer
 * reads) to imgfs_compare_read_tar() or imgfs_compare_read_tar_stream()
 * in a thread of its own, then, the image finished,
 * imgfs_compare_set_image(), the check as above, and imgfs_compare_run()
 * with no tar.
 */
struct imgfs_compare;

/*
 * A new comparison of @img (which must outlive it; NULL: given later with
 * imgfs_compare_set_image()) with options @o (copied; may be NULL).
 * Returns 0 with *@c set, or -ENOMEM.
 */
IMGFS_API
int imgfs_compare_new(struct imgfs_image *img,
		      const struct imgfs_compare_options *o,
		      struct imgfs_compare **c, struct imgfs_error *err);

/*
 * Entry callback for imgfs_check_image() (@compare is the struct
 * imgfs_compare): records the image path. The checker must run with
 * IMGFS_CHECK_F_DIGEST; a regular file it gives no digest for (data
 * unreadable) is reported as a content difference if the tar has it with
 * the same size. Returns 0 or a negative errno.
 */
IMGFS_API
int imgfs_compare_check_entry(void *compare, const struct imgfs_check_entry *e);

/*
 * Read the tar at @tar_path ("-": standard input) into what the image
 * should hold, before the image is known: entries the image cannot hold
 * are reported now (from the calling thread), the rest by
 * imgfs_compare_run(). Needs nothing of the image, so it may run while the
 * image is being written. Once per comparison; 0 or a negative errno with
 * @err set (the tar cannot be opened, is damaged or truncated, or memory
 * ran out).
 */
IMGFS_API
int imgfs_compare_read_tar(struct imgfs_compare *c, const char *tar_path,
			   struct imgfs_error *err);

/*
 * The same from the tar reader @t (imgfs_tar_open(), read from its start;
 * the caller closes it), named @name in messages: for a stream that is
 * decoded once and read by the writer and the comparison alike.
 */
IMGFS_API
int imgfs_compare_read_tar_stream(struct imgfs_compare *c, struct imgfs_tar *t,
				  const char *name, struct imgfs_error *err);

/*
 * The image of a comparison created without one (it must outlive @c):
 * 0, or -EINVAL when @c has one already.
 */
IMGFS_API
int imgfs_compare_set_image(struct imgfs_compare *c, struct imgfs_image *img,
			    struct imgfs_error *err);

/*
 * Read the tar at @tar_path ("-": standard input; NULL when
 * imgfs_compare_read_tar() read it) and report every
 * difference with the image. When no entry was handed in with
 * imgfs_compare_check_entry(), the image is walked here first (and file
 * contents read only for files whose size matches the tar's). Runs once
 * per comparison. Returns as imgfs_compare_tar().
 */
IMGFS_API
int imgfs_compare_run(struct imgfs_compare *c, const char *tar_path,
		      struct imgfs_compare_result *res,
		      struct imgfs_error *err);

/* Free @c (NULL is ignored). */
IMGFS_API
void imgfs_compare_free(struct imgfs_compare *c);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_COMPARE_H */
