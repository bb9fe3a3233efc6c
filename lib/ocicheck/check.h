/* SPDX-License-Identifier: MIT */
/*
 * ocicheck/check.h - what the files of the layout check share: the blobs met
 * (each checked once per role and media type, however many documents
 * name it) and the run.
 */
#ifndef IMGFS_OCICHECK_CHECK_H
#define IMGFS_OCICHECK_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "imgfs/check.h"
#include "imgfs/compare.h"
#include "imgfs/oci.h"
#include "imgfs/verity.h"
#include "oci/internal.h"
#include "util/hashtab.h"

struct chk_blob {
	struct imgfs_hnode node; /* by digest, role and media type */
	struct chk_blob *next; /* in the order met */
	struct oci_digest digest;
	uint64_t size; /* as the first descriptor gives it */
	uint64_t actual_size;
	char *media_type;
	char *where; /* the first document naming it */
	char *path;
	enum imgfs_oci_blob_role role;
	bool present;
	bool verified;
	bool have_diff_id;
	struct oci_digest diff_id; /* SHA-256 of the uncompressed content */
	bool erofs;
	struct imgfs_check_result check;
	bool dm_verity; /* a dm-verity tree follows the image */
	bool dm_verity_ok;
	bool has_erofs; /* a manifest with EROFS layers */
	char *source; /* source blob digest compared with (the first) */
	struct oci_digest *sources; /* every source paired with */
	size_t nr_sources;
	/* an index or manifest paired with the source document @pair */
	bool paired;
	struct oci_digest pair;
	bool compared;
	struct imgfs_compare_result compare;
	uint64_t errors;
	uint64_t warnings;
};

struct oci_chk {
	const char *root;
	const struct imgfs_oci_check_options *o;
	struct imgfs_oci_check_result *res;
	struct imgfs_error *err; /* set with failed: the run stops */
	bool failed;
	struct imgfs_hashtab blobs;
	struct chk_blob *first, **tail;
};

/*
 * blobs.c: the blob @desc names in @role, with the source descriptor
 * @src (NULL: none), met at @where: a new one (*@fresh; then checked by
 * the caller) unless it was met in that role with that media type and
 * (not for a layer) that source already, when the descriptor is checked
 * against it. NULL when @desc is no descriptor (reported) or out of
 * memory.
 */
struct chk_blob *chk_meet(struct oci_chk *c, struct json_object *desc,
			  enum imgfs_oci_blob_role role,
			  struct json_object *src, const char *where,
			  bool *fresh);

/* Is @b there with its descriptor's size? Reports what is not; true when
 * reading it makes sense. */
bool chk_present(struct oci_chk *c, struct chk_blob *b);

/* The JSON blob @b, verified and parsed; NULL (reported) when it is not. */
struct json_object *chk_load_json(struct oci_chk *c, struct chk_blob *b);

/*
 * docs.c: from index.json @index (@sindex: the source layout's, NULL:
 * none), every document and blob it leads to, checked as the walk of
 * oci/walk.h meets them.
 */
void chk_walk(struct oci_chk *c, struct json_object *index,
	      struct json_object *sindex);

/* A finding about @b (NULL: the layout's own files), counted. */
void chk_report(struct oci_chk *c, struct chk_blob *b,
		enum imgfs_check_severity sev, const char *where,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Read @b through the verifying reader: 0, 1 when reported, or -errno. */
int chk_verify(struct oci_chk *c, struct chk_blob *b);

/*
 * Check the layer @b (present, with the right size) named by @desc:
 * digest, uncompressed digest, the image of an EROFS layer, and the
 * comparison with @src, the layer at the same place in the source
 * manifest (NULL: none). 0, or -errno when the run must stop.
 */
int chk_layer(struct oci_chk *c, struct chk_blob *b, struct json_object *desc,
	      struct json_object *src, const char *where);

/*
 * The layer @b, checked already, met again at @where with the source
 * layer @src (NULL: none): compared with it if not yet. 0 or -errno.
 */
int chk_layer_again(struct oci_chk *c, struct chk_blob *b,
		    struct json_object *desc, struct json_object *src,
		    const char *where);

/*
 * With a source layout: the entry of the source index @sindex that the
 * entry @d of the index @b (NULL: index.json, @top) was converted from,
 * or NULL (reported).
 */
struct json_object *chk_source_entry(struct oci_chk *c, struct chk_blob *b,
				     struct json_object *sindex,
				     struct json_object *d, bool top,
				     const char *where);

/* The source document @sdesc names, verified; NULL (reported) if bad. */
struct json_object *chk_source_load(struct oci_chk *c, struct chk_blob *b,
				    struct json_object *sdesc,
				    const char *where);

/*
 * verity.c: the layer's dm-verity annotations of @desc against
 * @tree (its superblock, root recomputed; NULL when there is no tree or
 * it is wrong, b->dm_verity telling which).
 */
void chk_verity_annotations(struct oci_chk *c, struct chk_blob *b,
			    struct json_object *desc,
			    const struct imgfs_verity_result *tree);

#endif /* IMGFS_OCICHECK_CHECK_H */
