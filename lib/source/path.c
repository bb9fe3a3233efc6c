/* SPDX-License-Identifier: MIT */
/*
 * path.c - entry paths split by the tar path rules, for every part of the
 * library that places entries by path (the writer's tree, layer stacks).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "source/path.h"
#include "util/vec.h"
#include "util/error.h"

/* Room for @text_len bytes of text and @ncomp components. */
static int comps_reserve(struct imgfs_path_comps *c, size_t text_len,
			 size_t ncomp)
{
	if (IMGFS_VEC_RESERVE(c->text, c->cap_text, text_len + 1, 256) ||
	    IMGFS_VEC_RESERVE(c->off, c->cap_off, ncomp, 16) ||
	    IMGFS_VEC_RESERVE(c->len, c->cap_len, ncomp, 16))
		return -ENOMEM;
	return 0;
}

int path_comps_parse(struct imgfs_path_comps *c, const char *path,
		     struct imgfs_error *err)
{
	size_t plen = strlen(path), i = 0, used = 0;

	c->n = 0;
	if (comps_reserve(c, plen, plen / 2 + 1))
		return error_set(err, -ENOMEM, "out of memory");
	while (i < plen) {
		size_t start, n;

		while (i < plen && path[i] == '/')
			i++;
		start = i;
		while (i < plen && path[i] != '/')
			i++;
		n = i - start;
		if (!n || (n == 1 && path[start] == '.'))
			continue;
		if (n == 2 && path[start] == '.' && path[start + 1] == '.') {
			if (c->n) {
				c->n--;
				used = c->off[c->n] ? c->off[c->n] - 1 : 0;
			}
			continue;
		}
		if (n > IMGFS_NAME_MAX)
			return error_set(
				err, -ENAMETOOLONG,
				"%s: path component of %zu bytes exceeds the 255-byte limit",
				path, n);
		if (c->n)
			c->text[used++] = '/';
		c->off[c->n] = (uint32_t)used;
		c->len[c->n++] = (uint16_t)n;
		memcpy(c->text + used, path + start, n);
		used += n;
	}
	c->text[used] = '\0';
	return 0;
}

void path_comps_free(struct imgfs_path_comps *c)
{
	free(c->text);
	free(c->off);
	free(c->len);
	memset(c, 0, sizeof(*c));
}

bool path_is_dot_name(const char *name, size_t len)
{
	return (len == 1 && name[0] == '.') ||
	       (len == 2 && name[0] == '.' && name[1] == '.');
}

bool path_ends_in_dir_form(const char *path)
{
	const char *last = strrchr(path, '/');

	last = last ? last + 1 : path;
	return !*last || path_is_dot_name(last, strlen(last));
}
