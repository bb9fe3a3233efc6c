/* SPDX-License-Identifier: MIT */
/*
 * check/internal.h - state shared by the checker's files (not installed).
 */
#ifndef IMGFS_CHECK_INTERNAL_H
#define IMGFS_CHECK_INTERNAL_H

#include "imgfs/check.h"
#include "reader/internal.h"
#include "util/hashtab.h"
#include "util/workpool.h"

/* What the checker remembers about each inode it reached. */
struct check_node {
	uint64_t nid;
	uint64_t parent; /* directory through which it was first reached */
	uint64_t parent_serial; /* that directory's walk serial */
	char *name; /* name of that first entry (NULL for the root) */
	uint32_t mode;
	uint32_t nlink; /* on-disk link count */
	uint32_t refs; /* directory entries found pointing at it */
	uint32_t subdirs; /* directories: child directory entries */
	bool bad; /* inode could not be read */
	bool checked; /* inode-level checks done */
	bool data_ok;
	bool have_digest;
	uint8_t sha256[IMGFS_SHA256_SIZE];
};

/* A byte range of the image owned by one inode (or the superblock). */
struct check_range {
	uint64_t start;
	uint64_t end;
	uint64_t nid; /* IMGFS_CHECK_NO_NID: superblock / shared xattrs */
	uint8_t kind; /* CHECK_RANGE_* */
};

enum {
	CHECK_RANGE_META = 0, /* inode, xattrs, inline data, chunk array */
	CHECK_RANGE_DATA, /* data blocks of a flat file */
	CHECK_RANGE_CHUNK, /* data blocks of a chunk-based file (shareable) */
	CHECK_RANGE_SHARED_XATTR, /* a shared xattr entry (shareable) */
	/* a range mapped ahead by a data job that the sequential order never
	 * reaches (a read failed before it): dropped before sorting */
	CHECK_RANGE_DEAD,
};

/* The checker's records, in the order they were met (see nodes.c). */
struct check_nodes {
	struct check_node **chunks;
	size_t nr_chunks, chunks_cap;
	size_t count;
	struct imgfs_u64map index; /* nid -> position */
};

/* A growable string (util/vec.h). */
struct check_buf {
	char *s;
	size_t cap;
};

struct dir_scan;
struct check_event;
struct check_job;
struct check_prefetch;
struct imgfs_workpool;

struct check_ctx {
	struct imgfs_image *img;
	const struct imgfs_sb_info *sb;
	struct imgfs_check_options opts;
	struct imgfs_check_result *res;
	struct imgfs_error *err; /* operational failures only */
	struct check_nodes nodes;
	struct check_range *ranges;
	size_t nr_ranges;
	size_t ranges_cap;
	uint8_t *buf; /* data read buffer */
	size_t bufsz;
	uint8_t *readmap; /* bit per image block already read (no digest) */
	uint64_t hole_hashed; /* zero bytes hashed for sparse files */
	uint64_t inline_bytes; /* file data stored inline or in the packed inode */
	uint64_t hidden_inodes; /* counted in sb inos, not reachable (packed) */
	/* Paths, grown as needed: no depth limit. */
	struct check_buf rpath; /* of a problem reported */
	struct check_buf lpath; /* first path of a hard-linked inode */
	struct dir_scan *scan; /* the directory being listed (check.c) */
	char nid_path[32]; /* "<nid N>" when no path can be built */
	int fatal; /* operational failure seen (negative errno) */
	struct check_tar *tar; /* tar-index images: the tar's entries */
	/*
	 * Parallel data check (order.c): file contents are read by worker
	 * threads while the walk goes on; findings and entries met after a
	 * file whose data is still being read wait in an ordered queue, so
	 * everything reaches the callbacks in the sequential order.
	 */
	unsigned int threads; /* 1: read data in the walking thread */
	struct imgfs_workpool *pool; /* started at the first data job */
	struct check_batch *batch; /* jobs not handed to the pool yet */
	struct check_event *ev_head, *ev_tail;
	size_t nr_events; /* queued events */
	size_t nr_jobs; /* queued data jobs */
	bool delivering; /* a job's findings go straight out */
	int stop; /* the entry callback stopped the walk: its value */
	/* packed inode pclusters decoded ahead by the pool (data.c) */
	struct check_prefetch *prefetch;
	size_t nr_prefetch, prefetch_cap;
	struct imgfs_inode packed;
	bool walking; /* imgfs_walk() is running */
};

