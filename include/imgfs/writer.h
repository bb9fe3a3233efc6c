/* SPDX-License-Identifier: MIT */
/*
 * imgfs/writer.h - building an EROFS image from tar layers, directories
 * or entries described one by one.
 *
 * One call per job: imgfs_convert() turns a tar layer (a file, standard
 * input or a descriptor) or a directory into an image file, put in place
 * only once it is complete.
 *
 * Step by step: fill a struct imgfs_mkfs_options (imgfs_mkfs_options_init()
 * sets the defaults), create a writer on an open, empty, seekable output
 * file, feed it entries, then call imgfs_writer_finish(). Entries come
 * from tar streams (imgfs_writer_add_tar()), directory trees
 * (imgfs_writer_add_directory()), or the caller itself through the entry
 * calls (imgfs_writer_add_entry(), imgfs_writer_begin_file(),
 * imgfs_writer_append(), imgfs_writer_end_file()), which need no
 * libarchive; the tar and directory intakes are built on them. File data
 * is written to the output as it arrives; only metadata (names, inodes,
 * xattrs) is kept in memory until finish.
 *
 * Writers share nothing: several may run at once in different threads.
 */
#ifndef IMGFS_WRITER_H
#define IMGFS_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/api.h"
#include "imgfs/error.h"
#include "imgfs/verity.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imgfs_writer;

enum imgfs_whiteout_mode {
	IMGFS_WHITEOUT_OVERLAY = 0, /* .wh.X -> char 0:0, .wh..wh..opq -> opaque xattr */
	IMGFS_WHITEOUT_KEEP = 1, /* store .wh.* entries verbatim */
};

enum imgfs_compr_kind {
	IMGFS_COMPRESS_NONE = 0,
	IMGFS_COMPRESS_LZ4,
	IMGFS_COMPRESS_LZ4HC,
	IMGFS_COMPRESS_LZMA,
	IMGFS_COMPRESS_DEFLATE,
	IMGFS_COMPRESS_ZSTD,
};

/* Progress report, called at most a few times a second. */
struct imgfs_progress {
	uint64_t entries;
	uint64_t bytes_in; /* file data bytes read so far */
	/* a tar source: its bytes read so far as stored (compressed or
	 * not), and its size when it is a regular file (0: unknown), for a
	 * percentage */
	uint64_t source_bytes;
	uint64_t source_size;
};
typedef void (*imgfs_progress_fn)(const struct imgfs_progress *p, void *arg);

/*
 * Most compression worker threads. Memory does not grow with their number:
 * at most one encoder per online CPU exists at once.
 */
#define IMGFS_MAX_WORKERS 256u

typedef void (*imgfs_warn_fn)(const char *msg, void *arg);

/*
 * File flags (chattr attributes, pax SCHILY.fflags) a user set on an
 * entry (immutable, append-only, nodump, noatime, ...): EROFS has no place
 * for them and no runtime applies them from a layer, so they are dropped;
 * this says what is said about it. Filesystem-internal flags (ext4's
 * extent, huge_file, index, inline_data, ...) are always dropped without a
 * word (lib/source/fflags.c lists both kinds).
 */
enum imgfs_file_flags {
	IMGFS_FILE_FLAGS_WARN = 0, /* one warning at the end (default) */
	IMGFS_FILE_FLAGS_ERROR, /* an entry carrying any is an error */
	IMGFS_FILE_FLAGS_IGNORE, /* dropped without a word */
};

/* Modification times against the build time (struct imgfs_mkfs_options). */
enum imgfs_mtime_policy {
	IMGFS_MTIME_KEEP = 0, /* each entry's own (default) */
	IMGFS_MTIME_BUILD_TIME, /* every inode takes the build time */
	IMGFS_MTIME_CLAMP, /* none later than the build time */
};

/*
 * Tar-index images (imgfs_mkfs_options.tar_index): file data is not copied
 * into the image; each regular file's chunks point into the tar itself,
 * which lies right after the index (a device-table entry maps it there,
 * as mkfs.erofs --tar=i lays it out). Blocks are 512 bytes, where tar data
 * lies. The bytes after the index are the uncompressed tar, byte for
 * byte, so their SHA-256 is the layer's diffID.
 */
enum imgfs_tar_index {
	IMGFS_TAR_INDEX_NONE = 0, /* file data copied into the image */
	IMGFS_TAR_INDEX_ONLY, /* the index alone: the caller appends the tar */
	IMGFS_TAR_INDEX_APPEND, /* index followed by the tar, in one pass */
};

