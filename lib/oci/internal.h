/* SPDX-License-Identifier: MIT */
/*
 * oci/internal.h - what the files of lib/oci share: digests, verified
 * blob streams, blob and file publication, the layout model (images,
 * layers, units), unit records and the per-layer conversion.
 */
#ifndef IMGFS_OCI_INTERNAL_H
#define IMGFS_OCI_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "imgfs/error.h"
#include "imgfs/compare.h"
#include "imgfs/oci.h"
#include "util/hashtab.h"
#include "util/error.h"

/* ---- digest.c: "sha256:<hex>" ---- */
#define OCI_SHA256_SIZE 32
#define OCI_DIGEST_MAX 72 /* "sha256:" + 64 hex + NUL */

struct oci_digest {
	char str[OCI_DIGEST_MAX]; /* "sha256:<64 lowercase hex>" */
	uint8_t raw[OCI_SHA256_SIZE];
};

/*
 * Nested indexes deeper than this are refused (a loop cannot be built with
 * digests, but a chain can be long). 0, or -ELOOP with @err set.
 */
#define OCI_MAX_DEPTH 16
static inline int oci_check_depth(int depth, struct imgfs_error *err)
{
	if (depth > OCI_MAX_DEPTH)
		return error_set(err, -ELOOP,
				 "indexes nested more than %d deep",
				 OCI_MAX_DEPTH);
	return 0;
}

/* Parse @s (@what names it in messages): only sha256 is accepted. */
int oci_digest_parse(const char *s, struct oci_digest *d, const char *what,
		     struct imgfs_error *err);
void oci_digest_from_raw(struct oci_digest *d,
			 const uint8_t raw[OCI_SHA256_SIZE]);
static inline const char *oci_digest_hex(const struct oci_digest *d)
{
	return d->str + 7;
}

/*
 * Documents met before, by digest and a caller's tag: a walk visits each
 * once (an index may name the next one many times over, many levels
 * deep), with what the first visit gave.
 */
struct oci_memo_entry {
	struct imgfs_hnode node;
	struct oci_memo_entry *next_all;
	struct oci_digest key;
	int tag;
	int ret; /* the first visit's result */
	struct oci_digest out; /* what it wrote, if anything */
	uint64_t out_size;
};
struct oci_memo {
	struct imgfs_hashtab t;
	struct oci_memo_entry *all;
};
struct oci_memo_entry *oci_memo_find(struct oci_memo *m,
				     const struct oci_digest *d, int tag);
/* NULL when out of memory */
struct oci_memo_entry *oci_memo_add(struct oci_memo *m,
				    const struct oci_digest *d, int tag);
void oci_memo_free(struct oci_memo *m);

struct oci_hash;
struct oci_hash *oci_hash_new(void);
void oci_hash_update(struct oci_hash *h, const void *buf, size_t len);
void oci_hash_final(struct oci_hash *h, struct oci_digest *d);
void oci_hash_free(struct oci_hash *h);
int oci_sha256_buf(const void *buf, size_t len, struct oci_digest *d);
/* UUIDv5 in the URL namespace of @name (RFC 9562) */
int oci_uuid5_url(const char *name, uint8_t uuid[16]);

/* ---- open.c: files under a directory, no link followed ---- */

/*
 * JSON documents (oci-layout, index.json, indexes, manifests, configs,
 * unit records) larger than this are refused (docs/oci.md).
 */
#define OCI_JSON_MAX (8u << 20)

/* @rel under @dirfd: no symlink, nothing outside. fd or -errno. */
int oci_openat(int dirfd, const char *rel, int flags, mode_t mode);
/* @rel under the directory @root (itself opened as any path) */
int oci_open(const char *root, const char *rel, int flags, mode_t mode);
/* 0 if @fd is a regular file (then made blocking), else -EINVAL/-errno */
int oci_fd_regular(int fd);
/* A regular file @root/@rel for reading: fd, or -errno with @err set. */
int oci_open_file(const char *root, const char *rel, struct imgfs_error *err);
/* The directory @root/@rel (made with @create): fd or -errno, @err set. */
int oci_dir_open(const char *root, const char *rel, bool create,
		 struct imgfs_error *err);
