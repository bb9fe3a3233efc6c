/* SPDX-License-Identifier: MIT */
/*
 * imgfs/oci.h - converting an OCI image layout into an OCI image layout
 * of EROFS layers (docs/oci.md).
 *
 * The work unit is one distinct source layer, named by its diffID (the
 * SHA-256 of its uncompressed tar). A unit is converted once per options
 * digest (a SHA-256 over the options that change the image bytes) and
 * recorded in the destination layout (and a cache directory if given),
 * so that later runs, other images and other shards reuse it. Converting
 * and assembling (configs, manifests, indexes) are separate steps:
 * imgfs_oci_convert() does both, imgfs_oci_convert_units() the first for
 * one shard, imgfs_oci_assemble() the second.
 *
 * Every blob read is checked against its digest and size while it
 * streams; nothing derived from unverified bytes is published, and every
 * file is written under a temporary name (or none) and renamed into
 * place, so concurrent runs into one destination are safe and a killed
 * run leaves no partial file under a final name.
 */
#ifndef IMGFS_OCI_H
#define IMGFS_OCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/api.h"
#include "imgfs/check.h"
#include "imgfs/compare.h"
#include "imgfs/error.h"
#include "imgfs/writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Media type of the converted layers. */
enum imgfs_oci_layer_type {
	/* application/vnd.erofs.layer.v1: the image as it is (containerd) */
	IMGFS_OCI_LAYER_EROFS = 0,
	/* application/vnd.erofs.layer.v1+zstd: the image in zstd frames,
	 * with the annotation org.erofs.uncompressed-digest */
	IMGFS_OCI_LAYER_EROFS_ZSTD,
	/* application/vnd.erofs: the draft erofs-image-spec's type */
	IMGFS_OCI_LAYER_EROFS_DRAFT,
};

/* Stable media type string of @t (NULL for an unknown value). */
IMGFS_API
const char *imgfs_oci_layer_media_type(enum imgfs_oci_layer_type t);

/* Parse a media type string into *@t: 0, or -EINVAL. */
IMGFS_API
int imgfs_oci_layer_type_parse(const char *s, enum imgfs_oci_layer_type *t);

/* One event of a run, for a front end's progress lines. */
enum imgfs_oci_event {
	IMGFS_OCI_UNIT_CONVERTED = 0, /* converted (and verified) now */
	IMGFS_OCI_UNIT_REUSED, /* found in the destination or the cache */
	IMGFS_OCI_LAYER_KEPT, /* a layer left as it is (warning given) */
	/* only through imgfs_oci_progress_fn: */
	IMGFS_OCI_UNIT_STARTED, /* a conversion begins */
	IMGFS_OCI_UNIT_READ, /* bytes_read of the source blob so far */
	IMGFS_OCI_UNIT_FAILED, /* keep_going: msg says why */
};
typedef void (*imgfs_oci_event_fn)(enum imgfs_oci_event ev, const char *diff_id,
				   const char *digest, void *arg);

/* One event of a run, with its progress (valid during the call only). */
struct imgfs_oci_progress {
	enum imgfs_oci_event event;
	/* the unit's place among the units this run converts (1 to total);
	 * 0 for a reused unit */
	uint64_t index;
	uint64_t total;
	const char *diff_id;
	const char *blob; /* the source blob */
	uint64_t blob_size;
	uint64_t bytes_read; /* UNIT_READ, then the blob size at the end */
	const char *digest; /* CONVERTED, REUSED: the layer blob */
	/* --dm-verity: the tree's root hash (hex) and offset; else NULL */
	const char *dm_verity_root_hash;
	uint64_t dm_verity_hash_offset;
	const char *msg; /* FAILED: the cause */
};
/*
 * Called from the conversion threads, one call at a time (the library
 * serialises them); UNIT_READ comes at each read of the source blob
 * (128 KiB), so a front end throttles what it shows.
 */
typedef void (*imgfs_oci_progress_fn)(const struct imgfs_oci_progress *p,
				      void *arg);