struct imgfs_mkfs_options {
	size_t struct_size; /* sizeof(struct imgfs_mkfs_options) */
	unsigned int blkszbits; /* 9..12, default 12 (4096) */
	bool inline_data; /* tail-inline regular file data (default off) */
	enum imgfs_whiteout_mode whiteouts;
	bool all_root; /* uid = gid = 0 for every entry */
	int64_t force_uid; /* -1: keep */
	int64_t force_gid; /* -1: keep */
	int64_t uid_offset; /* added to every uid (after force/all_root) */
	int64_t gid_offset;
	bool have_build_time;
	int64_t build_time; /* seconds; default: now */
	bool have_uuid;
	uint8_t uuid[16]; /* default: random */
	char label[17]; /* volume name, up to 16 bytes */
	unsigned int shared_xattr_min; /* share an xattr used by >= this many inodes (0: never) */
	/* compression (NONE by default) */
	enum imgfs_compr_kind compress;
	int compress_level; /* -1: algorithm default */
	uint32_t compress_dictsize; /* lzma/zstd: 0 = default */
	uint32_t pcluster_size; /* bytes, 0 = one block */
	unsigned int workers; /* 1..IMGFS_MAX_WORKERS, 0 = online CPUs */
	bool ztailpacking;
	bool fragments;
	imgfs_progress_fn progress;
	void *progress_arg;
	/* deprecated: the same as file_flags = IMGFS_FILE_FLAGS_IGNORE */
	bool ignore_file_flags;
	/* warnings (conversion goes on); NULL: none are reported */
	imgfs_warn_fn warn;
	void *warn_arg;
	/* an empty input is an error unless this is set (it is then a
	 * warning and an empty layer); it also overrides require_end: see
	 * struct imgfs_tar_options (imgfs/source.h) */
	bool allow_missing_end;
	/* a tar stream that ends at an entry boundary without its
	 * end-of-archive blocks is an error, not a warning */
	bool require_end;
	/* do not fsync the image before renaming it into place */
	bool no_fsync;
	/* mtimes against the build time: mkfs.erofs's -T alone sets them
	 * all, its SOURCE_DATE_EPOCH clamps them */
	enum imgfs_mtime_policy mtime_policy;
	/* append a dm-verity hash tree (docs/format.md, lib/verity) */
	bool dm_verity;
	/*
	 * Its data block size: 0 = the image's block size, which it must
	 * not exceed (a dm-verity device has blocks of this size, and EROFS
	 * mounts only with blocks at least as large as the device's).
	 * Hash blocks are 4096 bytes; the tree starts at the image size
	 * rounded up to 4096, where "veritysetup format --hash-offset"
	 * would put it.
	 */
	uint32_t dm_verity_data_block_size;
	/*
	 * Salt and verity superblock UUID. Unless given, both are derived
	 * from the image's UUID and build time: the same input and options
	 * (with -U and -T) give the same tree and root hash.
	 */
	bool dm_verity_have_salt;
	size_t dm_verity_salt_size; /* 0: no salt (veritysetup --salt=-) */
	uint8_t dm_verity_salt[IMGFS_VERITY_SALT_MAX];
	bool dm_verity_have_uuid;
	uint8_t dm_verity_uuid[16];
	/* imgfs_convert(): do not write the sidecar IMAGE.dmverity */
	bool dm_verity_no_sidecar;
	/* tar-index: file data points into the tar instead of being copied
	 * (see enum imgfs_tar_index). Takes one tar stream through
	 * imgfs_writer_add_tar() (plus entries without data), 512-byte
	 * blocks whatever blkszbits says, no compression. With APPEND the
	 * tar's uncompressed bytes are kept in an unlinked file in $TMPDIR
	 * while it is read, and copied after the index at finish. */
	enum imgfs_tar_index tar_index;
	/* file flags a user set on an entry: warn (default), error or
	 * ignore (see enum imgfs_file_flags) */
	enum imgfs_file_flags file_flags;
};