/* All of @fd (at most @max bytes, else -EFBIG), NUL-terminated. */
int oci_read_fd(int fd, uint64_t max, char **buf, size_t *len, const char *what,
		struct imgfs_error *err);
/* @len bytes of @buf as exactly one JSON object: 0, -EINVAL, -ENOMEM */
int oci_json_parse(const char *buf, size_t len, struct json_object **out);
/*
 * The JSON object in the regular file @root/@rel (at most OCI_JSON_MAX):
 * -ENOENT if absent, -EBADMSG if not one JSON object, else -errno.
 */
int oci_read_json_file(const char *root, const char *rel,
		       struct json_object **out, struct imgfs_error *err);
/*
 * The layer annotations a runtime reads to set up dm-verity over an EROFS
 * layer with an appended tree: containerd's sidecar fields (roothash,
 * hashoffset) under an org.erofs prefix.
 */
#define OCI_ANN_VERITY_ROOT "org.erofs.dmverity.roothash"
#define OCI_ANN_VERITY_OFFSET "org.erofs.dmverity.hashoffset"

/*
 * The conversion rules a layer was made with (rules.c), so that a check
 * of the layout replays them: text of at most OCI_RULES_MAX bytes.
 */
#define OCI_ANN_RULES "org.imgfs.conversion-rules"
#define OCI_RULES_MAX 256
int oci_rules_text(const struct imgfs_compare_options *co, char *buf,
		   size_t size);
/* The text of the rules the layers of @o are converted with. */
int oci_rules_of(const struct imgfs_oci_options *o, char *buf, size_t size);
/* The mkfs options of @o into @m: *o->mkfs, or the defaults (oci.c). */
void oci_mkfs_of(const struct imgfs_oci_options *o,
		 struct imgfs_mkfs_options *m);
/* Add the rules of @text to @co: 0, or -EINVAL (unknown rule, bad value). */
int oci_rules_parse(const char *text, struct imgfs_compare_options *co);

/* ---- blob.c: reading verified, writing atomically ---- */

/* "<root>/blobs/sha256/<hex>" (malloc'd) */
char *oci_blob_path(const char *root, const struct oci_digest *d);

/* A blob opened for a streaming read checked against digest and size. */
struct oci_blob_reader {
	int fd;
	struct oci_hash *h;
	uint64_t size; /* read so far */
	uint64_t want_size;
	struct oci_digest want;
	bool failed;
};
int oci_blob_open(const char *root, const struct oci_digest *d, uint64_t size,
		  struct oci_blob_reader *r, struct imgfs_error *err);
/* the blob stored as @root/@rel (a cache image) */
int oci_blob_open_at(const char *root, const char *rel,
		     const struct oci_digest *d, uint64_t size,
		     struct oci_blob_reader *r, struct imgfs_error *err);
/* the blob at @path: its last component is not followed */
int oci_blob_open_path(const char *path, const struct oci_digest *d,
		       uint64_t size, struct oci_blob_reader *r,
		       struct imgfs_error *err);
/* Up to @len bytes; 0 at the end. Reading past the size is an error. */
ssize_t oci_blob_read(struct oci_blob_reader *r, void *buf, size_t len,
		      struct imgfs_error *err);
/* Read what is left, then check size and digest. */
int oci_blob_finish(struct oci_blob_reader *r, struct imgfs_error *err);

/* Write all of @buf to @fd; an error names @what. 0 or -errno. */
int oci_write_all(int fd, const void *buf, size_t len, const char *what,
		  struct imgfs_error *err);
void oci_blob_close(struct oci_blob_reader *r);

/* A whole (small) blob in memory, verified, NUL-terminated. */
int oci_blob_load(const char *root, const struct oci_digest *d, uint64_t size,
		  char **buf, struct imgfs_error *err);

/*
 * An unnamed file in @root/@reldir, made if missing (O_TMPFILE; else a
 * temporary name that oci_tmpname_parse() reads, see below).
 */
struct oci_tmpfile {
	int fd;
	int dirfd;
	char *dir; /* for messages */
	char *tmpname; /* only without O_TMPFILE */
};
int oci_tmpfile_open(const char *root, const char *reldir,
		     struct oci_tmpfile *t, struct imgfs_error *err);
