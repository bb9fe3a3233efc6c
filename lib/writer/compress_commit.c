// SPDX-License-Identifier: MIT
/*
 * compress_commit.c - a finished job, on the writer's thread: its blocks
 * written, its extents given their addresses, its fragment appended to the
 * packed inode's buffer; and a finished file's layout: flat when stored raw
 * throughout, else a full map.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/vec.h"
#include "writer/compress_int.h"
#include "writer/compress_map.h"
#include "writer/internal.h"

static int file_add_exts(struct zfile *f, const struct zjob *j, uint64_t blk)
{
	if (IMGFS_VEC_RESERVE(f->ext, f->cap_ext, f->n_ext + j->n_ext, 16))
		return -ENOMEM;
	for (size_t i = 0; i < j->n_ext; i++) {
		f->ext[f->n_ext] = j->ext[i];
		f->ext[f->n_ext].pblk += (uint32_t)blk;
		f->n_ext++;
	}
	return 0;
}

/*
 * Fragments held in memory at most before they go to the spill file: the
 * packed inode is compressed once every file is in (where its blocks
 * land then depends on the input alone), so its content waits; on disk,
 * memory stays bounded however much of a layer ends up in fragments.
 */
#define PBUF_MAX (8u << 20)

uint64_t zpacked_pending(const struct imgfs_compressor *c)
{
	return c->pspill.size - c->pspill_read + c->plen;
}

int zpacked_append(struct imgfs_compressor *c, const uint8_t *p, size_t n,
		   struct imgfs_error *err)
{
	int ret;

	if (c->plen + n > PBUF_MAX) {
		/* in order: what memory holds, then these bytes */
		ret = spillfile_append(&c->pspill, c->pbuf, c->plen, NULL, err);
		if (!ret)
			ret = spillfile_append(&c->pspill, p, n, NULL, err);
		if (ret)
			return ret;
		c->plen = 0;
		c->packed_len += n;
		return 0;
	}
	if (IMGFS_VEC_RESERVE(c->pbuf, c->pcap, c->plen + n, 1u << 20))
		return error_set(err, -ENOMEM, "out of memory");
	memcpy(c->pbuf + c->plen, p, n);
	c->plen += n;
	c->packed_len += n;
	return 0;
}

int zpacked_take(struct imgfs_compressor *c, uint8_t *out, size_t n,
		 struct imgfs_error *err)
{
	uint64_t left = c->pspill.size - c->pspill_read;
	size_t k = left < n ? (size_t)left : n;
	int ret;

	if (k) {
		ret = spillfile_read(&c->pspill, out, k, c->pspill_read, err);
		if (ret)
			return ret;
		c->pspill_read += k;
	}
	memcpy(out + k, c->pbuf, n - k);
	memmove(c->pbuf, c->pbuf + (n - k), c->plen - (n - k));
	c->plen -= n - k;
	return 0;
}

/* Write a finished job's blocks and give its extents their addresses. */
int zjob_commit(struct imgfs_writer *w, struct imgfs_compressor *c,
		struct zjob *j, struct imgfs_error *err)
{
	struct zfile *f = j->file;
	uint64_t blk = blkout_blk(&w->out);
	uint64_t nblk;
	int ret;

	if (zseg_raw_tail_fixup(f, j))
		return error_set(err, -ENOMEM, "out of memory");
	nblk = j->out_len >> j->p->bits;
	if (blk + nblk >= IMGFS_NULL_ADDR)
		return error_set(err, -EFBIG, "%s: image exceeds 2^32 blocks",
				 f->path);
	for (size_t i = 0; i < j->n_ext; i++)
		f->any_z |= !j->ext[i].plain;
	if (file_add_exts(f, j, blk))
		return error_set(err, -ENOMEM, "out of memory");
	if (j->out_len) {
		ret = blkout_write(&w->out, j->out, j->out_len, err);
		if (ret)
			return ret;
	}
	f->blocks += nblk;
	if (j->frag)
		c->frag_reserved -= j->len;
	if (j->has_frag) {
		f->frag_used = true;
		f->frag_off = (uint32_t)c->packed_len;
		ret = zpacked_append(c, j->in + j->frag_at, j->len - j->frag_at,
				     err);
		if (ret)
			return ret;
		c->frag_reserved += j->len - j->frag_at;
	}
	if (j->tail) {
		f->tail = j->tail;
		f->tail_len = j->tail_len;
		j->tail = NULL;
	}
	return 0;
}

/*
 * Raw throughout, blocks in file order and any inline tail being the last
 * partial block: that is a flat file, which reads without a map.
 */
static bool store_flat(const struct zparams *p, struct zfile *f)
{
	struct imgfs_node *inode = f->inode;
	uint32_t pblk0 = f->ext[0].pblk;

	if (f->frag_used)
		return false;
	for (size_t i = 0; i < f->n_ext; i++) {
		const struct imgfs_zext *x = &f->ext[i];

		if (!x->plain ||
		    x->lstart != (uint64_t)(x->pblk - pblk0) << p->bits)
			return false;
		if (!x->nblk && (x->lstart & (p->bs - 1) ||
				 x->lstart + f->tail_len != inode->size))
			return false;
	}
	inode->layout = f->tail ? IMGFS_LAYOUT_FLAT_INLINE :
				  IMGFS_LAYOUT_FLAT_PLAIN;
	inode->startblk = f->blocks ? pblk0 : IMGFS_NULL_ADDR;
	return true;
}

int zfile_finish(struct imgfs_compressor *c, struct zfile *f,
		 struct imgfs_error *err)
{
	struct imgfs_node *inode = f->inode;
	struct imgfs_zmap_info mi = {
		.size = inode->size,
		.blkszbits = c->p.bits,
		.alg = c->p.alg->alg,
		.big = c->big,
		.idata_size = (uint16_t)(f->tail ? f->tail_len : 0),
		.fragment = f->frag_used,
		.fragoff = f->frag_off,
	};
	uint8_t *map;
	uint32_t len;
	int ret;

	if (!store_flat(&c->p, f)) {
		if (f->frag_used && f->n_ext == 1)
			ret = zmap_whole_fragment(f->frag_off, &map, &len);
		else
			ret = zmap_build_full(&mi, f->ext, f->n_ext, &map,
					      &len);
		if (ret)
			return error_set(
				err, ret,
				"%s: internal: compressed extents cannot be indexed",
				f->path);
		inode->layout = IMGFS_LAYOUT_COMPRESSED_FULL;
		inode->extra = map;
		inode->extra_len = len;
		inode->extra_align = 8;
		inode->i_u = (uint32_t)f->blocks;
		inode->i_u_set = true;
		if (f->tail)
			c->used_inline = true;
	}
	if (f->tail) {
		inode->tail = f->tail;
		inode->tail_len = f->tail_len;
		f->tail = NULL;
	}
	return 0;
}
