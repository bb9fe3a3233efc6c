/* SPDX-License-Identifier: MIT */
/*
 * path.h - entry paths split by the tar path rules (README "Paths"):
 * empty and "." components dropped, ".." removing the one before it
 * (never above the root), each component at most 255 bytes.
 */
#ifndef IMGFS_SOURCE_PATH_H
#define IMGFS_SOURCE_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/error.h"

/* A split path and its text; zero it before the first parse. */
struct imgfs_path_comps {
	char *text; /* components joined by "/", "" for the root */
	uint32_t *off; /* component i: text + off[i], len[i] bytes */
	uint16_t *len;
	size_t n;
	size_t cap_text, cap_off, cap_len;
};

/*
 * Split @path into @c, reusing its memory. Returns 0, -ENOMEM, or
 * -ENAMETOOLONG with @err naming @path when a component is longer than
 * 255 bytes. @c is freed by path_comps_free() in every case.
 */
int path_comps_parse(struct imgfs_path_comps *c, const char *path,
		     struct imgfs_error *err);
void path_comps_free(struct imgfs_path_comps *c);

/* Is @name (@len bytes) "." or ".."? */
bool path_is_dot_name(const char *name, size_t len);

/*
 * Does @path, as the entry spells it, end in "/", "." or ".." (or is it
 * empty)? Such a path designates a directory through the path rules
 * ("a/." is "a", "a/b/.." is "a"), never a file of that name.
 */
bool path_ends_in_dir_form(const char *path);

#endif
