// SPDX-License-Identifier: MIT
/*
 * Flattening a stack of layers into one image (imgfs/stack.h).
 *
 * Layers are read top first, each once as a stream, into one writer. An
 * entry goes to the writer only when no layer above hides it
 * (stack/paths.c keeps what the layers above hold); a directory that a
 * layer above only implies takes the lower layer's metadata, as an
 * extraction layer by layer keeps it. Whiteouts and opaque markers are
 * noted, never written. A hidden entry that a visible hard link of its
 * layer names is written under the link's path (stack/links.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>

#include "imgfs/source.h"
#include "imgfs/stack.h"
#include "source/iter.h"
#include "source/tar.h"
#include "stack/links.h"
#include "stack/paths.h"
#include "util/error.h"
#include "util/vec.h"
#include "writer/intake.h"
#include "util/error.h"
#include "writer/options.h"

#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"
#define WH_META ".wh..wh."
#define LINK_HOPS 64

/* A visible link of the layer to a visible path: checked at its end. */
struct link_check {
	char *path;
	char *target;
};

struct flatten {
	const struct imgfs_mkfs_options *opts;
	unsigned int nlayers;
	const struct imgfs_layer_opener *opener;
	const char *const *tars; /* imgfs_flatten_tars(): the layers' files */
	struct stack_paths paths;
	struct stack_links links;
	struct imgfs_path_comps comps; /* the entry's path */
	struct imgfs_path_comps tcomps; /* a link target's */
	/* entries handed to the writer, converted */
	struct entry_iter *it;
	/* the layer being read */
	int32_t layer;
	struct archive *a;
	struct imgfs_tar *t;
	unsigned long long entries;
	struct link_check *checks;
	size_t nr_checks, cap_checks;
};

/*
 * A whiteout or opaque marker: noted for the layers below, never
 * written. Refused as the writer refuses them in a single layer.
 */
static int take_whiteout(struct flatten *f, const char *path,
			 struct imgfs_error *err)
{
	struct imgfs_path_comps *c = &f->comps;
	const char *name = c->text + c->off[c->n - 1];
	size_t len = c->len[c->n - 1], plen = strlen(WH_PREFIX);

	if (path_ends_in_dir_form(path))
		return error_set(
			err, -EINVAL,
			"%s: whiteout path ends in \"/\", \".\" or \"..\"",
			path);
	if (len == strlen(WH_OPAQUE) && !memcmp(name, WH_OPAQUE, len))
		return stack_paths_record(&f->paths, c, c->n - 1, f->layer,
					  STACK_OPAQUE, err);
	if (len >= strlen(WH_META) && !memcmp(name, WH_META, strlen(WH_META)))
		return error_set(err, -EINVAL,
				 "%s: unknown whiteout meta-entry", path);
	if (len == plen)
		return error_set(err, -EINVAL, "%s: whiteout without a name",
				 path);
	if (path_is_dot_name(name + plen, len - plen))
		return error_set(
			err, -EINVAL,
			"%s: whiteout for \"%.*s\", which is not a file name",
			path, (int)(len - plen), name + plen);
	/* the path it deletes: the name without its prefix */
	c->off[c->n - 1] += (uint32_t)plen;
	c->len[c->n - 1] -= (uint16_t)plen;
	return stack_paths_record(&f->paths, c, c->n, f->layer,
				  STACK_WHITEOUT, err);
}

/* Hand @e, read from @a, to the writer with its data. */
static int give(struct flatten *f, struct imgfs_writer *w, struct archive *a,
		struct archive_entry *e, struct imgfs_error *err)
{
	return writer_take(w, f->it, archive_iter_set(f->it, a, e, err), err);
}

/*
 * Add hard link @path -> @target: through @e (the link's own entry) when
 * there is one, else as a new entry.
 */
