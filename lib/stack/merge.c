// SPDX-License-Identifier: MIT
/*
 * Merging layer images into one metadata-only image (imgfs/stack.h): the
 * layer images (uncompressed, no inline data, as converted layers are)
 * become the extra devices of the merged image, layer i device i + 1, and
 * each regular file of the merged tree is a chunk-based inode whose chunk
 * indexes point at its blocks in its layer. The overlay rules are those of
 * flattening (stack/paths.c), read from the layer images' own whiteouts:
 * a character device 0:0 deletes its path, trusted.overlay.opaque = "y"
 * makes a directory opaque. Every directory of a layer image counts as an
 * entry of that layer, as overlayfs counts it: the topmost gives the
 * metadata.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "imgfs/format.h"
#include "imgfs/reader.h"
#include "imgfs/stack.h"
#include "imgfs/walk.h"
#include "stack/paths.h"
#include "util/error.h"
#include "util/hashtab.h"
#include "util/vec.h"
#include "writer/intake.h"
#include "util/error.h"
#include "writer/options.h"

#define OVERLAY_PREFIX "trusted.overlay."
#define OVERLAY_OPAQUE "trusted.overlay.opaque"

struct merge {
	const struct imgfs_mkfs_options *opts;
	unsigned int nlayers;
	const char *const *paths;
	struct imgfs_image **imgs;
	struct imgfs_writer *w;
	struct stack_paths tree;
	struct imgfs_path_comps comps;
	/* the layer being walked */
	int32_t layer;
	struct imgfs_image *img;
	/* its hard links: nid -> index in @shown of the path written */
	struct imgfs_u64map links;
	char **shown;
	size_t nr_shown, cap_shown;
	/* one entry's xattrs (copies) and chunks */
	struct imgfs_xattr_pair *xattrs;
	size_t nr_xattrs, cap_xattrs;
	struct imgfs_external_chunk *chunks;
	size_t cap_chunks;
	struct imgfs_error *err;
};

static int copy_xattr(void *arg, const struct imgfs_xattr_info *x)
{
	struct merge *m = arg;
	struct imgfs_xattr_pair *p;
	char *name;
	void *value;

	/* the layer's overlay markers are applied, not carried over */
	if (!strncmp(x->name, OVERLAY_PREFIX, strlen(OVERLAY_PREFIX)))
		return 0;
	if (IMGFS_VEC_RESERVE(m->xattrs, m->cap_xattrs, m->nr_xattrs + 1, 8))
		return -ENOMEM;
	name = strdup(x->name);
	value = malloc(x->value_size ? x->value_size : 1);
	if (!name || !value) {
		free(name);
		free(value);
		return -ENOMEM;
	}
	memcpy(value, x->value, x->value_size);
	p = &m->xattrs[m->nr_xattrs++];
	p->name = name;
	p->value = value;
	p->size = x->value_size;
	return 0;
}

static void free_xattrs(struct merge *m)
{
	for (size_t i = 0; i < m->nr_xattrs; i++) {
		free((char *)m->xattrs[i].name);
		free((void *)m->xattrs[i].value);
	}
	m->nr_xattrs = 0;
}

/* Is @inode a directory marked opaque in its layer? */
static bool is_opaque(struct merge *m, const struct imgfs_inode *inode)
{
	struct imgfs_error ignored;
	char v[2];

	imgfs_error_clear(&ignored);
	return (inode->mode & S_IFMT) == S_IFDIR &&
	       imgfs_getxattr(m->img, inode, OVERLAY_OPAQUE, v, sizeof(v),
			      &ignored) == 1 &&
	       v[0] == 'y';
}

struct chunk_ctx {
	struct merge *m;
	unsigned int chunkbits;
	const char *path;
};

