// SPDX-License-Identifier: MIT
/*
 * ocicheck/check.c - checking an OCI image layout (imgfs/oci.h, fsck.img
 * --oci): every blob that index.json leads to, through nested indexes,
 * manifests and configs, is verified against the descriptors naming it,
 * once per role it is named in; the documents must parse and agree with
 * each other (diff_ids, os.features); EROFS layers go through the image
 * checker (layer.c) and, with a source layout, the
 * comparison with their source layer. Blobs are read with the blob reader of
 * lib/oci/blob.c, which checks size and digest as it streams.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf */
#endif
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "ocicheck/check.h"
#include "util/error.h"
#include "util/sized.h"

static const char *const config_types[] = {
	"application/vnd.oci.image.config.v1+json",
	"application/vnd.docker.container.image.v1+json",
};

/* The OCI empty descriptor's type: an artifact's config (or layer). */
#define OCI_EMPTY_TYPE "application/vnd.oci.empty.v1+json"

const char *imgfs_oci_blob_role_name(enum imgfs_oci_blob_role r)
{
	switch (r) {
	case IMGFS_OCI_BLOB_INDEX:
		return "index";
	case IMGFS_OCI_BLOB_MANIFEST:
		return "manifest";
	case IMGFS_OCI_BLOB_CONFIG:
		return "config";
	case IMGFS_OCI_BLOB_LAYER:
		return "layer";
	case IMGFS_OCI_BLOB_OTHER:
		return "blob";
	}
	return "blob";
}

void imgfs_oci_check_options_init(struct imgfs_oci_check_options *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
	o->max_differences = 20;
}

/*
 * Blobs are met per (digest, role, media type): what is checked depends
 * on all three, so a layer first named as a config or as an unknown type
 * is still checked as the layer it also is.
 */
struct blob_key {
	const struct oci_digest *digest;
	enum imgfs_oci_blob_role role;
	const char *media_type;
	/* documents paired with different sources are checked for each */
	const struct oci_digest *pair;
};

static bool blob_eq(const struct imgfs_hnode *n, const void *key)
{
	const struct chk_blob *b = imgfs_container_of(n, struct chk_blob, node);
	const struct blob_key *k = key;

	if (b->role != k->role || strcmp(b->digest.str, k->digest->str) ||
	    b->paired != !!k->pair ||
	    (k->pair && strcmp(b->pair.str, k->pair->str)))
		return false;
	if (!b->media_type || !k->media_type)
		return b->media_type == k->media_type;
	return !strcmp(b->media_type, k->media_type);
}

static uint64_t digest_hash(const struct oci_digest *d)
{
	uint64_t h;

	memcpy(&h, d->raw, sizeof(h));
	return h;
}

static struct chk_blob *blob_find(struct oci_chk *c, const struct blob_key *k)
{
	struct imgfs_hnode *n = imgfs_hashtab_find(
		&c->blobs, digest_hash(k->digest), blob_eq, k);

	return n ? imgfs_container_of(n, struct chk_blob, node) : NULL;
}

static struct chk_blob *blob_new(struct oci_chk *c, const struct blob_key *k,
				 uint64_t size, const char *where)
{
	const struct oci_digest *d = k->digest;
	const char *mt = k->media_type;
	struct chk_blob *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->digest = *d;
	b->size = size;
	b->role = k->role;
	b->paired = k->pair;
	if (k->pair)
		b->pair = *k->pair;
	b->media_type = mt ? strdup(mt) : NULL;
	b->where = strdup(where);
	b->path = oci_blob_path(c->root, d);
	if ((mt && !b->media_type) || !b->where || !b->path ||
	    imgfs_hashtab_insert(&c->blobs, &b->node, digest_hash(d))) {
		free(b->media_type);
		free(b->where);
		free(b->path);
		free(b);
		return NULL;
	}
	*c->tail = b;
	c->tail = &b->next;
	c->res->blobs++;
	return b;
}

/*
 * Is the blob there with its descriptor's size? Reports what is not;
 * true when reading it makes sense.
 */