static int add_link(struct flatten *f, struct imgfs_writer *w,
		    struct archive_entry *e, const char *path,
		    const char *target, struct imgfs_error *err)
{
	struct imgfs_entry le = { .struct_size = sizeof(le), .path = path,
				  .hardlink = target };

	if (!e)
		return imgfs_writer_add_entry(w, &le, err);
	if (strcmp(archive_entry_hardlink(e), target))
		archive_entry_copy_hardlink(e, target);
	return give(f, w, f->a, e, err);
}

/*
 * Write the hidden entry kept in the spill at @off under the visible link
 * @path; later links of the layer to @target link to @path.
 */
static int show_saved(struct flatten *f, struct imgfs_writer *w,
		      uint64_t off, const char *target, const char *path,
		      struct imgfs_error *err)
{
	struct stack_saved *s = stack_links_get(&f->links, target, err);
	struct archive_entry *e;
	struct archive *a;
	int ret;

	if (!s)
		return err->code;
	if (!(s->shown = strdup(path)))
		return error_set(err, -ENOMEM, "out of memory");
	ret = stack_links_load(&f->links, off, &a, &e, err);
	if (ret)
		return ret;
	archive_entry_copy_pathname(e, path);
	ret = give(f, w, a, e, err);
	stack_links_done(&f->links);
	return ret;
}

static int remember_check(struct flatten *f, const char *path,
			  const char *target, struct imgfs_error *err)
{
	struct link_check *c;

	if (IMGFS_VEC_RESERVE(f->checks, f->cap_checks, f->nr_checks + 1, 16))
		return error_set(err, -ENOMEM, "out of memory");
	c = &f->checks[f->nr_checks];
	c->path = strdup(path);
	c->target = strdup(target);
	if (!c->path || !c->target) {
		free(c->path);
		free(c->target);
		return error_set(err, -ENOMEM, "out of memory");
	}
	f->nr_checks++;
	return 0;
}

/*
 * The visible hard link @path (its entry @e, or NULL) to @target, in the
 * layer being read. A visible target is the writer's to link; a hidden
 * one is followed through hidden links to the entry they share, which
 * the first visible link takes as its own (later ones link to it), or
 * which the link waits for.
 */
static int link_visible(struct flatten *f, struct imgfs_writer *w,
			struct archive_entry *e, const char *path,
			const char *target, struct imgfs_error *err)
{
	struct stack_node *node;
	struct stack_saved *s;
	int ret;

	for (int hops = 0; hops < LINK_HOPS; hops++) {
		ret = path_comps_parse(&f->tcomps, target, err);
		if (ret)
			return ret;
		if (!stack_paths_hidden(&f->paths, &f->tcomps, f->tcomps.n,
					f->layer, false)) {
			ret = remember_check(f, path, target, err);
			return ret ? ret : add_link(f, w, e, path, target, err);
		}
		s = stack_links_find(&f->links, f->tcomps.text);
		if (s && s->alias) {
			target = s->alias;
			continue;
		}
		if (s && s->shown)
			return add_link(f, w, e, path, s->shown, err);
		node = stack_paths_find(&f->paths, &f->tcomps);
		if (node && node->saved_layer == f->layer &&
		    node->saved_off == STACK_UNSAVED)
			return error_set(
				err, -EOPNOTSUPP,
				"%s: hard link target \"%s\" is deleted by a layer above, and its entry could not be kept for the link",
				path, target);
		if (node && node->saved_layer == f->layer)
			return show_saved(f, w, node->saved_off,
					  f->tcomps.text, path, err);
		s = stack_links_get(&f->links, f->tcomps.text, err);
		return s ? stack_links_wait(s, path, err) : err->code;
	}
	return error_set(err, -ELOOP, "%s: more than %d hard links in a chain",
			 path, LINK_HOPS);
}

/* Links that waited for @s, now to @target (which they named). */
static int release_waiting(struct flatten *f, struct imgfs_writer *w,
			   struct stack_saved *s, const char *target,
			   struct imgfs_error *err)
{
	size_t n = s->nr_pending;
	char **pending = s->pending;
	int ret = 0;