struct imgfs_oci_options {
	size_t struct_size; /* sizeof(struct imgfs_oci_options) */
	/* every layer image is made with these (UUID, whiteouts, inline
	 * data and block size are set per layer as docs/oci.md says;
	 * have_build_time false means build time 0); NULL: the defaults
	 * of imgfs_mkfs_options_init(). Held by pointer, so that either
	 * struct grows without moving the other's fields. */
	const struct imgfs_mkfs_options *mkfs;
	/* the top-level index entries to convert, by their
	 * org.opencontainers.image.ref.name (none: all) */
	const char *const *refs;
	size_t nr_refs;
	/* "OS/ARCH[/VARIANT]" of the manifests to convert (none: all) */
	const char *const *platforms;
	size_t nr_platforms;
	unsigned int jobs; /* layers converted at once; 0: online CPUs */
	const char *cache_dir; /* NULL: none */
	bool no_verify; /* skip check + comparison with the source */
	enum imgfs_oci_layer_type layer_type;
	bool subject; /* converted manifests point at their originals */
	/* imgfs_oci_convert_units(): convert only the units whose diffID's
	 * first 16 hex digits, as a number, modulo shard_count is
	 * shard_index; shard_count 0 converts them all */
	uint64_t shard_index;
	uint64_t shard_count;
	imgfs_warn_fn warn; /* warnings; may be NULL */
	void *warn_arg;
	imgfs_oci_event_fn event; /* may be NULL */
	void *event_arg;
	/* reuse units recorded in the destination or the cache after
	 * checking only that their blobs match the records, without the
	 * image check and the comparison with the source that a converted
	 * unit has (counted in reused_unverified) */
	bool trust_records;
	/* a unit that fails does not stop the others: every unit that can
	 * is converted, each failure is reported (warn) naming its blob and
	 * images, only images whose units all converted are published, and
	 * the call still fails at the end, listing the failed blobs */
	bool keep_going;
	imgfs_oci_progress_fn progress; /* may be NULL */
	void *progress_arg;
};

struct imgfs_oci_stats {
	size_t struct_size; /* set by the library (docs/architecture.md) */
	uint64_t units; /* distinct source layers selected */
	uint64_t converted; /* converted by this run */
	uint64_t reused; /* already there (destination or cache) */
	uint64_t reused_unverified; /* of those, trusted (trust_records) */
	uint64_t verified; /* converted and checked against the source */
	uint64_t kept_layers; /* layers left as they are */
	uint64_t manifests; /* converted manifests written */
	uint64_t indexes; /* converted indexes written (index.json apart) */
	uint64_t copied_blobs; /* blobs passed through untouched */
	uint64_t bytes_in; /* compressed source bytes converted */
	uint64_t bytes_out; /* layer blob bytes written */
	uint64_t failed; /* units that failed (keep_going) */
	uint64_t images_failed; /* images not published because of them */
};

/* Fill @o with the defaults. */
IMGFS_API
void imgfs_oci_options_init(struct imgfs_oci_options *o);

/* The options digest of @o ("sha256:<hex>") into @out (72 bytes). */
IMGFS_API
int imgfs_oci_options_digest(const struct imgfs_oci_options *o, char out[72],
			     struct imgfs_error *err);

/* One work unit, for imgfs_oci_list_units(). */
struct imgfs_oci_unit {
	const char *diff_id; /* "sha256:<hex>" of the uncompressed tar */
	const char *digest; /* the source blob */
	const char *media_type; /* the source layer's */
	uint64_t size; /* the source blob's */
};
typedef int (*imgfs_oci_unit_fn)(const struct imgfs_oci_unit *u, void *arg);

/*
 * Call @fn for every work unit of the selected images of @src, sorted by
 * diffID (a non-zero return stops and is returned). Writes nothing.
 */
IMGFS_API
int imgfs_oci_list_units(const char *src, const struct imgfs_oci_options *o,
			 imgfs_oci_unit_fn fn, void *arg,
			 struct imgfs_error *err);

/* Convert the units of the shard (all with shard_count 0) into @dst. */
IMGFS_API
int imgfs_oci_convert_units(const char *src, const char *dst,
			    const struct imgfs_oci_options *o,
			    struct imgfs_oci_stats *stats,
			    struct imgfs_error *err);