static int put_chunk(void *arg, const struct imgfs_extent *ext)
{
	struct chunk_ctx *cc = arg;
	struct merge *m = cc->m;
	unsigned int bits = imgfs_image_sb(m->img)->blkszbits;
	uint64_t c = ext->logical >> cc->chunkbits;
	uint64_t start = ext->pos - (ext->logical - (c << cc->chunkbits));
	uint64_t blk = start >> bits;

	if (ext->kind == IMGFS_EXTENT_HOLE)
		return 0;
	if (ext->kind != IMGFS_EXTENT_PLAIN || ext->device)
		return error_set(
			m->err, -EOPNOTSUPP,
			"%s: data %s: only uncompressed data in whole blocks of the layer image can be referred to",
			cc->path,
			ext->kind == IMGFS_EXTENT_INLINE
				? "inline with its inode"
			: ext->device ? "on another device"
				      : "compressed");
	/* a chunk is contiguous from a block boundary */
	if ((start & ((1ull << bits) - 1)) ||
	    (m->chunks[c].device && m->chunks[c].blkaddr != blk))
		return error_set(
			m->err, -EOPNOTSUPP,
			"%s: data not contiguous from a block boundary in the layer image",
			cc->path);
	if (blk >= IMGFS_NULL_ADDR)
		return error_set(m->err, -EFBIG,
				 "%s: data beyond 32-bit block addresses",
				 cc->path);
	m->chunks[c].device = (uint16_t)(m->layer + 1);
	m->chunks[c].blkaddr = (uint32_t)blk;
	return 0;
}

/* A regular file with data: chunk indexes into its layer. */
static int add_file(struct merge *m, struct imgfs_entry *e,
		    const struct imgfs_inode *inode)
{
	unsigned int bits = imgfs_image_sb(m->img)->blkszbits;
	struct chunk_ctx cc = { .m = m, .path = e->path };
	uint64_t nr;
	int ret;

	if (inode->layout == IMGFS_LAYOUT_CHUNK_BASED) {
		cc.chunkbits = inode->chunkbits;
	} else {
		/* one chunk for the whole file */
		cc.chunkbits = bits;
		while (cc.chunkbits < 63 && (1ull << cc.chunkbits) < e->size)
			cc.chunkbits++;
	}
	nr = (e->size + (1ull << cc.chunkbits) - 1) >> cc.chunkbits;
	if (IMGFS_VEC_RESERVE(m->chunks, m->cap_chunks, nr, 16))
		return error_set(m->err, -ENOMEM, "out of memory");
	memset(m->chunks, 0, nr * sizeof(*m->chunks));
	ret = imgfs_extent_iterate(m->img, inode, put_chunk, &cc, m->err);
	if (ret)
		return ret < 0 ? ret : -EIO;
	return writer_add_external(m->w, e, cc.chunkbits, m->chunks, (size_t)nr,
				   m->err);
}

static int remember_shown(struct merge *m, uint64_t nid, const char *path)
{
	char *copy = strdup(path);

	if (!copy ||
	    IMGFS_VEC_RESERVE(m->shown, m->cap_shown, m->nr_shown + 1, 16) ||
	    u64map_add(&m->links, nid, m->nr_shown) < 0) {
		free(copy);
		return error_set(m->err, -ENOMEM, "out of memory");
	}
	m->shown[m->nr_shown++] = copy;
	return 0;
}

