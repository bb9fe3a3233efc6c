/* SPDX-License-Identifier: MIT */
/* The caller's mkfs options as the library reads them. */
#ifndef IMGFS_WRITER_OPTIONS_H
#define IMGFS_WRITER_OPTIONS_H

#include "imgfs/writer.h"

/*
 * @full: the defaults (imgfs_mkfs_options_init()) overwritten by what the
 * caller's @o holds, by the struct_size rule (util/sized.h). Every public
 * call that takes mkfs options reads them through this, never @o itself.
 */
int mkfs_options_in(struct imgfs_mkfs_options *full,
		    const struct imgfs_mkfs_options *o, struct imgfs_error *err);

#endif
