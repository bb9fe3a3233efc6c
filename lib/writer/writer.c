// SPDX-License-Identifier: MIT
/*
 * Writer life cycle: options, entry intake (tar streams and directories
 * through archive.c, or the entry calls of entry.c), and finishing the
 * image.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <uuid/uuid.h>

#include "imgfs/format.h"
#include "util/vec.h"
#include "writer/compress.h"
#include "writer/internal.h"
#include "util/error.h"

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

static int check_options(const struct imgfs_mkfs_options *o,
			 struct imgfs_error *err)
{
	if (o->struct_size != sizeof(*o))
		return imgfs_error_set(err, -EINVAL,
				       "options structure size mismatch");
	if (o->blkszbits < IMGFS_MIN_BLKSZBITS ||
	    o->blkszbits > IMGFS_MAX_BLKSZBITS)
		return imgfs_error_set(err, -EINVAL,
				       "block size %u is not one of 512, 1024, 2048, 4096",
				       1u << o->blkszbits);
	if (strnlen(o->label, sizeof(o->label)) > 16)
		return imgfs_error_set(err, -EINVAL,
				       "label longer than 16 bytes");
	if ((unsigned int)o->mtime_policy > IMGFS_MTIME_CLAMP)
		return imgfs_error_set(err, -EINVAL,
				       "unknown mtime policy %d",
				       (int)o->mtime_policy);
	if ((unsigned int)o->file_flags > IMGFS_FILE_FLAGS_IGNORE)
		return imgfs_error_set(err, -EINVAL,
				       "unknown file flags policy %d",
				       (int)o->file_flags);
	if (o->dm_verity_have_salt &&
	    o->dm_verity_salt_size > IMGFS_VERITY_SALT_MAX)
		return imgfs_error_set(err, -EINVAL,
				       "dm-verity salt longer than %d bytes",
				       IMGFS_VERITY_SALT_MAX);
	if (o->tar_index != IMGFS_TAR_INDEX_NONE &&
	    o->tar_index != IMGFS_TAR_INDEX_ONLY &&
	    o->tar_index != IMGFS_TAR_INDEX_APPEND)
		return imgfs_error_set(err, -EINVAL,
				       "unknown tar-index mode %d",
				       (int)o->tar_index);
	/* the tree must cover the tar and lie after it: not ours to place
	 * when the caller appends the tar */
	if (o->tar_index == IMGFS_TAR_INDEX_ONLY && o->dm_verity)
		return imgfs_error_set(err, -EINVAL,
				       "--dm-verity cannot go with an index written alone (--tar-index=only, mkfs.erofs --tar=i): the caller appends the tar after the index, so a tree written here could neither cover the tar nor stay after it; use --tar-index (index and tar in one file), or build the tree once the tar is appended (veritysetup format)");
	if (o->tar_index && o->compress != IMGFS_COMPRESS_NONE)
		return imgfs_error_set(err, -EINVAL,
				       "a tar-index image keeps file data in the tar: it cannot be compressed");
	return 0;
}

/* The first message, for imgfs_mkfs_options_check()'s error. */
static void keep_first(const char *msg, void *arg)
{
	struct imgfs_error *err = arg;

	if (!err->code)
		imgfs_error_set(err, -EINVAL, "%s", msg);
}

unsigned int imgfs_mkfs_options_unused(const struct imgfs_mkfs_options *o,
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

int imgfs_mkfs_options_check(const struct imgfs_mkfs_options *o,
			     struct imgfs_error *err)
{
	unsigned int bits = o->tar_index ? 9 : o->blkszbits;
	uint32_t bs = 1u << bits;
	int ret;

	imgfs_error_clear(err);
	ret = check_options(o, err);
	if (ret)
		return ret;
	if (o->compress != IMGFS_COMPRESS_NONE)
		ret = imgfs_compress_check_options(o, bits, err);
	/* the writer ignores it without compression: still a mistake */
	else if (o->pcluster_size &&
		 (o->pcluster_size < bs || o->pcluster_size % bs ||
		  o->pcluster_size > (1u << 20)))
		return imgfs_error_set(err, -EINVAL,
				       "pcluster size %u must be a multiple of the block size (%u) up to 1 MiB",
				       o->pcluster_size, bs);
	if (ret)
		return ret;
	imgfs_mkfs_options_unused(o, keep_first, err);
	return err->code;
}

static int exclude(struct imgfs_writer *w, const struct stat *st,
		   struct imgfs_error *err)
{
	if (IMGFS_VEC_RESERVE(w->excluded, w->cap_excluded,
			      w->nr_excluded + 1, 4))
		return imgfs_error_set(err, -ENOMEM, "out of memory");
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
		return imgfs_error_set(err, -errno, "%s: %s", path,
				       strerror(errno));
	}
	return S_ISDIR(st.st_mode) ? 0 : exclude(w, &st, err);
}

