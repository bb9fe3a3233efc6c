// SPDX-License-Identifier: MIT
/*
 * Small helpers over what the reader returns, for front ends that describe
 * an image: extent kind names, the algorithms a superblock allows, and
 * merging per-chunk extents into runs.
 */
#include "imgfs/format.h"
#include "imgfs/stats.h"

const char *imgfs_extent_kind_name(enum imgfs_extent_kind kind)
{
	switch (kind) {
	case IMGFS_EXTENT_HOLE:
		return "hole";
	case IMGFS_EXTENT_PLAIN:
		return "plain";
	case IMGFS_EXTENT_INLINE:
		return "inline";
	case IMGFS_EXTENT_COMPRESSED:
		return "compressed";
	case IMGFS_EXTENT_FRAGMENT:
		return "fragment";
	}
	return NULL;
}

uint32_t imgfs_sb_compr_algs(const struct imgfs_sb_info *sb)
{
	if (sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_COMPR_CFGS)
		return sb->compr_algs;
	if ((sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_ZERO_PADDING) ||
	    sb->lz4_max_distance)
		return 1u << IMGFS_COMPR_LZ4;
	return 0;
}

bool imgfs_extent_merge(struct imgfs_extent *run,
			const struct imgfs_extent *next)
{
	if (run->kind != next->kind || run->flags != next->flags ||
	    run->device != next->device ||
	    run->logical + run->length != next->logical)
		return false;
	if (run->kind == IMGFS_EXTENT_PLAIN &&
	    (run->length != run->plen || run->pos + run->plen != next->pos))
		return false;
	if (run->kind != IMGFS_EXTENT_HOLE && run->kind != IMGFS_EXTENT_PLAIN)
		return false;
	run->length += next->length;
	run->plen += next->plen;
	return true;
}