static bool blob_present(struct oci_chk *c, struct chk_blob *b)
{
	struct stat st;
	char rel[96];
	int fd;

	/* as the reader opens it: no link followed, no FIFO waited on */
	snprintf(rel, sizeof(rel), "blobs/sha256/%s",
		 oci_digest_hex(&b->digest));
	fd = oci_open(c->root, rel, O_PATH, 0);
	if (fd < 0 || fstat(fd, &st)) {
		errno = fd < 0 ? -fd : errno;
		if (fd >= 0)
			close(fd);
		/* often absent: mkfs.img --oci keeps them so (docs/oci.md) */
		if (errno == ENOENT && b->role == IMGFS_OCI_BLOB_LAYER &&
		    oci_layer_kind(b->media_type) == OCI_LAYER_NONDIST) {
			chk_report(
				c, b, IMGFS_CHECK_NOTE, b->where,
				"non-distributable layer %s is not in the layout: not checked",
				b->digest.str);
			return false;
		}
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "blob %s (%s) is missing: %s", b->digest.str,
			   imgfs_oci_blob_role_name(b->role), strerror(errno));
		return false;
	}
	close(fd);
	if (!S_ISREG(st.st_mode)) {
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where,
			   "blob %s is not a regular file", b->digest.str);
		return false;
	}
	b->present = true;
	b->actual_size = (uint64_t)st.st_size;
	if (b->actual_size != b->size) {
		chk_report(
			c, b, IMGFS_CHECK_ERROR, b->where,
			"blob %s has %llu bytes, its descriptor in %s gives %llu",
			b->digest.str, (unsigned long long)b->actual_size,
			b->where, (unsigned long long)b->size);
		return false;
	}
	return true;
}

/* A JSON blob, verified and parsed; NULL (reported) when it is not. */
static struct json_object *load_json(struct oci_chk *c, struct chk_blob *b)
{
	struct json_object *doc = NULL;
	struct imgfs_error e = { 0 };
	int ret;

	if (!blob_present(c, b))
		return NULL;
	ret = oci_json_load(c->root, &b->digest, b->size, &doc, &e);
	if (ret == -ENOMEM) {
		imgfs_error_set(c->err, ret, "out of memory");
		c->failed = true;
		return NULL;
	}
	c->res->bytes += b->size;
	if (ret) {
		chk_report(c, b, IMGFS_CHECK_ERROR, b->where, "%s", e.msg);
		return NULL;
	}
	b->verified = true;
	return doc;
}

static bool in_list(const char *s, const char *const *l, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		if (!strcmp(s, l[i]))
			return true;
	return false;
}

/* Does the string array @arr hold @s? */
static bool array_has(struct json_object *arr, const char *s)
{
	size_t n;

	if (!arr || !json_object_is_type(arr, json_type_array))
		return false;
	n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(arr, i);

		if (json_object_is_type(v, json_type_string) &&
		    !strcmp(json_object_get_string(v), s))
			return true;
	}
	return false;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static struct chk_blob *visit(struct oci_chk *c, struct json_object *desc,
			      enum imgfs_oci_blob_role role, const char *where,
			      unsigned int depth, struct json_object *src);

/*
 * The entries of the index @b (NULL: index.json); @sdoc is the source
 * index it was converted from (NULL: none, or no comparison).
 */
static void check_index(struct oci_chk *c, struct chk_blob *b,
			struct json_object *doc, const char *where,
			unsigned int depth, struct json_object *sdoc)
{
	struct json_object *list = get(doc, "manifests");
	size_t n;

	if (!json_object_is_type(list, json_type_array)) {
		chk_report(c, b, IMGFS_CHECK_ERROR, where,
			   "%s has no \"manifests\" array", where);
		return;
	}
	if (depth > OCI_MAX_DEPTH) {
		chk_report(c, b, IMGFS_CHECK_ERROR, where,
			   "indexes nested more than %d deep at %s",
			   OCI_MAX_DEPTH, where);
		return;
	}
	n = json_object_array_length(list);
	for (size_t i = 0; i < n && !c->failed; i++) {
		struct json_object *d = json_object_array_get_idx(list, i);
		struct json_object *plat = get(d, "platform"), *src = NULL;
		struct chk_blob *m;
		char *w;

		if (asprintf(&w, "%s, entry %zu", where, i) < 0) {
			c->failed = true;
			imgfs_error_set(c->err, -ENOMEM, "out of memory");
			return;
		}
		if (sdoc)
			src = chk_source_entry(c, b, sdoc, d, !b, w);
		m = visit(c, d, IMGFS_OCI_BLOB_OTHER, w, depth + 1, src);
		/* containerd picks its EROFS snapshotter from the platform */
		if (m && m->has_erofs && plat &&
		    !array_has(get(plat, "os.features"), "erofs"))
			chk_report(
				c, m, IMGFS_CHECK_ERROR, w,
				"the platform of %s in %s lacks \"erofs\" in os.features",
				m->digest.str, w);
		free(w);
	}
}

