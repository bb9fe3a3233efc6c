// SPDX-License-Identifier: MIT
/*
 * One image of a layout made into one EROFS image. The OCI side picks the
 * image (ref and platform, through nested indexes; exactly one manifest
 * must remain) and hands its layers to lib/stack: for --flatten (a source
 * layout) each tar layer streamed once from its blob and checked as it
 * goes (blob digest and size, the diffID its config gives for the
 * uncompressed bytes) into imgfs_flatten(); for --merge (a converted
 * layout) the EROFS layer blobs, checked against their digests, as the
 * extra devices of imgfs_merge_images().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "imgfs/reader.h"
#include "imgfs/source.h"
#include "imgfs/stack.h"
#include "oci/feed.h"
#include "oci/internal.h"
#include "oci/walk.h"
#include "source/tar.h"
#include "util/error.h"

struct pick {
	struct json_object *found; /* the manifest's descriptor */
	size_t count; /* distinct manifests */
	struct oci_memo counted; /* by digest, however selected */
};

static int pick_manifest(struct oci_walk *w, struct oci_walk_doc *n,
			 struct json_object **out, struct imgfs_error *err)
{
	struct pick *p = w->arg;

	(void)out;
	if (oci_memo_find(&p->counted, &n->d, 0))
		return 0;
	if (!oci_memo_add(&p->counted, &n->d, 0))
		return error_set(err, -ENOMEM, "out of memory");
	if (!p->count++)
		p->found = json_object_get(n->desc);
	return 0;
}

static const struct oci_walk_ops pick_ops = {
	.index_platform = true,
	.manifest = pick_manifest,
};

struct layer_src {
	struct oci_digest blob;
	uint64_t size;
	struct oci_digest diff_id;
};

struct opener {
	const char *root;
	struct layer_src *layers;
	struct oci_feed feed;
	struct imgfs_tar *t;
};

static int open_layer(void *arg, unsigned int layer, struct imgfs_tar **t,
		      struct imgfs_error *err)
{
	struct opener *op = arg;
	struct layer_src *l = &op->layers[layer];
	char name[OCI_DIGEST_MAX + 8];
	int ret = oci_feed_start(&op->feed, op->root, &l->blob, l->size, true,
				 1, NULL, NULL, err);

	if (ret)
		return ret;
	snprintf(name, sizeof(name), "blob %s", l->blob.str);
	op->t = oci_feed_tar(&op->feed, 0, name, err);
	/* no plain bytes at all (the stream failed at once, or is empty):
	 * there is no tar reader to hand out */
	if (op->t && !tar_archive(op->t)) {
		imgfs_tar_close(op->t);
		op->t = NULL;
		error_set(err, -EINVAL, "blob %s: no tar stream in it",
			  l->blob.str);
	}
	if (!op->t) {
		/* a corrupted blob is the cause of whatever the reader saw */
		oci_feed_end(&op->feed, err);
		return err->code;
	}
	*t = op->t;
	return 0;
}

static int close_layer(void *arg, unsigned int layer, struct imgfs_tar *t,
		       struct imgfs_error *err)
{
	struct opener *op = arg;
	struct layer_src *l = &op->layers[layer];
	struct imgfs_error ferr;

	(void)t; /* op->t */
	if (!op->t && !op->feed.ra)
		return 0;
	imgfs_tar_close(op->t);
	op->t = NULL;
	imgfs_error_clear(&ferr);
	if (oci_feed_end(&op->feed, &ferr))
		return error_set(err, ferr.code, "%s", ferr.msg);
	return oci_feed_check_diff_id(&op->feed, &l->blob, &l->diff_id, err);
}

/* The layers of manifest @desc, checked to be tar layers. */
static bool erofs_layer(const char *mt)
{
	return mt && (!strcmp(mt, "application/vnd.erofs.layer.v1") ||
		      !strcmp(mt, "application/vnd.erofs"));
}

static int image_layers(const char *root, struct json_object *desc, bool erofs,
			struct layer_src **out, unsigned int *n,
			struct oci_digest *md, struct imgfs_error *err)
{
	struct json_object *m = NULL, *cfg = NULL, *v, *layers, *rootfs, *ids;
	struct oci_digest cd;
	uint64_t size, csize;
	size_t nl;
	int ret;

