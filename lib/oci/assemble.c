// SPDX-License-Identifier: MIT
/*
 * The second step: from the units present in the destination, new
 * configs (rootfs.diff_ids = digests of the uncompressed EROFS blobs,
 * "erofs" in os.features), manifests (layers replaced), indexes (platform
 * os.features += "erofs") and index.json, every other field kept as the
 * source has it. Referrers of converted manifests, manifests without tar
 * layers and blobs of unknown types pass through untouched. JSON is
 * written with json-c's insertion order, so two runs give the same bytes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, O_TMPFILE, pipe2 */
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/internal.h"
#include "oci/walk.h"
#include "util/error.h"

#define REF_NAME_KEY "org.opencontainers.image.ref.name"

/* Source layer annotations describing the source blob itself: dropped. */
static const char *const tar_annotation_prefixes[] = {
	"containerd.io/snapshot/stargz/",
	"containerd.io/uncompressed",
	"io.containers.zstd-chunked.",
	"io.github.containers.zstd-chunked.",
	"io.containers.estargz.",
	"org.opencontainers.image.toc",
	"org.erofs.dmverity.",
};

struct assemble {
	const struct oci_run *run;
	struct oci_layout *l;
	struct imgfs_oci_stats *st;
	/* digests of the source manifests converted (for referrers) */
	char **converted;
	uint64_t *converted_size;
	size_t nr_converted;
	/* diffIDs of the units not converted yet, each once */
	char **missing_ids;
	size_t missing;
	/* of those, units present but made with --no-verify */
	size_t unverified;
	/* --keep-going: the first failed unit's blob of the image at hand */
	const char *fail_blob;
	struct oci_walk w; /* documents done, each once */
	char rules[OCI_RULES_MAX]; /* of every converted layer */
};