/* The config's diff_ids against the manifest's layers. */
static void check_diff_ids(struct oci_chk *c, struct chk_blob *cfg,
			   struct json_object *config, struct chk_blob **layers,
			   size_t n, const char *mwhere)
{
	struct json_object *ids = get(get(config, "rootfs"), "diff_ids");
	size_t nids;

	if (!json_object_is_type(ids, json_type_array)) {
		bool image = false;

		/* an artifact (a signature) has layers nobody unpacks */
		for (size_t i = 0; i < n; i++)
			if (layers[i] &&
			    (layers[i]->erofs ||
			     oci_layer_kind(layers[i]->media_type) !=
				     OCI_LAYER_OTHER))
				image = true;
		chk_report(c, cfg,
			   image ? IMGFS_CHECK_ERROR : IMGFS_CHECK_WARNING,
			   mwhere, "config %s has no rootfs.diff_ids array%s",
			   cfg->digest.str,
			   image ? "" : " (an artifact: no layer of it is an image layer)");
		return;
	}
	nids = json_object_array_length(ids);
	if (nids != n)
		chk_report(
			c, cfg, IMGFS_CHECK_ERROR, mwhere,
			"config %s lists %zu diff_ids for the %zu layers of %s",
			cfg->digest.str, nids, n, mwhere);
	for (size_t i = 0; i < n && i < nids; i++) {
		struct json_object *v = json_object_array_get_idx(ids, i);
		const char *id = json_object_is_type(v, json_type_string)
					 ? json_object_get_string(v)
					 : "(not a string)";

		if (!layers[i] || !layers[i]->have_diff_id)
			continue;
		if (strcmp(id, layers[i]->diff_id.str))
			chk_report(
				c, cfg, IMGFS_CHECK_ERROR, mwhere,
				"config %s: diff_ids[%zu] is %s, but layer %zu (%s) uncompressed has %s",
				cfg->digest.str, i, id, i,
				layers[i]->digest.str, layers[i]->diff_id.str);
	}
}

/* The config @cfg of @mwhere parsed, or NULL (reported when it is bad). */
static struct json_object *load_config(struct oci_chk *c, struct chk_blob *cfg,
				       const char *mwhere)
{
	struct json_object *config = NULL;
	struct imgfs_error e = { 0 };
	int r;

	if (!cfg || !cfg->present || !cfg->verified ||
	    !in_list(cfg->media_type, config_types,
		     sizeof(config_types) / sizeof(*config_types)))
		return NULL;
	r = oci_json_load(c->root, &cfg->digest, cfg->size, &config, &e);
	if (r == -ENOMEM) {
		c->failed = true;
		imgfs_error_set(c->err, r, "out of memory");
	} else if (r) {
		/* else diff_ids and os.features would go unchecked */
		chk_report(c, cfg, IMGFS_CHECK_ERROR, mwhere,
			   "config %s of %s: %s", cfg->digest.str, mwhere,
			   e.msg);
	}
	return config;
}

/*
 * The layers of the source manifest @sdesc names (NULL: none), which
 * must be as many as @n.
 */
static struct json_object *source_layers(struct oci_chk *c, struct chk_blob *b,
					 struct json_object *sdesc, size_t n,
					 const char *mwhere,
					 struct json_object **srcm)
{
	struct json_object *list;

	*srcm = sdesc ? chk_source_load(c, b, sdesc, mwhere) : NULL;
	if (!*srcm)
		return NULL;
	list = get(*srcm, "layers");
	if (!json_object_is_type(list, json_type_array))
		list = NULL;
	if ((list ? json_object_array_length(list) : 0) != n)
		chk_report(
			c, b, IMGFS_CHECK_ERROR, mwhere,
			"%s has %zu layers, the source manifest %s it was converted from %zu",
			mwhere, n, oci_json_str(sdesc, "digest"),
			list ? json_object_array_length(list) : 0);
	return list;
}