	/* they leave the record first: resolving may add to it */
	s->pending = NULL;
	s->nr_pending = s->cap_pending = 0;
	for (size_t i = 0; i < n; i++) {
		if (!ret)
			ret = link_visible(f, w, NULL, pending[i], target, err);
		free(pending[i]);
	}
	free(pending);
	return ret;
}

static int take_link(struct flatten *f, struct imgfs_writer *w,
		     struct archive_entry *e, const char *path, bool hidden,
		     struct imgfs_error *err)
{
	struct stack_saved *s;
	char *target;
	int ret;

	if (!hidden)
		return link_visible(f, w, e, path, archive_entry_hardlink(e),
				    err);
	/* hidden, but a visible link may name it: it stands for its target */
	s = stack_links_get(&f->links, f->comps.text, err);
	if (!s)
		return err->code;
	ret = stack_links_alias(s, archive_entry_hardlink(e), err);
	if (ret || !s->nr_pending)
		return ret;
	target = strdup(s->alias);
	if (!target)
		return error_set(err, -ENOMEM, "out of memory");
	ret = release_waiting(f, w, s, target, err);
	free(target);
	return ret;
}

/* A hidden entry (not a directory, not a link). */
static int take_hidden(struct flatten *f, struct imgfs_writer *w,
		       struct archive_entry *e, const char *path,
		       struct imgfs_error *err)
{
	struct stack_saved *s = stack_links_find(&f->links, f->comps.text);
	struct stack_node *node;
	char *first;
	int ret;

	if (s && s->nr_pending) {
		/* visible links named it before it came: the first takes it */
		first = s->pending[0];
		memmove(s->pending, s->pending + 1,
			--s->nr_pending * sizeof(*s->pending));
		archive_entry_copy_pathname(e, first);
		ret = give(f, w, f->a, e, err);
		stack_links_forget(s);
		s->shown = first;
		return ret ? ret : release_waiting(f, w, s, first, err);
	}
	/* a path named twice: links after this entry are to it */
	if (s)
		stack_links_forget(s);
	node = stack_paths_find(&f->paths, &f->comps);
	if (!node)
		return error_set(err, -EINVAL, "%s: not recorded", path);
	node->saved_layer = f->layer;
	return stack_links_save(&f->links, f->a, e, path, &node->saved_off,
				err);
}

static int take_entry(struct flatten *f, struct imgfs_writer *w,
		      struct archive_entry *e, struct imgfs_error *err)
{
	const char *path = archive_entry_pathname(e);
	struct imgfs_path_comps *c = &f->comps;
	bool is_dir, hidden;
	int ret;

	if (!path)
		return error_set(err, -EINVAL,
				 "entry %llu: path name cannot be decoded",
				 f->entries);
	ret = path_comps_parse(c, path, err);
	if (ret)
		return ret;
	if (c->n && c->len[c->n - 1] >= strlen(WH_PREFIX) &&
	    !memcmp(c->text + c->off[c->n - 1], WH_PREFIX, strlen(WH_PREFIX)))
		return take_whiteout(f, path, err);
	is_dir = !archive_entry_hardlink(e) &&
		 archive_entry_filetype(e) == AE_IFDIR;
	hidden = stack_paths_hidden(&f->paths, c, c->n, f->layer, is_dir);
	ret = stack_paths_record(&f->paths, c, c->n, f->layer,
				 is_dir ? STACK_DIR : STACK_NONDIR, err);
	if (ret)
		return ret;
	if (archive_entry_hardlink(e))
		return take_link(f, w, e, path, hidden, err);
	if (!hidden)
		return give(f, w, f->a, e, err);
	return is_dir ? 0 : take_hidden(f, w, e, path, err);
}

/*
 * The end of a layer: every link found its target in the layer (a
 * visible target is one the layer has an entry for).
 */
