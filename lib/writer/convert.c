// SPDX-License-Identifier: MIT
/*
 * One call per conversion: check the target, build the image from a tar
 * stream or a directory into an unnamed file beside it, and put it in
 * place only once it is complete and (unless the caller syncs itself)
 * synced. On failure nothing new is
 * left and an existing target is untouched.
 *
 * With a dm-verity tree, containerd's sidecar IMAGE.dmverity is written
 * the same way, and put in place right after the image: a run that dies
 * between the two renames leaves a new image beside an old (or no)
 * sidecar, whose root hash then fails to match, never a wrong match.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "format/format.h"
#include "imgfs/format.h"
#include "imgfs/source.h"
#include "imgfs/writer.h"
#include "util/fileio.h"
#include "util/sized.h"
#include "writer/intake.h"
#include "util/error.h"
#include "writer/options.h"

/*
 * Where the entries come from: a path ("-", a tar, a directory), an fd,
 * or the caller's feed function (path NULL, fd -1).
 */
struct convert_source {
	const char *path;
	int fd;
	imgfs_writer_feed_fn feed;
	void *feed_arg;
};

/* The source is the target itself: the image would destroy its input. */
static bool same_file(const struct convert_source *src, const char *target)
{
	struct stat sa, sb;
	int r;

	if (src->feed)
		return false; /* the feeder checks its own inputs */
	if (!src->path)
		r = fstat(src->fd, &sa);
	else if (!strcmp(src->path, "-"))
		r = fstat(STDIN_FILENO, &sa);
	else
		r = stat(src->path, &sa);
	if (r)
		return false;
	/* other kinds of target are refused, saying what they are */
	if (stat(target, &sb) || !S_ISREG(sb.st_mode))
		return false;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * What a regular file given as the source is, when it is an image rather
 * than a layer: the arguments were most likely swapped, and a tar reader
 * would only fail on the first entry (or find none). NULL: not an image.
 */
static const char *image_kind(int fd)
{
	uint8_t magic[IMGFS_SUPER_BASE_SIZE] = { 0 };
	struct imgfs_super_block sb;

	/* a tar header's magic: a tar, whatever lies further on */
	if (pread(fd, magic, 5, 257) == 5 && !memcmp(magic, "ustar", 5))
		return NULL;
	/* the magic is enough: a shorter superblock reads as zeros */
	memset(magic, 0, sizeof(magic));
	if (pread(fd, magic, sizeof(magic), IMGFS_SUPER_OFFSET) >= 4) {
		super_block_decode(magic, &sb);
		if (sb.magic == IMGFS_SUPER_MAGIC)
			return "an EROFS image";
	}
	if (pread(fd, magic, 4, 0) == 4 && !memcmp(magic, "hsqs", 4))
		return "a squashfs image";
	return NULL;
}

/*
 * Check the source before any work: it must exist, and not be an image.
 * Other problems (unreadable, not a tar) come from the readers.
 */
static int check_source(const struct convert_source *src,
			struct imgfs_error *err)
{
	const char *kind = NULL;
	struct stat st;
	int fd = src->fd;

	if (src->feed)
		return 0;
	if (src->path && !strcmp(src->path, "-"))
		fd = STDIN_FILENO;
	else if (src->path && stat(src->path, &st))
		return error_set(err, -errno, "SOURCE %s: %s", src->path,
				 strerror(errno));
	if (src->path && fd < 0) {
		if (!S_ISREG(st.st_mode))
			return 0;
		fd = open(src->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 0; /* the reader reports it */
		kind = image_kind(fd);
		close(fd);
	} else if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
		kind = image_kind(fd);
	}
	if (kind)
		return error_set(
			err, -EINVAL,
			"SOURCE %s is %s, not a tar layer or a directory: the arguments are SOURCE (the layer to read) then IMAGE (the image to write)",
			src->path ? src->path : "(descriptor)", kind);
	return 0;
}

static int add_source(struct imgfs_writer *w, const struct convert_source *src,
		      const char *target, struct imgfs_error *err)
{
	struct imgfs_tar *t;
	int ret;

	if (src->feed)
		return src->feed(w, src->feed_arg, err);
	if (src->path && imgfs_source_is_dir(src->path)) {
		/* an image being replaced inside the tree is not part of it */
		ret = imgfs_writer_exclude_path(w, target, err);
		if (!ret)
			ret = imgfs_writer_add_directory(w, src->path, err);
		return ret;
	}
	t = src->path ? imgfs_tar_open(src->path, err) :
			imgfs_tar_open_fd(src->fd, NULL, err);
	if (!t)
		return err->code;
	ret = imgfs_writer_add_tar(w, t, err);
	imgfs_tar_close(t);
	return ret;
}

static int build(const struct convert_source *src, const char *target, int fd,
		 const struct imgfs_mkfs_options *o,
		 struct imgfs_mkfs_stats *stats, struct imgfs_error *err)
{
	struct imgfs_writer *w = imgfs_writer_create(o, fd, err);
	int ret;

	if (!w)
		return err->code;
	ret = add_source(w, src, target, err);
	if (!ret)
		ret = imgfs_writer_finish(w, stats, err);
	imgfs_writer_destroy(w);
	return ret;
}

/* The sidecar's output file, checked and created before any work. */
static int open_sidecar(const char *target, struct imgfs_output **side,
			struct imgfs_error *err)
{
	size_t len = strlen(target) + sizeof(".dmverity");
	char *path = malloc(len);

	*side = NULL;
	if (!path)
		return error_set(err, -ENOMEM, "out of memory");
	snprintf(path, len, "%s.dmverity", target);
	*side = imgfs_output_open(path, err);
	free(path);
	return *side ? 0 : err->code;
}

static int write_sidecar(struct imgfs_output *side,
			 const struct imgfs_verity_result *res,
			 struct imgfs_error *err)
{
	char json[256];
	int n = imgfs_verity_sidecar_json(res, json, sizeof(json));

	if (n < 0)
		return error_set(err, n, "dm-verity sidecar: too long");
	n = pwrite_full(imgfs_output_fd(side), json, (size_t)n, 0);
	if (n)
		return error_set(err, n, "dm-verity sidecar: %s", strerror(-n));
	return 0;
}

/* The caller's options and hooks in full (util/sized.h). */
static int convert_args(struct imgfs_mkfs_options *o,
			struct imgfs_convert_hooks *hooks,
			const struct imgfs_mkfs_options *o_in,
			const struct imgfs_convert_hooks *hooks_in,
			struct imgfs_error *err)
{
	int ret = mkfs_options_in(o, o_in, err);

	memset(hooks, 0, sizeof(*hooks));
	if (!ret && hooks_in)
		ret = SIZED_IN(hooks, hooks_in, sizeof(*hooks), "convert hooks",
			       err);
	return ret;
}

static int convert(const struct convert_source *src, const char *target,
		   const struct imgfs_mkfs_options *o_in,
		   const struct imgfs_convert_hooks *hooks_in,
		   struct imgfs_mkfs_stats *stats, struct imgfs_error *err)
{
	struct imgfs_output *out, *side = NULL;
	struct imgfs_mkfs_options full, *o = &full;
	struct imgfs_convert_hooks hooks_full, *hooks = &hooks_full;
	struct imgfs_mkfs_stats st_local;
	int ret;

	imgfs_error_clear(err);
	ret = convert_args(&full, &hooks_full, o_in, hooks_in, err);
	if (ret)
		return ret;
	if (same_file(src, target))
		return error_set(err, -EINVAL,
				 "%s: refusing to overwrite the source",
				 target);
	/* the target is checked before the source is even opened */
	out = imgfs_output_open(target, err);
	if (!out)
		return err->code;
	if (check_source(src, err)) {
		imgfs_output_abort(out);
		return err->code;
	}
	if (!stats)
		stats = &st_local;
	ret = 0;
	if (o->dm_verity && !o->dm_verity_no_sidecar)
		ret = open_sidecar(target, &side, err);
	if (o->no_fsync) {
		imgfs_output_set_sync(out, false);
		if (side)
			imgfs_output_set_sync(side, false);
	}
	if (!ret && hooks && hooks->created)
		hooks->created(imgfs_output_temp_path(out), hooks->arg);
	if (!ret)
		ret = build(src, target, imgfs_output_fd(out), o, stats, err);
	if (!ret && side)
		ret = write_sidecar(side, &stats->dm_verity, err);
	if (!ret && hooks && hooks->before_commit)
		ret = hooks->before_commit(imgfs_output_fd(out), hooks->arg,
					   err);
	if (!ret)
		ret = imgfs_output_commit(out, err);
	if (!ret && side)
		ret = imgfs_output_commit(side, err);
	imgfs_output_abort(side);
	imgfs_output_abort(out);
	return ret;
}

int imgfs_convert(const char *source, const char *image_path,
		  const struct imgfs_mkfs_options *o,
		  const struct imgfs_convert_hooks *hooks,
		  struct imgfs_mkfs_stats *stats, struct imgfs_error *err)
{
	struct convert_source src = { .path = source, .fd = -1 };

	return convert(&src, image_path, o, hooks, stats, err);
}

int imgfs_convert_fd(int tar_fd, const char *image_path,
		     const struct imgfs_mkfs_options *o,
		     const struct imgfs_convert_hooks *hooks,
		     struct imgfs_mkfs_stats *stats, struct imgfs_error *err)
{
	struct convert_source src = { .path = NULL, .fd = tar_fd };

	return convert(&src, image_path, o, hooks, stats, err);
}

int convert_feed(const char *image_path, const struct imgfs_mkfs_options *o,
		 const struct imgfs_convert_hooks *hooks,
		 imgfs_writer_feed_fn feed, void *arg,
		 struct imgfs_mkfs_stats *stats, struct imgfs_error *err)
{
	struct convert_source src = { .fd = -1, .feed = feed, .feed_arg = arg };

	return convert(&src, image_path, o, hooks, stats, err);
}
