// SPDX-License-Identifier: MIT
/*
 * The source layout as the conversion sees it: oci-layout and index.json
 * read, the selected images (by ref name and platform, through nested
 * indexes) followed to their manifests and configs, and every tar layer
 * collected as a work unit, one per distinct diffID, sorted by diffID.
 * OCI and Docker media types are both known.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, O_TMPFILE, pipe2 */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/internal.h"
#include "oci/walk.h"
#include "util/error.h"

static const char *const tar_types[] = {
	"application/vnd.oci.image.layer.v1.tar",
	"application/vnd.oci.image.layer.v1.tar+gzip",
	"application/vnd.oci.image.layer.v1.tar+zstd",
	"application/vnd.docker.image.rootfs.diff.tar",
	"application/vnd.docker.image.rootfs.diff.tar.gzip",
	"application/vnd.docker.image.rootfs.diff.tar.zstd",
};

static const char *const nondist_types[] = {
	"application/vnd.oci.image.layer.nondistributable.v1.tar",
	"application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
	"application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
	"application/vnd.docker.image.rootfs.foreign.diff.tar",
	"application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
};

static bool in_list(const char *s, const char *const *l, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		if (!strcmp(s, l[i]))
			return true;
	return false;
}

enum oci_layer_kind oci_layer_kind(const char *mt)
{
	if (in_list(mt, tar_types, sizeof(tar_types) / sizeof(*tar_types)))
		return OCI_LAYER_TAR;
	if (in_list(mt, nondist_types,
		    sizeof(nondist_types) / sizeof(*nondist_types)))
		return OCI_LAYER_NONDIST;
	return OCI_LAYER_OTHER;
}

static int unit_cmp(const void *a, const void *b)
{
	return strcmp(((const struct oci_unit *)a)->diff_id.str,
		      ((const struct oci_unit *)b)->diff_id.str);
}

struct oci_unit *oci_layout_unit(struct oci_layout *l,
				 const struct oci_digest *diff_id)
{
	struct oci_unit key;

	memset(&key, 0, sizeof(key));
	key.diff_id = *diff_id;
	return bsearch(&key, l->units, l->nr_units, sizeof(*l->units),
		       unit_cmp);
}

static int add_unit(struct oci_layout *l, const struct oci_digest *diff_id,
		    const struct oci_digest *blob, uint64_t size,
		    const char *mt, struct imgfs_error *err)
{
	struct oci_unit *u;

	/* duplicates are removed once all are in (dedupe_units) */
	if (l->nr_units == l->cap_units) {
		size_t cap = l->cap_units ? 2 * l->cap_units : 16;
		void *p = realloc(l->units, cap * sizeof(*l->units));

		if (!p)
			return error_set(err, -ENOMEM, "out of memory");
		l->units = p;
		l->cap_units = cap;
	}
	u = &l->units[l->nr_units];
	memset(u, 0, sizeof(*u));
	u->diff_id = *diff_id;
	u->blob = *blob;
	u->blob_size = size;
	u->media_type = strdup(mt);
	if (!u->media_type)
		return error_set(err, -ENOMEM, "out of memory");
	l->nr_units++;
	return 0;
}

static int unit_blob_cmp(const void *a, const void *b)
{
	const struct oci_unit *x = a, *y = b;
	int c = strcmp(x->diff_id.str, y->diff_id.str);

	return c ? c : strcmp(x->blob.str, y->blob.str);
}

/*
 * One unit per diffID: the smallest blob digest stands for it, so the
 * choice does not depend on the order images come in. The other blobs
 * with that diffID are kept aside: they are checked, not converted.
 */
static int dedupe_units(struct oci_layout *l, struct imgfs_error *err)
{
	size_t n = 0;

	if (!l->nr_units)
		return 0;
	l->extra = calloc(l->nr_units, sizeof(*l->extra));
	if (!l->extra)
		return error_set(err, -ENOMEM, "out of memory");
	qsort(l->units, l->nr_units, sizeof(*l->units), unit_blob_cmp);
	for (size_t i = 0; i < l->nr_units; i++) {
		struct oci_unit *u = &l->units[i], *p = &l->units[n - !!n];

		if (n && !strcmp(p->diff_id.str, u->diff_id.str)) {
			if (strcmp(p->blob.str, u->blob.str) &&
			    (!l->nr_extra ||
			     strcmp(l->extra[l->nr_extra - 1].blob.str,
				    u->blob.str)))
				l->extra[l->nr_extra++] = *u;
			else
				free(u->media_type);
			continue;
		}
		l->units[n++] = *u;
	}
	l->nr_units = n;
	return 0;
}

size_t oci_tar_layers(struct json_object *layers)
{
	size_t n = 0;

	for (size_t i = 0; i < json_object_array_length(layers); i++)
		n += oci_layer_kind(
			     oci_json_str(json_object_array_get_idx(layers, i),
					  "mediaType")) == OCI_LAYER_TAR;
	return n;
}