static int check_links(struct flatten *f, struct imgfs_error *err)
{
	int ret = 0;

	for (struct stack_saved *s = f->links.all; s && !ret; s = s->next_all)
		if (s->nr_pending)
			ret = error_set(
				err, -ENOENT,
				"%s: hard link target \"%s\" is not a file of the same layer",
				s->pending[0], s->path);
	for (size_t i = 0; i < f->nr_checks && !ret; i++) {
		ret = path_comps_parse(&f->tcomps, f->checks[i].target, err);
		if (!ret &&
		    stack_paths_entry_layer(&f->paths, &f->tcomps) != f->layer)
			ret = error_set(
				err, -ENOENT,
				"%s: hard link target \"%s\" is not in the same layer",
				f->checks[i].path, f->checks[i].target);
	}
	for (size_t i = 0; i < f->nr_checks; i++) {
		free(f->checks[i].path);
		free(f->checks[i].target);
	}
	f->nr_checks = 0;
	return ret;
}

/* The next entry of the layer: 1, 0 at its end, or a negative errno. */
static int next_entry(struct flatten *f, struct archive_entry **e,
		      struct imgfs_error *err)
{
	struct imgfs_tar_options o = {
		.allow_missing_end = f->opts->allow_missing_end,
		.require_end = f->opts->require_end,
		.warn = f->opts->warn,
		.warn_arg = f->opts->warn_arg,
	};
	int r = tar_next(f->t, &o, e, err);

	if (r > 0)
		f->entries++;
	return r;
}

static int open_layer(struct flatten *f, unsigned int layer,
		      struct imgfs_error *err)
{
	f->a = NULL;
	f->t = NULL;
	f->entries = 0;
	if (f->opener) {
		int ret = f->opener->open(f->opener->arg, layer, &f->t, err);

		if (!ret && !f->t)
			ret = error_set(err, -EINVAL,
					"the opener gave no tar reader");
		f->a = ret ? NULL : tar_archive(f->t);
		return ret;
	}
	f->t = imgfs_tar_open(f->tars[layer], err);
	if (!f->t)
		return err->code;
	f->a = tar_archive(f->t);
	return 0;
}

/* Close the layer; its close error counts only when all went well. */
static int close_layer(struct flatten *f, unsigned int layer, int ret,
		       struct imgfs_error *err)
{
	struct imgfs_error ignored;
	int r = 0;

	if (f->opener)
		r = f->opener->close(f->opener->arg, layer, f->t,
				     ret ? &ignored : err);
	else
		imgfs_tar_close(f->t);
	f->a = NULL;
	f->t = NULL;
	return ret ? ret : r;
}

/* Put the layer's name before the message. */
static int layer_error(const struct flatten *f, unsigned int layer,
		       struct imgfs_error *err)
{
	int code = err->code ? err->code : -EIO;

	if (f->tars)
		return error_prefix(err, code, "%s", f->tars[layer]);
	return error_prefix(err, code, "layer %u", layer);
}

static int read_layer(struct flatten *f, struct imgfs_writer *w,
		      unsigned int layer, struct imgfs_error *err)
{
	struct archive_entry *e;
	int ret;

	f->layer = (int32_t)layer;
	ret = open_layer(f, layer, err);
	if (ret)
		return layer_error(f, layer, err);
	while ((ret = next_entry(f, &e, err)) > 0) {
		ret = take_entry(f, w, e, err);
		if (ret)
			break;
	}
	if (!ret)
		ret = check_links(f, err);
	ret = close_layer(f, layer, ret, err);
	stack_links_reset(&f->links);
	return ret ? layer_error(f, layer, err) : 0;
}

/* The writer's feed: every layer, the top one first. */
static int feed(struct imgfs_writer *w, void *arg, struct imgfs_error *err)
{
	struct flatten *f = arg;
	int ret;

	for (unsigned int i = f->nlayers; i-- > 0;) {
		ret = read_layer(f, w, i, err);
		if (ret)
			return ret;
	}
	return 0;
}