/* Statistics returned by imgfs_writer_finish(). */
struct imgfs_mkfs_stats {
	size_t struct_size; /* set by the library (docs/architecture.md) */
	uint64_t entries; /* archive entries consumed */
	uint64_t inodes; /* inodes in the image */
	uint64_t data_bytes; /* file data bytes read */
	uint64_t image_bytes; /* final image size */
	/* opts.dm_verity: the tree after the image (root hash, hash offset,
	 * hash_end: the file size) */
	struct imgfs_verity_result dm_verity;
	/* image bytes taken by file data in blocks (compressed or not;
	 * tails inlined with their inode not counted): data_bytes divided
	 * by this is the compression ratio */
	uint64_t stored_data_bytes;
	/* zeros written to fill blocks up to their end (alignment waste) */
	uint64_t padding_bytes;
};

/*
 * Compressor names, as -z takes them: "lz4", "lz4hc", "lzma", "deflate",
 * "zstd". The name of @kind (NULL for none or an unknown one); the kind
 * named @name into *@kind: 0, or -1 when no compressor has that name.
 */
IMGFS_API
const char *imgfs_compress_kind_name(enum imgfs_compr_kind kind);
IMGFS_API
int imgfs_compress_kind_parse(const char *name, enum imgfs_compr_kind *kind);

/* Fill @opts with the defaults. */
IMGFS_API
void imgfs_mkfs_options_init(struct imgfs_mkfs_options *opts);

/*
 * Check @opts as imgfs_writer_create() would, and more strictly: also a
 * pcluster size given without compression, and any option that has no
 * effect with the others (imgfs_mkfs_options_unused()). For front ends,
 * to report a bad option value before any work; the message states the
 * valid range, or why the option does nothing. Returns 0 or a negative
 * errno with @err set.
 */
IMGFS_API
int imgfs_mkfs_options_check(const struct imgfs_mkfs_options *opts,
			     struct imgfs_error *err);

/*
 * Options set in @opts that have no effect with the others: -C,
 * ztailpacking, fragments or workers without compression, inline data on
 * a tar-index image or with fragments, ztailpacking with fragments. Each
 * one is reported to @report (when not NULL) in one sentence naming it
 * and saying why; returns how many there are. imgfs_mkfs_options_check()
 * refuses them; imgfs_writer_create() reports them through opts->warn.
 */
IMGFS_API
unsigned int imgfs_mkfs_options_unused(const struct imgfs_mkfs_options *opts,
				       imgfs_warn_fn report, void *arg);

/*
 * Create a writer that will write the image to @fd (a regular file open for
 * reading and writing, positioned anywhere; the writer uses pwrite and
 * truncates it). The options are copied. Returns NULL with @err set on bad
 * options or no memory.
 */
IMGFS_API
struct imgfs_writer *imgfs_writer_create(const struct imgfs_mkfs_options *opts,
					 int fd, struct imgfs_error *err);

struct imgfs_tar;

/*
 * Read every entry of the tar stream @t (see imgfs/source.h) into the image
 * being built, with the end-of-archive and trailing-data rules of
 * struct imgfs_tar_options (opts.allow_missing_end and opts.require_end, warnings
 * through opts.warn).
 * Returns 0, or a negative errno with @err naming the entry and the reason
 * (unrepresentable entry, name too long, corrupt archive, I/O error); after
 * a failure the writer can only be destroyed. @t is not closed.
 */
IMGFS_API
int imgfs_writer_add_tar(struct imgfs_writer *w, struct imgfs_tar *t,
			 struct imgfs_error *err);

/*
 * Read the directory tree at @path (not following symlinks, not crossing
 * into other filesystems' semantics: entries are taken as they are) into
 * the image, with the same rules as archive entries; @path itself becomes
 * the image root. Hard links inside the tree are preserved.
 */
IMGFS_API
int imgfs_writer_add_directory(struct imgfs_writer *w, const char *path,
			       struct imgfs_error *err);

/* One extended attribute of an entry: @size bytes at @value. */
struct imgfs_xattr_pair {
	const char *name; /* with its namespace: "user.x", "trusted.y" */
	const void *value;
	size_t size;
};

/* A range of a file that holds data (see struct imgfs_entry.sparse). */
struct imgfs_data_range {
	uint64_t offset;
	uint64_t length;
};

/*
 * One entry of the image, as the entry calls take it. Nothing is kept
 * of the strings and arrays after the call that takes the entry returns.
 * Everything the options say applies as for tar entries: ownership
 * mapping (all_root, force_*, *_offset), whiteouts, ignore rules.
 */