struct imgfs_writer *imgfs_writer_create(const struct imgfs_mkfs_options *opts,
					 int fd, struct imgfs_error *err)
{
	struct imgfs_writer *w;
	struct stat st;
	uint64_t start;

	if (check_options(opts, err))
		return NULL;
	/* front ends refuse these (imgfs_mkfs_options_check()) or warn */
	if (opts->warn)
		imgfs_mkfs_options_unused(opts, opts->warn, opts->warn_arg);
	w = calloc(1, sizeof(*w));
	if (!w) {
		imgfs_error_set(err, -ENOMEM, "out of memory");
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
	if (imgfs_tree_init(&w->tree, err) ||
	    imgfs_blkout_init(&w->out, fd, w->blkszbits, start, err)) {
		imgfs_writer_destroy(w);
		return NULL;
	}
	w->data_start = start;
	w->tree.root->inode->mtime = w->build_time;
	if (opts->compress != IMGFS_COMPRESS_NONE) {
		w->compressor = imgfs_compressor_create(opts, w->blkszbits,
							err);
		if (!w->compressor) {
			imgfs_writer_destroy(w);
			return NULL;
		}
	}
	if (opts->dm_verity && imgfs_writer_verity_start(w, start, err)) {
		imgfs_writer_destroy(w);
		return NULL;
	}
	if (ftruncate(fd, 0) < 0) {
		imgfs_error_set(err, -errno, "truncating output: %s",
				strerror(errno));
		imgfs_writer_destroy(w);
		return NULL;
	}
	/* the image must not swallow itself when written inside a source */
	if (fstat(fd, &st) < 0)
		imgfs_error_set(err, -errno, "output: %s", strerror(errno));
	else if (!exclude(w, &st, err))
		return w;
	imgfs_writer_destroy(w);
	return NULL;
}

/* Neither failed nor in the middle of a file's data. */
static int check_idle(struct imgfs_writer *w, struct imgfs_error *err)
{
	if (w->failed)
		return imgfs_error_set(err, -EINVAL, "writer already failed");
	if (w->file_open)
		return imgfs_error_set(err, -EINVAL,
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
	return imgfs_error_set(err, -EINVAL,
			       "a tar-index image is built from a tar stream, not from %s",
			       what);
}

int imgfs_writer_add_archive(struct imgfs_writer *w, struct archive *a,
			     struct imgfs_error *err)
{
	int ret;

	ret = check_idle(w, err);
	if (!ret)
		ret = check_not_index(w, "a libarchive handle", err);
	if (!ret)
		ret = imgfs_writer_read_entries(w, a, err);
	if (ret)
		w->failed = true;
	return ret;
}

int imgfs_writer_add_tar(struct imgfs_writer *w, struct imgfs_tar *t,
			 struct imgfs_error *err)
{
	int ret;

	ret = check_idle(w, err);
	w->progress_tar = t;
	if (!ret)
		ret = w->opts.tar_index ? imgfs_taridx_add_tar(w, t, err) :
					  imgfs_writer_read_tar(w, t, err);
	w->progress_tar = NULL;
	if (ret)
		w->failed = true;
	return ret;
}

int imgfs_writer_add_directory(struct imgfs_writer *w, const char *path,
			       struct imgfs_error *err)
{
	int ret;

	ret = check_idle(w, err);
	if (!ret)
		ret = check_not_index(w, "a directory", err);
	if (!ret)
		ret = imgfs_source_read_dir(w, path, err);
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
		ret = imgfs_writer_resolve_links(w, err);
	if (!ret && w->opts.tar_index && !w->tar_added)
		ret = imgfs_error_set(err, -EINVAL,
				      "a tar-index image needs its tar stream (imgfs_writer_add_tar())");
	if (!ret)
		ret = imgfs_layout_write(w, &st, err);
	if (!ret)
		ret = imgfs_taridx_append(w, &st.image_bytes, err);
	if (!ret && w->verity)
		ret = imgfs_writer_verity_finish(w, &st.dm_verity, err);
	if (ret) {
		w->failed = true;
		return ret;
	}
	imgfs_writer_warn_file_flags(w);
	st.entries = w->entries;
	st.data_bytes = w->data_bytes;
	if (stats)
		*stats = st;
	return 0;
}

void imgfs_writer_destroy(struct imgfs_writer *w)
{
	if (!w)
		return;
	imgfs_writer_close_file(w);
	imgfs_writer_free_links(w);
	imgfs_compressor_destroy(w->compressor);
	imgfs_verity_free(w->verity);
	imgfs_tree_free(&w->tree);
	imgfs_xattr_table_free(&w->xattrs);
	imgfs_blkout_free(&w->out);
	imgfs_fflags_tally_free(&w->fflags);
	free(w->excluded);
	free(w->iobuf);
	free(w->devt);
	if (w->tar_copy_fd >= 0)
		close(w->tar_copy_fd);
	free(w);
}
