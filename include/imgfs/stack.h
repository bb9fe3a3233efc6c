/* SPDX-License-Identifier: MIT */
/*
 * imgfs/stack.h - one image from a stack of layers.
 *
 * imgfs_flatten() applies OCI layers (tar streams with .wh. whiteouts and
 * .wh..wh..opq opaque markers), bottom to top, as overlayfs shows them
 * stacked and as "umoci unpack" extracts them, and writes the final tree
 * as one EROFS image: no whiteout is left in it. Each layer is read once,
 * as a stream, the top layer first; nothing is extracted to disk and
 * memory grows with the number of paths, not with file data. Every mkfs
 * option applies (compression, block size, ownership, dm-verity, ...),
 * and the same layers and options give the same bytes.
 *
 * The rules, for an entry of a layer below others (docs/stack.md):
 * it is left out when a layer above has an entry at its path, a
 * whiteout of it or of a directory above it, an opaque marker on a
 * directory above it, or a non-directory at a directory above it; a
 * directory in several layers takes the metadata of the topmost one that
 * lists it. Hard links are resolved inside their layer: a link whose
 * target is hidden by a layer above gets the target's data and metadata
 * under its own path; a link to a path its layer does not hold is an
 * error.
 */
#ifndef IMGFS_STACK_H
#define IMGFS_STACK_H

#include "imgfs/api.h"
#include "imgfs/error.h"
#include "imgfs/writer.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imgfs_tar;

/*
 * How imgfs_flatten() reads the layers. Layer 0 is the bottom one; each
 * layer is opened at most once, the top one first, and each layer opened
 * is closed, also when flattening fails.
 */
struct imgfs_layer_opener {
	/* the layer as a tar reader (imgfs/source.h) in *@t, read with the
	 * end-of-archive rules of the options, names as archived; returns 0
	 * or a negative errno with @err set */
	int (*open)(void *arg, unsigned int layer, struct imgfs_tar **t,
		    struct imgfs_error *err);
	/* after the last entry was read: closes @t (as open gave it) and
	 * returns an error if the stream failed, e.g. its digest (ignored
	 * when flattening already failed) */
	int (*close)(void *arg, unsigned int layer, struct imgfs_tar *t,
		     struct imgfs_error *err);
	void *arg;
};

/*
 * Flatten @nlayers layers (at least one) read through @opener into an
 * image at @image_path with options @opts, written as imgfs_convert()
 * writes it (unnamed until complete; an existing file is replaced only on
 * success). opts->whiteouts must be IMGFS_WHITEOUT_OVERLAY (whiteouts are
 * applied, never stored) and opts->tar_index IMGFS_TAR_INDEX_NONE.
 * Returns 0 with @stats (may be NULL) filled in, or a negative errno with
 * @err naming the layer, the entry and the reason.
 */
IMGFS_API
int imgfs_flatten(const struct imgfs_mkfs_options *opts, unsigned int nlayers,
		  const struct imgfs_layer_opener *opener,
		  const char *image_path, struct imgfs_mkfs_stats *stats,
		  struct imgfs_error *err);

/*
 * imgfs_flatten() of the tar files @tar_paths[0..@nlayers-1] (bottom
 * first; plain or compressed, read with the end-of-archive rules of
 * struct imgfs_tar_options, opts->allow_missing_end and
 * opts->require_end). A target that is one of the layers is refused.
 */
IMGFS_API
int imgfs_flatten_tars(const struct imgfs_mkfs_options *opts,
		       unsigned int nlayers, const char *const *tar_paths,
		       const char *image_path, struct imgfs_mkfs_stats *stats,
		       struct imgfs_error *err);

/*
 * Merge converted layer images into a metadata-only image at @image_path:
 * @layer_images[0..@nlayers-1], bottom first, become its extra devices
 * (layer i is device i + 1 of the device table, its slot tagged with the
 * file's name), and each regular file of the merged tree points at its
 * data in its layer's image. The overlay rules of imgfs_flatten() are
 * applied over the layer images' own whiteouts (character devices 0:0)
 * and opaque directories (trusted.overlay.opaque = "y"). The layer images
 * must be uncompressed, without inline file data, with @opts's block size
 * (4096 bytes) and at most 23 of them (the device table stays inside the
 * superblock's block). Mount the result with
 * "mount -t erofs -o ro,device=L1,device=L2,... IMAGE DIR" (Linux 5.16 and
 * later; layer image files, not only block devices, with Linux 6.12's
 * file-backed mounts). docs/stack.md. Returns 0 or a negative errno with
 * @err naming the layer image and the entry.
 */
IMGFS_API
int imgfs_merge_images(const struct imgfs_mkfs_options *opts,
		       unsigned int nlayers, const char *const *layer_images,
		       const char *image_path, struct imgfs_mkfs_stats *stats,
		       struct imgfs_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IMGFS_STACK_H */
