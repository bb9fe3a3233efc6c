// SPDX-License-Identifier: MIT
/*
 * Tar-index images: regular files are chunk-based inodes whose chunk
 * indexes point into the tar itself instead of into copied data. The tar
 * is extra device 1; its one device slot maps it right after the index
 * (unified address = index blocks), so a kernel mounting the single file
 * index + tar reads it there, as for mkfs.erofs --tar=i images (which
 * containerd completes by appending the tar itself). Blocks are 512
 * bytes: tar data starts on 512-byte boundaries, so a chunk index can
 * name the block where a file's data starts in the tar. A sparse file
 * whose data would need a large chunk index (small chunks over a large
 * apparent size) has its data copied into the index instead, as any
 * image stores a sparse file (lib/writer/data.c).
 *
 * With IMGFS_TAR_INDEX_APPEND the uncompressed tar is copied, as it is
 * read, into an unlinked file in $TMPDIR, and put after the index at the
 * end; the index size is only known once every entry is read. With a
 * dm-verity tree the appended bytes go to the tree too, after the index's,
 * so that it covers the whole file (dm_verity.c places it after the tar).
 */
#define _GNU_SOURCE /* copy_file_range */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imgfs/format.h"
#include "util/fileio.h"
#include "util/tmpfile.h"
#include "source/iter.h"
#include "writer/internal.h"
#include "util/error.h"

#define TAR_BLKBITS 9u
/* chunk size is bs << chunkbits, chunkbits at most 31 (docs/format.md §5.3) */
#define TARIDX_SHIFT_MAX (TAR_BLKBITS + 31u)
/* more chunk indexes than this for one file is refused (128 MiB of index) */
#define TARIDX_CHUNKS_MAX (1ull << 24)

struct imgfs_taridx_stream {
	struct imgfs_node *inode;
	uint8_t *recs; /* nchunks chunk indexes, little-endian */
	uint64_t nchunks;
	unsigned int shift; /* log2(chunk size) */
	int64_t cur; /* chunk being filled, -1 if none */
	uint64_t cur_end; /* file offset the chunk is filled up to */
	uint64_t cur_tar; /* tar offset of the chunk's first byte */
};

static unsigned int ceil_log2(uint64_t v)
{
	unsigned int s = 0;

	while (s < 64 && (1ull << s) < v)
		s++;
	return s;
}

/*
 * The chunk size: one chunk for a whole file, as mkfs.erofs makes it;
 * for a sparse file the largest power of two every data range starts and
 * ends on (a chunk is all data, read from one place in the tar, or all
 * hole). Below TAR_BLKBITS: the file cannot be indexed.
 */
static unsigned int aligned_shift(const struct imgfs_node *inode,
				  const struct imgfs_data_range *map,
				  size_t count)
{
	unsigned int s = ceil_log2(inode->size);

	if (s < TAR_BLKBITS)
		s = TAR_BLKBITS;
	if (s > TARIDX_SHIFT_MAX)
		s = TARIDX_SHIFT_MAX;
	for (size_t i = 0; i < count; i++) {
		uint64_t b[2] = { map[i].offset,
				  map[i].offset + map[i].length };

		if (!map[i].length)
			continue;
		for (int k = 0; k < 2; k++) {
			if (!b[k] || b[k] >= inode->size)
				continue;
			if ((unsigned int)__builtin_ctzll(b[k]) < s)
				s = (unsigned int)__builtin_ctzll(b[k]);
		}
	}
	return s;
}

uint64_t taridx_index_bytes(const struct imgfs_node *inode,
			    const struct imgfs_data_range *map, size_t count)
{
	unsigned int s = aligned_shift(inode, map, count);

	if (s < TAR_BLKBITS || !inode->size)
		return 0;
	return (((inode->size - 1) >> s) + 1) * IMGFS_CHUNK_INDEX_SIZE;
}

static int choose_shift(const struct imgfs_node *inode,
			const struct imgfs_data_range *map, size_t count,
			const char *path, unsigned int *shift,
			struct imgfs_error *err)
{
	unsigned int s = aligned_shift(inode, map, count);

	if (s < TAR_BLKBITS)
		return error_set(
			err, -EINVAL,
			"%s: sparse file cannot be indexed: its data ranges do not start and end on 512-byte boundaries",
			path);
	if (((inode->size - 1) >> s) + 1 > TARIDX_CHUNKS_MAX)
		return error_set(
			err, -EFBIG,
			"%s: sparse file cannot be indexed: its data ranges would need %llu chunks (at most %llu)",
			path,
			(unsigned long long)(((inode->size - 1) >> s) + 1),
			(unsigned long long)TARIDX_CHUNKS_MAX);
	*shift = s;
	return 0;
}

int taridx_begin(struct imgfs_writer *w, struct imgfs_node *inode,
		 const struct imgfs_data_range *sparse, size_t nr_sparse,
		 const char *path, struct imgfs_taridx_stream **out,
		 struct imgfs_error *err)
{
	struct imgfs_taridx_stream *s = calloc(1, sizeof(*s));
	const struct imgfs_chunk_index hole = { .startblk_lo = IMGFS_NULL_ADDR };
	int ret;