/*
 * The manifest @b; with a source layout, @sdesc names the source
 * manifest it was converted from, whose layers are its layers' sources,
 * place by place.
 */
static void check_manifest(struct oci_chk *c, struct chk_blob *b,
			   struct json_object *doc, struct json_object *sdesc)
{
	struct json_object *cdesc = get(doc, "config");
	struct json_object *list = get(doc, "layers");
	struct json_object *config = NULL, *srcm = NULL, *slist;
	struct chk_blob *cfg, **layers = NULL;
	char *mwhere = NULL;
	size_t n = 0;

	if (asprintf(&mwhere, "manifest %s", b->digest.str) < 0)
		goto oom;
	cfg = visit(c, cdesc, IMGFS_OCI_BLOB_CONFIG, mwhere, 0, NULL);
	config = load_config(c, cfg, mwhere);
	if (list && !json_object_is_type(list, json_type_array)) {
		chk_report(c, b, IMGFS_CHECK_ERROR, mwhere,
			   "%s: \"layers\" is not an array", mwhere);
		list = NULL;
	}
	n = list ? json_object_array_length(list) : 0;
	slist = source_layers(c, b, sdesc, n, mwhere, &srcm);
	layers = calloc(n ? n : 1, sizeof(*layers));
	if (!layers)
		goto oom;
	for (size_t i = 0; i < n && !c->failed; i++) {
		char *w;

		if (asprintf(&w, "%s, layer %zu", mwhere, i) < 0)
			goto oom;
		layers[i] = visit(c, json_object_array_get_idx(list, i),
				  IMGFS_OCI_BLOB_LAYER, w, 0,
				  slist ? json_object_array_get_idx(slist, i)
					: NULL);
		if (layers[i] && layers[i]->erofs)
			b->has_erofs = true;
		free(w);
	}
	if (c->failed)
		goto out;
	/* Docker's schema 2 lists the layer types it allows (skopeo refuses
	 * others); containerd reads such a manifest all the same */
	if (b->has_erofs && b->media_type &&
	    !strcmp(b->media_type,
		    "application/vnd.docker.distribution.manifest.v2+json"))
		chk_report(
			c, b, IMGFS_CHECK_WARNING, mwhere,
			"%s is a Docker schema 2 manifest with EROFS layers, a layer type that schema does not allow (skopeo refuses it; an OCI manifest would not be)",
			mwhere);
	if (config) {
		check_diff_ids(c, cfg, config, layers, n, mwhere);
		if (b->has_erofs &&
		    !array_has(get(config, "os.features"), "erofs"))
			chk_report(
				c, cfg, IMGFS_CHECK_ERROR, mwhere,
				"config %s of %s, which has EROFS layers, lacks \"erofs\" in os.features",
				cfg->digest.str, mwhere);
	}
	goto out;
oom:
	c->failed = true;
	imgfs_error_set(c->err, -ENOMEM, "out of memory");
out:
	json_object_put(srcm);
	json_object_put(config);
	free(layers);
	free(mwhere);
}

/* A descriptor met again: it must agree with the blob. */
static void check_again(struct oci_chk *c, struct chk_blob *b, uint64_t size,
			const char *where)
{
	if (size == b->size || !b->present)
		return;
	chk_report(c, b, IMGFS_CHECK_ERROR, where,
		   "blob %s has %llu bytes, its descriptor in %s gives %llu",
		   b->digest.str, (unsigned long long)b->actual_size, where,
		   (unsigned long long)size);
}

/* An index or a manifest, paired with the source document @src. */
static void visit_doc(struct oci_chk *c, struct chk_blob *b, unsigned int depth,
		      struct json_object *src)
{
	struct json_object *doc, *sdoc = NULL;
	char *iwhere;

	if (b->role == IMGFS_OCI_BLOB_MANIFEST) {
		c->res->manifests++;
		doc = load_json(c, b);
		if (doc)
			check_manifest(c, b, doc, src);
		json_object_put(doc);
		return;
	}
	c->res->indexes++;
	doc = load_json(c, b);
	if (!doc)
		return;
	if (asprintf(&iwhere, "index %s", b->digest.str) < 0) {
		c->failed = true;
		imgfs_error_set(c->err, -ENOMEM, "out of memory");
	} else {
		if (src)
			sdoc = chk_source_load(c, b, src, iwhere);
		check_index(c, b, doc, iwhere, depth, sdoc);
		free(iwhere);
	}
	json_object_put(sdoc);
	json_object_put(doc);
}