static int add_missing(struct assemble *a, const char *diff_id,
		       const char *layer)
{
	char **p;

	for (size_t i = 0; i < a->missing; i++)
		if (!strcmp(a->missing_ids[i], diff_id))
			return 0;
	p = realloc(a->missing_ids, (a->missing + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	a->missing_ids = p;
	p[a->missing] = strdup(diff_id);
	if (!p[a->missing])
		return -ENOMEM;
	a->missing++;
	if (a->l->o->warn) {
		char msg[256];

		snprintf(msg, sizeof(msg), "missing unit %s (layer %s)",
			 diff_id, layer);
		a->l->o->warn(msg, a->l->o->warn_arg);
	}
	return 0;
}

static int note_converted(struct assemble *a, const char *digest, uint64_t size,
		    struct imgfs_error *err)
{
	char **p = realloc(a->converted,
			   (a->nr_converted + 1) * sizeof(*a->converted));
	uint64_t *s;

	if (p)
		a->converted = p;
	s = p ? realloc(a->converted_size, (a->nr_converted + 1) * sizeof(*s))
	      : NULL;
	if (!s)
		return error_set(err, -ENOMEM, "out of memory");
	a->converted_size = s;
	s[a->nr_converted] = size;
	p[a->nr_converted] = strdup(digest);
	if (!p[a->nr_converted])
		return error_set(err, -ENOMEM, "out of memory");
	a->nr_converted++;
	return 0;
}

/* The position of @digest among the converted sources, or -1. */
static long converted_at(const struct assemble *a, const char *digest)
{
	for (size_t i = 0; digest && i < a->nr_converted; i++)
		if (!strcmp(a->converted[i], digest))
			return (long)i;
	return -1;
}

static bool was_converted(const struct assemble *a, const char *digest)
{
	return converted_at(a, digest) >= 0;
}

static int copy_blob(struct oci_walk *w, const struct oci_digest *d,
		     uint64_t size, struct imgfs_error *err)
{
	struct assemble *a = w->arg;
	int ret = oci_blob_copy(a->run->src, a->run->dst, d, size,
				a->run->sync, err);

	if (!ret)
		a->st->copied_blobs++;
	return ret;
}

/* Copy a blob and, for indexes and manifests, everything they name. */
static int copy_closure(struct assemble *a, struct json_object *desc, int depth,
			struct imgfs_error *err)
{
	return oci_walk_closure(&a->w, desc, depth, copy_blob, err);
}

/* Add "erofs" to the array @key of @o (created if missing). */
static void add_feature(struct json_object *o, const char *key)
{
	struct json_object *f;

	/* a platform that is not an object is left as it is */
	if (!json_object_is_type(o, json_type_object))
		return;
	if (!json_object_object_get_ex(o, key, &f) ||
	    !json_object_is_type(f, json_type_array)) {
		f = json_object_new_array();
		json_object_object_add(o, key, f);
	}
	for (size_t i = 0; i < json_object_array_length(f); i++) {
		const char *s =
			json_object_get_string(json_object_array_get_idx(f, i));

		if (s && !strcmp(s, "erofs"))
			return;
	}
	json_object_array_add(f, json_object_new_string("erofs"));
}

/* Write @doc as a blob; set digest and size in the descriptor @desc. */
static int write_doc(struct assemble *a, struct json_object *doc,
		     struct json_object *desc, struct imgfs_error *err)
{
	struct oci_digest d;
	size_t len;
	const char *text = oci_json_text(doc, &len);
	int ret = oci_blob_write(a->run->dst, text, len, &d, a->run->sync, err);

	if (ret)
		return ret;
	json_object_object_add(desc, "digest", json_object_new_string(d.str));
	json_object_object_add(desc, "size",
			       json_object_new_int64((int64_t)len));
	return 0;
}

static bool tar_annotation(const char *key)
{
	for (size_t i = 0; i < sizeof(tar_annotation_prefixes) /
				       sizeof(*tar_annotation_prefixes);
	     i++)
		if (!strncmp(key, tar_annotation_prefixes[i],
			     strlen(tar_annotation_prefixes[i])))
			return true;
	return false;
}

/* The converted layer's descriptor in place of the source's @ld. */
static struct json_object *layer_desc(struct json_object *ld,
				      const struct oci_unit *u,
				      const char *src_digest,
				      const char *rules)
{
	struct json_object *nd = json_object_new_object(), *ann, *nann;

	json_object_object_foreach(ld, key, val)
	{
		if (!strcmp(key, "mediaType") || !strcmp(key, "digest") ||
		    !strcmp(key, "size") || !strcmp(key, "annotations") ||
		    !strcmp(key, "data") || !strcmp(key, "urls"))
			continue;
		json_object_object_add(nd, key, json_object_get(val));
	}
	json_object_object_add(nd, "mediaType",
			       json_object_new_string(u->out_media_type));
	json_object_object_add(nd, "digest",
			       json_object_new_string(u->out.str));
	json_object_object_add(nd, "size",
			       json_object_new_int64((int64_t)u->out_size));
	nann = json_object_new_object();
	if (json_object_object_get_ex(ld, "annotations", &ann) &&
	    json_object_is_type(ann, json_type_object)) {
		json_object_object_foreach(ann, akey, aval)
		{
			if (!tar_annotation(akey))
				json_object_object_add(nann, akey,
						       json_object_get(aval));
		}
	}
	if (strcmp(u->out.str, u->out_diff_id.str))
		json_object_object_add(
			nann, "org.erofs.uncompressed-digest",
			json_object_new_string(u->out_diff_id.str));
	if (u->verity_root[0]) {
		char off[24];

		snprintf(off, sizeof(off), "%" PRIu64, u->verity_offset);
		json_object_object_add(nann, OCI_ANN_VERITY_ROOT,
				       json_object_new_string(u->verity_root));
		json_object_object_add(nann, OCI_ANN_VERITY_OFFSET,
				       json_object_new_string(off));
	}
	json_object_object_add(nann, "org.imgfs.source.digest",
			       json_object_new_string(src_digest));
	json_object_object_add(nann, OCI_ANN_RULES,
			       json_object_new_string(rules));
	json_object_object_add(nd, "annotations", nann);
	return nd;
}

/*
 * The OCI media type for a Docker schema-2 one: schema 2 has no EROFS
 * layers, so a converted image is written as OCI whatever its input.
 * NULL when @mt is not a Docker type.
 */
static const char *oci_type_of(const char *mt)
{
	static const char *const map[][2] = {
		{ "application/vnd.docker.distribution.manifest.v2+json",
		  "application/vnd.oci.image.manifest.v1+json" },
		{ "application/vnd.docker.distribution.manifest.list.v2+json",
		  "application/vnd.oci.image.index.v1+json" },
		{ "application/vnd.docker.container.image.v1+json",
		  "application/vnd.oci.image.config.v1+json" },
		{ "application/vnd.docker.image.rootfs.diff.tar.gzip",
		  "application/vnd.oci.image.layer.v1.tar+gzip" },
		{ "application/vnd.docker.image.rootfs.diff.tar",
		  "application/vnd.oci.image.layer.v1.tar" },
		{ "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
		  "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip" },
		{ "application/vnd.docker.image.rootfs.foreign.diff.tar",
		  "application/vnd.oci.image.layer.nondistributable.v1.tar" },
	};

	for (size_t i = 0; mt && i < sizeof(map) / sizeof(*map); i++)
		if (!strcmp(mt, map[i][0]))
			return map[i][1];
	return NULL;
}

/* Give @o's "mediaType" its OCI name if it has a Docker one. */
static void to_oci(struct json_object *o)
{
	const char *t = oci_type_of(oci_json_str(o, "mediaType"));

	if (t)
		json_object_object_add(o, "mediaType",
				       json_object_new_string(t));
}

/* A converted manifest @m in OCI terms: itself, config, kept layers. */
static void manifest_to_oci(struct json_object *m)
{
	struct json_object *v;

	to_oci(m);
	if (json_object_object_get_ex(m, "config", &v))
		to_oci(v);
	if (json_object_object_get_ex(m, "layers", &v) &&
	    json_object_is_type(v, json_type_array))
		for (size_t i = 0; i < json_object_array_length(v); i++)
			to_oci(json_object_array_get_idx(v, i));
}

enum { KEEP = 1, SKIP = 2, FAILED = 3 };

/* What the layers of one manifest came to. */
struct layer_tally {
	size_t ntar; /* tar layers with a unit (converted or missing) */
	bool failed; /* a unit failed (--keep-going) */
};

/* A layer not converted: copied as it is (if there). */
static int keep_layer(struct assemble *a, const struct oci_walk_doc *n,
		      const char *mt, const struct oci_digest *ldig,
		      uint64_t lsize, struct imgfs_error *err)
{
	if (oci_layer_kind(mt) == OCI_LAYER_NONDIST && a->l->o->warn) {
		char msg[512];

		snprintf(
			msg, sizeof(msg),
			"manifest %s: non-distributable layer %s left as a tar layer (an EROFS-capable runtime converts it when it applies it: docs/oci.md)",
			n->d.str, ldig->str);
		a->l->o->warn(msg, a->l->o->warn_arg);
	}
	a->st->kept_layers++;
	if (oci_blob_copy(a->run->src, a->run->dst, ldig, lsize, a->run->sync,
			  err)) {
		/* non-distributable blobs are often absent */
		if (oci_layer_kind(mt) != OCI_LAYER_NONDIST)
			return err->code;
		imgfs_error_clear(err);
	}
	return 0;
}

/* Layer @i of @n: its unit's layer in its place, or missing, or failed. */
static int swap_layer(struct assemble *a, const struct oci_walk_doc *n,
		      struct json_object *layers, struct json_object *ids,
		      size_t i, struct layer_tally *t, struct imgfs_error *err)
{
	struct json_object *ld = json_object_array_get_idx(layers, i);
	const char *mt = oci_json_str(ld, "mediaType");
	struct oci_digest did, ldig;
	struct oci_unit *u;
	uint64_t lsize;
	int ret = oci_desc_get(ld, &ldig, &lsize, NULL, n->d.str, err);

	if (ret)
		return ret;
	if (oci_layer_kind(mt) != OCI_LAYER_TAR)
		return keep_layer(a, n, mt, &ldig, lsize, err);
	ret = oci_digest_parse(
		json_object_get_string(json_object_array_get_idx(ids, i)),
		&did, n->d.str, err);
	if (ret)
		return ret;
	u = oci_layout_unit(a->l, &did);
	if (u && u->err) {
		if (!a->fail_blob)
			a->fail_blob = u->blob.str;
		t->failed = true;
		return 0;
	}
	t->ntar++;
	if (!u || !u->have) {
		size_t before = a->missing;

		if (add_missing(a, did.str, ldig.str))
			return error_set(err, -ENOMEM, "out of memory");
		if (a->missing > before && u && u->unverified_only)
			a->unverified++;
		return 0;
	}
	json_object_array_put_idx(layers, i,
				  layer_desc(ld, u, ldig.str, a->rules));
	json_object_array_put_idx(ids, i,
				  json_object_new_string(u->out_diff_id.str));
	return 0;
}

/* --subject: the converted manifest names its source, copied along. */
static int add_subject(struct assemble *a, const struct oci_walk_doc *n,
		       struct imgfs_error *err)
{
	struct json_object *s = json_object_new_object();
	const char *mt = oci_json_str(n->desc, "mediaType");

	json_object_object_add(
		s, "mediaType",
		json_object_new_string(
			mt ? mt : "application/vnd.oci.image.manifest.v1+json"));
	json_object_object_add(s, "digest", json_object_new_string(n->d.str));
	json_object_object_add(s, "size",
			       json_object_new_int64((int64_t)n->size));
	json_object_object_add(n->doc, "subject", s);
	return oci_blob_copy(a->run->src, a->run->dst, &n->d, n->size,
			     a->run->sync, err);
}

/* A new descriptor *@out for @n, once @doc (its new content) is written. */
static int publish(struct assemble *a, const struct oci_walk_doc *n,
		   struct json_object *doc, struct json_object **out,
		   struct imgfs_error *err)
{
	struct json_object *v;
	int ret;

	json_object_deep_copy(n->desc, out, NULL);
	to_oci(*out);
	ret = write_doc(a, doc, *out, err);
	if (!ret && json_object_object_get_ex(*out, "platform", &v))
		add_feature(v, "os.features");
	if (!ret)
		ret = note_converted(a, n->d.str, n->size, err);
	return ret;
}

/* The manifest @n with its converted layers: config and manifest out. */
static int publish_manifest(struct assemble *a, struct oci_walk_doc *n,
			    struct json_object **out, struct imgfs_error *err)
{
	int ret;

	add_feature(n->config, "os.features");
	manifest_to_oci(n->doc);
	ret = write_doc(a, n->config, n->cdesc, err);
	if (!ret && a->run->o->subject)
		ret = add_subject(a, n, err);
	if (!ret)
		ret = publish(a, n, n->doc, out, err);
	if (!ret)
		a->st->manifests++;
	return ret;
}

/*
 * Convert the manifest @n (selected, not a referrer): 0 with *@out the
 * new descriptor, KEEP when it passes through untouched, FAILED when a
 * unit of it failed (--keep-going: not published).
 */
static int do_manifest(struct oci_walk *w, struct oci_walk_doc *n,
		       struct json_object **out, struct imgfs_error *err)
{
	struct assemble *a = w->arg;
	struct json_object *layers, *rootfs, *ids = NULL;
	struct layer_tally t = { 0 };
	bool have = json_object_object_get_ex(n->doc, "layers", &layers) &&
		    json_object_is_type(layers, json_type_array);
	int ret = 0;

	if (have && !oci_tar_layers(layers))
		return KEEP; /* a signature, an artifact: nothing converted */
	if (!have || !json_object_object_get_ex(n->config, "rootfs", &rootfs) ||
	    !json_object_is_type(rootfs, json_type_object) ||
	    !json_object_object_get_ex(rootfs, "diff_ids", &ids) ||
	    !json_object_is_type(ids, json_type_array) ||
	    json_object_array_length(ids) != json_object_array_length(layers))
		return error_set(
			err, -EINVAL,
			"manifest %s: layers and its config's diff_ids do not match",
			n->d.str);
	for (size_t i = 0; !ret && i < json_object_array_length(layers); i++)
		ret = swap_layer(a, n, layers, ids, i, &t, err);
	if (ret)
		return ret;
	if (t.failed)
		return FAILED;
	if (!t.ntar)
		return KEEP;
	if (a->missing)
		return 0; /* reported once at the end */
	ret = publish_manifest(a, n, out, err);
	if (ret) {
		json_object_put(*out);
		*out = NULL;
	}
	return ret;
}

/* An index's new entries, as they come. */
struct index_acc {
	struct json_object *entries;
	size_t nconv;
};

static int index_begin(struct oci_walk *w, struct oci_walk_doc *ix,
		       struct imgfs_error *err)
{
	struct index_acc *acc = calloc(1, sizeof(*acc));

	(void)w;
	if (acc)
		acc->entries = json_object_new_array();
	if (!acc || !acc->entries) {
		free(acc);
		return error_set(err, -ENOMEM, "out of memory");
	}
	ix->priv = acc;
	return 0;
}

/* Entry @e of an index gave @r: kept, replaced by @out, or left out. */
static int index_entry(struct oci_walk *w, struct oci_walk_doc *ix,
		       struct json_object *e, int r, struct json_object *out,
		       struct imgfs_error *err)
{
	struct index_acc *acc = ix->priv;
	int ret;

	if (r < 0 || r == FAILED)
		return r; /* an index is complete or not published */
	if (r == SKIP)
		return 0;
	if (r == KEEP) {
		ret = copy_closure(w->arg, e, ix->depth + 1, err);
		if (!ret)
			json_object_array_add(acc->entries, json_object_get(e));
		return ret;
	}
	acc->nconv++;
	json_object_array_add(acc->entries, out);
	return 0;
}

static int index_end(struct oci_walk *w, struct oci_walk_doc *ix, int ret,
		     struct json_object **out, struct imgfs_error *err)
{
	struct assemble *a = w->arg;
	struct index_acc *acc = ix->priv;

	if (!acc)
		return ret;
	if (!ret && !acc->nconv) {
		/* nothing converted below: untouched, or not selected */
		ret = json_object_array_length(acc->entries) ? KEEP : SKIP;
	} else if (!ret && !a->missing) {
		json_object_object_add(ix->doc, "manifests",
				       json_object_get(acc->entries));
		to_oci(ix->doc);
		ret = publish(a, ix, ix->doc, out, err);
		if (!ret)
			a->st->indexes++;
	}
	if (ret) {
		json_object_put(*out);
		*out = NULL;
	}
	json_object_put(acc->entries);
	free(acc);
	return ret;
}

/* A document done before: its result again, the descriptor from @desc. */
static int memo_out(struct oci_walk *w, const struct oci_memo_entry *e,
		    struct json_object *desc, struct json_object **out)
{
	struct json_object *v;

	(void)w;
	if (e->ret || !e->out_size)
		return e->ret;
	json_object_deep_copy(desc, out, NULL);
	json_object_object_add(*out, "digest",
			       json_object_new_string(e->out.str));
	json_object_object_add(*out, "size",
			       json_object_new_int64((int64_t)e->out_size));
	if (json_object_object_get_ex(*out, "platform", &v))
		add_feature(v, "os.features");
	return 0;
}

static const struct oci_walk_ops assemble_ops = {
	.other = KEEP,
	.skip = SKIP,
	.referrer = KEEP,
	.want_config = true,
	.manifest = do_manifest,
	.index_begin = index_begin,
	.index_entry = index_entry,
	.index_end = index_end,
	.again = memo_out,
};

/*
 * A referrer passed through names its subject, a source manifest the
 * conversion replaced: copy that manifest too (as --subject does), so
 * that what the referrer attaches to is in the layout. @desc is the
 * referrer, or a referrers-tag index of them.
 */
static int keep_subjects(struct assemble *a, struct json_object *desc,
			 int depth, struct imgfs_error *err)
{
	struct json_object *doc = NULL, *v;
	struct oci_digest d;
	uint64_t size;
	long at = -1;
	int ret = oci_check_depth(depth, err);

	/* the referrers tag schema: "sha256-<hex>[.sig|.att|...]" */
	if (json_object_object_get_ex(desc, "annotations", &v)) {
		const char *ref = oci_json_str(v, REF_NAME_KEY);
		char dig[OCI_DIGEST_MAX];

		if (ref && !strncmp(ref, "sha256-", 7)) {
			snprintf(dig, sizeof(dig), "sha256:%.64s", ref + 7);
			at = converted_at(a, dig);
		}
	}
	if (!ret && at >= 0 &&
	    !oci_digest_parse(a->converted[at], &d, "referrers tag", err)) {
		ret = oci_blob_copy(a->run->src, a->run->dst, &d,
				    a->converted_size[at], a->run->sync, err);
		if (!ret)
			a->st->copied_blobs++;
	}
	if (ret || (!oci_is_manifest_type(oci_json_str(desc, "mediaType")) &&
		    !oci_is_index_type(oci_json_str(desc, "mediaType"))))
		return ret;
	ret = oci_desc_get(desc, &d, &size, NULL, "referrer", err);
	if (!ret)
		ret = oci_json_load(a->run->src, &d, size, &doc, err);
	if (!ret && json_object_object_get_ex(doc, "subject", &v)) {
		ret = oci_desc_get(v, &d, &size, NULL, "subject", err);
		if (!ret && was_converted(a, d.str)) {
			ret = oci_blob_copy(a->run->src, a->run->dst, &d, size,
					    a->run->sync, err);
			if (!ret)
				a->st->copied_blobs++;
		}
	}
	if (!ret && json_object_object_get_ex(doc, "manifests", &v) &&
	    json_object_is_type(v, json_type_array))
		for (size_t i = 0; !ret && i < json_object_array_length(v); i++)
			ret = keep_subjects(a, json_object_array_get_idx(v, i),
					    depth + 1, err);
	json_object_put(doc);
	return ret;
}

/* An index.json entry that refers to a converted manifest. */
static bool is_referrer(struct assemble *a, struct json_object *desc,
			struct imgfs_error *err)
{
	struct json_object *ann, *m = NULL, *s;
	const char *ref = NULL, *mt = oci_json_str(desc, "mediaType");
	struct oci_digest d;
	uint64_t size;
	bool yes = false;

	if (json_object_object_get_ex(desc, "annotations", &ann))
		ref = oci_json_str(ann, "org.opencontainers.image.ref.name");
	/* the referrers tag schema: "sha256-<hex>" */
	if (ref && !strncmp(ref, "sha256-", 7)) {
		char dig[OCI_DIGEST_MAX];

		snprintf(dig, sizeof(dig), "sha256:%.64s", ref + 7);
		if (was_converted(a, dig))
			return true;
	}
	if (!oci_is_manifest_type(mt) && !oci_is_index_type(mt) &&
	    (!mt ||
	     strcmp(mt, "application/vnd.oci.artifact.manifest.v1+json")))
		return false;
	if (oci_desc_get(desc, &d, &size, NULL, "index.json", err) ||
	    oci_json_load(a->run->src, &d, size, &m, err)) {
		imgfs_error_clear(err);
		return false;
	}
	if (json_object_object_get_ex(m, "subject", &s))
		yes = was_converted(a, oci_json_str(s, "digest"));
	json_object_put(m);
	return yes;
}

/* --keep-going: the image of index.json entry @c is not published. */
static void image_failed(struct assemble *a, struct json_object *c)
{
	struct json_object *ann;
	const char *ref = NULL;
	char msg[512];

	a->st->images_failed++;
	if (!a->l->o->warn)
		return;
	if (json_object_object_get_ex(c, "annotations", &ann))
		ref = oci_json_str(ann, "org.opencontainers.image.ref.name");
	snprintf(
		msg, sizeof(msg),
		"image '%s' (%s) not published: its layer blob %s did not convert",
		ref ? ref : "",
		oci_json_str(c, "digest") ? oci_json_str(c, "digest") : "",
		a->fail_blob ? a->fail_blob : "?");
	a->l->o->warn(msg, a->l->o->warn_arg);
}

/*
 * The entries of index.json that a ref selects, converted or passed
 * through into @nchildren; @done marks each (1: converted, 2: passed
 * through), *@nsel counts them.
 */
static int assemble_entries(struct assemble *a, struct json_object *children,
			    unsigned char *done, struct json_object *nchildren,
			    size_t *nsel, struct imgfs_error *err)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < json_object_array_length(children);
	     i++) {
		struct json_object *c = json_object_array_get_idx(children, i);
		struct json_object *nc;
		int r;

		if (!oci_ref_selected(a->l->o, c))
			continue;
		a->fail_blob = NULL;
		r = oci_walk_desc(&a->w, c, 0, &nc, err);
		if (r < 0)
			return r;
		if (r == FAILED)
			image_failed(a, c);
		if (r == SKIP || r == FAILED)
			continue;
		done[i] = r == KEEP ? 2 : 1;
		(*nsel)++;
		if (r == KEEP) {
			ret = copy_closure(a, c, 0, err);
			json_object_array_add(nchildren, json_object_get(c));
		} else {
			json_object_array_add(nchildren, nc);
		}
	}
	return ret;
}

