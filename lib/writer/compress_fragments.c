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
 * Queue the packed inode's content in segments as fragments accumulate;
 * with @final (no file left to give one), all of it, ending the file.
 * A non-final call keeps some bytes back so that the final call always
 * has a last segment to queue.
 *
 * Non-final segments are queued when a retired job has just filled the
 * buffer, and go to the front of the queue, so they are written right
 * after that job's blocks: where they land depends on the input alone,
 * never on how far the workers had got, or how many there are.
 */
int zpacked_queue(struct imgfs_writer *w, struct imgfs_compressor *c,
		  bool final, struct imgfs_error *err)
{
	struct zjob *after = NULL; /* the last segment put in front */

	while (c->plen > c->seg_size || (final && c->plen)) {
		size_t n = c->plen < c->seg_size ? c->plen : c->seg_size;
		struct zjob *j;
		int ret = final ? zq_make_room(w, c, n, err) : 0;

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
		memcpy(j->in, c->pbuf, n);
		memmove(c->pbuf, c->pbuf + n, c->plen - n);
		c->plen -= n;
		c->packed_queued += n;
		j->last = final && !c->plen;
		if (j->last)
			c->packed_inode->size = c->packed_queued;
		if (final)
			zjob_queue(c, j);
		else
			after = zjob_queue_front(c, j, after);
	}
	return 0;
}

int compressor_finish(struct imgfs_writer *w, struct imgfs_error *err)
{
	struct imgfs_compressor *c = w->compressor;
	int ret = compressor_flush(w, err);

	/* every file is written: the fragments are all there */
	if (!ret && c && c->plen)
		ret = zpacked_queue(w, c, true, err);
	if (!ret)
		ret = compressor_flush(w, err);
	return ret;
}

struct imgfs_node *compressor_packed_inode(struct imgfs_compressor *c)
{
	return c ? c->packed_inode : NULL;
}