/* The new blob @b, checked in its role. */
static void visit_blob(struct oci_chk *c, struct chk_blob *b,
		       struct json_object *desc, unsigned int depth,
		       struct json_object *src)
{
	const char *mt = b->media_type;

	switch (b->role) {
	case IMGFS_OCI_BLOB_INDEX:
	case IMGFS_OCI_BLOB_MANIFEST:
		visit_doc(c, b, depth, src);
		break;
	case IMGFS_OCI_BLOB_CONFIG:
		c->res->configs++;
		if (!in_list(mt, config_types,
			     sizeof(config_types) / sizeof(*config_types)) &&
		    mt && strcmp(mt, OCI_EMPTY_TYPE))
			chk_report(
				c, b, IMGFS_CHECK_WARNING, b->where,
				"config %s has the unknown media type %s (not an image: diff_ids not checked)",
				b->digest.str, mt);
		/* parsed by the manifest's check, which needs its content */
		if (blob_present(c, b) && chk_verify(c, b) < 0)
			c->failed = true;
		break;
	case IMGFS_OCI_BLOB_LAYER:
		c->res->layers++;
		if (blob_present(c, b) &&
		    chk_layer(c, b, desc, src, b->where) < 0)
			c->failed = true;
		break;
	case IMGFS_OCI_BLOB_OTHER:
		if (mt)
			chk_report(
				c, b, IMGFS_CHECK_WARNING, b->where,
				"blob %s has the unknown media type %s (only its digest and size are checked)",
				b->digest.str, mt);
		if (blob_present(c, b) && chk_verify(c, b) < 0)
			c->failed = true;
		break;
	}
}

/*
 * The blob @desc names, in @role, checked unless it was in that role
 * with that media type (and source document @src) already.
 */
static struct chk_blob *visit(struct oci_chk *c, struct json_object *desc,
			      enum imgfs_oci_blob_role role, const char *where,
			      unsigned int depth, struct json_object *src)
{
	struct imgfs_error e = { 0 };
	struct blob_key k = { 0 };
	struct oci_digest d, sd;
	struct chk_blob *b;
	uint64_t size, ssize;

	if (oci_desc_get(desc, &d, &size, &k.media_type, where, &e)) {
		chk_report(c, NULL, IMGFS_CHECK_ERROR, where, "%s", e.msg);
		return NULL;
	}
	if (role == IMGFS_OCI_BLOB_OTHER) {
		if (oci_is_index_type(k.media_type))
			role = IMGFS_OCI_BLOB_INDEX;
		else if (oci_is_manifest_type(k.media_type))
			role = IMGFS_OCI_BLOB_MANIFEST;
	}
	k.digest = &d;
	k.role = role;
	if (src && role != IMGFS_OCI_BLOB_LAYER &&
	    !oci_desc_get(src, &sd, &ssize, NULL, where, &e))
		k.pair = &sd;
	b = blob_find(c, &k);
	if (b) {
		check_again(c, b, size, where);
		if (role == IMGFS_OCI_BLOB_LAYER &&
		    chk_layer_again(c, b, desc, src, where) < 0)
			c->failed = true;
		return b;
	}
	b = blob_new(c, &k, size, where);
	if (!b) {
		c->failed = true;
		imgfs_error_set(c->err, -ENOMEM, "out of memory");
		return NULL;
	}
	if (!k.media_type)
		chk_report(c, b, IMGFS_CHECK_ERROR, where,
			   "the descriptor of %s in %s has no mediaType",
			   b->digest.str, where);
	visit_blob(c, b, desc, depth, src);
	return b;
}

/*
 * A small JSON file of the layout @root itself (not a blob); NULL if bad.
 * Findings name it @name in the layout checked, by its path in another.
 */