/* @opts: the caller's @in in full (writer/options.h), checked */
static int check_args(struct imgfs_mkfs_options *opts,
		      const struct imgfs_mkfs_options *in,
		      unsigned int nlayers, struct imgfs_error *err)
{
	int ret = mkfs_options_in(opts, in, err);

	if (ret)
		return ret;
	if (!nlayers || nlayers > INT32_MAX)
		return error_set(err, -EINVAL,
				 "flattening needs at least one layer");
	if (opts->whiteouts != IMGFS_WHITEOUT_OVERLAY)
		return error_set(
			err, -EINVAL,
			"flattening applies whiteouts: they cannot be kept");
	if (opts->tar_index != IMGFS_TAR_INDEX_NONE)
		return error_set(
			err, -EINVAL,
			"a flattened image cannot be a tar index: its data comes from several layers");
	return 0;
}

static int flatten(struct flatten *f, const char *image_path,
		   struct imgfs_mkfs_stats *stats, struct imgfs_error *err)
{
	int ret;

	stack_links_init(&f->links);
	f->it = archive_iter_new(f->opts->warn, f->opts->warn_arg, err);
	ret = f->it ? stack_paths_init(&f->paths, err) : err->code;
	if (!ret)
		ret = convert_feed(image_path, f->opts, NULL, feed, f, stats,
				   err);
	for (size_t i = 0; i < f->nr_checks; i++) {
		free(f->checks[i].path);
		free(f->checks[i].target);
	}
	free(f->checks);
	path_comps_free(&f->comps);
	path_comps_free(&f->tcomps);
	stack_links_free(&f->links);
	stack_paths_free(&f->paths);
	if (f->it)
		f->it->destroy(f->it);
	return ret;
}

int imgfs_flatten(const struct imgfs_mkfs_options *opts, unsigned int nlayers,
		  const struct imgfs_layer_opener *opener,
		  const char *image_path, struct imgfs_mkfs_stats *stats,
		  struct imgfs_error *err)
{
	struct imgfs_mkfs_options full;
	struct flatten f = { .opts = &full, .nlayers = nlayers,
			     .opener = opener };
	int ret;

	imgfs_error_clear(err);
	ret = check_args(&full, opts, nlayers, err);
	if (!ret && (!opener || !opener->open || !opener->close))
		ret = error_set(err, -EINVAL,
				"a layer opener needs open and close");
	return ret ? ret : flatten(&f, image_path, stats, err);
}

/* A target that is one of the layers would replace it. */
static int check_target(unsigned int nlayers, const char *const *tars,
			const char *image_path, struct imgfs_error *err)
{
	struct stat st, lt;

	if (stat(image_path, &st) || !S_ISREG(st.st_mode))
		return 0;
	for (unsigned int i = 0; i < nlayers; i++)
		if (!stat(tars[i], &lt) && lt.st_dev == st.st_dev &&
		    lt.st_ino == st.st_ino)
			return error_set(err, -EINVAL,
					 "%s: refusing to overwrite layer %s",
					 image_path, tars[i]);
	return 0;
}

int imgfs_flatten_tars(const struct imgfs_mkfs_options *opts,
		       unsigned int nlayers, const char *const *tar_paths,
		       const char *image_path, struct imgfs_mkfs_stats *stats,
		       struct imgfs_error *err)
{
	struct imgfs_mkfs_options full;
	struct flatten f = { .opts = &full, .nlayers = nlayers,
			     .tars = tar_paths };
	int ret;

	imgfs_error_clear(err);
	ret = check_args(&full, opts, nlayers, err);
	if (!ret)
		ret = check_target(nlayers, tar_paths, image_path, err);
	return ret ? ret : flatten(&f, image_path, stats, err);
}
