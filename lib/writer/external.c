// SPDX-License-Identifier: MIT
/*
 * File data on extra devices (writer/intake.h): a merged image keeps only
 * metadata, and each regular file's chunk indexes name the layer image
 * (an extra device of the device table, docs/format.md §10.1) and the
 * block there where its data lies. The device slots have no unified
 * address: the devices are given at mount time (-o device=...).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/format.h"
#include "writer/internal.h"
#include "util/error.h"

int writer_set_devices(struct imgfs_writer *w, unsigned int n,
		       const uint64_t *blocks, const char *const *tags,
		       struct imgfs_error *err)
{
	/* the slots after the superblock, inside its checksummed block */
	struct imgfs_device_slot *d;

	if (w->bs < 4096 || !n || n > IMGFS_WRITER_MAX_DEVICES)
		return error_set(
			err, -E2BIG,
			"%u devices: an image of %u-byte blocks has room for %zu",
			n, w->bs,
			w->bs < 4096 ? (size_t)0
				     : (size_t)IMGFS_WRITER_MAX_DEVICES);
	if (w->nr_devices || w->opts.tar_index || w->compressor)
		return error_set(
			err, -EINVAL,
			"extra devices go with an uncompressed image without a tar index, declared once");
	d = calloc(n, sizeof(*d));
	if (!d)
		return error_set(err, -ENOMEM, "out of memory");
	for (unsigned int i = 0; i < n; i++) {
		if (tags && tags[i])
			memcpy(d[i].tag, tags[i],
			       strnlen(tags[i], sizeof(d[i].tag)));
		if (blocks[i] > UINT32_MAX) {
			free(d);
			return error_set(
				err, -EFBIG,
				"device %u: %llu blocks, more than 32-bit addresses reach",
				i + 1, (unsigned long long)blocks[i]);
		}
		d[i].blocks_lo = (uint32_t)blocks[i];
	}
	w->devt = d;
	w->nr_devices = (uint16_t)n;
	return 0;
}

int writer_add_external(struct imgfs_writer *w, const struct imgfs_entry *e,
			unsigned int chunkbits,
			const struct imgfs_external_chunk *chunks, size_t nr,
			struct imgfs_error *err)
{
	struct imgfs_node *inode;
	uint8_t *recs;
	int ret;

	if (chunkbits < w->blkszbits || chunkbits - w->blkszbits > 31 ||
	    nr != (e->size + (1ull << chunkbits) - 1) >> chunkbits)
		return error_set(
			err, -EINVAL,
			"%s: %zu chunks of 2^%u bytes do not make %llu bytes",
			e->path, nr, chunkbits, (unsigned long long)e->size);
	for (size_t i = 0; i < nr; i++)
		if (chunks[i].device > w->nr_devices)
			return error_set(err, -EINVAL,
					 "%s: chunk on device %u of %u",
					 e->path, chunks[i].device,
					 w->nr_devices);
	recs = calloc(nr ? nr : 1, IMGFS_CHUNK_INDEX_SIZE);
	if (!recs)
		return error_set(err, -ENOMEM, "out of memory");
	ret = writer_add_node(w, e, &inode, err);
	if (ret) {
		free(recs);
		return ret;
	}
	for (size_t i = 0; i < nr; i++) {
		struct imgfs_chunk_index ci = {
			.device_id = chunks[i].device,
			.startblk_lo = chunks[i].device ? chunks[i].blkaddr :
							  IMGFS_NULL_ADDR,
		};

		chunk_index_encode(&ci, recs + i * IMGFS_CHUNK_INDEX_SIZE);
	}
	inode->layout = IMGFS_LAYOUT_CHUNK_BASED;
	inode->i_u = (chunkbits - w->blkszbits) | IMGFS_CHUNK_FORMAT_INDEXES;
	inode->i_u_set = true;
	inode->extra = recs;
	inode->extra_len = (uint32_t)(nr * IMGFS_CHUNK_INDEX_SIZE);
	inode->extra_align = IMGFS_CHUNK_INDEX_SIZE;
	w->has_chunks = true;
	return 0;
}

void external_super(const struct imgfs_writer *w, struct imgfs_sb_layout *l)
{
	l->extra_devices = w->nr_devices;
	memcpy(l->devt, w->devt, w->nr_devices * sizeof(*w->devt));
	l->feature_incompat |= IMGFS_FEATURE_INCOMPAT_DEVICE_TABLE |
			       IMGFS_FEATURE_INCOMPAT_CHUNKED_FILE;
}
