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
};
typedef void (*imgfs_oci_event_fn)(enum imgfs_oci_event ev, const char *diff_id,
				   const char *digest, void *arg);

struct imgfs_oci_options {
	size_t struct_size; /* sizeof(struct imgfs_oci_options) */
	/* every layer image is made with these (UUID, whiteouts, inline
	 * data and block size are set per layer as docs/oci.md says;
	 * have_build_time false means build time 0) */
	struct imgfs_mkfs_options mkfs;
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
};

struct imgfs_oci_stats {
	uint64_t units; /* distinct source layers selected */
	uint64_t converted; /* converted by this run */
	uint64_t reused; /* already there (destination or cache) */
	uint64_t verified; /* converted and checked against the source */
	uint64_t kept_layers; /* layers left as they are */
	uint64_t manifests; /* converted manifests written */
	uint64_t indexes; /* converted indexes written (index.json apart) */
	uint64_t copied_blobs; /* blobs passed through untouched */
	uint64_t bytes_in; /* compressed source bytes converted */
	uint64_t bytes_out; /* layer blob bytes written */
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

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_OCI_H */
