// SPDX-License-Identifier: MIT
/*
 * File data: streamed straight into the image as the entry calls hand it
 * over (imgfs_writer_append()), block aligned. Sparse files become
 * chunk-based inodes whose hole chunks are NULL, so holes cost nothing in
 * the image. The chunk size of each sparse file is chosen from its sparse
 * map (given with the entry, before any data) to make the chunk index plus
 * the zeros written inside partly filled chunks as small as possible.
 * Tar-index images take this way too for a sparse file whose data would
 * need a large chunk index to stay in the tar (taridx_copies()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "writer/compress.h"
#include "writer/internal.h"
#include "util/error.h"

/*
 * Largest chunk: block size << 31 (docs/format.md §5.3). It is also the largest
 * apparent size of a sparse file (documented in mkfs.img(1)):
 * below every kernel's s_maxbytes (2^63 - 1 on 64-bit machines, 16 TiB -
 * 4 KiB on 32-bit ones), and it bounds what a few bytes of tar can make
 * us write (one data byte in the largest file: about 12 MiB of index and
 * zeros at 4 KiB blocks).
 */
#define CHUNKBITS_MAX 31u
#define CHUNK_REC_SIZE 4u

struct sparse_ext {
	uint64_t off, len;
};

struct chunk_state {
	uint32_t *map;
	uint64_t nchunks;
	unsigned int shift; /* log2(chunk size) */
	int64_t cur; /* open chunk, -1 if none */
	uint64_t cur_written;
};

static uint64_t chunk_len(const struct imgfs_writer *w,
			  const struct imgfs_node *inode,
			  const struct chunk_state *cs, uint64_t c)
{
	uint64_t start = c << cs->shift;
	uint64_t left = inode->size - start;
	uint64_t chunk = 1ull << cs->shift;
	uint64_t rounded = (left + w->bs - 1) & ~(uint64_t)(w->bs - 1);

	return rounded < chunk ? rounded : chunk;
}

static int chunk_close(struct imgfs_writer *w, struct imgfs_node *inode,
		       struct chunk_state *cs, struct imgfs_error *err)
{
	uint64_t len;

	if (cs->cur < 0)
		return 0;
	len = chunk_len(w, inode, cs, (uint64_t)cs->cur);
	cs->cur = -1;
	return blkout_zero(&w->out, len - cs->cur_written, err);
}

