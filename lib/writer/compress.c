// SPDX-License-Identifier: MIT
/*
 * compress.c - the compression engine (docs/format.md §9): its set-up,
 * its part of the superblock and the compact form of its maps. The engine
 * is split by job; compress_int.h lists its files.
 *
 * A file is cut into segments of a fixed size derived from the pcluster
 * size only. Each segment is a job: a worker thread turns it into extents
 * (compressed pclusters of whole blocks, right-aligned after zero padding,
 * or raw PLAIN pclusters) in a private buffer. The writer's thread queues
 * jobs in file order and writes finished ones strictly in that order, so
 * block addresses, and the image, never depend on the number of workers
 * or on timing. Memory stays bounded whatever the number of workers:
 * encoder contexts (an lzma,9 one holds about 90 MB) are shared by the
 * workers and at most one per CPU the process may use is created.
 *
 * Per extent (§9.13): a pcluster whose compressed form does not save at
 * least one block is stored raw. Per segment: if compression saved no
 * block overall, the segment is stored raw; a file stored raw throughout
 * becomes FLAT_PLAIN (or FLAT_INLINE with an inline tail).
 *
 * With fragments (§9.11), the end of each file, up to a few pclusters'
 * worth of raw data (all of a small file), is not stored in pclusters of
 * its own but appended, as the writer's thread retires the file, to the
 * content of the packed inode, itself compressed in segments like any
 * other file: no block is left half empty. Files of one segment whose
 * content (SHA-256) was seen before then share the earlier file's
 * pclusters and fragment instead of storing them again; shared pclusters
 * are announced by the same superblock bit (DEDUPE, Linux 6.1).
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imgfs/format.h"
#include "writer/compress_int.h"
#include "writer/compress_map.h"
#include "writer/internal.h"
#include "util/error.h"

#define PCLUSTER_MAX (1u << 20) /* kernel limit */
#define SEG_MIN (2u << 20)
#define SEG_MAX (8u << 20) /* below the kernel's 12 MiB per extent */
#define SEG_PCLUSTERS 32
#define JOBS_PER_WORKER 1024 /* small files are small jobs */

int compress_layout_inode(struct imgfs_compressor *c, struct imgfs_node *inode,
			  struct imgfs_error *err)
{
	unsigned int ebase_mod;
	uint8_t *map;
	uint32_t len;
	int ret;

	if (!c || inode->layout != IMGFS_LAYOUT_COMPRESSED_FULL ||
	    !inode->extra)
		return 0;
	/* inodes are 32-byte aligned and 32 or 64 bytes long (§4.8) */
	ebase_mod = (((inode->xattr_isize + 7) & ~7u) + 8) % 32;
	ret = zmap_to_compact(inode->extra, inode->extra_len, inode->size,
			      c->p.bits, ebase_mod, &map, &len);
	if (ret == -ENOMEM)
		return error_set(err, ret, "out of memory");
	if (ret) {
		/* the inline tail was sized for a compact map */
		if (inode->tail_len)
			return error_set(
				err, -EINVAL,
				"internal: compact index refused for an inode with an inline tail");
		return 0;
	}
	free(inode->extra);
	inode->extra = map;
	inode->extra_len = len;
	inode->layout = IMGFS_LAYOUT_COMPRESSED_COMPACT;
	return 0;
}

int compressor_super(struct imgfs_compressor *c, struct imgfs_sb_layout *sbl,
		     struct imgfs_error *err)
{
	unsigned int len;

	sbl->feature_incompat |= IMGFS_FEATURE_INCOMPAT_ZERO_PADDING;
	if (c->used_inline)
		sbl->feature_incompat |= IMGFS_FEATURE_INCOMPAT_ZTAILPACKING;
	if (c->packed_inode)
		sbl->feature_incompat |= IMGFS_FEATURE_INCOMPAT_FRAGMENTS;
	if (c->p.alg->alg == IMGFS_COMPR_LZ4 && !c->big) {
		/* the original form: u1 is the LZ4 match distance */
		sbl->u1 = 65535;
		return 0;
	}
	sbl->feature_incompat |= IMGFS_FEATURE_INCOMPAT_COMPR_CFGS;
	sbl->u1 = (uint16_t)(1u << c->p.alg->alg);
	len = c->p.alg->cfg_record(&c->p.cfg,
				   c->cfgs + IMGFS_COMPR_CFG_HDR_SIZE);
	compr_cfg_len_encode(c->cfgs, (uint16_t)len);
	sbl->compr_cfgs = c->cfgs;
	sbl->compr_cfgs_len = IMGFS_COMPR_CFG_HDR_SIZE + len;
	return 0;
}