struct imgfs_entry {
	size_t struct_size; /* sizeof(struct imgfs_entry) */
	/* path in the image, with the tar path rules (README, "Paths"):
	 * leading "/" and "./" dropped, ".." clamped at the root, a path
	 * ending in "/", "." or ".." only for a directory; "" or "/" is the
	 * root directory itself */
	const char *path;
	/* file type and permission bits as in st_mode (S_IFREG | 0644, ...);
	 * ignored for hard links */
	uint32_t mode;
	/* owner before the options' mapping; after it both must lie in
	 * 0..2^32-1 */
	int64_t uid;
	int64_t gid;
	/* modification time, counted from the earlier whole second (-1.5 s
	 * is mtime -2, mtime_nsec 500000000); without have_mtime the build
	 * time is used */
	bool have_mtime;
	int64_t mtime;
	uint32_t mtime_nsec; /* 0..999999999 */
	/* character and block devices: at most 4095:1048575 */
	uint64_t rdev_major;
	uint64_t rdev_minor;
	/* symbolic links: the target, 1 to 4095 bytes */
	const char *symlink;
	/* hard links: the path of an entry added before or after this one
	 * (not a directory); the entry then takes nothing else but @path */
	const char *hardlink;
	/* extended attributes, POSIX ACLs as system.posix_acl_* values */
	const struct imgfs_xattr_pair *xattrs;
	size_t nr_xattrs;
	/* regular files: the size; exactly this many bytes must be given
	 * through imgfs_writer_append() and imgfs_writer_skip() */
	uint64_t size;
	/* regular files: the ranges that hold data, when the file has holes.
	 * With nr_sparse > 0 the file is stored in chunks and what is
	 * skipped with imgfs_writer_skip() stays a hole in the image (at
	 * most block size x 2^31 bytes); without, skipped ranges are
	 * stored as zeros. The map chooses the chunk size only. */
	const struct imgfs_data_range *sparse;
	size_t nr_sparse;
};

/*
 * Add an entry that takes no data: a directory, symbolic link, device,
 * FIFO, socket, hard link, or an empty regular file. A later entry for
 * the same path replaces an earlier one, except that a directory entry
 * for an existing directory only updates its metadata and keeps its
 * children; missing parent directories are created (mode 0755, owner
 * 0:0, the build time). With IMGFS_WHITEOUT_OVERLAY, "dir/.wh.NAME"
 * becomes the overlayfs whiteout of NAME and "dir/.wh..wh..opq" makes
 * dir opaque. Returns 0, or a negative errno with @err naming the entry
 * and the reason; after a failure the writer can only be destroyed.
 */
IMGFS_API
int imgfs_writer_add_entry(struct imgfs_writer *w, const struct imgfs_entry *e,
			   struct imgfs_error *err);

/*
 * Add entry @e as imgfs_writer_add_entry() does and open it for its data:
 * exactly @e->size bytes follow through imgfs_writer_append() and
 * imgfs_writer_skip(), in file order, then imgfs_writer_end_file(). Data
 * goes to the image (or to the compressors) as it is given: memory does
 * not grow with it. Only one file is open at a time, and no other entry
 * may be added meanwhile. A whiteout's data is accepted and dropped.
 */
IMGFS_API
int imgfs_writer_begin_file(struct imgfs_writer *w, const struct imgfs_entry *e,
			    struct imgfs_error *err);

/* The next @len bytes of the open file. */
IMGFS_API
int imgfs_writer_append(struct imgfs_writer *w, const void *buf, size_t len,
			struct imgfs_error *err);

/*
 * Skip the next @len bytes of the open file: they read back as zeros,
 * and are a hole in the image when the entry has a sparse map.
 */
IMGFS_API
int imgfs_writer_skip(struct imgfs_writer *w, uint64_t len,
		      struct imgfs_error *err);

/* Close the open file; it is an error if fewer than its size bytes came. */
IMGFS_API
int imgfs_writer_end_file(struct imgfs_writer *w, struct imgfs_error *err);

/*
 * Lay out and write all metadata and the superblock, then, with
 * opts.dm_verity, the dm-verity tree after the image (its root hash and
 * hash offset in stats->dm_verity; imgfs_convert() also writes the
 * sidecar). The image is complete (but not fsynced) on success. @stats
 * may be NULL.
 */
IMGFS_API
int imgfs_writer_finish(struct imgfs_writer *w, struct imgfs_mkfs_stats *stats,
			struct imgfs_error *err);

