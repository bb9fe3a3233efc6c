// SPDX-License-Identifier: MIT
/*
 * Writer life cycle: options, entry intake (tar streams and directories
 * as sources of entries, source/iter.h, taken by iterate.c; or the entry
 * calls of entry.c), and finishing the image.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <uuid/uuid.h>

#include "imgfs/format.h"
#include "imgfs/source.h"
#include "source/iter.h"
#include "util/sized.h"
#include "util/vec.h"
#include "writer/compress.h"
#include "writer/internal.h"
#include "util/error.h"
#include "writer/options.h"

void imgfs_mkfs_options_init(struct imgfs_mkfs_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->struct_size = sizeof(*opts);
	opts->blkszbits = 12;
	opts->force_uid = -1;
	opts->force_gid = -1;
	opts->shared_xattr_min = 2;
	opts->compress_level = -1;
}

int mkfs_options_in(struct imgfs_mkfs_options *full,
		    const struct imgfs_mkfs_options *o, struct imgfs_error *err)
{
	imgfs_mkfs_options_init(full);
	if (!o)
		return error_set(err, -EINVAL, "no mkfs options");
	return SIZED_IN(full, o, sizeof(*full), "mkfs options", err);
}

static int check_options(const struct imgfs_mkfs_options *o,
			 struct imgfs_error *err)
{
	if (o->blkszbits < IMGFS_MIN_BLKSZBITS ||
	    o->blkszbits > IMGFS_MAX_BLKSZBITS)
		return error_set(
			err, -EINVAL,
			"block size %u is not one of 512, 1024, 2048, 4096",
			1u << o->blkszbits);
	if (strnlen(o->label, sizeof(o->label)) > 16)
		return error_set(err, -EINVAL, "label longer than 16 bytes");
	if ((unsigned int)o->mtime_policy > IMGFS_MTIME_CLAMP)
		return error_set(err, -EINVAL, "unknown mtime policy %d",
				 (int)o->mtime_policy);
	if ((unsigned int)o->file_flags > IMGFS_FILE_FLAGS_IGNORE)
		return error_set(err, -EINVAL, "unknown file flags policy %d",
				 (int)o->file_flags);
	if (o->dm_verity_have_salt &&
	    o->dm_verity_salt_size > IMGFS_VERITY_SALT_MAX)
		return error_set(err, -EINVAL,
				 "dm-verity salt longer than %d bytes",
				 IMGFS_VERITY_SALT_MAX);
	if (o->tar_index != IMGFS_TAR_INDEX_NONE &&
	    o->tar_index != IMGFS_TAR_INDEX_ONLY &&
	    o->tar_index != IMGFS_TAR_INDEX_APPEND)
		return error_set(err, -EINVAL, "unknown tar-index mode %d",
				 (int)o->tar_index);
	/* the tree must cover the tar and lie after it: not ours to place
	 * when the caller appends the tar */
	if (o->tar_index == IMGFS_TAR_INDEX_ONLY && o->dm_verity)
		return error_set(
			err, -EINVAL,
			"--dm-verity cannot go with an index written alone (--tar-index=only, mkfs.erofs --tar=i): the caller appends the tar after the index, so a tree written here could neither cover the tar nor stay after it; use --tar-index (index and tar in one file), or build the tree once the tar is appended (veritysetup format)");
	if (o->tar_index && o->compress != IMGFS_COMPRESS_NONE)
		return error_set(
			err, -EINVAL,
			"a tar-index image keeps file data in the tar: it cannot be compressed");
	return 0;
}

/* The first message, for imgfs_mkfs_options_check()'s error. */
static void keep_first(const char *msg, void *arg)
{
	struct imgfs_error *err = arg;

	if (!err->code)
		error_set(err, -EINVAL, "%s", msg);
}

static unsigned int options_unused(const struct imgfs_mkfs_options *o,
				   imgfs_warn_fn report, void *arg)
{
	bool z = o->compress != IMGFS_COMPRESS_NONE;
	unsigned int n = 0;

#define UNUSED(cond, msg)                    \
	do {                                 \
		if (cond) {                  \
			n++;                 \
			if (report)          \
				report(msg, arg); \
		}                            \
	} while (0)
	/* compression is refused there: say why its options do nothing */
	UNUSED(o->tar_index && o->inline_data,
	       "inline data (--inline-data, -Einline_data) has no effect on a tar-index image: file data stays in the tar");
	UNUSED(!z && o->pcluster_size,
	       "a physical cluster size (-C) has no effect without compression (-z)");
	UNUSED(!z && o->ztailpacking,
	       "tail packing (--ztailpacking, -Eztailpacking) has no effect without compression (-z)");
	UNUSED(!z && o->fragments,
	       "fragments (--fragments, -Efragments) have no effect without compression (-z)");
	UNUSED(!z && o->workers,
	       "compression workers (--workers) have no effect without compression (-z)");
	/* every file's end goes to the packed inode: none is left to inline */
	UNUSED(z && o->fragments && o->inline_data,
	       "inline data (--inline-data, -Einline_data) has no effect with fragments (--fragments, -Efragments): file ends go to the packed inode");
	UNUSED(z && o->fragments && o->ztailpacking,
	       "tail packing (--ztailpacking, -Eztailpacking) has no effect with fragments (--fragments, -Efragments): file ends go to the packed inode");
#undef UNUSED
	return n;
}