	(void)w;
	if (!s)
		return error_set(err, -ENOMEM, "out of memory");
	s->inode = inode;
	s->cur = -1;
	ret = choose_shift(inode, sparse, nr_sparse, path, &s->shift, err);
	if (ret) {
		free(s);
		return ret;
	}
	s->nchunks = ((inode->size - 1) >> s->shift) + 1;
	s->recs = malloc(s->nchunks * IMGFS_CHUNK_INDEX_SIZE);
	if (!s->recs) {
		free(s);
		return error_set(err, -ENOMEM, "out of memory");
	}
	/* every chunk a hole until data names its place in the tar */
	for (uint64_t i = 0; i < s->nchunks; i++)
		chunk_index_encode(&hole, s->recs + i * IMGFS_CHUNK_INDEX_SIZE);
	*out = s;
	return 0;
}

/* End of chunk @c's data: its end, or the file's. */
static uint64_t chunk_end(const struct imgfs_taridx_stream *s, uint64_t c)
{
	uint64_t end = (c + 1) << s->shift;

	return end < s->inode->size ? end : s->inode->size;
}

static int mixed_chunk(const struct imgfs_taridx_stream *s, uint64_t c,
		       const char *path, struct imgfs_error *err)
{
	return error_set(
		err, -EINVAL,
		"%s: cannot be indexed: bytes %llu..%llu are not one contiguous range of the tar (a hole and data, or data from two places, in one %llu-byte chunk)",
		path, (unsigned long long)(c << s->shift),
		(unsigned long long)chunk_end(s, c),
		(unsigned long long)(1ull << s->shift));
}

int taridx_put(struct imgfs_taridx_stream *s, uint64_t pos, uint64_t tar_off,
	       uint64_t len, const char *path, struct imgfs_error *err)
{
	while (len) {
		uint64_t c = pos >> s->shift;
		uint64_t n = chunk_end(s, c) - pos;
		struct imgfs_chunk_index ci = { 0 };
		uint64_t blk;

		if (n > len)
			n = len;
		if (s->cur >= 0 && (uint64_t)s->cur == c) {
			if (pos != s->cur_end ||
			    tar_off != s->cur_tar + (pos - (c << s->shift)))
				return mixed_chunk(s, c, path, err);
		} else {
			if (s->cur >= 0 &&
			    s->cur_end != chunk_end(s, (uint64_t)s->cur))
				return mixed_chunk(s, (uint64_t)s->cur, path,
						   err);
			if (pos != c << s->shift)
				return mixed_chunk(s, c, path, err);
			if (tar_off & ((1u << TAR_BLKBITS) - 1))
				return error_set(
					err, -EINVAL,
					"%s: data at tar offset %llu is not on a 512-byte boundary",
					path, (unsigned long long)tar_off);
			blk = tar_off >> TAR_BLKBITS;
			if (blk >= IMGFS_NULL_ADDR)
				return error_set(
					err, -EFBIG,
					"%s: data at tar offset %llu is beyond the 2 TiB a tar index can address",
					path, (unsigned long long)tar_off);
			ci.device_id = 1; /* the tar: extra device 1 */
			ci.startblk_lo = (uint32_t)blk;
			chunk_index_encode(
				&ci, s->recs + c * IMGFS_CHUNK_INDEX_SIZE);
			s->cur = (int64_t)c;
			s->cur_tar = tar_off;
		}
		s->cur_end = pos + n;
		pos += n;
		tar_off += n;
		len -= n;
	}
	return 0;
}

void taridx_abort(struct imgfs_taridx_stream *s)
{
	if (!s)
		return;
	free(s->recs);
	free(s);
}

int taridx_end(struct imgfs_writer *w, struct imgfs_taridx_stream *s,
	       const char *path, struct imgfs_error *err)
{
	struct imgfs_node *inode = s->inode;

	if (s->cur >= 0 && s->cur_end != chunk_end(s, (uint64_t)s->cur))
		return mixed_chunk(s, (uint64_t)s->cur, path, err);
	inode->layout = IMGFS_LAYOUT_CHUNK_BASED;
	inode->i_u = (s->shift - TAR_BLKBITS) | IMGFS_CHUNK_FORMAT_INDEXES;
	inode->i_u_set = true;
	inode->extra = s->recs;
	inode->extra_len = (uint32_t)(s->nchunks * IMGFS_CHUNK_INDEX_SIZE);
	inode->extra_align = IMGFS_CHUNK_INDEX_SIZE;
	s->recs = NULL;
	w->has_chunks = true;
	return 0;
}

/* An unlinked file in $TMPDIR (or /tmp) for the tar's copy. */
static int copy_file_open(struct imgfs_error *err)
{
	const char *dir = temp_dir(NULL);
	int fd = tmpfile_open(dir, "imgfs-tar");

	if (fd < 0)
		return error_set(err, -errno,
				 "creating the tar's copy in %s: %s", dir,
				 strerror(errno));
	return fd;
}

/*
 * Before the tar's first entry is read through @it: only one tar, and
 * with IMGFS_TAR_INDEX_APPEND its copy kept from its first byte on.
 */