	*out = NULL;
	ret = oci_desc_get(desc, md, &size, NULL, "manifest", err);
	if (!ret)
		ret = oci_json_load(root, md, size, &m, err);
	if (!ret && (!json_object_object_get_ex(m, "config", &v) ||
		     oci_desc_get(v, &cd, &csize, NULL, md->str, err) ||
		     oci_json_load(root, &cd, csize, &cfg, err)))
		ret = err->code ? err->code : -EINVAL;
	if (ret)
		goto out;
	if (!json_object_object_get_ex(m, "layers", &layers) ||
	    !json_object_is_type(layers, json_type_array) ||
	    !json_object_object_get_ex(cfg, "rootfs", &rootfs) ||
	    !json_object_is_type(rootfs, json_type_object) ||
	    !json_object_object_get_ex(rootfs, "diff_ids", &ids) ||
	    !json_object_is_type(ids, json_type_array) ||
	    (nl = json_object_array_length(layers)) !=
		    json_object_array_length(ids) ||
	    !nl) {
		ret = error_set(
			err, -EINVAL,
			"manifest %s: no layers, or not one diffID per layer",
			md->str);
		goto out;
	}
	*out = calloc(nl, sizeof(**out));
	if (!*out) {
		ret = error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nl; i++) {
		struct json_object *ld = json_object_array_get_idx(layers, i);
		const char *mt;

		ret = oci_desc_get(ld, &(*out)[i].blob, &(*out)[i].size, &mt,
				   md->str, err);
		if (!ret && !erofs && oci_layer_kind(mt) != OCI_LAYER_TAR)
			ret = error_set(
				err, -EINVAL,
				"manifest %s: layer %s has media type %s, not a tar layer: it cannot be flattened",
				md->str, (*out)[i].blob.str,
				mt ? mt : "(none)");
		if (!ret && erofs && !erofs_layer(mt))
			ret = error_set(
				err, -EINVAL,
				"manifest %s: layer %s has media type %s, not an uncompressed EROFS layer: merge a layout converted with mkfs.img --oci",
				md->str, (*out)[i].blob.str,
				mt ? mt : "(none)");
		if (!ret)
			ret = oci_digest_parse(
				json_object_get_string(
					json_object_array_get_idx(ids, i)),
				&(*out)[i].diff_id, md->str, err);
		if (ret)
			goto out;
	}
	*n = (unsigned int)nl;
out:
	if (ret) {
		free(*out);
		*out = NULL;
	}
	json_object_put(cfg);
	json_object_put(m);
	return ret;
}

/* The one manifest of @src the options select, and its layers. */
static int pick_image(const char *src, const struct imgfs_oci_options *o,
		      bool erofs, struct layer_src **layers, unsigned int *n,
		      struct oci_digest *md, struct imgfs_error *err)
{
	struct pick p = { 0 };
	struct json_object *index = NULL, *children;
	struct oci_walk w;
	int ret = 0;

	imgfs_error_clear(err);
	ret = oci_options_in(o, err);
	if (ret)
		return ret;
	ret = oci_read_json_file(src, "index.json", &index, err);
	if (ret && ret != -ENOENT && ret != -EBADMSG)
		return ret;
	imgfs_error_clear(err);
	ret = 0;
	if (!index ||
	    !json_object_object_get_ex(index, "manifests", &children) ||
	    !json_object_is_type(children, json_type_array)) {
		json_object_put(index);
		return error_set(
			err, -EINVAL,
			"%s: not an OCI image layout (index.json missing or without manifests)",
			src);
	}
	oci_walk_init(&w, src, o, &pick_ops, &p);
	ret = oci_walk_entries(&w, children, err);
	oci_walk_free(&w);
	json_object_put(index);
	oci_memo_free(&p.counted);
	if (!ret && p.count != 1)
		ret = error_set(
			err, p.count ? -EINVAL : -ENOENT,
			"%s: %zu images match the refs and platforms given: one is needed (use --ref and --platform)",
			src, p.count);
	if (!ret)
		ret = image_layers(src, p.found, erofs, layers, n, md, err);
	json_object_put(p.found);
	return ret;
}

