// SPDX-License-Identifier: MIT
/*
 * The media types a converted layer may take (--layer-media-type):
 * containerd's, its zstd-framed variant, and the draft erofs-image-spec's.
 */
#include <errno.h>
#include <string.h>

#include "oci/internal.h"

static const char *const layer_types[] = {
	[IMGFS_OCI_LAYER_EROFS] = "application/vnd.erofs.layer.v1",
	[IMGFS_OCI_LAYER_EROFS_ZSTD] = "application/vnd.erofs.layer.v1+zstd",
	[IMGFS_OCI_LAYER_EROFS_DRAFT] = "application/vnd.erofs",
};

const char *imgfs_oci_layer_media_type(enum imgfs_oci_layer_type t)
{
	if ((unsigned int)t >= sizeof(layer_types) / sizeof(*layer_types))
		return NULL;
	return layer_types[t];
}

int imgfs_oci_layer_type_parse(const char *s, enum imgfs_oci_layer_type *t)
{
	for (unsigned int i = 0; i < sizeof(layer_types) / sizeof(*layer_types);
	     i++) {
		if (!strcmp(s, layer_types[i])) {
			*t = (enum imgfs_oci_layer_type)i;
			return 0;
		}
	}
	return -EINVAL;
}
