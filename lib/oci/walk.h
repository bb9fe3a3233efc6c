/* SPDX-License-Identifier: MIT */
/*
 * oci/walk.h - the one walk over a layout's descriptors: index.json's
 * entries selected by ref name, nested indexes followed (no deeper than
 * OCI_MAX_DEPTH), manifests selected by platform (the descriptor's, else
 * the config's), each document loaded and visited once per digest and
 * selection, its first result given again when it is named again. The
 * jobs (collecting units, assembling, picking one image, copying a
 * closure) are visitors.
 *
 * The full walk (oci_walk_all) is the same graph for the layout check
 * (fsck.img --oci): no selection, every descriptor of every document
 * given to the visitor with the role it is named in (an index's entries,
 * a manifest's config and layers), each finding reported and the walk
 * gone on. The visitor loads the documents it walks into (it reports
 * what is wrong with them) and keeps the memo (what it has met depends
 * on more than a digest: role, media type, the source document paired
 * with); the walk bounds the depth, so a loop ends there. A manifest's
 * subject is not followed: a referrer is about an image, not part of it.
 */
#ifndef IMGFS_OCI_WALK_H
#define IMGFS_OCI_WALK_H

#include "oci/internal.h"

/* One index or manifest being visited (the full walk: any descriptor). */
struct oci_walk_doc {
	struct json_object *desc; /* as its parent names it */
	struct oci_digest d;
	uint64_t size;
	struct json_object *doc;
	/* manifests: the config's descriptor, and the config when loaded */
	struct json_object *cdesc;
	struct oci_digest cd;
	struct json_object *config;
	bool platform_checked; /* the descriptor's platform selected it */
	int depth;
	/* the visitor's, from index_begin to index_end (the full walk: from
	 * blob to blob_end; what its children are paired with, say) */
	void *priv;
	/* the full walk: the role it is named in (an index's entry: index,
	 * manifest or other by its media type; a manifest's config and
	 * layers), at place @place of its parent's list; @depth is its
	 * parent's + 1 (index.json's is 0); @d, @size and the manifest's
	 * fields are not set */
	enum imgfs_oci_blob_role role;
	size_t place;
};

/* A full walk's blob hook walks into the document it set in @n->doc. */
#define OCI_WALK_INTO 1

struct oci_walk;

struct oci_walk_ops {
	/* what a descriptor gives that is no index or manifest, one not
	 * selected, and a referrer (a manifest with a subject) */
	int other, skip, referrer;
	/* load every manifest's config (else only to select by platform) */
	bool want_config;
	/* a platform on an index's descriptor selects it too */
	bool index_platform;
	/* a selected manifest: a result >= 0 or -errno; *@out a new
	 * descriptor for it, or NULL */
	int (*manifest)(struct oci_walk *w, struct oci_walk_doc *m,
			struct json_object **out, struct imgfs_error *err);
	/* an index, before its entries (optional): 0 or -errno */
	int (*index_begin)(struct oci_walk *w, struct oci_walk_doc *ix,
			   struct imgfs_error *err);
	/* entry @e gave @r and @out (a reference handed over): 0 goes on,
	 * anything else is the index's result (optional: stop if r != 0) */
	int (*index_entry)(struct oci_walk *w, struct oci_walk_doc *ix,
			   struct json_object *e, int r, struct json_object *out,
			   struct imgfs_error *err);
	/* after the entries, or with @ret != 0 when they stopped (optional):
	 * the index's result, *@out as for manifests */
	int (*index_end)(struct oci_walk *w, struct oci_walk_doc *ix, int ret,
			 struct json_object **out, struct imgfs_error *err);
	/* a document visited before with result @e->ret (optional) */
	int (*again)(struct oci_walk *w, const struct oci_memo_entry *e,
		     struct json_object *desc, struct json_object **out);

	/* The full walk (the other hooks and fields are not used). */
	/* the descriptor @n->desc (maybe no object, or NULL: a manifest
	 * without config) in @parent: OCI_WALK_INTO with @n->doc set (an
	 * index or manifest, handed over) walks into it, another result
	 * >= 0 goes on, -errno stops the walk; @n->priv is the visitor's */
	int (*blob)(struct oci_walk *w, struct oci_walk_doc *parent,
		    struct oci_walk_doc *n, struct imgfs_error *err);
	/* after @n and what it leads to, when blob gave >= 0 (optional) */
	int (*blob_end)(struct oci_walk *w, struct oci_walk_doc *parent,
			struct oci_walk_doc *n, struct imgfs_error *err);
	/* @n's member @key ("manifests", "layers"; NULL when it has none,
	 * maybe no array) before its elements (optional): 0 walks them if
	 * it is an array, > 0 passes it over, -errno stops */
	int (*list)(struct oci_walk *w, struct oci_walk_doc *n, const char *key,
		    struct json_object *list, struct imgfs_error *err);
	/* the index @n is nested deeper than OCI_MAX_DEPTH: its entries are
	 * not walked (optional: the walk stops with -ELOOP) */
	int (*too_deep)(struct oci_walk *w, struct oci_walk_doc *n,
			struct imgfs_error *err);
};

struct oci_walk {
	const char *root;
	const struct imgfs_oci_options *o;
	const struct oci_walk_ops *ops;
	void *arg;
	struct oci_memo seen;
};

void oci_walk_init(struct oci_walk *w, const char *root,
		   const struct imgfs_oci_options *o,
		   const struct oci_walk_ops *ops, void *arg);
void oci_walk_free(struct oci_walk *w);

/* The descriptor @desc at @depth: the visitor's result, *@out its own. */
int oci_walk_desc(struct oci_walk *w, struct json_object *desc, int depth,
		  struct json_object **out, struct imgfs_error *err);

/* Each entry of index.json's array @entries that a ref selects, until
 * one gives a result other than 0 (returned). */
int oci_walk_entries(struct oci_walk *w, struct json_object *entries,
		     struct imgfs_error *err);

/*
 * Every blob @desc leads to (an index's entries, a manifest's config and
 * layers, no selection), each given to @fn once. 0 or the first error.
 */
int oci_walk_closure(struct oci_walk *w, struct json_object *desc, int depth,
		     int (*fn)(struct oci_walk *w, const struct oci_digest *d,
			       uint64_t size, struct imgfs_error *err),
		     struct imgfs_error *err);

/*
 * The full walk from @index (index.json, loaded by the caller, at depth
 * 0; @priv its visitor's): each entry, and what each index or manifest
 * the blob hook walks into names, in document order. 0 or the first
 * -errno a hook gave.
 */
int oci_walk_all(struct oci_walk *w, struct json_object *index, void *priv,
		 struct imgfs_error *err);

#endif /* IMGFS_OCI_WALK_H */
