/* SPDX-License-Identifier: MIT */
/*
 * writer/internal.h - state shared by the writer's stages: entry intake
 * (entry.c, data.c; archive.c and source.c over them), layout (layout.c)
 * and the encoders.
 */
#ifndef IMGFS_WRITER_INTERNAL_H
#define IMGFS_WRITER_INTERNAL_H

#include "format/format.h"
#include "imgfs/writer.h"
#include "source/fflags.h"
#include "writer/blkout.h"
#include "writer/intake.h"
#include "writer/tree.h"
#include "writer/xattr.h"

struct dir_skip;
struct entry_iter;
struct imgfs_pending_link;
struct imgfs_data_stream;
struct imgfs_compressor;
struct imgfs_taridx_stream;

struct imgfs_writer {
	struct imgfs_mkfs_options opts;
	unsigned int blkszbits;
	uint32_t bs;
	int fd;
	bool failed;
	int64_t build_time;
	int64_t epoch; /* compact inodes' mtime (superblock epoch) */
	uint32_t epoch_nsec;
	struct imgfs_tree tree;
	struct imgfs_xattr_table xattrs;
	struct imgfs_blkout out;
	struct imgfs_pending_link *pending;
	uint64_t nr_pending;
	uint64_t entries;
	uint64_t data_bytes;
	uint64_t next_progress;
	uint64_t next_progress_bytes; /* data_bytes for the next report */
	struct imgfs_tar *progress_tar; /* the tar being read, for progress */
	uint64_t data_start; /* where file data starts in the image */
	uint8_t *iobuf; /* scratch for tails */
	bool has_chunks;
	struct imgfs_compressor *compressor; /* NULL when not compressing */
	uint32_t feature_incompat; /* features the data stage needed */
	uint16_t available_algs;
	/* files left out of directory sources: the output, a replaced image */
	struct dir_skip *excluded; /* util/vec.h */
	size_t nr_excluded, cap_excluded;
	/* the file imgfs_writer_begin_file() opened, if any */
	bool file_open;
	uint64_t file_pos;
	uint64_t file_size;
	char *file_path;
	struct imgfs_data_stream *file; /* NULL when its data is dropped */
	/* opts.dm_verity: the tree being built, and how many bytes at the
	 * start of the image (the superblock's block) it takes last */
	struct imgfs_verity *verity;
	uint64_t verity_head;
	/* tar-index images (tarindex.c) */
	bool tar_added; /* the one tar stream has been taken */
	uint64_t tar_bytes; /* its uncompressed length */
	int tar_copy_fd; /* APPEND: the tar's copy, else -1 */
	/* tar offset of the bytes imgfs_writer_append() gets next, set by
	 * the tar intake for each data block; -1: none (not from a tar) */
	int64_t tar_pos;
	/* entries whose file flags a user set were dropped (archive.c),
	 * told once at finish */
	struct imgfs_fflags_tally fflags;
	/* external.c: extra devices file data lies on (a merged image):
	 * their device slots, written after the superblock */
	struct imgfs_device_slot *devt;
	uint16_t nr_devices;
};

/* entry.c: the entry calls' bookkeeping. */
int writer_resolve_links(struct imgfs_writer *w, struct imgfs_error *err);
void writer_free_links(struct imgfs_writer *w);
void writer_close_file(struct imgfs_writer *w);
/* entry.c: does the open file keep its data (false for a whiteout)? */
bool writer_file_keeps_data(const struct imgfs_writer *w);

/* iterate.c: the one warning about dropped file flags (finish). */
void writer_warn_file_flags(struct imgfs_writer *w);
/* iterate.c: every entry of the source @it, to its end. */
int writer_read_iter(struct imgfs_writer *w, struct entry_iter *it,
		     struct imgfs_error *err);

/*
 * data.c: a regular file's data, streamed into the image: begin (with the
 * sparse map, if any), put the bytes in file order (@buf NULL: a range
 * that reads back as zeros, a hole in a sparse file), end. End frees the
 * stream, also on failure; abort drops it.
 */
int wdata_begin(struct imgfs_writer *w, struct imgfs_node *inode,
		const struct imgfs_data_range *sparse, size_t nr_sparse,
		uint32_t inline_room, const char *path,
		struct imgfs_data_stream **s, struct imgfs_error *err);
int wdata_put(struct imgfs_writer *w, struct imgfs_data_stream *s,
	      const void *buf, uint64_t len, struct imgfs_error *err);
int wdata_end(struct imgfs_writer *w, struct imgfs_data_stream *s,
	      struct imgfs_error *err);
void wdata_abort(struct imgfs_data_stream *s);