/* The units not converted yet, all named (as far as the message goes). */
static int missing_error(struct assemble *a, struct imgfs_error *err)
{
	const struct oci_run *run = a->run;
	char list[IMGFS_ERROR_MSG_MAX];
	char *other;
	size_t len = 0;
	int ret;

	list[0] = '\0';
	for (size_t i = 0; i < a->missing && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					i ? " " : "", a->missing_ids[i]);
	other = oci_options_mismatch(a->l->o, run->dst, &run->opts_digest,
				     a->missing_ids, a->missing);
	if (other)
		ret = error_set(
			err, -ENOENT,
			"%zu units are not converted yet with this run's options: %s (%s)",
			a->missing, other, list);
	else if (a->unverified)
		ret = error_set(
			err, -ENOENT,
			"%zu units are not converted yet (%zu of them "
			"only with --no-verify, which this run does not "
			"accept): %s",
			a->missing, a->unverified, list);
	else
		ret = error_set(err, -ENOENT,
				"%zu units are not converted yet: %s",
				a->missing, list);
	free(other);
	return ret;
}

/* Referrers of converted manifests, in index.json's order. */
static int add_referrers(struct assemble *a, struct json_object *children,
			 const unsigned char *done,
			 struct json_object *nchildren, struct imgfs_error *err)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < json_object_array_length(children);
	     i++) {
		struct json_object *c = json_object_array_get_idx(children, i);

		if (!done[i] && !is_referrer(a, c, err))
			continue;
		if (!done[i]) {
			ret = copy_closure(a, c, 0, err);
			if (!ret)
				json_object_array_add(nchildren,
						      json_object_get(c));
		}
		/* also for referrers selected as entries of their own */
		if (!ret && done[i] != 1)
			ret = keep_subjects(a, c, 0, err);
	}
	return ret;
}