/*
 * Give the file the name @name in its directory. With @replace an
 * existing file is replaced atomically (link under a temporary name,
 * rename); without (content-addressed names), an existing file is kept
 * only if its SHA-256 is its name, else replaced.
 */
int oci_tmpfile_publish(struct oci_tmpfile *t, const char *name, bool replace,
			bool sync, struct imgfs_error *err);
void oci_tmpfile_close(struct oci_tmpfile *t);
/*
 * Temporary names ".imgfs-XXXXXX-<pid>@<host>": parse one (false if
 * @name is not one); is it a dead writer's (this host, no such process)?
 */
bool oci_tmpname_parse(const char *name, long *pid, char *host, size_t size);
bool oci_tmpname_dead(const char *name);
/*
 * The temporary files of @root/@rel, each told to @fn: with @remove only
 * the dead writers' ones, removed. Returns how many.
 */
int oci_tmpname_scan(const char *root, const char *rel, bool remove,
		     imgfs_warn_fn fn, void *arg);

/* Write @buf as a blob of @root (digest into @d). */
int oci_blob_write(const char *root, const void *buf, size_t len,
		   struct oci_digest *d, bool sync, struct imgfs_error *err);
/* Write @buf as @root/@reldir/@name, atomically replacing it. */
int oci_file_write(const char *root, const char *reldir, const char *name,
		   const void *buf, size_t len, bool sync,
		   struct imgfs_error *err);
/* Copy (or hard-link) a blob of @src into @dst, verified. */
int oci_blob_copy(const char *src, const char *dst, const struct oci_digest *d,
		  uint64_t size, bool sync, struct imgfs_error *err);
/* the same from the file @sroot/@srel (a cache image) */
int oci_blob_copy_at(const char *sroot, const char *srel, const char *dst,
		     const struct oci_digest *d, uint64_t size, bool sync,
		     struct imgfs_error *err);
/* JSON text of @o, with the fixed flags every written document uses */
const char *oci_json_text(struct json_object *o, size_t *len);

/* ---- layout.c: the source layout as images, layers and units ---- */

enum oci_layer_kind {
	OCI_LAYER_TAR = 0, /* converted */
	OCI_LAYER_NONDIST, /* non-distributable: kept, with a warning */
	OCI_LAYER_OTHER, /* EROFS already, or unknown: kept */
};

struct oci_unit {
	struct oci_digest diff_id;
	struct oci_digest blob; /* smallest source blob digest with it */
	uint64_t blob_size;
	char *media_type;
	/* the result once present (converted or found) */
	bool have;
	bool converted_now;
	bool verified; /* checked and compared with its source */
	/* present, but made with --no-verify and this run verifies */
	bool unverified_only;
	/* found, and trusted without the check and comparison */
	bool reused_unverified;
	/* its source blob was read this run: digest, size and diffID */
	bool src_checked;
	struct oci_digest out; /* layer blob */
	uint64_t out_size;
	struct oci_digest out_diff_id; /* sha256 of the uncompressed image */
	char *out_media_type;
	/* --dm-verity: the tree's root hash (hex, "" without) and offset */
	char verity_root[65];
	uint64_t verity_offset;
	uint64_t index, total; /* place among the units converted (progress) */
	int err; /* conversion failure */
	char *err_msg;
};

struct oci_layout {
	char *root;
	struct json_object *index; /* index.json */
	struct oci_unit *units; /* sorted by diffID */
	size_t nr_units, cap_units;
	/* other source blobs with a unit's diffID (checked, not converted) */
	struct oci_unit *extra;
	size_t nr_extra;
	size_t nr_images; /* manifests selected (referrers apart) */
	const struct imgfs_oci_options *o;
};

int oci_layout_open(const char *root, const struct imgfs_oci_options *o,
		    struct oci_layout *l, struct imgfs_error *err);
void oci_layout_free(struct oci_layout *l);
/* the unit of @diff_id, NULL if none */
struct oci_unit *oci_layout_unit(struct oci_layout *l,
				 const struct oci_digest *diff_id);
