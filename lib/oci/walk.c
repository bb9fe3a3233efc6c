// SPDX-License-Identifier: MIT
/*
 * The one walk over the descriptors of a layout (oci/walk.h): selection
 * by ref name and platform, the depth bound and the memo of documents
 * met are here and nowhere else, so every job that follows index.json to
 * its manifests sees the same images. The layout check walks the same
 * graph whole (oci_walk_all): every descriptor in its role, the depth
 * bound here, its memo its own (it tells more than digests apart).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/walk.h"
#include "util/error.h"

/* Descriptors and the documents they name: read and selected. */

bool oci_is_index_type(const char *mt)
{
	return mt &&
	       (!strcmp(mt, "application/vnd.oci.image.index.v1+json") ||
		!strcmp(mt,
			"application/vnd.docker.distribution.manifest.list.v2+json"));
}

bool oci_is_manifest_type(const char *mt)
{
	return mt &&
	       (!strcmp(mt, "application/vnd.oci.image.manifest.v1+json") ||
		!strcmp(mt,
			"application/vnd.docker.distribution.manifest.v2+json"));
}

struct json_object *oci_json_get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

const char *oci_json_str(struct json_object *o, const char *key)
{
	struct json_object *v = oci_json_get(o, key);

	if (!json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int oci_desc_get(struct json_object *desc, struct oci_digest *d, uint64_t *size,
		 const char **media_type, const char *what,
		 struct imgfs_error *err)
{
	struct json_object *v;
	int64_t n;

	if (!desc || !json_object_is_type(desc, json_type_object))
		return error_set(err, -EINVAL,
				 "%s: a descriptor is not a JSON object", what);
	if (oci_digest_parse(oci_json_str(desc, "digest"), d, what, err))
		return err->code;
	if (!json_object_object_get_ex(desc, "size", &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    (n = json_object_get_int64(v)) < 0)
		return error_set(err, -EINVAL,
				 "%s: descriptor of %s has no valid size", what,
				 d->str);
	*size = (uint64_t)n;
	if (media_type)
		*media_type = oci_json_str(desc, "mediaType");
	return 0;
}

int oci_json_load(const char *root, const struct oci_digest *d, uint64_t size,
		  struct json_object **out, struct imgfs_error *err)
{
	char *buf;
	int ret = oci_blob_load(root, d, size, &buf, err);

	*out = NULL;
	if (ret)
		return ret;
	ret = oci_json_parse(buf, (size_t)size, out);
	free(buf);
	if (ret == -ENOMEM)
		return error_set(err, ret, "out of memory");
	if (ret)
		return error_set(err, ret, "blob %s: not a JSON object",
				 d->str);
	return 0;
}

bool oci_ref_selected(const struct imgfs_oci_options *o,
		      struct json_object *desc)
{
	struct json_object *ann;
	const char *ref;

	if (!o->nr_refs)
		return true;
	if (!json_object_object_get_ex(desc, "annotations", &ann))
		return false;
	ref = oci_json_str(ann, "org.opencontainers.image.ref.name");
	for (size_t i = 0; ref && i < o->nr_refs; i++)
		if (!strcmp(ref, o->refs[i]))
			return true;
	return false;
}

bool oci_platform_selected(const struct imgfs_oci_options *o,
			   struct json_object *p, bool from_config)
{
	const char *os, *arch, *variant;

	(void)from_config;
	if (!o->nr_platforms)
		return true;
	os = oci_json_str(p, "os");
	arch = oci_json_str(p, "architecture");
	variant = oci_json_str(p, "variant");
	for (size_t i = 0; os && arch && i < o->nr_platforms; i++) {
		char buf[256];

		if (variant)
			snprintf(buf, sizeof(buf), "%s/%s/%s", os, arch,
				 variant);
		else
			snprintf(buf, sizeof(buf), "%s/%s", os, arch);
		if (!strcmp(buf, o->platforms[i]))
			return true;
		/* OS/ARCH without a variant selects every variant */
		if (variant &&
		    !strchr(strchr(o->platforms[i], '/')
				    ? strchr(o->platforms[i], '/') + 1
				    : "",
			    '/')) {
			snprintf(buf, sizeof(buf), "%s/%s", os, arch);
			if (!strcmp(buf, o->platforms[i]))
				return true;
		}
	}
	return false;
}

/*
 * Memo tags: a manifest is looked at again when its descriptor's
 * platform selected it (its config's platform is then not asked), and a
 * closure copy is a visit of its own.
 */
enum { TAG_MANIFEST, TAG_MANIFEST_CHECKED, TAG_INDEX, TAG_CLOSURE };

void oci_walk_init(struct oci_walk *w, const char *root,
		   const struct imgfs_oci_options *o,
		   const struct oci_walk_ops *ops, void *arg)
{
	memset(w, 0, sizeof(*w));
	w->root = root;
	w->o = o;
	w->ops = ops;
	w->arg = arg;
}

void oci_walk_free(struct oci_walk *w)
{
	oci_memo_free(&w->seen);
}

static int visit_index(struct oci_walk *w, struct oci_walk_doc *n,
		       struct json_object **out, struct imgfs_error *err)
{
	const struct oci_walk_ops *ops = w->ops;
	struct json_object *list;
	int ret = oci_check_depth(n->depth, err);

	if (!ret)
		ret = oci_json_load(w->root, &n->d, n->size, &n->doc, err);
	if (ret)
		return ret;
	if (ops->index_begin)
		ret = ops->index_begin(w, n, err);
	if (!ret && json_object_object_get_ex(n->doc, "manifests", &list) &&
	    json_object_is_type(list, json_type_array)) {
		for (size_t i = 0; !ret && i < json_object_array_length(list);
		     i++) {
			struct json_object *e = json_object_array_get_idx(list, i);
			struct json_object *nc;
			int r = oci_walk_desc(w, e, n->depth + 1, &nc, err);

			if (ops->index_entry) {
				ret = ops->index_entry(w, n, e, r, nc, err);
			} else {
				json_object_put(nc);
				ret = r;
			}
		}
	}
	if (ops->index_end)
		ret = ops->index_end(w, n, ret, out, err);
	json_object_put(n->doc);
	return ret;
}

/* The config of the manifest @n, loaded. */
static int load_config(struct oci_walk *w, struct oci_walk_doc *n,
		       struct imgfs_error *err)
{
	uint64_t csize;

	if (!json_object_object_get_ex(n->doc, "config", &n->cdesc))
		return error_set(err, -EINVAL, "manifest %s: no config",
				 n->d.str);
	if (oci_desc_get(n->cdesc, &n->cd, &csize, NULL, n->d.str, err))
		return err->code;
	return oci_json_load(w->root, &n->cd, csize, &n->config, err);
}

static int visit_manifest(struct oci_walk *w, struct oci_walk_doc *n,
			  struct json_object **out, struct imgfs_error *err)
{
	const struct oci_walk_ops *ops = w->ops;
	struct json_object *v;
	int ret = oci_json_load(w->root, &n->d, n->size, &n->doc, err);

	if (ret)
		return ret;
	/* referrers (signatures, SBOMs) are no images of their own */
	if (json_object_object_get_ex(n->doc, "subject", &v))
		ret = ops->referrer;
	else if (ops->want_config ||
		 (!n->platform_checked && w->o->nr_platforms))
		ret = load_config(w, n, err);
	if (!ret && !json_object_object_get_ex(n->doc, "subject", &v)) {
		if (!n->platform_checked &&
		    !oci_platform_selected(w->o, n->config, true))
			ret = ops->skip;
		else
			ret = ops->manifest(w, n, out, err);
	}
	json_object_put(n->config);
	json_object_put(n->doc);
	return ret;
}

/* The document's first result kept for the next time it is named. */
static int remember(struct oci_walk *w, const struct oci_digest *d, int tag,
		    int r, struct json_object **out, struct imgfs_error *err)
{
	struct oci_memo_entry *e = oci_memo_add(&w->seen, d, tag);

	if (!e) {
		json_object_put(*out);
		*out = NULL;
		return error_set(err, -ENOMEM, "out of memory");
	}
	e->ret = r;
	if (!r && *out &&
	    !oci_digest_parse(oci_json_str(*out, "digest"), &e->out, "memo",
			      err))
		e->out_size = (uint64_t)json_object_get_int64(
			json_object_object_get(*out, "size"));
	return r;
}

int oci_walk_desc(struct oci_walk *w, struct json_object *desc, int depth,
		  struct json_object **out, struct imgfs_error *err)
{
	const char *mt = oci_json_str(desc, "mediaType");
	struct oci_walk_doc n = { .desc = desc, .depth = depth };
	bool index = oci_is_index_type(mt);
	const struct oci_memo_entry *e;
	struct json_object *p;
	int tag, r;

	*out = NULL;
	if (!index && !oci_is_manifest_type(mt))
		return w->ops->other;
	if (json_object_object_get_ex(desc, "platform", &p) &&
	    (!index || w->ops->index_platform)) {
		if (!oci_platform_selected(w->o, p, false))
			return w->ops->skip;
		n.platform_checked = !index;
	}
	tag = index ? TAG_INDEX
		    : n.platform_checked ? TAG_MANIFEST_CHECKED : TAG_MANIFEST;
	if (oci_desc_get(desc, &n.d, &n.size, NULL, "descriptor", err))
		return err->code;
	e = oci_memo_find(&w->seen, &n.d, tag);
	if (e)
		return w->ops->again ? w->ops->again(w, e, desc, out) : e->ret;
	r = index ? visit_index(w, &n, out, err)
		  : visit_manifest(w, &n, out, err);
	if (r < 0)
		return r;
	return remember(w, &n.d, tag, r, out, err);
}

int oci_walk_entries(struct oci_walk *w, struct json_object *entries,
		     struct imgfs_error *err)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < json_object_array_length(entries);
	     i++) {
		struct json_object *d = json_object_array_get_idx(entries, i);
		struct json_object *out;

		if (!oci_ref_selected(w->o, d))
			continue;
		ret = oci_walk_desc(w, d, 0, &out, err);
		json_object_put(out);
	}
	return ret;
}

/* The descriptors @doc names under @key (one, or an array of them). */
static int closure_of(struct oci_walk *w, struct json_object *doc,
		      const char *key, int depth,
		      int (*fn)(struct oci_walk *w, const struct oci_digest *d,
				uint64_t size, struct imgfs_error *err),
		      struct imgfs_error *err)
{
	struct json_object *v;
	int ret = 0;

	if (!json_object_object_get_ex(doc, key, &v))
		return 0;
	if (!strcmp(key, "config"))
		return oci_walk_closure(w, v, depth, fn, err);
	if (!json_object_is_type(v, json_type_array))
		return 0;
	for (size_t i = 0; !ret && i < json_object_array_length(v); i++)
		ret = oci_walk_closure(w, json_object_array_get_idx(v, i),
				       depth, fn, err);
	return ret;
}

int oci_walk_closure(struct oci_walk *w, struct json_object *desc, int depth,
		     int (*fn)(struct oci_walk *w, const struct oci_digest *d,
			       uint64_t size, struct imgfs_error *err),
		     struct imgfs_error *err)
{
	struct json_object *doc = NULL;
	struct oci_digest d;
	const char *mt;
	uint64_t size;
	int ret;

	ret = oci_check_depth(depth, err);
	if (!ret)
		ret = oci_desc_get(desc, &d, &size, &mt, "descriptor", err);
	if (ret || oci_memo_find(&w->seen, &d, TAG_CLOSURE))
		return ret;
	if (!oci_memo_add(&w->seen, &d, TAG_CLOSURE))
		return error_set(err, -ENOMEM, "out of memory");
	ret = fn(w, &d, size, err);
	if (ret || (!oci_is_index_type(mt) && !oci_is_manifest_type(mt)))
		return ret;
	ret = oci_json_load(w->root, &d, size, &doc, err);
	if (!ret)
		ret = closure_of(w, doc, "manifests", depth + 1, fn, err);
	if (!ret)
		ret = closure_of(w, doc, "config", depth + 1, fn, err);
	if (!ret)
		ret = closure_of(w, doc, "layers", depth + 1, fn, err);
	json_object_put(doc);
	return ret;
}

/* The full walk: every descriptor, in the role it is named in. */

/* An index's entry is an index, a manifest or another blob by its type. */
static enum imgfs_oci_blob_role entry_role(struct json_object *desc)
{
	const char *mt = oci_json_str(desc, "mediaType");

	if (oci_is_index_type(mt))
		return IMGFS_OCI_BLOB_INDEX;
	if (oci_is_manifest_type(mt))
		return IMGFS_OCI_BLOB_MANIFEST;
	return IMGFS_OCI_BLOB_OTHER;
}

static int all_doc(struct oci_walk *w, struct oci_walk_doc *n,
		   struct imgfs_error *err);

static int all_blob(struct oci_walk *w, struct oci_walk_doc *parent,
		    struct json_object *desc, enum imgfs_oci_blob_role role,
		    size_t place, struct imgfs_error *err)
{
	const struct oci_walk_ops *ops = w->ops;
	struct oci_walk_doc n = { .desc = desc,
				  .depth = parent->depth + 1,
				  .role = role,
				  .place = place };
	int got = ops->blob(w, parent, &n, err), ret = got, r = 0;

	if (got == OCI_WALK_INTO && n.doc &&
	    (role == IMGFS_OCI_BLOB_INDEX || role == IMGFS_OCI_BLOB_MANIFEST))
		ret = all_doc(w, &n, err);
	/* also when what it leads to stopped: the visitor's to free */
	if (got >= 0 && ops->blob_end)
		r = ops->blob_end(w, parent, &n, err);
	json_object_put(n.doc);
	return ret < 0 ? ret : r < 0 ? r : 0;
}

/* The array @key of @n: an index's entries, or a manifest's layers. */
static int all_list(struct oci_walk *w, struct oci_walk_doc *n, const char *key,
		    struct imgfs_error *err)
{
	struct json_object *list = oci_json_get(n->doc, key);
	bool entries = n->role == IMGFS_OCI_BLOB_INDEX;
	int ret = w->ops->list ? w->ops->list(w, n, key, list, err) : 0;

	if (ret || !json_object_is_type(list, json_type_array))
		return ret < 0 ? ret : 0;
	if (entries && n->depth > OCI_MAX_DEPTH)
		return w->ops->too_deep ? w->ops->too_deep(w, n, err)
					: oci_check_depth(n->depth, err);
	for (size_t i = 0; ret >= 0 && i < json_object_array_length(list);
	     i++) {
		struct json_object *d = json_object_array_get_idx(list, i);

		ret = all_blob(w, n, d,
			       entries ? entry_role(d) : IMGFS_OCI_BLOB_LAYER,
			       i, err);
	}
	return ret;
}

/* An index's entries; a manifest's config, then its layers. */
static int all_doc(struct oci_walk *w, struct oci_walk_doc *n,
		   struct imgfs_error *err)
{
	int ret;

	if (n->role == IMGFS_OCI_BLOB_INDEX)
		return all_list(w, n, "manifests", err);
	ret = all_blob(w, n, oci_json_get(n->doc, "config"),
		       IMGFS_OCI_BLOB_CONFIG, 0, err);
	if (ret >= 0)
		ret = all_list(w, n, "layers", err);
	return ret;
}

int oci_walk_all(struct oci_walk *w, struct json_object *index, void *priv,
		 struct imgfs_error *err)
{
	struct oci_walk_doc top = { .doc = index,
				    .priv = priv,
				    .role = IMGFS_OCI_BLOB_INDEX };
	int ret = all_doc(w, &top, err);

	return ret < 0 ? ret : 0;
}