static int setup_params(struct zparams *p,
			const struct imgfs_mkfs_options *opts,
			unsigned int blkszbits, struct imgfs_error *err)
{
	uint32_t bs = 1u << blkszbits;
	uint32_t pcl = opts->pcluster_size ? opts->pcluster_size : bs;
	void *ctx;
	int ret;

	p->alg = zalg_by_kind(opts->compress);
	if (!p->alg)
		return error_set(err, -EINVAL,
				 "unknown compression algorithm %d",
				 (int)opts->compress);
	if (pcl < bs || pcl % bs || pcl > PCLUSTER_MAX)
		return error_set(
			err, -EINVAL,
			"pcluster size %u must be a multiple of the block size (%u) up to 1 MiB",
			pcl, bs);
	/* CBLKCNT has 11 bits: 1 MiB of 512-byte blocks is one too many */
	if (pcl >> blkszbits > IMGFS_ZMAP_MAX_DELTA)
		pcl = IMGFS_ZMAP_MAX_DELTA << blkszbits;
	p->bits = blkszbits;
	p->bs = bs;
	p->pcluster = pcl;
	p->cfg.kind = opts->compress;
	p->cfg.alg = p->alg->alg;
	p->cfg.level = opts->compress_level;
	p->cfg.dictsize = opts->compress_dictsize;
	p->cfg.pclustersize = pcl;
	p->cfg.blkszbits = blkszbits;
	ret = p->alg->setup(&p->cfg, err);
	if (ret)
		return ret;
	p->pcluster = p->cfg.pclustersize; /* the algorithm may lower it */
	ctx = p->alg->ctx_new(&p->cfg);
	if (!ctx)
		return error_set(err, -ENOMEM,
				 "cannot set up the %s compressor",
				 p->alg->name);
	p->alg->ctx_free(ctx);
	return 0;
}

/* CPUs this process may run on (its affinity mask), at least one. */
static long usable_cpus(void)
{
	cpu_set_t set;
	long n = 0;

	if (!sched_getaffinity(0, sizeof(set), &set))
		n = CPU_COUNT(&set);
	if (n < 1)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n;
}

int compress_check_options(const struct imgfs_mkfs_options *opts,
			   unsigned int blkszbits, struct imgfs_error *err)
{
	struct zparams p;

	return setup_params(&p, opts, blkszbits, err);
}

struct imgfs_compressor *
compressor_create(const struct imgfs_mkfs_options *opts, unsigned int blkszbits,
		  struct imgfs_error *err)
{
	struct imgfs_compressor *c = calloc(1, sizeof(*c));
	long cpus;

	if (!c) {
		error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	if (setup_params(&c->p, opts, blkszbits, err)) {
		free(c);
		return NULL;
	}
	c->big = c->p.pcluster > c->p.bs;
	c->ztailpacking = opts->ztailpacking;
	c->inline_data = opts->inline_data;
	c->fragments = opts->fragments;
	spillfile_init(&c->pspill, "imgfs-fragments",
		       "the fragments spill file");
	cpus = usable_cpus();
	c->workers = opts->workers;
	if (!c->workers)
		c->workers = cpus < IMGFS_MAX_WORKERS ? (unsigned int)cpus :
							IMGFS_MAX_WORKERS;
	if (c->workers > IMGFS_MAX_WORKERS) {
		error_set(err, -EINVAL,
			  "%u compression workers: the range is 1 to %u",
			  c->workers, IMGFS_MAX_WORKERS);
		free(c);
		return NULL;
	}
	/* no more encoders than can run at once: memory is not set by -w */
	c->encoders = c->workers < (unsigned long)cpus ? c->workers :
							 (unsigned int)cpus;
	/* the cut depends on the pcluster size only, never on the workers */
	c->seg_size = (size_t)SEG_PCLUSTERS * c->p.pcluster;
	if (c->seg_size < SEG_MIN)
		c->seg_size = SEG_MIN;
	if (c->seg_size > SEG_MAX)
		c->seg_size = SEG_MAX;
	c->max_bytes = (2 * (size_t)c->encoders + 2) * c->seg_size;
	c->max_jobs = JOBS_PER_WORKER * c->encoders;
	if (zctxs_init(&c->ctxs, c->encoders, err)) {
		free(c);
		return NULL;
	}
	c->pool = workpool_create(c->workers, NULL, err);
	if (!c->pool) {
		zctxs_destroy(&c->ctxs);
		free(c);
		return NULL;
	}
	return c;
}

void compressor_destroy(struct imgfs_compressor *c)
{
	if (!c)
		return;
	workpool_destroy(c->pool);
	zctxs_destroy(&c->ctxs);
	zq_drop(c);
	zseen_free_all(c);
	free(c->pbuf);
	spillfile_close(&c->pspill);
	free(c);
}
