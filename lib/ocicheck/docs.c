// SPDX-License-Identifier: MIT
/*
 * ocicheck/docs.c - the layout check as a visitor of the one walk over
 * a layout's documents (oci/walk.h, oci_walk_all): every descriptor is
 * met in the role it is named in (check.c keeps what was met: each blob
 * is checked once), each index and manifest read is walked into, paired
 * with the source document it was converted from (source.c), and the
 * documents are checked against what they name once that is checked: a
 * manifest's config and layers (diff_ids, os.features), an index entry's
 * platform. A finding is reported and the walk goes on; only running
 * out of memory (or a layer check that cannot go on) stops it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/walk.h"
#include "ocicheck/check.h"
#include "util/error.h"

static const char *const config_types[] = {
	"application/vnd.oci.image.config.v1+json",
	"application/vnd.docker.container.image.v1+json",
};

/* The OCI empty descriptor's type: an artifact's config (or layer). */
#define OCI_EMPTY_TYPE "application/vnd.oci.empty.v1+json"

/* What the walk carries for one descriptor: its walk doc's priv. */
struct chk_node {
	struct chk_blob *b; /* NULL: index.json, or no descriptor */
	char where[OCI_DIGEST_MAX + 64]; /* where it is named */
	char dwhere[OCI_DIGEST_MAX + 16]; /* a document: its findings' place */
	struct json_object *src; /* the source descriptor paired with */
	/* the source index (an index), the source manifest (a manifest) */
	struct json_object *sdoc;
	struct json_object *slist; /* a manifest: the source's layers */
	struct chk_blob *cfg; /* a manifest: its config, parsed */
	struct json_object *config;
	struct chk_blob **layers; /* its layers, @n of them */
	size_t n;
};

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

/* The walk's result: stop once the run failed. */
static int stop(struct oci_chk *c)
{
	if (!c->failed)
		return 0;
	return c->err->code ? c->err->code : -ENOMEM;
}

static int oom(struct oci_chk *c)
{
	c->failed = true;
	return error_set(c->err, -ENOMEM, "out of memory");
}

static void node_free(struct chk_node *m)
{
	json_object_put(m->sdoc);
	json_object_put(m->config);
	free(m->layers);
	free(m);
}