/* Units from the diff_ids of the selected manifest @n's tar layers. */
static int collect_layers(struct oci_layout *l, const struct oci_walk_doc *n,
			  struct json_object *layers, struct json_object *ids,
			  struct imgfs_error *err)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < json_object_array_length(layers); i++) {
		struct json_object *ld = json_object_array_get_idx(layers, i);
		struct oci_digest ldig, did;
		const char *mt;
		uint64_t lsize;
		char what[160];

		snprintf(what, sizeof(what), "manifest %s layer %zu", n->d.str,
			 i);
		ret = oci_desc_get(ld, &ldig, &lsize, &mt, what, err);
		if (ret || oci_layer_kind(mt) != OCI_LAYER_TAR)
			continue;
		ret = oci_digest_parse(
			json_object_get_string(
				json_object_array_get_idx(ids, i)),
			&did, what, err);
		if (!ret)
			ret = add_unit(l, &did, &ldig, lsize, mt, err);
	}
	return ret;
}

static int collect_manifest(struct oci_walk *w, struct oci_walk_doc *n,
			    struct json_object **out, struct imgfs_error *err)
{
	struct oci_layout *l = w->arg;
	struct json_object *layers, *rootfs, *ids = NULL;

	(void)out;
	l->nr_images++;
	if (!json_object_object_get_ex(n->doc, "layers", &layers) ||
	    !json_object_is_type(layers, json_type_array))
		return error_set(err, -EINVAL, "manifest %s: no layers array",
				 n->d.str);
	/* no tar layer (a signature, an artifact): nothing to convert */
	if (!oci_tar_layers(layers))
		return 0;
	if (json_object_object_get_ex(n->config, "rootfs", &rootfs) &&
	    json_object_is_type(rootfs, json_type_object))
		json_object_object_get_ex(rootfs, "diff_ids", &ids);
	if (!ids || !json_object_is_type(ids, json_type_array) ||
	    json_object_array_length(ids) != json_object_array_length(layers))
		return error_set(
			err, -EINVAL,
			"config %s of manifest %s: rootfs.diff_ids does not list one diffID per layer",
			n->cd.str, n->d.str);
	return collect_layers(l, n, layers, ids, err);
}

static const struct oci_walk_ops collect_ops = {
	.want_config = true,
	.manifest = collect_manifest,
};

int oci_layout_open(const char *root, const struct imgfs_oci_options *o,
		    struct oci_layout *l, struct imgfs_error *err)
{
	struct json_object *lay = NULL, *children;
	struct oci_walk w;
	struct imgfs_error e;
	const char *ver;
	int ret = 0;

	memset(l, 0, sizeof(*l));
	l->o = o;
	l->root = strdup(root);
	if (!l->root)
		return error_set(err, -ENOMEM, "out of memory");
	imgfs_error_clear(&e);
	ret = oci_read_json_file(root, "oci-layout", &lay, &e);
	ver = oci_json_str(lay, "imageLayoutVersion");
	json_object_put(lay);
	if (ret == -ENOENT || ret == -EBADMSG || (!ret && !ver))
		return error_set(
			err, -EINVAL,
			"%s: not an OCI image layout (no readable oci-layout file with imageLayoutVersion)",
			root);
	if (ret)
		return error_set(err, ret, "%s", e.msg);
	ret = oci_read_json_file(root, "index.json", &l->index, err);
	if (ret && ret != -ENOENT && ret != -EBADMSG)
		return ret;
	imgfs_error_clear(err);
	ret = 0;
	if (!l->index ||
	    !json_object_object_get_ex(l->index, "manifests", &children) ||
	    !json_object_is_type(children, json_type_array))
		return error_set(
			err, -EINVAL,
			"%s/index.json: missing, not JSON or without a manifests array",
			root);
	oci_walk_init(&w, root, o, &collect_ops, l);
	ret = oci_walk_entries(&w, children, err);
	oci_walk_free(&w);
	if (ret)
		return ret;
	for (size_t i = 0; i < o->nr_refs; i++) {
		bool found = false;

		for (size_t j = 0; j < json_object_array_length(children);
		     j++) {
			struct imgfs_oci_options one = *o;

			one.refs = &o->refs[i];
			one.nr_refs = 1;
			if (oci_ref_selected(&one, json_object_array_get_idx(
							   children, j)))
				found = true;
		}
		if (!found)
			return error_set(
				err, -ENOENT,
				"%s: no image with ref name '%s' in index.json",
				root, o->refs[i]);
	}
	return dedupe_units(l, err);
}

void oci_layout_free(struct oci_layout *l)
{
	for (size_t i = 0; i < l->nr_units; i++) {
		free(l->units[i].media_type);
		free(l->units[i].out_media_type);
		free(l->units[i].err_msg);
	}
	free(l->units);
	for (size_t i = 0; i < l->nr_extra; i++)
		free(l->extra[i].media_type);
	free(l->extra);
	json_object_put(l->index);
	free(l->root);
	memset(l, 0, sizeof(*l));
}