/*
 * Write configs, manifests, indexes, index.json and oci-layout into @dst
 * from the units already there; fails naming every missing unit.
 */
IMGFS_API
int imgfs_oci_assemble(const char *src, const char *dst,
		       const struct imgfs_oci_options *o,
		       struct imgfs_oci_stats *stats, struct imgfs_error *err);

/* Both steps: convert every selected unit, then assemble. */
IMGFS_API
int imgfs_oci_convert(const char *src, const char *dst,
		      const struct imgfs_oci_options *o,
		      struct imgfs_oci_stats *stats, struct imgfs_error *err);

/* What imgfs_oci_gc() found. */
struct imgfs_oci_gc_stats {
	size_t struct_size; /* set by the library (docs/architecture.md) */
	uint64_t blobs_kept; /* reached from index.json */
	uint64_t blobs_removed; /* unreached, or a killed run's temporary */
	uint64_t bytes_removed;
	uint64_t records_removed; /* unit records of unreached blobs */
};

/*
 * Remove the blobs and unit records of the layout @dst that its
 * index.json does not reach, and temporary files of killed runs. Holds
 * the layout's lock exclusively: fails with -EBUSY, removing nothing,
 * while a run (conversion, shard, assembly) writes into @dst. Units of
 * shards not assembled yet are not reached: collect after assembling.
 */
IMGFS_API
int imgfs_oci_gc(const char *dst, struct imgfs_oci_gc_stats *st,
		 struct imgfs_error *err);

/*
 * Flatten the one image of @src that the refs and platforms of @o select
 * (exactly one manifest must match) into one EROFS image at @image_path
 * (imgfs/stack.h): its layers applied bottom to top as overlayfs would,
 * each streamed once from its blob, checked against blob digest and
 * diffID. @o->mkfs applies; without a build time it is 0, without a UUID
 * it is UUIDv5(URL, "erofs:flatten/" + manifest digest).
 */
IMGFS_API
int imgfs_oci_flatten(const char *src, const struct imgfs_oci_options *o,
		      const char *image_path, struct imgfs_mkfs_stats *stats,
		      struct imgfs_error *err);

/*
 * Merge the one image of the converted layout @layout that @o selects
 * into a metadata-only EROFS image at @image_path whose extra devices are
 * its EROFS layer blobs (imgfs_merge_images(), imgfs/stack.h), each
 * checked against its digest first. On success *@layer_paths (malloc'd,
 * NULL-terminated, free each and the array) lists the blob paths in
 * device order, bottom first, for "mount -o device=...". Build time 0
 * and UUIDv5(URL, "erofs:merge/" + manifest digest) unless given.
 */
IMGFS_API
int imgfs_oci_merge(const char *layout, const struct imgfs_oci_options *o,
		    const char *image_path, char ***layer_paths,
		    unsigned int *nlayers, struct imgfs_mkfs_stats *stats,
		    struct imgfs_error *err);

/*
 * ---- Checking a layout (lib/oci/check*.c, fsck.img --oci) ----
 *
 * imgfs_oci_check() follows index.json through nested indexes, manifests
 * and configs to every blob they name and checks, once per blob and role
 * (with its media type: a blob named as a layer and as a config is
 * checked as both): that it
 * is there with the size and digest of each descriptor naming it; that
 * indexes, manifests and configs parse; that each config's
 * rootfs.diff_ids match its manifest's layers (the SHA-256 of each
 * layer's uncompressed content); that every EROFS layer passes
 * imgfs_check_image() (a +zstd one is decompressed to an unnamed
 * temporary file, no larger than its superblock allows: a stream that
 * goes on is an error), with the dm-verity tree after it if there is one,
 * and its org.erofs.uncompressed-digest annotation is right; that an image with EROFS layers has "erofs" in its
 * config's os.features and in the platform of every index entry naming
 * it; and that media types are known. With a source layout, each
 * manifest is paired with the source manifest it was converted from (an
 * index.json entry with the source's entry of the same digest, else ref
 * name; an index's child by digest, else platform), and the EROFS layer
 * at each place compared with the source's tar layer at that place
 * (imgfs_compare_tar(), owners kept, whiteouts converted: the defaults of
 * the conversion), which its org.imgfs.source.digest annotation must name. Blobs nothing names are
 * not looked at, and a manifest's subject is not followed.
 */

