// SPDX-License-Identifier: MIT
/*
 * One call per conversion: check the target, build the image from a tar
 * stream or a directory into an unnamed file beside it, and put it in
 * place only once it is complete and (unless the caller syncs itself)
 * synced. On failure nothing new is
 * left and an existing target is untouched.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "imgfs/source.h"
#include "imgfs/writer.h"

/* Where the entries come from: a path ("-", a tar, a directory) or an fd. */
struct convert_source {
	const char *path;
	int fd;
};

/* The source is the target itself: the image would destroy its input. */
static bool same_file(const struct convert_source *src, const char *target)
{
	struct stat sa, sb;
	int r;

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

static int add_source(struct imgfs_writer *w, const struct convert_source *src,
		      const char *target, struct imgfs_error *err)
{
	struct imgfs_tar *t;
	int ret;

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

static int convert(const struct convert_source *src, const char *target,
		   const struct imgfs_mkfs_options *o,
		   const struct imgfs_convert_hooks *hooks,
		   struct imgfs_mkfs_stats *stats, struct imgfs_error *err)
{
	struct imgfs_output *out;
	int ret;

	imgfs_error_clear(err);
	if (hooks && hooks->struct_size != sizeof(*hooks))
		return imgfs_error_set(err, -EINVAL,
				       "hooks structure size mismatch");
	if (same_file(src, target))
		return imgfs_error_set(err, -EINVAL,
				       "%s: refusing to overwrite the source",
				       target);
	/* the target is checked before the source is even opened */
	out = imgfs_output_open(target, err);
	if (!out)
		return err->code;
	/* a mismatched structure is refused by imgfs_writer_create() */
	if (o->struct_size == sizeof(*o) && o->no_fsync)
		imgfs_output_set_sync(out, false);
	if (hooks && hooks->created)
		hooks->created(imgfs_output_temp_path(out), hooks->arg);
	ret = build(src, target, imgfs_output_fd(out), o, stats, err);
	if (!ret && hooks && hooks->before_commit)
		ret = hooks->before_commit(imgfs_output_fd(out), hooks->arg,
					   err);
	if (!ret)
		ret = imgfs_output_commit(out, err);
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