enum oci_layer_kind oci_layer_kind(const char *media_type);
/* how many layers of the array @layers are tar layers (converted) */
size_t oci_tar_layers(struct json_object *layers);
bool oci_is_index_type(const char *mt);
bool oci_is_manifest_type(const char *mt);
/* does descriptor/config platform @p match the selection? */
bool oci_platform_selected(const struct imgfs_oci_options *o,
			   struct json_object *p, bool from_config);
bool oci_ref_selected(const struct imgfs_oci_options *o,
		      struct json_object *desc);
/* read a descriptor's digest and size */
int oci_desc_get(struct json_object *desc, struct oci_digest *d, uint64_t *size,
		 const char **media_type, const char *what,
		 struct imgfs_error *err);
/* load and parse a JSON blob (verified) */
int oci_json_load(const char *root, const struct oci_digest *d, uint64_t size,
		  struct json_object **out, struct imgfs_error *err);
/* the member @key of the object @o; NULL when @o is none or lacks it */
struct json_object *oci_json_get(struct json_object *o, const char *key);
const char *oci_json_str(struct json_object *o, const char *key);

/* ---- cache.c: unit records ---- */

/* the options digest: the SHA-256 of the canonical text below */
/* The caller's options checked by the struct_size rule (oci.c). */
int oci_options_in(const struct imgfs_oci_options *o, struct imgfs_error *err);
int oci_options_digest(const struct imgfs_oci_options *o, struct oci_digest *d,
		       struct imgfs_error *err);
/* the canonical text of the options (one line each; malloc'd) */
int oci_options_text(const struct imgfs_oci_options *o, char **text,
		     struct imgfs_error *err);
/* DST/.imgfs/options/<hex>.txt: the text of the options digest @d */
int oci_options_note(const struct imgfs_oci_options *o, const char *dst,
		     const struct oci_digest *d, bool sync,
		     struct imgfs_error *err);
/*
 * When units missing from @dst were converted there with other options:
 * a message naming the option lines that differ (malloc'd), else NULL.
 */
char *oci_options_mismatch(const struct imgfs_oci_options *o, const char *dst,
			   const struct oci_digest *d, char *const *diff_ids,
			   size_t n);
/* look for the unit's record in @dir (a layout or cache dir) */
int oci_record_load(const char *dir, const struct oci_digest *opts,
		    struct oci_unit *u, struct imgfs_error *err);
int oci_record_store(const char *dir, const struct oci_digest *opts,
		     const struct oci_unit *u, bool sync,
		     struct imgfs_error *err);
/* containerd's layer_content_caches name of the unit's image, under DIR */
void oci_cache_image_rel(const struct oci_digest *diff_id, char rel[96]);

/* ---- convert.c: one unit ---- */
struct oci_run {
	const char *src;
	const char *dst;
	const struct imgfs_oci_options *o;
	struct oci_digest opts_digest;
	bool sync;
	pthread_mutex_t *progress_lock; /* one progress call at a time */
};
/* Report @ev for @u through o->progress (serialised), and o->event. */
void oci_progress(const struct oci_run *run, const struct oci_unit *u,
		  enum imgfs_oci_event ev, uint64_t bytes_read,
		  const char *msg);
int oci_unit_convert(const struct oci_run *run, struct oci_unit *u,
		     struct imgfs_error *err);
/* the image @fd of a unit found: checked and compared with its source */
int oci_unit_verify(const struct oci_run *run, struct oci_unit *u, int fd,
		    struct imgfs_error *err);

/* ---- dst.c: the destination's lock and earlier index.json ---- */

/* DST/.imgfs/lock: shared (waits) or exclusive (fails with -EBUSY). */
int oci_lock(const char *dst, bool exclusive, int *fd, struct imgfs_error *err);
void oci_unlock(int fd);
/*
 * The manifests array of @dst/index.json (a new reference), validated:
 * descriptors whose documents are there. *@entries NULL when absent.
 */
int oci_dst_index_load(const char *dst, struct json_object **entries,
		       struct imgfs_error *err);
/* @olds with entries of @news' ref names replaced, then the rest of @news */
struct json_object *oci_index_merge(struct json_object *olds,
				    struct json_object *news);

/* ---- assemble.c ---- */
int oci_assemble(const struct oci_run *run, struct oci_layout *l,
		 struct imgfs_oci_stats *st, struct imgfs_error *err);

#endif /* IMGFS_OCI_INTERNAL_H */