/* Write the visible entry @path (no leading "/") from its layer. */
static int add_visible(struct merge *m, const char *path,
		       const struct imgfs_inode *inode)
{
	struct imgfs_entry e = { .struct_size = sizeof(e),
				 .path = path, .mode = inode->mode,
				 .uid = inode->uid, .gid = inode->gid,
				 .have_mtime = true, .mtime = inode->mtime,
				 .mtime_nsec = inode->mtime_nsec };
	char target[4096 + 1];
	uint64_t idx;
	ssize_t n;
	int ret;

	/* a hard link of its layer whose inode is written already */
	if ((inode->mode & S_IFMT) != S_IFDIR && inode->nlink > 1 &&
	    u64map_get(&m->links, inode->nid, &idx)) {
		e.hardlink = m->shown[idx];
		return imgfs_writer_add_entry(m->w, &e, m->err);
	}
	free_xattrs(m);
	ret = imgfs_xattr_iterate(m->img, inode, false, copy_xattr, m, m->err);
	if (ret)
		return ret < 0 ? error_set(m->err, ret,
					   "%s: xattrs: out of memory", path)
			       : 0;
	e.xattrs = m->xattrs;
	e.nr_xattrs = m->nr_xattrs;
	if (S_ISCHR(inode->mode) || S_ISBLK(inode->mode)) {
		e.rdev_major = imgfs_dev_major(inode->rdev);
		e.rdev_minor = imgfs_dev_minor(inode->rdev);
	}
	if (S_ISLNK(inode->mode)) {
		n = imgfs_readlink(m->img, inode, target, sizeof(target),
				   m->err);
		if (n < 0)
			return (int)n;
		target[n < (ssize_t)sizeof(target) ? n : 0] = '\0';
		e.symlink = target;
	}
	if (!S_ISDIR(inode->mode) && inode->nlink > 1 &&
	    (ret = remember_shown(m, inode->nid, path)))
		return ret;
	e.size = S_ISREG(inode->mode) ? inode->size : 0;
	if (e.size)
		return add_file(m, &e, inode);
	return imgfs_writer_add_entry(m->w, &e, m->err);
}

static int take(void *arg, const struct imgfs_walk_entry *we)
{
	struct merge *m = arg;
	const struct imgfs_inode *inode = we->inode;
	const char *path = we->path + (we->path[0] == '/');
	struct imgfs_path_comps *c = &m->comps;
	bool is_dir, hidden;
	int ret;

	if (!inode)
		return 0;
	ret = path_comps_parse(c, path, m->err);
	if (ret)
		return ret;
	/* an overlayfs whiteout */
	if (S_ISCHR(inode->mode) && !imgfs_dev_major(inode->rdev) &&
	    !imgfs_dev_minor(inode->rdev))
		return stack_paths_record(&m->tree, c, c->n, m->layer,
					  STACK_WHITEOUT, m->err);
	is_dir = S_ISDIR(inode->mode);
	hidden = stack_paths_hidden(&m->tree, c, c->n, m->layer, is_dir);
	ret = stack_paths_record(&m->tree, c, c->n, m->layer,
				 is_dir ? STACK_DIR : STACK_NONDIR, m->err);
	if (!ret && is_opaque(m, inode))
		ret = stack_paths_record(&m->tree, c, c->n, m->layer,
					 STACK_OPAQUE, m->err);
	if (ret || hidden)
		return ret;
	return add_visible(m, path, inode);
}

static void reset_links(struct merge *m)
{
	for (size_t i = 0; i < m->nr_shown; i++)
		free(m->shown[i]);
	m->nr_shown = 0;
	u64map_free(&m->links);
	memset(&m->links, 0, sizeof(m->links));
}

/* Prefix the message with the layer image's path. */
static int layer_error(struct merge *m, unsigned int layer, int ret)
{
	int code = m->err->code ? m->err->code : ret;

	return error_prefix(m->err, code, "%s", m->paths[layer]);
}

static int walk_layer(struct merge *m, unsigned int layer)
{
	struct imgfs_walk_options wo = { .struct_size = sizeof(wo),
					 .entry = take, .arg = m };
	struct imgfs_inode root;
	int ret;

	m->layer = (int32_t)layer;
	m->img = m->imgs[layer];
	ret = imgfs_inode_read_root(m->img, &root, m->err);
	/* the root: the top layer's */
	if (!ret && layer == m->nlayers - 1) {
		ret = stack_paths_record(&m->tree, &m->comps, 0, m->layer,
					 STACK_DIR, m->err);
		if (!ret)
			ret = add_visible(m, "", &root);
	}
	if (!ret && is_opaque(m, &root))
		ret = stack_paths_record(&m->tree, &m->comps, 0, m->layer,
					 STACK_OPAQUE, m->err);
	if (!ret)
		ret = imgfs_walk(m->img, root.nid, "/", &wo, m->err);
	reset_links(m);
	return ret ? layer_error(m, layer, ret) : 0;
}