unsigned int imgfs_mkfs_options_unused(const struct imgfs_mkfs_options *o,
				       imgfs_warn_fn report, void *arg)
{
	struct imgfs_mkfs_options full;
	struct imgfs_error err = { 0 };

	/* options it cannot read are one thing the caller set in vain */
	if (mkfs_options_in(&full, o, &err)) {
		if (report)
			report(err.msg, arg);
		return 1;
	}
	return options_unused(&full, report, arg);
}

int imgfs_mkfs_options_check(const struct imgfs_mkfs_options *in,
			     struct imgfs_error *err)
{
	struct imgfs_mkfs_options full, *o = &full;
	unsigned int bits;
	uint32_t bs;
	int ret;

	imgfs_error_clear(err);
	ret = mkfs_options_in(&full, in, err);
	if (!ret)
		ret = check_options(o, err);
	if (ret)
		return ret;
	bits = o->tar_index ? 9 : o->blkszbits;
	bs = 1u << bits;
	if (o->compress != IMGFS_COMPRESS_NONE)
		ret = compress_check_options(o, bits, err);
	/* the writer ignores it without compression: still a mistake */
	else if (o->pcluster_size &&
		 (o->pcluster_size < bs || o->pcluster_size % bs ||
		  o->pcluster_size > (1u << 20)))
		return error_set(
			err, -EINVAL,
			"pcluster size %u must be a multiple of the block size (%u) up to 1 MiB",
			o->pcluster_size, bs);
	if (ret)
		return ret;
	options_unused(o, keep_first, err);
	return err->code;
}

static int exclude(struct imgfs_writer *w, const struct stat *st,
		   struct imgfs_error *err)
{
	if (IMGFS_VEC_RESERVE(w->excluded, w->cap_excluded,
			      w->nr_excluded + 1, 4))
		return error_set(err, -ENOMEM, "out of memory");
	w->excluded[w->nr_excluded].dev = st->st_dev;
	w->excluded[w->nr_excluded].ino = st->st_ino;
	w->nr_excluded++;
	return 0;
}

int imgfs_writer_exclude_path(struct imgfs_writer *w, const char *path,
			      struct imgfs_error *err)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		return error_set(err, -errno, "%s: %s", path, strerror(errno));
	}
	return S_ISDIR(st.st_mode) ? 0 : exclude(w, &st, err);
}

