// SPDX-License-Identifier: MIT
/*
 * compare/compare.c - the public calls: options, the comparison's life
 * cycle, and the one-call imgfs_compare_tar().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compare/internal.h"
#include "util/error.h"
#include "util/sized.h"

void imgfs_compare_options_init(struct imgfs_compare_options *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
	o->force_uid = -1;
	o->force_gid = -1;
}

/*
 * The rules of @m, resolved once: the deprecated ignore_file_flags is
 * file_flags = IGNORE, require_end gives way to allow_missing_end.
 */
void imgfs_compare_options_set_rules(struct imgfs_compare_options *o,
				     const struct imgfs_mkfs_options *m)
{
	o->flags &= ~(IMGFS_COMPARE_F_KEEP_WHITEOUTS |
		      IMGFS_COMPARE_F_IGNORE_FILE_FLAGS |
		      IMGFS_COMPARE_F_ALL_ROOT |
		      IMGFS_COMPARE_F_ALLOW_MISSING_END |
		      IMGFS_COMPARE_F_REQUIRE_END);
	if (m->whiteouts == IMGFS_WHITEOUT_KEEP)
		o->flags |= IMGFS_COMPARE_F_KEEP_WHITEOUTS;
	if (m->all_root)
		o->flags |= IMGFS_COMPARE_F_ALL_ROOT;
	if (m->allow_missing_end)
		o->flags |= IMGFS_COMPARE_F_ALLOW_MISSING_END;
	else if (m->require_end)
		o->flags |= IMGFS_COMPARE_F_REQUIRE_END;
	o->force_uid = m->force_uid;
	o->force_gid = m->force_gid;
	o->uid_offset = m->uid_offset;
	o->gid_offset = m->gid_offset;
	o->file_flags = m->ignore_file_flags ? IMGFS_FILE_FLAGS_IGNORE :
					       m->file_flags;
}

/* The caller's struct in full: NULL means the defaults. */
static int copy_options(struct imgfs_compare_options *dst,
			const struct imgfs_compare_options *src,
			struct imgfs_error *err)
{
	imgfs_compare_options_init(dst);
	if (!src)
		return 0;
	return SIZED_IN(dst, src, sizeof(*dst), "compare options", err);
}

int imgfs_compare_new(struct imgfs_image *img,
		      const struct imgfs_compare_options *o,
		      struct imgfs_compare **cp, struct imgfs_error *err)
{
	struct imgfs_compare *c = calloc(1, sizeof(*c));
	int ret;

	*cp = NULL;
	if (!c)
		return error_set(err, -ENOMEM, "out of memory");
	c->itail = &c->iall;
	ret = copy_options(&c->o, o, err);
	if (ret) {
		imgfs_compare_free(c);
		return ret;
	}
	if (cmp_expect_init(c)) {
		imgfs_compare_free(c);
		return error_set(err, -ENOMEM, "out of memory");
	}
	if (cmp_digest_key(c)) {
		imgfs_compare_free(c);
		return error_set(err, -EIO, "no random bytes for the key");
	}
	if (img)
		imgfs_compare_set_image(c, img, err);
	*cp = c;
	return 0;
}

int imgfs_compare_set_image(struct imgfs_compare *c, struct imgfs_image *img,
			    struct imgfs_error *err)
{
	const struct imgfs_sb_info *sb = imgfs_image_sb(img);

	if (c->img)
		return error_set(err, -EINVAL,
				 "the comparison has its image already");
	c->img = img;
	/* implied directories get the build time, as mkfs.img gives them */
	cmp_expect_build_time(c, sb->epoch + (int64_t)sb->build_time);
	return 0;
}

/* The tar is read before the run, once: 0, or -EINVAL if it was. */
static int claim_tar_read(struct imgfs_compare *c, struct imgfs_error *err)
{
	if (c->tar_read || c->ran)
		return error_set(err, -EINVAL,
				 "a comparison reads its tar only once");
	c->tar_read = true;
	return 0;
}

int imgfs_compare_read_tar(struct imgfs_compare *c, const char *tar_path,
			   struct imgfs_error *err)
{
	int ret = claim_tar_read(c, err);

	return ret ? ret : cmp_replay_tar(c, tar_path, err);
}

int imgfs_compare_read_tar_stream(struct imgfs_compare *c, struct imgfs_tar *t,
				  const char *name, struct imgfs_error *err)
{
	int ret = claim_tar_read(c, err);

	return ret ? ret : cmp_replay_opened(c, t, name ? name : "-", err);
}

int imgfs_compare_run(struct imgfs_compare *c, const char *tar_path,
		      struct imgfs_compare_result *res, struct imgfs_error *err)
{
	int ret;

	if (c->ran)
		return error_set(err, -EINVAL, "a comparison runs only once");
	if (!c->img)
		return error_set(err, -EINVAL, "the comparison has no image");
	if (!tar_path != c->tar_read)
		return error_set(err, -EINVAL,
				 c->tar_read ? "the tar was read already"
					     : "no tar to compare with");
	c->ran = true;
	ret = c->iroot ? 0 : cmp_image_walk(c, err);
	if (!ret && tar_path)
		ret = cmp_replay_tar(c, tar_path, err);
	if (!ret) {
		cmp_match_tree(c);
		cmp_report_extra(c);
		if (c->oom)
			ret = error_set(err, -ENOMEM, "out of memory");
	}
	c->res.image_entries = c->ientries.count;
	c->res.struct_size = sizeof(c->res);
	if (res)
		*res = c->res;
	return ret;
}

void imgfs_compare_free(struct imgfs_compare *c)
{
	if (!c)
		return;
	cmp_expect_free(c);
	cmp_image_free(c);
	free(c->pbuf);
	free(c->pbuf2);
	free(c->msg);
	fflags_tally_free(&c->fflags);
	free(c);
}

int imgfs_compare_tar(struct imgfs_image *img, const char *tar_path,
		      const struct imgfs_compare_options *o,
		      struct imgfs_compare_result *res, struct imgfs_error *err)
{
	struct imgfs_compare *c;
	int ret;

	if (res) {
		memset(res, 0, sizeof(*res));
		res->struct_size = sizeof(*res);
	}
	ret = imgfs_compare_new(img, o, &c, err);
	if (ret)
		return ret;
	ret = imgfs_compare_run(c, tar_path, res, err);
	imgfs_compare_free(c);
	return ret;
}