static struct json_object *load_file(struct oci_chk *c, const char *root,
				     const char *name)
{
	struct json_object *doc;
	struct imgfs_error e = { 0 };
	int ret = oci_read_json_file(root, name, &doc, &e);
	char where[PATH_MAX];

	/* findings name it by its path when it is another layout's */
	if (root != c->root) {
		snprintf(where, sizeof(where), "%s/%s", root, name);
		name = where;
	}
	if (ret == -ENOMEM) {
		c->failed = true;
		imgfs_error_set(c->err, ret, "out of memory");
	} else if (ret == -ENOENT) {
		chk_report(c, NULL, IMGFS_CHECK_ERROR, name,
			   "%s is missing: %s", name, strerror(-ret));
	} else if (ret == -EBADMSG) {
		chk_report(c, NULL, IMGFS_CHECK_ERROR, name,
			   "%s is not a JSON object", name);
	} else if (ret) {
		chk_report(c, NULL, IMGFS_CHECK_ERROR, name, "%s", e.msg);
	}
	return doc;
}

static void leftover(const char *msg, void *arg)
{
	chk_report(arg, NULL, IMGFS_CHECK_WARNING, "layout", "%s", msg);
}

static void report_blobs(struct oci_chk *c)
{
	for (struct chk_blob *b = c->first; b; b = b->next) {
		struct imgfs_oci_blob_result r = {
			.digest = b->digest.str,
			.media_type = b->media_type,
			.role = b->role,
			.size = b->size,
			.where = b->where,
			.present = b->present,
			.verified = b->verified,
			.diff_id = b->have_diff_id ? b->diff_id.str : NULL,
			.erofs = b->erofs,
			.check = b->check,
			.dm_verity = b->dm_verity,
			.dm_verity_ok = b->dm_verity_ok,
			.source = b->source,
			.compared = b->compared,
			.compare = b->compare,
			.errors = b->errors,
			.warnings = b->warnings,
		};

		c->o->blob(c->o->blob_arg, &r);
	}
}

int imgfs_oci_check(const char *dir, const struct imgfs_oci_check_options *in,
		    struct imgfs_oci_check_result *res, struct imgfs_error *err)
{
	struct imgfs_oci_check_options full, *o = &full;
	struct oci_chk c = { .root = dir, .o = o, .res = res, .err = err };
	struct json_object *doc, *sdoc = NULL;
	struct stat st;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	res->struct_size = sizeof(*res);
	imgfs_oci_check_options_init(&full);
	if (!in)
		return imgfs_error_set(err, -EINVAL, "no OCI check options");
	ret = SIZED_IN(&full, in, sizeof(full), "OCI check options", err);
	if (ret)
		return ret;
	c.tail = &c.first;
	if (stat(dir, &st))
		return imgfs_error_set(err, -errno, "%s: %s", dir,
				       strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return imgfs_error_set(
			err, -ENOTDIR,
			"%s: not a directory (an OCI image layout is one)",
			dir);
	if (o->compare_src &&
	    (stat(o->compare_src, &st) || !S_ISDIR(st.st_mode)))
		return imgfs_error_set(
			err, -ENOTDIR,
			"%s: the source layout is not a directory",
			o->compare_src);
	doc = load_file(&c, dir, "oci-layout");
	if (doc && (!oci_json_str(doc, "imageLayoutVersion") ||
		    strcmp(oci_json_str(doc, "imageLayoutVersion"), "1.0.0")))
		chk_report(&c, NULL, IMGFS_CHECK_ERROR, "oci-layout",
			   "oci-layout: imageLayoutVersion is not \"1.0.0\"");
	json_object_put(doc);
	doc = c.failed ? NULL : load_file(&c, dir, "index.json");
	if (doc && o->compare_src)
		sdoc = load_file(&c, o->compare_src, "index.json");
	if (doc)
		check_index(&c, NULL, doc, "index.json", 0, sdoc);
	json_object_put(sdoc);
	json_object_put(doc);
	/* what writers without O_TMPFILE left (the rule of blob.c) */
	oci_tmpname_scan(dir, "blobs/sha256", false, leftover, &c);
	oci_tmpname_scan(dir, ".", false, leftover, &c);
	if (c.failed)
		ret = err->code ? err->code : -ENOMEM;
	else if (o->blob)
		report_blobs(&c);
	while (c.first) {
		struct chk_blob *b = c.first;

		c.first = b->next;
		free(b->media_type);
		free(b->where);
		free(b->path);
		free(b->source);
		free(b->sources);
		free(b);
	}
	imgfs_hashtab_free(&c.blobs);
	return ret;
}