/* What a blob is to the documents naming it. */
enum imgfs_oci_blob_role {
	IMGFS_OCI_BLOB_INDEX = 0, /* an image index (or Docker list) */
	IMGFS_OCI_BLOB_MANIFEST,
	IMGFS_OCI_BLOB_CONFIG,
	IMGFS_OCI_BLOB_LAYER,
	IMGFS_OCI_BLOB_OTHER, /* an unknown media type: digest and size */
};

/* One finding, valid only during the report callback. */
struct imgfs_oci_finding {
	enum imgfs_check_severity severity;
	/* "sha256:<hex>" of the blob concerned, NULL for oci-layout and
	 * index.json themselves */
	const char *blob;
	const char *media_type; /* of the blob, as named; may be NULL */
	/* the document naming it: "index.json", "index sha256:<hex>",
	 * "manifest sha256:<hex>" (with the layer's position) ... */
	const char *where;
	const char *msg;
};

typedef void (*imgfs_oci_finding_fn)(void *arg,
				     const struct imgfs_oci_finding *f);

/* One blob checked, valid only during the blob callback. */
struct imgfs_oci_blob_result {
	const char *digest;
	const char *media_type;
	enum imgfs_oci_blob_role role;
	uint64_t size; /* as its first descriptor gives it */
	const char *where; /* the first document naming it */
	bool present;
	bool verified; /* size and digest match */
	/* SHA-256 of the uncompressed content (layers), else NULL */
	const char *diff_id;
	bool erofs; /* an EROFS layer: @check is its image check */
	struct imgfs_check_result check;
	/* a dm-verity tree follows the image (mkfs.img --dm-verity); it
	 * matches the image, and the layer's org.erofs.dmverity.roothash
	 * annotation, when there is one, is its root */
	bool dm_verity;
	bool dm_verity_ok;
	/* compared with @source (blob of the source layout) */
	const char *source;
	bool compared;
	struct imgfs_compare_result compare;
	uint64_t errors;
	uint64_t warnings;
};

typedef void (*imgfs_oci_blob_fn)(void *arg,
				  const struct imgfs_oci_blob_result *b);

struct imgfs_oci_check_options {
	size_t struct_size; /* sizeof(struct imgfs_oci_check_options) */
	/* the source layout to compare EROFS layers with; NULL: none */
	const char *compare_src;
	imgfs_oci_finding_fn report; /* may be NULL */
	void *report_arg;
	/* called for every blob, in the order met, at the end; may be NULL */
	imgfs_oci_blob_fn blob;
	void *blob_arg;
	/* differences reported per compared layer (the rest are counted);
	 * 0: all */
	unsigned int max_differences;
};

struct imgfs_oci_check_result {
	size_t struct_size; /* set by the library (docs/architecture.md) */
	uint64_t errors;
	uint64_t warnings;
	uint64_t blobs; /* distinct blobs named, once per role and media type */
	uint64_t indexes; /* index.json apart */
	uint64_t manifests;
	uint64_t configs;
	uint64_t layers;
	uint64_t erofs_layers; /* checked with imgfs_check_image() */
	uint64_t compared_layers;
	uint64_t differences; /* of all compared layers */
	uint64_t bytes; /* blob bytes read */
};

/* Fill @o with the defaults: no comparison, no callbacks. */
IMGFS_API
void imgfs_oci_check_options_init(struct imgfs_oci_check_options *o);

/*
 * Check the layout at @dir (see above). Returns 0 when the check ran
 * (@res counts the errors found), or a negative errno when it could not
 * (@dir is no directory, out of memory).
 */
IMGFS_API
int imgfs_oci_check(const char *dir, const struct imgfs_oci_check_options *o,
		    struct imgfs_oci_check_result *res,
		    struct imgfs_error *err);

/* Stable name of @r ("index", "manifest", "config", "layer", "blob"). */
IMGFS_API
const char *imgfs_oci_blob_role_name(enum imgfs_oci_blob_role r);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_OCI_H */