static int chunk_write(struct imgfs_writer *w, struct imgfs_node *inode,
		       struct chunk_state *cs, const uint8_t *p, size_t len,
		       uint64_t off, const char *path, struct imgfs_error *err)
{
	int ret;

	while (len) {
		uint64_t c = off >> cs->shift;
		uint64_t in = off - (c << cs->shift);
		uint64_t room = (1ull << cs->shift) - in;
		size_t n = len < room ? len : (size_t)room;

		if (c >= cs->nchunks)
			return error_set(err, -EIO,
					 "%s: sparse data beyond the file size",
					 path);
		if ((int64_t)c != cs->cur) {
			ret = chunk_close(w, inode, cs, err);
			if (ret)
				return ret;
			if (blkout_blk(&w->out) >= IMGFS_NULL_ADDR)
				return error_set(
					err, -EFBIG,
					"%s: image exceeds 2^32 blocks", path);
			cs->map[c] = (uint32_t)blkout_blk(&w->out);
			cs->cur = (int64_t)c;
			cs->cur_written = 0;
		}
		if (in < cs->cur_written)
			return error_set(err, -EIO,
					 "%s: sparse data out of order", path);
		ret = blkout_zero(&w->out, in - cs->cur_written, err);
		if (!ret)
			ret = blkout_write(&w->out, p, n, err);
		if (ret)
			return ret;
		cs->cur_written = in + n;
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

static int ext_cmp(const void *a, const void *b)
{
	const struct sparse_ext *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return 0;
}

/* Bytes the file costs at chunk size 1 << @shift: index plus chunks. */
static uint64_t layout_cost(const struct sparse_ext *x, size_t n,
			    uint64_t size, uint32_t bs, unsigned int shift)
{
	uint64_t nchunks = ((size - 1) >> shift) + 1;
	uint64_t cost = nchunks * CHUNK_REC_SIZE, done = 0;
	uint64_t last_len = ((size - ((nchunks - 1) << shift)) + bs - 1) &
			    ~(uint64_t)(bs - 1);

	for (size_t i = 0; i < n; i++) {
		uint64_t first = x[i].off >> shift;
		uint64_t end = ((x[i].off + x[i].len - 1) >> shift) + 1;

		if (first < done)
			first = done; /* that chunk is already counted */
		if (first >= end)
			continue;
		cost += (end - first) << shift;
		if (end == nchunks)
			cost -= (1ull << shift) - last_len;
		done = end;
	}
	return cost;
}

struct flat_state {
	uint64_t written; /* bytes of file data emitted (incl. zero gaps) */
	uint64_t tail_start; /* where the inline tail begins, or size */
};

static int flat_put(struct imgfs_writer *w, struct imgfs_node *inode,
		    struct flat_state *fs, const uint8_t *p, size_t len,
		    uint64_t off, const char *path, struct imgfs_error *err)
{
	int ret;

	if (off < fs->written || off + len > inode->size)
		return error_set(
			err, -EIO,
			"%s: data block at offset %llu out of order or beyond the file size",
			path, (unsigned long long)off);
	while (len) {
		if (fs->written < off) {
			/* a skipped range: it reads back as zeros */
			uint64_t gap = off - fs->written;

			if (fs->written >= fs->tail_start) {
				fs->written += gap;
				continue;
			}
			if (gap > fs->tail_start - fs->written)
				gap = fs->tail_start - fs->written;
			ret = blkout_zero(&w->out, gap, err);
			if (ret)
				return ret;
			fs->written += gap;
			continue;
		}
		if (fs->written >= fs->tail_start) {
			memcpy(inode->tail + (fs->written - fs->tail_start), p,
			       len);
			fs->written += len;
			return 0;
		}
		size_t n = len;

		if (n > fs->tail_start - fs->written)
			n = (size_t)(fs->tail_start - fs->written);
		ret = blkout_write(&w->out, p, n, err);
		if (ret)
			return ret;
		fs->written += n;
		off += n;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * The chunk bits for a sparse file from its map: the smallest cost, the
 * smaller chunk on ties (more of the holes stay holes).
 */
static int choose_chunkbits(struct imgfs_writer *w,
			    const struct imgfs_data_range *map, size_t count,
			    uint64_t size, const char *path,
			    unsigned int *chunkbits, uint64_t *costp,
			    struct imgfs_error *err)
{
	uint64_t max = (uint64_t)w->bs << CHUNKBITS_MAX, best = UINT64_MAX;
	struct sparse_ext *x;
	size_t n = 0;

	if (size > max)
		return error_set(
			err, -EFBIG,
			"%s: sparse file of %llu bytes is larger than the limit of %llu bytes (block size x 2^31)",
			path, (unsigned long long)size,
			(unsigned long long)max);
	x = calloc(count ? count : 1, sizeof(*x));
	if (!x)
		return error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < count; i++) {
		uint64_t off = map[i].offset, len = map[i].length;

		if (off > size || len > size - off) {
			free(x);
			return error_set(
				err, -EINVAL,
				"%s: sparse map entry %lld+%lld beyond the file size %llu",
				path, (long long)off, (long long)len,
				(unsigned long long)size);
		}
		if (len) {
			x[n].off = off;
			x[n++].len = len;
		}
	}
	qsort(x, n, sizeof(*x), ext_cmp);
	*chunkbits = 0;
	for (unsigned int c = 0; c <= CHUNKBITS_MAX; c++) {
		unsigned int shift = w->blkszbits + c;
		uint64_t cost;

		/* the index lives after the inode: its length is 32-bit */
		if ((((size - 1) >> shift) + 1) * CHUNK_REC_SIZE > UINT32_MAX)
			continue;
		cost = layout_cost(x, n, size, w->bs, shift);
		if (cost < best) {
			best = cost;
			*chunkbits = c;
		}
	}
	free(x);
	if (costp)
		*costp = best;
	return 0;
}

enum stream_kind {
	STREAM_EMPTY,
	STREAM_FLAT,
	STREAM_SPARSE,
	STREAM_COMPRESS,
	STREAM_TARIDX,
};

/* The data of the one file being written. */
struct imgfs_data_stream {
	enum stream_kind kind;
	struct imgfs_node *inode;
	char *path;
	uint64_t pos; /* file offset of the next byte */
	unsigned int chunkbits;
	struct chunk_state cs;
	struct flat_state fs;
	struct imgfs_compress_stream *zs;
	struct imgfs_taridx_stream *ts;
};

static int begin_sparse(struct imgfs_writer *w, struct imgfs_data_stream *s,
			const struct imgfs_data_range *map, size_t count,
			struct imgfs_error *err)
{
	struct imgfs_node *inode = s->inode;
	int ret;

	ret = choose_chunkbits(w, map, count, inode->size, s->path,
			       &s->chunkbits, NULL, err);
	if (ret)
		return ret;
	s->cs.cur = -1;
	s->cs.shift = w->blkszbits + s->chunkbits;
	s->cs.nchunks = (inode->size + (1ull << s->cs.shift) - 1) >>
			s->cs.shift;
	s->cs.map = malloc(s->cs.nchunks * CHUNK_REC_SIZE);
	if (!s->cs.map)
		return error_set(err, -ENOMEM, "out of memory");
	memset(s->cs.map, 0xFF, s->cs.nchunks * CHUNK_REC_SIZE);
	s->kind = STREAM_SPARSE;
	return 0;
}

static int end_sparse(struct imgfs_writer *w, struct imgfs_data_stream *s,
		      struct imgfs_error *err)
{
	struct imgfs_node *inode = s->inode;
	struct chunk_state *cs = &s->cs;
	int ret = chunk_close(w, inode, cs, err);

	if (ret)
		return ret;
	inode->layout = IMGFS_LAYOUT_CHUNK_BASED;
	inode->i_u = s->chunkbits;
	inode->i_u_set = true;
	inode->extra_len = (uint32_t)(cs->nchunks * CHUNK_REC_SIZE);
	inode->extra_align = CHUNK_REC_SIZE;
	/* the host array becomes the on-disk map in place */
	for (uint64_t i = 0; i < cs->nchunks; i++)
		block_map_encode((uint8_t *)cs->map, i, cs->map[i]);
	inode->extra = (uint8_t *)cs->map;
	cs->map = NULL;
	w->has_chunks = true;
	return 0;
}

static int begin_flat(struct imgfs_writer *w, struct imgfs_data_stream *s,
		      uint32_t room, struct imgfs_error *err)
{
	struct imgfs_node *inode = s->inode;
	uint32_t tail = (uint32_t)(inode->size & (w->bs - 1));

	if (blkout_blk(&w->out) >= IMGFS_NULL_ADDR)
		return error_set(err, -EFBIG, "%s: image exceeds 2^32 blocks",
				 s->path);
	s->kind = STREAM_FLAT;
	s->fs.written = 0;
	s->fs.tail_start = inode->size;
	inode->startblk = blkout_blk(&w->out);
	inode->layout = IMGFS_LAYOUT_FLAT_PLAIN;
	if (tail && tail <= room) {
		inode->tail = calloc(1, tail);
		if (!inode->tail)
			return error_set(err, -ENOMEM, "out of memory");
		inode->tail_len = tail;
		inode->layout = IMGFS_LAYOUT_FLAT_INLINE;
		s->fs.tail_start = inode->size - tail;
		if (!s->fs.tail_start)
			inode->startblk = IMGFS_NULL_ADDR;
	}
	return 0;
}

static int end_flat(struct imgfs_writer *w, struct imgfs_data_stream *s,
		    struct imgfs_error *err)
{
	struct flat_state *fs = &s->fs;
	int ret;

	if (fs->written < fs->tail_start) {
		ret = blkout_zero(&w->out, fs->tail_start - fs->written, err);
		if (ret)
			return ret;
	}
	return blkout_pad(&w->out, err);
}

void wdata_abort(struct imgfs_data_stream *s)
{
	if (!s)
		return;
	compress_abort(s->zs);
	taridx_abort(s->ts);
	free(s->cs.map);
	free(s->path);
	free(s);
}

/*
 * Chunk index a sparse file of a tar-index image may take with its data
 * left in the tar, whatever copying the data would cost.
 */
#define TARIDX_INDEX_FREE (64u << 10)

/*
 * Should the sparse file of a tar-index image have its data copied into
 * the index? When leaving it in the tar needs a chunk index larger than
 * TARIDX_INDEX_FREE and larger than the image's own chunks would take:
 * a few ranges on odd 512-byte boundaries in a file of a large apparent
 * size would otherwise cost 8 bytes per 512 bytes of it.
 */
static bool taridx_copies(struct imgfs_writer *w, struct imgfs_data_stream *s,
			  const struct imgfs_data_range *map, size_t count)
{
	uint64_t index = taridx_index_bytes(s->inode, map, count);
	uint64_t cost = UINT64_MAX;
	unsigned int bits;
	struct imgfs_error e = { 0 };

	if (!index || index <= TARIDX_INDEX_FREE)
		return false;
	if (choose_chunkbits(w, map, count, s->inode->size, s->path, &bits,
			     &cost, &e))
		return false; /* the tar index's own checks apply */
	return cost < index;
}

static int data_begin(struct imgfs_writer *w, struct imgfs_data_stream *s,
		      const struct imgfs_data_range *sparse, size_t nr_sparse,
		      uint32_t inline_room, struct imgfs_error *err)
{
	struct imgfs_node *inode = s->inode;
	int ret;

	if (!inode->size) {
		inode->layout = IMGFS_LAYOUT_FLAT_PLAIN;
		inode->startblk = 0;
		s->kind = STREAM_EMPTY;
		return 0;
	}
	if (w->opts.tar_index && nr_sparse &&
	    taridx_copies(w, s, sparse, nr_sparse))
		return begin_sparse(w, s, sparse, nr_sparse, err);
	if (w->opts.tar_index) {
		s->kind = STREAM_TARIDX;
		return taridx_begin(w, inode, sparse, nr_sparse, s->path,
				    &s->ts, err);
	}
	if (nr_sparse) {
		/* chunks go straight to the image: queued files first */
		ret = compressor_flush(w, err);
		return ret ? ret : begin_sparse(w, s, sparse, nr_sparse, err);
	}
	if (w->compressor) {
		s->kind = STREAM_COMPRESS;
		return compress_begin(w, inode, s->path, inline_room, &s->zs,
				      err);
	}
	return begin_flat(w, s, inline_room, err);
}

int wdata_begin(struct imgfs_writer *w, struct imgfs_node *inode,
		const struct imgfs_data_range *sparse, size_t nr_sparse,
		uint32_t inline_room, const char *path,
		struct imgfs_data_stream **out, struct imgfs_error *err)
{
	struct imgfs_data_stream *s = calloc(1, sizeof(*s));
	int ret;

	if (s)
		s->path = strdup(path);
	if (!s || !s->path) {
		free(s);
		return error_set(err, -ENOMEM, "out of memory");
	}
	s->inode = inode;
	ret = data_begin(w, s, sparse, nr_sparse, inline_room, err);
	if (ret) {
		wdata_abort(s);
		return ret;
	}
	*out = s;
	return 0;
}

int wdata_put(struct imgfs_writer *w, struct imgfs_data_stream *s,
	      const void *buf, uint64_t len, struct imgfs_error *err)
{
	int ret = 0;

	if (!buf || !len) {
		/* zeros or a hole: written, if at all, when data follows */
		if (s->kind == STREAM_COMPRESS)
			ret = compress_put(s->zs, NULL, len, err);
		s->pos += len;
		return ret;
	}
	switch (s->kind) {
	case STREAM_FLAT:
		ret = flat_put(w, s->inode, &s->fs, buf, (size_t)len, s->pos,
			       s->path, err);
		break;
	case STREAM_SPARSE:
		ret = chunk_write(w, s->inode, &s->cs, buf, (size_t)len, s->pos,
				  s->path, err);
		break;
	case STREAM_COMPRESS:
		ret = compress_put(s->zs, buf, len, err);
		break;
	case STREAM_TARIDX:
		/* the bytes stay in the tar: only where they lie matters */
		if (w->tar_pos < 0)
			ret = error_set(
				err, -EINVAL,
				"%s: a tar-index image takes file data from its tar stream only",
				s->path);
		else
			ret = taridx_put(s->ts, s->pos, (uint64_t)w->tar_pos,
					 len, s->path, err);
		w->tar_pos = -1;
		break;
	case STREAM_EMPTY:
		break;
	}
	s->pos += len;
	return ret;
}

int wdata_end(struct imgfs_writer *w, struct imgfs_data_stream *s,
	      struct imgfs_error *err)
{
	int ret = 0;

	switch (s->kind) {
	case STREAM_FLAT:
		ret = end_flat(w, s, err);
		break;
	case STREAM_SPARSE:
		ret = end_sparse(w, s, err);
		break;
	case STREAM_COMPRESS:
		ret = compress_end(s->zs, err);
		s->zs = NULL;
		break;
	case STREAM_TARIDX:
		ret = taridx_end(w, s->ts, s->path, err);
		break;
	case STREAM_EMPTY:
		break;
	}
	wdata_abort(s);
	return ret;
}