int taridx_start(struct imgfs_writer *w, struct entry_iter *it,
		 struct imgfs_error *err)
{
	int ret;

	if (w->tar_added || w->entries || !it->copy_to)
		return error_set(
			err, -EINVAL,
			"a tar-index image indexes one tar stream, added before any other entry");
	w->tar_added = true;
	if (w->opts.tar_index != IMGFS_TAR_INDEX_APPEND)
		return 0;
	ret = copy_file_open(err);
	if (ret < 0)
		return ret;
	w->tar_copy_fd = ret;
	return it->copy_to(it, w->tar_copy_fd, err);
}

void taridx_super(const struct imgfs_writer *w, struct imgfs_sb_layout *l)
{
	/* the index's blocks: where the tar starts */
	uint64_t tar_blocks = (w->tar_bytes + (1u << TAR_BLKBITS) - 1) >>
			      TAR_BLKBITS;
	uint64_t index_blocks = l->blocks;
	struct imgfs_device_slot *d = &l->devt[0];

	/* one slot, the tar, mapped right after the index */
	memset(d, 0, sizeof(*d));
	d->blocks_lo = (uint32_t)tar_blocks;
	d->uniaddr_lo = (uint32_t)index_blocks;
	d->blocks_hi = (uint16_t)(tar_blocks >> 32);
	d->uniaddr_hi = (uint16_t)(index_blocks >> 32);
	l->extra_devices = 1;
	/* l->blocks stays the primary device's (the index), as mkfs.erofs
	 * writes it: the tar is counted in its slot */
	l->feature_incompat |= IMGFS_FEATURE_INCOMPAT_DEVICE_TABLE |
			       IMGFS_FEATURE_INCOMPAT_CHUNKED_FILE;
}

/* Copy @len bytes of @in from 0 to @out at @off. */
static int copy_range(int in, int out, uint64_t off, uint64_t len,
		      struct imgfs_error *err)
{
	loff_t ip = 0, op = (loff_t)off;
	char *buf = NULL;
	ssize_t n;
	int ret;

	while (len) {
		n = copy_file_range(in, &ip, out, &op,
				    len > (1u << 30) ? (1u << 30) : len, 0);
		if (n <= 0)
			break;
		len -= (uint64_t)n;
	}
	/* copy_file_range may not apply here (old kernel, some mounts) */
	while (len) {
		size_t chunk = len > (1u << 20) ? (1u << 20) : (size_t)len;

		if (!buf && !(buf = malloc(1u << 20)))
			return error_set(err, -ENOMEM, "out of memory");
		n = pread_full(in, buf, chunk, (uint64_t)ip);
		ret = n <= 0 ? (n < 0 ? (int)n : -EIO)
			     : pwrite_full(out, buf, (size_t)n, (uint64_t)op);
		if (ret) {
			free(buf);
			return error_set(err, ret,
					 "appending the tar to the index: %s",
					 strerror(-ret));
		}
		ip += n;
		op += n;
		len -= (uint64_t)n;
	}
	free(buf);
	return 0;
}

/*
 * Copy @len bytes of @in from 0 to @out at @off, feeding each to the
 * dm-verity tree in order: the tree covers index and tar, and the bytes
 * hashed are the ones written, read once from our copy (the image is not
 * read back).
 */
static int copy_range_hashed(struct imgfs_writer *w, int in, int out,
			     uint64_t off, uint64_t len,
			     struct imgfs_error *err)
{
	uint64_t pos = 0;
	char *buf = malloc(1u << 20);
	int ret = 0;

	if (!buf)
		return error_set(err, -ENOMEM, "out of memory");
	while (!ret && pos < len) {
		size_t chunk = len - pos > (1u << 20) ? (1u << 20) :
							(size_t)(len - pos);
		ssize_t n = pread_full(in, buf, chunk, pos);

		if (n <= 0) {
			int e = n < 0 ? (int)-n : EIO;

			ret = error_set(
				err, -e,
				"reading the tar's copy at byte %llu: %s",
				(unsigned long long)pos, strerror(e));
			break;
		}
		ret = writer_verity_update(w, buf, (size_t)n, err);
		if (!ret)
			ret = pwrite_full(out, buf, (size_t)n, off + pos);
		if (ret) /* a message set by the verity update stays */
			error_set(err, ret,
				  "appending the tar to the index: %s",
				  strerror(-ret));
		pos += (uint64_t)n;
	}
	free(buf);
	return ret;
}

int taridx_append(struct imgfs_writer *w, uint64_t *image_bytes,
		  struct imgfs_error *err)
{
	int ret;

	if (w->opts.tar_index != IMGFS_TAR_INDEX_APPEND)
		return 0;
	if (w->verity)
		ret = copy_range_hashed(w, w->tar_copy_fd, w->fd, *image_bytes,
					w->tar_bytes, err);
	else
		ret = copy_range(w->tar_copy_fd, w->fd, *image_bytes,
				 w->tar_bytes, err);
	if (ret)
		return ret;
	*image_bytes += w->tar_bytes;
	return 0;
}