/* dir.c: directory encoding. */
uint64_t dir_tree_size(struct imgfs_dentry *dir, uint32_t bs);
int dir_encode(struct imgfs_dentry *dir, uint32_t bs, uint8_t *buf,
	       uint64_t size);
int dir_sort(struct imgfs_dentry *dir);

/* inode.c: encode one inode header into @buf (32 or 64 bytes). */
void inode_encode(const struct imgfs_writer *w, const struct imgfs_node *inode,
		  uint8_t *buf);
bool inode_needs_extended(const struct imgfs_writer *w,
			  const struct imgfs_node *inode);

/* superblock.c */
/* the device slots that fit after the superblock in its 4 KiB block */
#define IMGFS_WRITER_MAX_DEVICES                                    \
	((4096u - IMGFS_SUPER_OFFSET - IMGFS_SUPER_BASE_SIZE) / \
	 IMGFS_DEVICE_SLOT_SIZE)

struct imgfs_sb_layout {
	uint64_t root_nid;
	uint64_t packed_nid; /* compressed fragments, 0 if none */
	uint64_t inos;
	uint64_t blocks;
	uint32_t meta_blkaddr;
	uint32_t xattr_blkaddr;
	uint32_t feature_compat;
	uint32_t feature_incompat;
	uint16_t u1;
	const uint8_t *compr_cfgs; /* records after the superblock */
	uint32_t compr_cfgs_len;
	/* the device table, right after the superblock: the tar of a tar
	 * index (tarindex.c) or the layer images of a merge (external.c) */
	uint16_t extra_devices;
	struct imgfs_device_slot devt[IMGFS_WRITER_MAX_DEVICES];
};
int super_write(struct imgfs_writer *w, const struct imgfs_sb_layout *l,
		struct imgfs_error *err);

/*
 * dm_verity.c: the dm-verity tree, fed by the block output from the first
 * byte after the @head (opts.dm_verity); the head comes last, when the
 * superblock is written at @offset, and finish appends the tree.
 */
int writer_verity_start(struct imgfs_writer *w, uint64_t head,
			struct imgfs_error *err);
/* bytes written past the block output (a tar-index image's tar), in order */
int writer_verity_update(struct imgfs_writer *w, const void *p, size_t len,
			 struct imgfs_error *err);
int writer_verity_head(struct imgfs_writer *w, uint64_t offset,
		       const uint8_t *buf, size_t len, struct imgfs_error *err);
int writer_verity_finish(struct imgfs_writer *w,
			 struct imgfs_verity_result *res,
			 struct imgfs_error *err);

/*
 * tarindex.c: tar-index images. A regular file's data is a stream of
 * (file offset, tar offset, length) ranges turned into chunk indexes;
 * add_tar reads the one tar (keeping its copy for APPEND); super adds the
 * device slot that maps the tar after the index (at l->blocks, the
 * index's blocks); append puts the copy after the index.
 */
/*
 * Bytes of chunk index the file @inode with the sparse map @map needs when
 * its data stays in the tar; 0 when it cannot be indexed (begin says why).
 */
uint64_t taridx_index_bytes(const struct imgfs_node *inode,
			    const struct imgfs_data_range *map, size_t count);
int taridx_begin(struct imgfs_writer *w, struct imgfs_node *inode,
		 const struct imgfs_data_range *sparse, size_t nr_sparse,
		 const char *path, struct imgfs_taridx_stream **out,
		 struct imgfs_error *err);
int taridx_put(struct imgfs_taridx_stream *s, uint64_t pos, uint64_t tar_off,
	       uint64_t len, const char *path, struct imgfs_error *err);
int taridx_end(struct imgfs_writer *w, struct imgfs_taridx_stream *s,
	       const char *path, struct imgfs_error *err);
void taridx_abort(struct imgfs_taridx_stream *s);
int taridx_start(struct imgfs_writer *w, struct entry_iter *it,
		 struct imgfs_error *err);
void taridx_super(const struct imgfs_writer *w, struct imgfs_sb_layout *l);
int taridx_append(struct imgfs_writer *w, uint64_t *image_bytes,
		  struct imgfs_error *err);

/* entry.c: add regular file @e without data; its inode in *@file. */
int writer_add_node(struct imgfs_writer *w, const struct imgfs_entry *e,
		    struct imgfs_node **file, struct imgfs_error *err);

/* external.c: the device table of images whose data is on extra devices. */
void external_super(const struct imgfs_writer *w, struct imgfs_sb_layout *l);

/* layout.c: place and write all metadata. */
int layout_write(struct imgfs_writer *w, struct imgfs_mkfs_stats *stats,
		 struct imgfs_error *err);

#endif /* IMGFS_WRITER_INTERNAL_H */
