// SPDX-License-Identifier: MIT
/*
 * zconfig.c - per-image compression state: the configuration
 * records after the superblock (docs/format.md §3.5) and the packed inode
 * (docs/format.md §9.11), set up at open through z_image_init().
 *
 * A bad configuration does not fail the open (the checker must be able to
 * go on and report it): it is remembered, and every compressed access
 * fails with it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/zdata.h"
#include "util/error.h"

static int cfg_bad(struct imgfs_zstate *zs, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Remember why the configuration is unusable; the open itself goes on. */
static int cfg_bad(struct imgfs_zstate *zs, int code, const char *fmt, ...)
{
	va_list ap;

	if (zs->cfg_err)
		return 0;
	va_start(ap, fmt);
	vsnprintf(zs->cfg_msg, sizeof(zs->cfg_msg), fmt, ap);
	va_end(ap);
	zs->cfg_err = code;
	return 0;
}

static int cfg_record(struct imgfs_image *img, struct imgfs_zstate *zs,
		      unsigned int alg, uint64_t *pos)
{
	struct imgfs_error e = { 0 };
	char why[sizeof(zs->cfg_msg)];
	uint8_t p[16];
	uint32_t len;

	*pos = (*pos + 3) & ~3ull;
	if (img_read(img, p, IMGFS_COMPR_CFG_HDR_SIZE, *pos,
		     "compression config", 0, &e))
		return cfg_bad(zs, e.code, "%s config record: %s",
			       zalg_name(alg), e.msg);
	len = compr_cfg_len_decode(p);
	if (!img_range_ok(img, *pos + IMGFS_COMPR_CFG_HDR_SIZE, len))
		return cfg_bad(
			zs, -IMGFS_EFSCORRUPTED,
			"%s config record (%u bytes at %llu) is beyond the end of the image",
			zalg_name(alg), len, (unsigned long long)*pos);
	memset(p, 0, sizeof(p));
	if (img_read(img, p, len < sizeof(p) ? len : sizeof(p),
		     *pos + IMGFS_COMPR_CFG_HDR_SIZE, "compression config", 0,
		     &e))
		return cfg_bad(zs, e.code, "%s config record: %s",
			       zalg_name(alg), e.msg);
	*pos += IMGFS_COMPR_CFG_HDR_SIZE + len;
	/* alg < IMGFS_COMPR_MAX: every id has a table */
	if (zalg_by_id(alg)->cfg_parse(&zs->cfg, p, len, img->blkszbits, why,
				       sizeof(why)))
		return cfg_bad(zs, -IMGFS_EFSCORRUPTED, "%s", why);
	return 0;
}

static void parse_cfgs(struct imgfs_image *img, struct imgfs_zstate *zs)
{
	const struct imgfs_sb_info *sb = &img->sb;
	uint64_t pos = IMGFS_SUPER_OFFSET + sb->sb_size;
	unsigned int alg;

	zs->cfg.zero_padding = sb->feature_incompat &
			       IMGFS_FEATURE_INCOMPAT_ZERO_PADDING;
	zs->cfg.lz4_max_pclusterblks = 1;
	zs->cfg.deflate_windowbits = 15;
	zs->cfg.zstd_windowlog = 20;
	if (!(sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_COMPR_CFGS)) {
		zs->cfg.algs = 1u << IMGFS_COMPR_LZ4;
		return;
	}
	zs->cfg.algs = sb->compr_algs;
	if (sb->compr_algs >> IMGFS_COMPR_MAX) {
		cfg_bad(zs, -EOPNOTSUPP,
			"unknown compression algorithms in bitmap 0x%x",
			sb->compr_algs);
		return;
	}
	for (alg = 0; alg < IMGFS_COMPR_MAX && !zs->cfg_err; alg++)
		if (sb->compr_algs & (1u << alg))
			cfg_record(img, zs, alg, &pos);
}

/* The packed inode is loaded once; a failure only affects fragments. */
static void load_packed(struct imgfs_image *img, struct imgfs_zstate *zs)
{
	const struct imgfs_sb_info *sb = &img->sb;
	struct imgfs_error e = { 0 };
	int ret;

	if (!(sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_FRAGMENTS) ||
	    !sb->packed_nid)
		return;
	ret = imgfs_inode_read(img, sb->packed_nid, &zs->packed, &e);
	if (ret) {
		zs->packed_err = ret;
		snprintf(zs->packed_msg, sizeof(zs->packed_msg), "%.200s", e.msg);
		return;
	}
	if (!imgfs_inode_is_reg(&zs->packed)) {
		zs->packed_err = -IMGFS_EFSCORRUPTED;
		snprintf(zs->packed_msg, sizeof(zs->packed_msg),
			 "packed inode %llu is not a regular file",
			 (unsigned long long)sb->packed_nid);
		return;
	}
	zs->have_packed = true;
}

int z_image_init(struct imgfs_image *img, struct imgfs_error *err)
{
	struct imgfs_zstate *zs = calloc(1, sizeof(*zs));

	if (!zs)
		return error_set(err, -ENOMEM, "out of memory");
	if (pthread_mutex_init(&zs->lock, NULL)) {
		free(zs);
		return error_set(err, -ENOMEM, "cannot create a mutex");
	}
	if (pthread_cond_init(&zs->busy_done, NULL)) {
		pthread_mutex_destroy(&zs->lock);
		free(zs);
		return error_set(err, -ENOMEM,
				 "cannot create a condition variable");
	}
	img->zpriv = zs;
	parse_cfgs(img, zs);
	load_packed(img, zs);
	return 0;
}

void z_image_free(struct imgfs_image *img)
{
	struct imgfs_zstate *zs = img->zpriv;

	if (!zs)
		return;
	for (unsigned int i = 0; i < IMGFS_ZCACHE_SLOTS; i++)
		zcache_free(&zs->cache[i]);
	while (zs->idle) {
		struct imgfs_zwork *w = zs->idle;

		zs->idle = w->next;
		zwork_free(w);
	}
	u64map_free(&zs->verified_at);
	free(zs->verified);
	pthread_cond_destroy(&zs->busy_done);
	pthread_mutex_destroy(&zs->lock);
	free(zs);
	img->zpriv = NULL;
}