static int merge_feed(struct imgfs_writer *w, void *arg,
		      struct imgfs_error *err)
{
	struct merge *m = arg;
	uint64_t *blocks = calloc(m->nlayers, sizeof(*blocks));
	const char **tags = calloc(m->nlayers, sizeof(*tags));
	int ret;

	m->w = w;
	m->err = err;
	if (!blocks || !tags) {
		free(blocks);
		free(tags);
		return error_set(err, -ENOMEM, "out of memory");
	}
	for (unsigned int i = 0; i < m->nlayers; i++) {
		const char *slash = strrchr(m->paths[i], '/');

		blocks[i] = imgfs_image_sb(m->imgs[i])->blocks;
		tags[i] = slash ? slash + 1 : m->paths[i];
	}
	ret = writer_set_devices(w, m->nlayers, blocks, tags, err);
	free(blocks);
	free(tags);
	m->comps.n = 0;
	for (unsigned int i = m->nlayers; !ret && i-- > 0;)
		ret = walk_layer(m, i);
	return ret;
}

static int open_layers(struct merge *m, struct imgfs_error *err)
{
	m->imgs = calloc(m->nlayers, sizeof(*m->imgs));
	if (!m->imgs)
		return error_set(err, -ENOMEM, "out of memory");
	for (unsigned int i = 0; i < m->nlayers; i++) {
		const struct imgfs_sb_info *sb;
		int ret = imgfs_image_open(m->paths[i], 0, &m->imgs[i], err);

		if (ret)
			return layer_error(m, i, ret);
		sb = imgfs_image_sb(m->imgs[i]);
		if (sb->blkszbits != m->opts->blkszbits || sb->extra_devices)
			return error_set(
				err, -EINVAL,
				"%s: layer images must have the merged image's %u-byte blocks and no devices of their own",
				m->paths[i], 1u << m->opts->blkszbits);
	}
	return 0;
}

int imgfs_merge_images(const struct imgfs_mkfs_options *in,
		       unsigned int nlayers, const char *const *layer_images,
		       const char *image_path, struct imgfs_mkfs_stats *stats,
		       struct imgfs_error *err)
{
	struct imgfs_mkfs_options full, *opts = &full;
	struct merge m = { .opts = opts, .nlayers = nlayers,
			   .paths = layer_images, .err = err };
	int ret;

	imgfs_error_clear(err);
	ret = mkfs_options_in(&full, in, err);
	if (ret)
		return ret;
	if (!nlayers || nlayers > UINT16_MAX)
		return error_set(err, -EINVAL,
				 "merging needs at least one layer image");
	if (opts->compress != IMGFS_COMPRESS_NONE || opts->tar_index ||
	    opts->whiteouts != IMGFS_WHITEOUT_OVERLAY)
		return error_set(
			err, -EINVAL,
			"a merged image holds metadata only: no compression, tar index or kept whiteouts");
	ret = stack_paths_init(&m.tree, err);
	if (!ret)
		ret = open_layers(&m, err);
	if (!ret)
		ret = convert_feed(image_path, opts, NULL, merge_feed, &m,
				   stats, err);
	for (unsigned int i = 0; m.imgs && i < nlayers; i++)
		imgfs_image_close(m.imgs[i]);
	free(m.imgs);
	free_xattrs(&m);
	free(m.xattrs);
	free(m.chunks);
	reset_links(&m);
	free(m.shown);
	path_comps_free(&m.comps);
	stack_paths_free(&m.tree);
	return ret;
}