#define CHECK_BUFSZ (1u << 16)

/* report.c: count a finding and hand it to opts.report (queued behind
 * data jobs still running, see order.c). */
void check_report(struct check_ctx *c, enum imgfs_check_severity sev,
		  enum imgfs_check_area area, uint64_t nid, const char *fmt,
		  ...) __attribute__((format(printf, 5, 6)));

/* nodes.c: the record of @nid, or NULL. */
struct check_node *check_node_find(struct check_ctx *c, uint64_t nid);
/* The record of @nid, created zeroed (*@is_new set) when not there yet;
 * NULL on no memory. */
struct check_node *check_node_get(struct check_ctx *c, uint64_t nid,
				  bool *is_new);
/* A new zeroed record for @nid (not yet there); NULL on no memory. */
struct check_node *check_node_insert(struct check_ctx *c, uint64_t nid);
/* Record @i (0 .. c->nodes.count - 1), in the order they were met. */
struct check_node *check_node_at(struct check_ctx *c, size_t i);
void check_nodes_free(struct check_ctx *c);
/* Length of the path of @n (0 for the root), SIZE_MAX if its chain does
 * not reach the root. */
size_t check_node_path_len(struct check_ctx *c, struct check_node *n);
/* Write the path of @n (@len bytes) backwards into @out, all but its
 * first @skip bytes: byte i of the path goes to out[i - skip]. */
void check_node_path_fill(struct check_ctx *c, struct check_node *n,
			  char *out, size_t len, size_t skip);
/* Path of @nid as first reached, built into @buf; "<nid N>" if unknown.
 * A path longer than @size keeps its end, after "...". */
const char *check_node_path(struct check_ctx *c, uint64_t nid, char *buf,
			    size_t size);
/* The same, whole, in @b (grown as needed); "<nid N>" when unknown or out
 * of memory. */
const char *check_node_path_buf(struct check_ctx *c, uint64_t nid,
				struct check_buf *b);

/* data.c: ranges of the image owned by inodes, and their overlaps. */
int check_add_range(struct check_ctx *c, uint64_t start, uint64_t len,
		    uint64_t nid, unsigned int kind);
void check_ranges(struct check_ctx *c);

/* Per-inode checks of data.c and xattr.c, driven by check.c. */
void check_xattrs(struct check_ctx *c, const struct imgfs_inode *inode);
void check_data(struct check_ctx *c, const struct imgfs_inode *inode,
		struct check_node *n);
/*
 * Tar-index images (tarindex.c): init checks that the tar is appended
 * where the device table maps it and starts the walk of its headers (on a
 * worker thread when there are several); each data extent on it must lie
 * inside one entry's data, which finish() checks after the image walk,
 * for every extent noted, in order: the findings come in the same order
 * whatever the thread count and timing.
 */
struct check_tar;
void check_tarindex_init(struct check_ctx *c);
void check_tarindex_extent(struct check_ctx *c, uint64_t nid,
			   const struct imgfs_extent *ext);
void check_tarindex_finish(struct check_ctx *c);
void check_tarindex_free(struct check_ctx *c);
/* Is the image an index with its tar mapped after it? */
static inline bool check_is_tarindex(const struct check_ctx *c)
{
	return (c->sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_DEVICE_TABLE) &&
	       c->sb->extra_devices == 1 && c->img->dev_base &&
	       c->img->dev_base[0];
}

/* Count the packed inode's storage as file data (amplification). */
void check_packed_storage(struct check_ctx *c, const struct imgfs_inode *in);

/* order.c: count @p and hand it to opts.report now. */
void check_deliver_problem(struct check_ctx *c,
			   const struct imgfs_check_problem *p);