/* oci-layout, and index.json with @nchildren merged into the earlier one. */
static int write_top(const struct oci_run *run, struct oci_layout *l,
		     struct json_object *nchildren, struct imgfs_error *err)
{
	static const char layout[] = "{\"imageLayoutVersion\":\"1.0.0\"}";
	struct json_object *top = NULL, *olds = NULL, *merged;
	const char *text;
	size_t len;
	int ret = oci_dst_index_load(run->dst, &olds, err);

	if (ret)
		return ret;
	json_object_deep_copy(l->index, &top, NULL);
	/* images converted by earlier runs stay, unless replaced by ref */
	merged = oci_index_merge(olds, nchildren);
	if (!merged) {
		ret = error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	json_object_object_add(top, "manifests", merged);
	text = oci_json_text(top, &len);
	ret = oci_file_write(run->dst, "", "oci-layout", layout,
			     sizeof(layout) - 1, run->sync, err);
	if (!ret)
		ret = oci_file_write(run->dst, "", "index.json", text, len,
				     run->sync, err);
out:
	json_object_put(top);
	json_object_put(olds);
	return ret;
}

static void assemble_free(struct assemble *a)
{
	for (size_t i = 0; i < a->nr_converted; i++)
		free(a->converted[i]);
	free(a->converted);
	free(a->converted_size);
	for (size_t i = 0; i < a->missing; i++)
		free(a->missing_ids[i]);
	free(a->missing_ids);
	oci_walk_free(&a->w);
}

int oci_assemble(const struct oci_run *run, struct oci_layout *l,
		 struct imgfs_oci_stats *st, struct imgfs_error *err)
{
	struct assemble a = { .run = run, .l = l, .st = st };
	struct json_object *children, *nchildren = json_object_new_array();
	size_t nsel = 0;
	unsigned char *done; /* 1: converted, 2: passed through */
	int ret;

	oci_walk_init(&a.w, run->src, l->o, &assemble_ops, &a);
	json_object_object_get_ex(l->index, "manifests", &children);
	oci_rules_of(run->o, a.rules, sizeof(a.rules));
	done = calloc(json_object_array_length(children) + 1, sizeof(*done));
	if (!done || !nchildren)
		ret = error_set(err, -ENOMEM, "out of memory");
	else
		ret = assemble_entries(&a, children, done, nchildren, &nsel,
				       err);
	if (!ret && a.missing)
		ret = missing_error(&a, err);
	if (!ret)
		ret = add_referrers(&a, children, done, nchildren, err);
	if (ret || (!nsel && st->images_failed))
		goto out; /* nothing complete: the caller lists the failures */
	if (!nsel)
		ret = error_set(
			err, -ENOENT,
			"%s: no image selected (refs and platforms given)",
			run->src);
	else
		ret = write_top(run, l, nchildren, err);
out:
	assemble_free(&a);
	json_object_put(nchildren);
	free(done);
	return ret;
}