/* Build time 0 and a UUID derived from @what and the manifest digest. */
static void image_options(const struct imgfs_oci_options *o, const char *what,
			  const struct oci_digest *md,
			  struct imgfs_mkfs_options *m)
{
	oci_mkfs_of(o, m);
	/* a layer's warnings (a missing end-of-archive marker) are told */
	m->warn = o->warn;
	m->warn_arg = o->warn_arg;
	if (!m->have_build_time) {
		m->have_build_time = true;
		m->build_time = 0;
	}
	if (!m->have_uuid) {
		char name[OCI_DIGEST_MAX + 32];

		/* reproducible: derived from the image */
		snprintf(name, sizeof(name), "erofs:%s/%s", what, md->str);
		oci_uuid5_url(name, m->uuid);
		m->have_uuid = true;
	}
}

int imgfs_oci_flatten(const char *src, const struct imgfs_oci_options *o,
		      const char *image_path, struct imgfs_mkfs_stats *stats,
		      struct imgfs_error *err)
{
	struct imgfs_layer_opener lo;
	struct imgfs_mkfs_options m;
	struct oci_digest md;
	struct opener op;
	unsigned int n = 0;
	int ret;

	memset(&op, 0, sizeof(op));
	op.root = src;
	ret = pick_image(src, o, false, &op.layers, &n, &md, err);
	if (ret)
		return ret;
	image_options(o, "flatten", &md, &m);
	memset(&lo, 0, sizeof(lo));
	lo.open = open_layer;
	lo.close = close_layer;
	lo.arg = &op;
	ret = imgfs_flatten(&m, n, &lo, image_path, stats, err);
	free(op.layers);
	return ret;
}

/*
 * After imgfs_merge_images() failed: when a layer image is compressed
 * (converted with -z), say so rather than which of its files failed.
 */
static void explain_compressed(char **paths, const struct layer_src *layers,
			       unsigned int n, struct imgfs_error *err)
{
	for (unsigned int i = 0; i < n; i++) {
		struct imgfs_image *img;
		struct imgfs_error e;
		const struct imgfs_sb_info *sb;
		bool z;

		if (imgfs_image_open(paths[i], IMGFS_OPEN_IGNORE_CHECKSUM, &img,
				     &e))
			continue;
		sb = imgfs_image_sb(img);
		z = sb->compr_algs || (sb->feature_incompat &
				       (IMGFS_FEATURE_INCOMPAT_COMPR_CFGS |
					IMGFS_FEATURE_INCOMPAT_ZERO_PADDING));
		imgfs_image_close(img);
		if (!z)
			continue;
		imgfs_error_clear(err);
		error_set(
			err, -EINVAL,
			"layer %u (blob %s) holds compressed data (converted with -z): a merged image refers to the layers' data in place, uncompressed; merge a layout converted without -z",
			i + 1, layers[i].blob.str);
		return;
	}
}

int imgfs_oci_merge(const char *layout, const struct imgfs_oci_options *o,
		    const char *image_path, char ***layer_paths,
		    unsigned int *nlayers, struct imgfs_mkfs_stats *stats,
		    struct imgfs_error *err)
{
	struct imgfs_mkfs_options m;
	struct layer_src *layers = NULL;
	struct oci_digest md;
	unsigned int n = 0;
	char **paths = NULL;
	int ret;

	*layer_paths = NULL;
	*nlayers = 0;
	ret = pick_image(layout, o, true, &layers, &n, &md, err);
	if (!ret && !(paths = calloc(n + 1, sizeof(*paths))))
		ret = error_set(err, -ENOMEM, "out of memory");
	for (unsigned int i = 0; !ret && i < n; i++) {
		struct oci_blob_reader r;

		/* the layer images are used as they are: check them first */
		paths[i] = oci_blob_path(layout, &layers[i].blob);
		if (!paths[i]) {
			ret = error_set(err, -ENOMEM, "out of memory");
			break;
		}
		ret = oci_blob_open(layout, &layers[i].blob, layers[i].size, &r,
				    err);
		if (!ret)
			ret = oci_blob_finish(&r, err);
		oci_blob_close(&r);
	}
	if (!ret) {
		image_options(o, "merge", &md, &m);
		ret = imgfs_merge_images(&m, n, (const char *const *)paths,
					 image_path, stats, err);
		if (ret && ret != -ENOMEM)
			explain_compressed(paths, layers, n, err);
	}
	free(layers);
	if (ret) {
		for (unsigned int i = 0; paths && i < n; i++)
			free(paths[i]);
		free(paths);
		return ret;
	}
	*layer_paths = paths;
	*nlayers = n;
	return 0;
}