/*
 * order.c: the ordered queue of findings, entries and data jobs.
 * check_queue_busy() says whether anything waits (new findings and entries
 * must then queue too). check_queue_problem()/check_queue_entry() append a
 * copy; check_queue_job() starts @job on a worker thread and appends it.
 * check_queue_flush() delivers what is ready from the head (@wait: wait for
 * every job, emptying the queue); it also waits while the queue is over its
 * bounds. Returns 0 or a negative errno (c->fatal is set on no memory).
 */
static inline bool check_queue_busy(const struct check_ctx *c)
{
	return c->ev_head != NULL && !c->delivering;
}
void check_queue_problem(struct check_ctx *c,
			 const struct imgfs_check_problem *p);
int check_queue_entry(struct check_ctx *c, const struct imgfs_check_entry *e,
		      struct check_node *n);
int check_queue_job(struct check_ctx *c, struct check_job *job);
/* The work pool, started at the first use; NULL on failure (c->fatal). */
struct imgfs_workpool *check_pool(struct check_ctx *c);
void check_queue_flush(struct check_ctx *c, bool wait);
/* Drop what is queued (waiting for the jobs running); the caller then
 * waits for the prefetch and destroys the pool. */
void check_queue_free(struct check_ctx *c);
/* Call the entry callback with @e (sha256/data_ok taken from @n). */
int check_call_entry(struct check_ctx *c, struct imgfs_check_entry *e,
		     struct check_node *n);

/* A mapped extent of a data job, with what mapping it added. */
struct check_job_ext {
	struct imgfs_extent ext;
	size_t range; /* index in c->ranges, SIZE_MAX if none added */
};

/* What the queue calls on a job (data.c's; the queue knows no more). */
struct check_job_ops {
	void (*run)(struct check_job *job, void **local); /* on a worker */
	void (*finish)(struct check_ctx *c, struct check_job *job);
	void (*free)(struct check_job *job);
};

struct check_job {
	const struct check_job_ops *ops;
	struct check_job *next; /* in its batch */
	struct check_batch *batch;
	struct check_ctx *c; /* the worker only reads img, bufsz, readmap */
	struct imgfs_inode inode;
	struct check_node *n;
	uint64_t where; /* storage of the first extent stored (0: none) */
	struct check_job_ext *ext; /* every extent mapped, in file order */
	size_t nr_ext, ext_cap;
	int map_ret; /* mapping failed after nr_ext extents */
	struct imgfs_error map_err;
	bool digest; /* IMGFS_CHECK_F_DIGEST */
	bool amplified; /* no digest: check_file_amplification() */
	bool skip_holes; /* the check's hole budget is already spent */
	/* set by the worker */
	size_t nr_read; /* extents read without error */
	int read_ret; /* reading extent nr_read failed */
	struct imgfs_error read_err;
	bool have_sha;
	uint8_t sha256[IMGFS_SHA256_SIZE];
};

/*
 * Jobs go to the pool in batches (order.c): small files cost less than a
 * hand-over between threads each. A batch runs its jobs in the order of
 * their storage (where), so that reads follow each other on the disk and
 * the reader's read-ahead serves them; results are delivered in walk order
 * all the same.
 */
struct check_batch {
	struct imgfs_work work;
	struct check_job *head, *tail;
	size_t jobs; /* not finished yet */
	uint64_t bytes; /* file bytes of its jobs */
	bool submitted;
};

/*
 * data.c: a regular file's content is read on a worker thread (its job's
 * ops): the walk maps the extents (their ranges are added in order), the
 * worker reads them, and the finish replays, in order, what the
 * sequential check does per extent and after the last one. Workers keep a
 * read buffer of c->bufsz bytes in their local slot (freed by the pool).
 */

/*
 * Before the walk, with threads and no digest: queue the decoding of every
 * compressed pcluster of the packed inode (FRAGMENTS), so that the files
 * whose tails are there find them verified (read_verify()) instead
 * of waiting for one another. Reports nothing: the files' own reads do.
 * check_prefetch_free() waits for them.
 */
void check_prefetch_packed(struct check_ctx *c);
void check_prefetch_free(struct check_ctx *c);

#endif /* IMGFS_CHECK_INTERNAL_H */