/* The config's diff_ids against the manifest's layers. */
static void check_diff_ids(struct oci_chk *c, struct chk_blob *cfg,
			   struct json_object *config, struct chk_blob **layers,
			   size_t n, const char *mwhere)
{
	struct json_object *ids =
		oci_json_get(oci_json_get(config, "rootfs"), "diff_ids");
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
		chk_report(
			c, cfg, image ? IMGFS_CHECK_ERROR : IMGFS_CHECK_WARNING,
			mwhere, "config %s has no rootfs.diff_ids array%s",
			cfg->digest.str,
			image ? ""
			      : " (an artifact: no layer of it is an image layer)");
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
		error_set(c->err, r, "out of memory");
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
	list = oci_json_get(*srcm, "layers");
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

/* An index's entry: its manifest's EROFS layers need "erofs" in its
 * platform's os.features (containerd picks its snapshotter from it). */
static void check_entry(struct oci_chk *c, struct chk_node *m,
			struct json_object *desc)
{
	struct json_object *plat = oci_json_get(desc, "platform");

	if (m->b && m->b->has_erofs && plat &&
	    !array_has(oci_json_get(plat, "os.features"), "erofs"))
		chk_report(
			c, m->b, IMGFS_CHECK_ERROR, m->where,
			"the platform of %s in %s lacks \"erofs\" in os.features",
			m->b->digest.str, m->where);
}

/* The manifest @m, its config and layers checked: what they must agree on. */
static void check_manifest(struct oci_chk *c, struct chk_node *m)
{
	struct chk_blob *b = m->b, *cfg = m->cfg;

	if (c->failed)
		return;
	/* Docker's schema 2 lists the layer types it allows (skopeo refuses
	 * others); containerd reads such a manifest all the same */
	if (b->has_erofs && b->media_type &&
	    !strcmp(b->media_type,
		    "application/vnd.docker.distribution.manifest.v2+json"))
		chk_report(
			c, b, IMGFS_CHECK_WARNING, m->dwhere,
			"%s is a Docker schema 2 manifest with EROFS layers, a layer type that schema does not allow (skopeo refuses it; an OCI manifest would not be)",
			m->dwhere);
	if (!m->config)
		return;
	check_diff_ids(c, cfg, m->config, m->layers, m->n, m->dwhere);
	if (b->has_erofs &&
	    !array_has(oci_json_get(m->config, "os.features"), "erofs"))
		chk_report(
			c, cfg, IMGFS_CHECK_ERROR, m->dwhere,
			"config %s of %s, which has EROFS layers, lacks \"erofs\" in os.features",
			cfg->digest.str, m->dwhere);
}

/*
 * The new index or manifest @m->b: read, to be walked into (n->doc),
 * an index with the source index it was converted from.
 */
static void check_doc(struct oci_chk *c, struct oci_walk_doc *n,
		      struct chk_node *m)
{
	bool index = n->role == IMGFS_OCI_BLOB_INDEX;

	if (index)
		c->res->indexes++;
	else
		c->res->manifests++;
	n->doc = chk_load_json(c, m->b);
	if (!n->doc)
		return;
	snprintf(m->dwhere, sizeof(m->dwhere), "%s %s",
		 index ? "index" : "manifest", m->b->digest.str);
	if (index && m->src)
		m->sdoc = chk_source_load(c, m->b, m->src, m->dwhere);
}

/* The new blob @m->b, checked in its role. */
static void check_blob(struct oci_chk *c, struct oci_walk_doc *n,
		       struct chk_node *m)
{
	struct chk_blob *b = m->b;
	const char *mt = b->media_type;

	switch (n->role) {
	case IMGFS_OCI_BLOB_INDEX:
	case IMGFS_OCI_BLOB_MANIFEST:
		check_doc(c, n, m);
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
		if (chk_present(c, b) && chk_verify(c, b) < 0)
			c->failed = true;
		break;
	case IMGFS_OCI_BLOB_LAYER:
		c->res->layers++;
		if (chk_present(c, b) &&
		    chk_layer(c, b, n->desc, m->src, b->where) < 0)
			c->failed = true;
		break;
	case IMGFS_OCI_BLOB_OTHER:
		if (mt)
			chk_report(
				c, b, IMGFS_CHECK_WARNING, b->where,
				"blob %s has the unknown media type %s (only its digest and size are checked)",
				b->digest.str, mt);
		if (chk_present(c, b) && chk_verify(c, b) < 0)
			c->failed = true;
		break;
	}
}

/*
 * Where @n is named in @p, and the source descriptor it is paired with:
 * an entry's by source.c, a layer's at its place in the source manifest.
 */
static void place(struct oci_chk *c, struct chk_node *p, struct oci_walk_doc *n,
		  struct chk_node *m)
{
	switch (n->role) {
	case IMGFS_OCI_BLOB_CONFIG:
		snprintf(m->where, sizeof(m->where), "%s", p->dwhere);
		break;
	case IMGFS_OCI_BLOB_LAYER:
		snprintf(m->where, sizeof(m->where), "%s, layer %zu", p->dwhere,
			 n->place);
		if (p->slist)
			m->src = json_object_array_get_idx(p->slist, n->place);
		break;
	default:
		snprintf(m->where, sizeof(m->where), "%s, entry %zu", p->dwhere,
			 n->place);
		if (p->sdoc)
			m->src = chk_source_entry(c, p->b, p->sdoc, n->desc,
						  !p->b, m->where);
	}
}

static int on_blob(struct oci_walk *w, struct oci_walk_doc *parent,
		   struct oci_walk_doc *n, struct imgfs_error *err)
{
	struct oci_chk *c = w->arg;
	struct chk_node *m = calloc(1, sizeof(*m));
	bool fresh;

	(void)err;
	if (!m)
		return oom(c);
	n->priv = m;
	place(c, parent->priv, n, m);
	m->b = chk_meet(c, n->desc, n->role, m->src, m->where, &fresh);
	if (m->b && fresh)
		check_blob(c, n, m);
	/* a failed run stops after on_blob_end (its parent learns of it) */
	return n->doc ? OCI_WALK_INTO : 0;
}

/* @n and what it leads to checked: what its parent learns from it. */
static int on_blob_end(struct oci_walk *w, struct oci_walk_doc *parent,
		       struct oci_walk_doc *n, struct imgfs_error *err)
{
	struct oci_chk *c = w->arg;
	struct chk_node *p = parent->priv, *m = n->priv;
	int ret;

	(void)err;
	switch (n->role) {
	case IMGFS_OCI_BLOB_CONFIG:
		p->cfg = m->b;
		p->config = load_config(c, m->b, p->dwhere);
		break;
	case IMGFS_OCI_BLOB_LAYER:
		p->layers[n->place] = m->b;
		if (m->b && m->b->erofs)
			p->b->has_erofs = true;
		break;
	default:
		if (n->doc && n->role == IMGFS_OCI_BLOB_MANIFEST)
			check_manifest(c, m);
		check_entry(c, m, n->desc);
	}
	ret = stop(c);
	node_free(m);
	return ret;
}

/* An index's entries, a manifest's layers (with its source's). */
static int on_list(struct oci_walk *w, struct oci_walk_doc *n, const char *key,
		   struct json_object *list, struct imgfs_error *err)
{
	struct oci_chk *c = w->arg;
	struct chk_node *m = n->priv;

	(void)key;
	(void)err;
	if (n->role == IMGFS_OCI_BLOB_INDEX) {
		if (json_object_is_type(list, json_type_array))
			return stop(c);
		chk_report(c, m->b, IMGFS_CHECK_ERROR, m->dwhere,
			   "%s has no \"manifests\" array", m->dwhere);
		return 1;
	}
	if (list && !json_object_is_type(list, json_type_array)) {
		chk_report(c, m->b, IMGFS_CHECK_ERROR, m->dwhere,
			   "%s: \"layers\" is not an array", m->dwhere);
		list = NULL;
	}
	m->n = list ? json_object_array_length(list) : 0;
	m->slist = source_layers(c, m->b, m->src, m->n, m->dwhere, &m->sdoc);
	m->layers = calloc(m->n ? m->n : 1, sizeof(*m->layers));
	return m->layers ? stop(c) : oom(c);
}

static int on_too_deep(struct oci_walk *w, struct oci_walk_doc *n,
		       struct imgfs_error *err)
{
	struct chk_node *m = n->priv;

	(void)err;
	chk_report(w->arg, m->b, IMGFS_CHECK_ERROR, m->dwhere,
		   "indexes nested more than %d deep at %s", OCI_MAX_DEPTH,
		   m->dwhere);
	return 0;
}

static const struct oci_walk_ops chk_walk_ops = {
	.blob = on_blob,
	.blob_end = on_blob_end,
	.list = on_list,
	.too_deep = on_too_deep,
};

void chk_walk(struct oci_chk *c, struct json_object *index,
	      struct json_object *sindex)
{
	struct chk_node top = { .sdoc = sindex };
	struct oci_walk w;

	snprintf(top.dwhere, sizeof(top.dwhere), "index.json");
	/* no selection: the whole layout is checked */
	oci_walk_init(&w, c->root, NULL, &chk_walk_ops, c);
	if (oci_walk_all(&w, index, &top, c->err) < 0)
		c->failed = true;
	oci_walk_free(&w);
}
