// SPDX-License-Identifier: MIT
/*
 * The dm-verity annotations of an EROFS layer (org.erofs.dmverity.roothash
 * and .hashoffset, what mkfs.img --oci --dm-verity records for a runtime)
 * against the tree found after the image, its root recomputed from the
 * blob's data.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocicheck/check.h"

void chk_verity_annotations(struct oci_chk *c, struct chk_blob *b,
			    struct json_object *desc,
			    const struct imgfs_verity_result *tree)
{
	struct json_object *ann = NULL;
	const char *root, *off;
	char want[24];

	json_object_object_get_ex(desc, "annotations", &ann);
	root = oci_json_str(ann, OCI_ANN_VERITY_ROOT);
	off = oci_json_str(ann, OCI_ANN_VERITY_OFFSET);
	if (!root && !off) {
		if (tree)
			chk_report(
				c, b, IMGFS_CHECK_WARNING, b->where,
				"EROFS layer %s has a dm-verity tree but no %s annotation: a runtime cannot verify it",
				b->digest.str, OCI_ANN_VERITY_ROOT);
		return;
	}
	if (!b->dm_verity) {
		chk_report(
			c, b, IMGFS_CHECK_ERROR, b->where,
			"EROFS layer %s has a %s annotation but no dm-verity tree",
			b->digest.str, OCI_ANN_VERITY_ROOT);
		return;
	}
	if (!tree)
		return; /* the tree itself is reported wrong already */
	snprintf(want, sizeof(want), "%" PRIu64, tree->hash_offset);
	if (!root || strcmp(root, tree->root_hex))
		chk_report(
			c, b, IMGFS_CHECK_ERROR, b->where,
			"EROFS layer %s: %s is %s, the tree's root hash recomputed from the blob is %s",
			b->digest.str, OCI_ANN_VERITY_ROOT,
			root ? root : "missing", tree->root_hex);
	if (!off || strcmp(off, want))
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "EROFS layer %s: %s is %s, the tree is at %s",
			   b->digest.str, OCI_ANN_VERITY_OFFSET,
			   off ? off : "missing", want);
}