/* Free the writer and everything it owns. Does not close the fd. */
IMGFS_API
void imgfs_writer_destroy(struct imgfs_writer *w);

/*
 * Leave the file at @path, if one exists, out of directory sources added
 * afterwards (as the writer's own output file always is): an image being
 * replaced that lies inside the tree must not end up in the new image.
 * Returns 0, or a negative errno with @err set.
 */
IMGFS_API
int imgfs_writer_exclude_path(struct imgfs_writer *w, const char *path,
			      struct imgfs_error *err);

/*
 * Image output files. imgfs_output_open() checks the target and creates
 * the file the image is written to, in the target's directory, before any
 * work starts; imgfs_output_commit() syncs it and puts it in place of the
 * target; imgfs_output_abort() frees the handle and, unless committed,
 * discards the file, leaving the target as it was.
 *
 * The file has no name until committed (O_TMPFILE), so a run that is
 * killed leaves nothing behind; only on filesystems without O_TMPFILE is
 * it created under a short hidden name (".imgfs-XXXXXX").
 */
struct imgfs_output;

/*
 * Check @target and create the output file. The target may be missing or
 * a regular file; anything else (directory, device, FIFO, socket,
 * symbolic link) is refused with a message saying what it is. Its
 * directory must exist and be writable. Returns NULL with @err set.
 */
IMGFS_API
struct imgfs_output *imgfs_output_open(const char *target,
				       struct imgfs_error *err);

/* The descriptor to build the image on (owned by @o). */
IMGFS_API
int imgfs_output_fd(const struct imgfs_output *o);

/*
 * The path of the file while it has a temporary name (only on
 * filesystems without O_TMPFILE), for a caller that must remove it from a
 * signal handler; NULL when it has none.
 */
IMGFS_API
const char *imgfs_output_temp_path(const struct imgfs_output *o);

/*
 * fsync the file, give it the target's name (atomically replacing a file
 * there: an unnamed file is first linked under a short temporary name,
 * which is then renamed over the target) and fsync the directory. Returns
 * 0 or a negative errno with @err set; on failure the target is as it was
 * unless only the final directory fsync failed.
 */
IMGFS_API
int imgfs_output_commit(struct imgfs_output *o, struct imgfs_error *err);

/*
 * Whether imgfs_output_commit() fsyncs the file and its directory (the
 * default). Without, the rename is as atomic for other processes but the
 * data may not survive a crash: for callers that sync themselves.
 */
IMGFS_API
void imgfs_output_set_sync(struct imgfs_output *o, bool sync);

/* Free @o (may be NULL); an uncommitted file is removed. */
IMGFS_API
void imgfs_output_abort(struct imgfs_output *o);

/*
 * What a caller of imgfs_convert() may do on the way (every member may be
 * NULL): learn the output file's temporary name, to remove it from a
 * signal handler (NULL when the file has no name until it is committed,
 * the usual case), and look at the complete image before it is put in
 * place (a check; returning a negative errno with @err set discards it).
 */
struct imgfs_convert_hooks {
	size_t struct_size; /* sizeof(struct imgfs_convert_hooks) */
	void (*created)(const char *temp_path, void *arg);
	int (*before_commit)(int fd, void *arg, struct imgfs_error *err);
	void *arg;
};

/*
 * Convert @source (a tar layer, plain or compressed; "-" for standard
 * input; or a directory) into an image at @image_path with options @o:
 * the target is checked first (imgfs_output_open()), the image is built
 * in an unnamed file in the target's directory, synced (unless
 * @o->no_fsync) and renamed over the target only when complete. A
 * source that is the target itself is refused; an image being replaced
 * inside a directory source is left out. Returns 0 with @stats (may be
 * NULL) filled in, or a negative errno with @err set; on failure nothing
 * new is left behind and an existing file at @image_path is untouched.
 * @hooks may be NULL.
 */
IMGFS_API
int imgfs_convert(const char *source, const char *image_path,
		  const struct imgfs_mkfs_options *o,
		  const struct imgfs_convert_hooks *hooks,
		  struct imgfs_mkfs_stats *stats, struct imgfs_error *err);

/* The same for the tar stream on descriptor @tar_fd (left open). */
IMGFS_API
int imgfs_convert_fd(int tar_fd, const char *image_path,
		     const struct imgfs_mkfs_options *o,
		     const struct imgfs_convert_hooks *hooks,
		     struct imgfs_mkfs_stats *stats, struct imgfs_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_WRITER_H */
