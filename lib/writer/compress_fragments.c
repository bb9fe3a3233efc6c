// SPDX-License-Identifier: MIT
/*
 * compress_fragments.c - the packed inode (§9.11): the ends of files,
 * appended as each file is retired, compressed in segments like any other
 * file, so that no block is left half empty.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "writer/compress_int.h"
#include "writer/internal.h"

/*
 * Queue the packed inode's content, all of it, in segments: once every
 * file has given its fragment, so where its blocks land depends on the
 * input alone, never on how far the workers had got, or how many there
 * are. Until then the fragments wait in memory and the spill file
 * (compress_commit.c).
 */
static int zpacked_queue(struct imgfs_writer *w, struct imgfs_compressor *c,
			 struct imgfs_error *err)
{
	uint64_t pending;

	while ((pending = zpacked_pending(c)) > 0) {
		size_t n = pending < c->seg_size ? (size_t)pending
						 : c->seg_size;
		struct zjob *j;
		int ret = zq_make_room(w, c, n, err);

		if (ret)
			return ret;
		if (!c->packed) {
			c->packed = calloc(1, sizeof(*c->packed));
			c->packed_inode = tree_node_new(&w->tree);
			if (!c->packed || !c->packed_inode ||
			    !(c->packed->path = strdup("(packed inode)")))
				return error_set(err, -ENOMEM, "out of memory");
			c->packed->inode = c->packed_inode;
			c->packed_inode->mode = 0100644;
			c->packed_inode->nlink = 1;
			c->packed_inode->mtime = w->build_time;
		}
		j = zjob_new(c, c->packed, c->packed_queued, n);
		if (!j)
			return error_set(err, -ENOMEM, "out of memory");
		ret = zpacked_take(c, j->in, n, err);
		if (ret) {
			zjob_free(j);
			return ret;
		}
		c->packed_queued += n;
		j->last = !zpacked_pending(c);
		if (j->last)
			c->packed_inode->size = c->packed_queued;
		zjob_queue(c, j);
	}
	return 0;
}

int compressor_finish(struct imgfs_writer *w, struct imgfs_error *err)
{
	struct imgfs_compressor *c = w->compressor;
	int ret = compressor_flush(w, err);

	/* every file is written: the fragments are all there */
	if (!ret && c && zpacked_pending(c))
		ret = zpacked_queue(w, c, err);
	if (!ret)
		ret = compressor_flush(w, err);
	return ret;
}

struct imgfs_node *compressor_packed_inode(struct imgfs_compressor *c)
{
	return c ? c->packed_inode : NULL;
}