struct imgfs_writer *imgfs_writer_create(const struct imgfs_mkfs_options *in,
					 int fd, struct imgfs_error *err)
{
	struct imgfs_mkfs_options full, *opts = &full;
	struct imgfs_writer *w;
	struct stat st;
	uint64_t start;

	if (mkfs_options_in(&full, in, err) || check_options(opts, err))
		return NULL;
	/* front ends refuse these (imgfs_mkfs_options_check()) or warn */
	if (opts->warn)
		options_unused(opts, opts->warn, opts->warn_arg);
	w = calloc(1, sizeof(*w));
	if (!w) {
		error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	w->opts = *opts;
	w->fd = fd;
	w->tar_copy_fd = -1;
	w->tar_pos = -1;
	/* tar data lies on 512-byte boundaries: chunks must address them */
	if (opts->tar_index)
		w->opts.blkszbits = 9;
	w->blkszbits = w->opts.blkszbits;
	w->bs = 1u << w->blkszbits;
	w->build_time = opts->have_build_time ? opts->build_time :
						(int64_t)time(NULL);
	if (!opts->have_uuid)
		uuid_generate(w->opts.uuid);
	/* data starts at the first block after the superblock */
	start = (IMGFS_SUPER_OFFSET + IMGFS_SUPER_BASE_SIZE + w->bs - 1) &
		~(uint64_t)(w->bs - 1);
	if (tree_init(&w->tree, err) ||
	    blkout_init(&w->out, fd, w->blkszbits, start, err)) {
		imgfs_writer_destroy(w);
		return NULL;
	}
	w->out.no_write_behind = opts->no_fsync;
	w->data_start = start;
	w->tree.root->inode->mtime = w->build_time;
	if (opts->compress != IMGFS_COMPRESS_NONE) {
		w->compressor = compressor_create(opts, w->blkszbits, err);
		if (!w->compressor) {
			imgfs_writer_destroy(w);
			return NULL;
		}
	}
	if (opts->dm_verity && writer_verity_start(w, start, err)) {
		imgfs_writer_destroy(w);
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		error_set(err, -errno, "output: %s", strerror(errno));
		imgfs_writer_destroy(w);
		return NULL;
	}
	/*
	 * Only a file with something in it is truncated: on ext4, a
	 * truncation to zero makes the last close allocate every block
	 * written since (auto_da_alloc), which an unsynced image of a
	 * fresh file (--no-fsync, the drop-in) would wait for.
	 */
	if (st.st_size && ftruncate(fd, 0) < 0) {
		error_set(err, -errno, "truncating output: %s",
			  strerror(errno));
		imgfs_writer_destroy(w);
		return NULL;
	}
	/* the image must not swallow itself when written inside a source */
	if (!exclude(w, &st, err))
		return w;
	imgfs_writer_destroy(w);
	return NULL;
}

/* Neither failed nor in the middle of a file's data. */
static int check_idle(struct imgfs_writer *w, struct imgfs_error *err)
{
	if (w->failed)
		return error_set(err, -EINVAL, "writer already failed");
	if (w->file_open)
		return error_set(err, -EINVAL,
				 "%s: the file's data is not ended yet",
				 w->file_path);
	return 0;
}

/* Tar-index images take their entries from one tar stream only. */
static int check_not_index(struct imgfs_writer *w, const char *what,
			   struct imgfs_error *err)
{
	if (!w->opts.tar_index)
		return 0;
	return error_set(
		err, -EINVAL,
		"a tar-index image is built from a tar stream, not from %s",
		what);
}

/*
 * Every entry of @it, which this ends (NULL: making it failed, @err says
 * why); a tar-index image indexes the tar it reads.
 */
static int read_source(struct imgfs_writer *w, struct entry_iter *it,
		       struct imgfs_error *err)
{
	int ret = 0;

	if (!it)
		return err->code;
	if (w->opts.tar_index)
		ret = taridx_start(w, it, err);
	if (!ret)
		ret = writer_read_iter(w, it, err);
	if (w->opts.tar_index && it->stream_bytes)
		w->tar_bytes = it->stream_bytes(it);
	it->destroy(it);
	return ret;
}

static int read_tar(struct imgfs_writer *w, struct imgfs_tar *t,
		    struct imgfs_error *err)
{
	struct imgfs_tar_options o = {
		.allow_missing_end = w->opts.allow_missing_end,
		.require_end = w->opts.require_end,
		.warn = w->opts.warn,
		.warn_arg = w->opts.warn_arg,
	};

	return read_source(w, tar_iter_new(t, &o, err), err);
}

int imgfs_writer_add_tar(struct imgfs_writer *w, struct imgfs_tar *t,
			 struct imgfs_error *err)
{
	int ret;

	ret = check_idle(w, err);
	w->progress_tar = t;
	if (!ret)
		ret = read_tar(w, t, err);
	w->progress_tar = NULL;
	if (ret)
		w->failed = true;
	return ret;
}

static int read_dir(struct imgfs_writer *w, const char *path,
		    struct imgfs_error *err)
{
	struct dir_iter_options o = {
		.skip = w->excluded,
		.nr_skip = w->nr_excluded,
		.overlay_whiteouts = w->opts.whiteouts == IMGFS_WHITEOUT_OVERLAY,
		.warn = w->opts.warn,
		.warn_arg = w->opts.warn_arg,
	};

	return read_source(w, dir_iter_new(path, &o, err), err);
}

int imgfs_writer_add_directory(struct imgfs_writer *w, const char *path,
			       struct imgfs_error *err)
{
	int ret;

	ret = check_idle(w, err);
	if (!ret)
		ret = check_not_index(w, "a directory", err);
	if (!ret)
		ret = read_dir(w, path, err);
	if (ret)
		w->failed = true;
	return ret;
}

int imgfs_writer_finish(struct imgfs_writer *w, struct imgfs_mkfs_stats *stats,
			struct imgfs_error *err)
{
	struct imgfs_mkfs_stats st = { 0 };
	int ret;

	ret = check_idle(w, err);
	if (!ret)
		ret = writer_resolve_links(w, err);
	if (!ret && w->opts.tar_index && !w->tar_added)
		ret = error_set(
			err, -EINVAL,
			"a tar-index image needs its tar stream (imgfs_writer_add_tar())");
	if (!ret)
		ret = layout_write(w, &st, err);
	if (!ret)
		ret = taridx_append(w, &st.image_bytes, err);
	if (!ret && w->verity)
		ret = writer_verity_finish(w, &st.dm_verity, err);
	if (ret) {
		w->failed = true;
		return ret;
	}
	writer_warn_file_flags(w);
	st.entries = w->entries;
	st.data_bytes = w->data_bytes;
	st.struct_size = sizeof(st);
	if (stats)
		*stats = st;
	return 0;
}

void imgfs_writer_destroy(struct imgfs_writer *w)
{
	if (!w)
		return;
	writer_close_file(w);
	writer_free_links(w);
	compressor_destroy(w->compressor);
	imgfs_verity_free(w->verity);
	tree_free(&w->tree);
	xattr_table_free(&w->xattrs);
	blkout_free(&w->out);
	fflags_tally_free(&w->fflags);
	free(w->excluded);
	free(w->iobuf);
	free(w->devt);
	if (w->tar_copy_fd >= 0)
		close(w->tar_copy_fd);
	free(w);
}
