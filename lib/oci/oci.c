// SPDX-License-Identifier: MIT
/*
 * The public calls of imgfs/oci.h: options, listing the work units,
 * converting them (--jobs at once, each unit reused when its record is
 * already in the destination or the cache), and assembling.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, O_TMPFILE, pipe2 */
#endif
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "oci/feed.h"
#include "oci/internal.h"
#include "util/error.h"
#include "util/sized.h"

static int check_options(const struct imgfs_oci_options *o,
			 struct imgfs_error *err)
{
	int ret;

	imgfs_error_clear(err);
	ret = oci_options_in(o, err);
	if (ret)
		return ret;
	if (!imgfs_oci_layer_media_type(o->layer_type))
		return error_set(err, -EINVAL, "unknown layer type %d",
				 (int)o->layer_type);
	if (o->shard_count && o->shard_index >= o->shard_count)
		return error_set(err, -EINVAL,
				 "shard %" PRIu64 " of %" PRIu64
				 ": the index must be below the count",
				 o->shard_index, o->shard_count);
	if (!o->mkfs)
		return 0;
	if (o->mkfs->tar_index)
		return error_set(
			err, -EINVAL,
			"tar-index images are not OCI layers of their own: --tar-index does not apply");
	return imgfs_mkfs_options_check(o->mkfs, err);
}

int imgfs_oci_options_digest(const struct imgfs_oci_options *o, char out[72],
			     struct imgfs_error *err)
{
	struct oci_digest d;
	int ret = check_options(o, err);

	if (!ret)
		ret = oci_options_digest(o, &d, err);
	if (!ret)
		snprintf(out, 72, "%s", d.str);
	return ret;
}

int imgfs_oci_list_units(const char *src, const struct imgfs_oci_options *o,
			 imgfs_oci_unit_fn fn, void *arg,
			 struct imgfs_error *err)
{
	struct oci_layout l;
	int ret = check_options(o, err);

	if (ret)
		return ret;
	ret = oci_layout_open(src, o, &l, err);
	for (size_t i = 0; !ret && i < l.nr_units; i++) {
		struct imgfs_oci_unit u = {
			.diff_id = l.units[i].diff_id.str,
			.digest = l.units[i].blob.str,
			.media_type = l.units[i].media_type,
			.size = l.units[i].blob_size,
		};

		ret = fn(&u, arg);
	}
	oci_layout_free(&l);
	return ret;
}

static bool in_shard(const struct imgfs_oci_options *o,
		     const struct oci_unit *u)
{
	char hex[17];

	if (!o->shard_count)
		return true;
	memcpy(hex, oci_digest_hex(&u->diff_id), 16);
	hex[16] = '\0';
	return strtoull(hex, NULL, 16) % o->shard_count == o->shard_index;
}

/*
 * The jobs: each takes the next unit to do; results stay in the units.
 * Three passes use them, one after the other: finding the units already
 * made (each proven, which reads as much as converting it), converting
 * the others, and reading every source blob not read yet.
 */
enum jobs_pass { PASS_FIND, PASS_CONVERT, PASS_SOURCES };

struct jobs {
	const struct oci_run *run;
	struct oci_layout *l;
	struct imgfs_oci_stats *st;
	enum jobs_pass pass;
	bool shard_only; /* PASS_FIND: only the units of this shard */
	pthread_mutex_t lock;
	size_t next;
	uint64_t started, total; /* units begun, and to do (progress) */
	bool stop; /* the first failure stops new units */
	int ret;
	struct imgfs_error err;
};

static bool wanted(const struct jobs *j, const struct oci_unit *u)
{
	return in_shard(j->run->o, u) && !u->have;
}

/* --keep-going: the failure stays with the unit, reported, not fatal. */
static void unit_failed(struct jobs *j, struct oci_unit *u, int ret,
			const struct imgfs_error *err)
{
	const struct imgfs_oci_options *o = j->run->o;

	u->err = ret;
	free(u->err_msg);
	u->err_msg = strdup(err->msg);
	j->st->failed++;
	if (o->warn) {
		char msg[IMGFS_ERROR_MSG_MAX + 200];

		snprintf(msg, sizeof(msg),
			 "unit %s (blob %s) not converted: %s", u->diff_id.str,
			 u->blob.str, err->msg);
		o->warn(msg, o->warn_arg);
	}
}

static int find_unit(const struct oci_run *run, struct oci_unit *u,
		     struct imgfs_error *err);
static int check_source(const struct oci_run *run, struct oci_unit *u,
			struct imgfs_error *err);

/* The pass's next unit (under j->lock), or NULL. */
static struct oci_unit *next_unit(struct jobs *j)
{
	size_t n = j->l->nr_units;

	if (j->pass == PASS_SOURCES)
		n += j->l->nr_extra;
	while (!j->stop && j->next < n) {
		size_t i = j->next++;
		struct oci_unit *c = i < j->l->nr_units
					     ? &j->l->units[i]
					     : &j->l->extra[i - j->l->nr_units];

		switch (j->pass) {
		case PASS_FIND:
			if (j->shard_only && !in_shard(j->run->o, c))
				continue;
			return c;
		case PASS_CONVERT:
			if (!wanted(j, c))
				continue;
			c->index = ++j->started;
			c->total = j->total;
			return c;
		case PASS_SOURCES:
			/* a unit that failed (--keep-going) is reported */
			if (c->src_checked || c->err)
				continue;
			return c;
		}
	}
	return NULL;
}

/* The first error stops the pass (under j->lock). */
static void job_error(struct jobs *j, int ret, const struct imgfs_error *err)
{
	if (!j->ret) {
		j->ret = ret;
		j->err = *err;
	}
	j->stop = true;
}

static void convert_one(struct jobs *j, struct oci_unit *u)
{
	struct imgfs_error err;
	int ret;

	oci_progress(j->run, u, IMGFS_OCI_UNIT_STARTED, 0, NULL);
	imgfs_error_clear(&err);
	ret = oci_unit_convert(j->run, u, &err);
	pthread_mutex_lock(&j->lock);
	if (ret && j->run->o->keep_going) {
		unit_failed(j, u, ret, &err);
	} else if (ret) {
		job_error(j, ret, &err);
	} else {
		j->st->converted++;
		j->st->bytes_in += u->blob_size;
		j->st->bytes_out += u->out_size;
		if (!j->run->o->no_verify)
			j->st->verified++;
	}
	pthread_mutex_unlock(&j->lock);
	if (!ret)
		oci_progress(j->run, u, IMGFS_OCI_UNIT_CONVERTED, u->blob_size,
			     NULL);
	else if (j->run->o->keep_going)
		oci_progress(j->run, u, IMGFS_OCI_UNIT_FAILED, 0, u->err_msg);
}

static void find_one(struct jobs *j, struct oci_unit *u)
{
	struct imgfs_error err;
	int ret;

	imgfs_error_clear(&err);
	ret = find_unit(j->run, u, &err);
	pthread_mutex_lock(&j->lock);
	if (ret) {
		job_error(j, ret, &err);
	} else {
		j->st->units++;
		if (u->have) {
			j->st->reused++;
			if (u->reused_unverified)
				j->st->reused_unverified++;
		}
	}
	pthread_mutex_unlock(&j->lock);
	if (!ret && u->have)
		oci_progress(j->run, u, IMGFS_OCI_UNIT_REUSED, 0, NULL);
}

static void source_one(struct jobs *j, struct oci_unit *u)
{
	struct imgfs_error err;
	int ret;

	imgfs_error_clear(&err);
	ret = check_source(j->run, u, &err);
	if (!ret)
		return;
	pthread_mutex_lock(&j->lock);
	job_error(j, ret, &err);
	pthread_mutex_unlock(&j->lock);
}

static void *job_thread(void *arg)
{
	struct jobs *j = arg;
	struct oci_unit *u;

	for (;;) {
		pthread_mutex_lock(&j->lock);
		u = next_unit(j);
		pthread_mutex_unlock(&j->lock);
		if (!u)
			return NULL;
		switch (j->pass) {
		case PASS_FIND:
			find_one(j, u);
			break;
		case PASS_CONVERT:
			convert_one(j, u);
			break;
		case PASS_SOURCES:
			source_one(j, u);
			break;
		}
	}
}

static unsigned int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
}

/* Pass @pass over @l's units with --jobs threads: 0 or the first error. */
static int run_pass(const struct oci_run *run, struct oci_layout *l,
		    enum jobs_pass pass, bool shard_only,
		    struct imgfs_oci_stats *st, struct imgfs_error *err)
{
	struct jobs j = { .run = run,
			  .l = l,
			  .st = st,
			  .pass = pass,
			  .shard_only = shard_only };
	unsigned int n = run->o->jobs ? run->o->jobs : online_cpus();
	size_t units = l->nr_units + (pass == PASS_SOURCES ? l->nr_extra : 0);
	unsigned int started = 0;
	pthread_t *t;

	if (pass == PASS_CONVERT)
		for (size_t i = 0; i < l->nr_units; i++)
			j.total += wanted(&j, &l->units[i]);
	if (n > units)
		n = units ? (unsigned int)units : 1;
	t = calloc(n, sizeof(*t));
	if (!t)
		return error_set(err, -ENOMEM, "out of memory");
	imgfs_error_clear(&j.err);
	pthread_mutex_init(&j.lock, NULL);
	for (unsigned int i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, job_thread, &j))
			break;
		started++;
	}
	if (!started)
		job_thread(&j);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_destroy(&j.lock);
	free(t);
	if (j.ret) {
		imgfs_error_clear(err);
		return error_set(err, j.ret, "%s", j.err.msg);
	}
	return 0;
}

static void warn_unit(const struct oci_run *run, const struct oci_unit *u,
		      const char *where, struct imgfs_error *err)
{
	if (run->o->warn) {
		char msg[IMGFS_ERROR_MSG_MAX + 160];

		snprintf(msg, sizeof(msg), "%s record of %s not used: %s",
			 where, u->diff_id.str, err->msg);
		run->o->warn(msg, run->o->warn_arg);
	}
	imgfs_error_clear(err);
}

/*
 * What a record says, against the blob in the destination it names: the
 * media type this run makes, the blob's digest and size, and the digest
 * of its uncompressed bytes. Unless trust_records, the image is then
 * checked and compared with the source as a converted one is (a +zstd
 * unit is converted again instead).
 */
static int prove_unit(const struct oci_run *run, struct oci_unit *u,
		      struct imgfs_error *err)
{
	const char *mt = imgfs_oci_layer_media_type(run->o->layer_type);
	bool zstd = run->o->layer_type == IMGFS_OCI_LAYER_EROFS_ZSTD;
	struct oci_feed f;
	char rel[96];
	int ret, fd;

	if (strcmp(u->out_media_type, mt))
		return error_set(err, -EBADMSG,
				 "it gives media type %s, not %s",
				 u->out_media_type, mt);
	if (!zstd && strcmp(u->out.str, u->out_diff_id.str))
		return error_set(
			err, -EBADMSG,
			"its uncompressed digest %s is not its digest %s",
			u->out_diff_id.str, u->out.str);
	if (zstd && !run->o->trust_records)
		return error_set(err, -EAGAIN,
				 "a +zstd unit is converted again");
	ret = oci_feed_start(&f, run->dst, &u->out, u->out_size, zstd, 0, NULL,
			     NULL, err);
	if (!ret)
		ret = oci_feed_end(&f, err);
	if (!ret && zstd && strcmp(f.plain_digest.str, u->out_diff_id.str))
		ret = error_set(
			err, -EBADMSG,
			"blob %s: its uncompressed content has digest %s, not %s",
			u->out.str, f.plain_digest.str, u->out_diff_id.str);
	if (ret || run->o->trust_records || run->o->no_verify) {
		u->reused_unverified = !ret && run->o->trust_records;
		return ret;
	}
	snprintf(rel, sizeof(rel), "blobs/sha256/%s", oci_digest_hex(&u->out));
	fd = oci_open_file(run->dst, rel, err);
	if (fd < 0)
		return fd;
	ret = oci_unit_verify(run, u, fd, err);
	close(fd);
	return ret;
}

/* The unit's record in @dir, if any, usable by this run. */
static int load_record(const struct oci_run *run, const char *dir,
		       const char *where, struct oci_unit *u,
		       struct imgfs_error *err)
{
	int ret = oci_record_load(dir, &run->opts_digest, u, err);

	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		u->have = false;
		warn_unit(run, u, where, err);
		return 0;
	}
	/* a unit made with --no-verify does not stand for a verified one */
	if (u->have && !u->verified && !run->o->no_verify) {
		u->have = false;
		u->unverified_only = true;
	}
	return 0;
}

/* A unit present in the destination, or in the cache (copied), proven. */
static int find_unit(const struct oci_run *run, struct oci_unit *u,
		     struct imgfs_error *err)
{
	char rel[96];
	int ret = load_record(run, run->dst, "destination", u, err);

	if (ret)
		return ret;
	if (u->have) {
		ret = prove_unit(run, u, err);
		if (!ret)
			return 0;
		u->have = false;
		if (ret == -ENOMEM)
			return ret;
		warn_unit(run, u, "destination", err);
	}
	if (!run->o->cache_dir || run->o->layer_type != IMGFS_OCI_LAYER_EROFS)
		return 0;
	ret = load_record(run, run->o->cache_dir, "cache", u, err);
	if (ret || !u->have)
		return ret;
	/* the cache's image is the blob itself: copy it in, then prove it */
	oci_cache_image_rel(&u->diff_id, rel);
	u->have = false;
	ret = oci_blob_copy_at(run->o->cache_dir, rel, run->dst, &u->out,
			       u->out_size, run->sync, err);
	if (!ret)
		ret = prove_unit(run, u, err);
	if (ret) {
		/* a stale, damaged or forged cache entry: convert again */
		if (ret == -ENOMEM)
			return ret;
		warn_unit(run, u, "cache", err);
		return 0;
	}
	u->have = true;
	return oci_record_store(run->dst, &run->opts_digest, u, run->sync, err);
}

static int prepare(const char *src, const char *dst,
		   const struct imgfs_oci_options *o, struct oci_run *run,
		   struct oci_layout *l, struct imgfs_error *err)
{
	int ret = check_options(o, err);

	memset(l, 0, sizeof(*l));
	if (ret)
		return ret;
	{
		struct stat a, b;

		/* index.json would be replaced: the source would lose it */
		if (!stat(src, &a) && !stat(dst, &b) && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			return error_set(
				err, -EINVAL,
				"%s: the destination layout is the source layout: write to another directory",
				dst);
	}
	memset(run, 0, sizeof(*run));
	run->src = src;
	run->dst = dst;
	run->o = o;
	run->sync = !(o->mkfs && o->mkfs->no_fsync);
	ret = oci_options_digest(o, &run->opts_digest, err);
	if (!ret)
		ret = oci_layout_open(src, o, l, err);
	/* before anything is created in the destination */
	if (!ret && !l->nr_images && o->nr_platforms)
		ret = error_set(
			err, -ENOENT,
			"%s: no manifest of the images selected is of the platform%s given (--platform=%s%s)",
			src, o->nr_platforms > 1 ? "s" : "", o->platforms[0],
			o->nr_platforms > 1 ? ", ..." : "");
	if (!ret)
		ret = oci_dir_open(dst, "blobs/sha256", true, err);
	if (ret < 0)
		return ret;
	close(ret);
	/* what dead runs left behind (without O_TMPFILE) */
	oci_tmpname_scan(dst, "blobs/sha256", true, o->warn, o->warn_arg);
	oci_tmpname_scan(dst, ".imgfs/units", true, o->warn, o->warn_arg);
	oci_tmpname_scan(dst, ".", true, o->warn, o->warn_arg);
	return 0;
}

static int convert_units(const struct oci_run *run, struct oci_layout *l,
			 struct imgfs_oci_stats *st, struct imgfs_error *err)
{
	int ret = run_pass(run, l, PASS_FIND, true, st, err);

	return ret ? ret : run_pass(run, l, PASS_CONVERT, false, st, err);
}

/*
 * Every source blob of the selected images read once this run: its
 * digest, size and diffID (a blob sharing a unit's diffID is not
 * converted, but a lying one must not stand in a published image).
 */
static int check_source(const struct oci_run *run, struct oci_unit *u,
			struct imgfs_error *err)
{
	struct oci_feed f;
	int ret = oci_feed_start(&f, run->src, &u->blob, u->blob_size, true, 0,
				 NULL, NULL, err);

	if (!ret)
		ret = oci_feed_end(&f, err);
	if (!ret)
		ret = oci_feed_check_diff_id(&f, &u->blob, &u->diff_id, err);
	if (!ret)
		u->src_checked = true;
	return ret;
}

/* --keep-going's end: the call fails, naming every blob that did. */
static int failures(const struct oci_layout *l,
		    const struct imgfs_oci_stats *st, struct imgfs_error *err)
{
	char list[IMGFS_ERROR_MSG_MAX];
	size_t len = 0;

	list[0] = '\0';
	for (size_t i = 0; i < l->nr_units && len < sizeof(list); i++)
		if (l->units[i].err)
			len += (size_t)snprintf(list + len, sizeof(list) - len,
						"%s%s", len ? " " : "",
						l->units[i].blob.str);
	return error_set(err, -EIO,
			 "%" PRIu64 " units failed, %" PRIu64
			 " images not published: %s",
			 st->failed, st->images_failed, list);
}

/* What a call runs after preparing the layout. */
enum oci_steps {
	OCI_STEP_CONVERT = 1, /* convert the units missing (else: find them) */
	OCI_STEP_ASSEMBLE = 2, /* then write configs, manifests, indexes */
};

static int run_steps(const char *src, const char *dst,
		     const struct imgfs_oci_options *o, unsigned int steps,
		     struct imgfs_oci_stats *stats, struct imgfs_error *err)
{
	struct imgfs_oci_stats st_local;
	struct oci_layout l;
	struct oci_run run;
	pthread_mutex_t plock = PTHREAD_MUTEX_INITIALIZER;
	int ret, lock = -1;

	if (!stats)
		stats = &st_local;
	memset(stats, 0, sizeof(*stats));
	stats->struct_size = sizeof(*stats);
	ret = prepare(src, dst, o, &run, &l, err);
	run.progress_lock = &plock;
	/* shared with other runs; a garbage collection waits for none */
	if (!ret)
		ret = oci_lock(dst, false, &lock, err);
	/* what the options digest stands for, for --assemble's messages */
	if (!ret && (steps & OCI_STEP_CONVERT))
		ret = oci_options_note(o, dst, &run.opts_digest, run.sync, err);
	if (!ret && steps == (OCI_STEP_CONVERT | OCI_STEP_ASSEMBLE) &&
	    o->shard_count)
		ret = error_set(
			err, -EINVAL,
			"a shard is converted with imgfs_oci_convert_units()");
	if (!ret)
		ret = (steps & OCI_STEP_CONVERT)
			      ? convert_units(&run, &l, stats, err)
			      : run_pass(&run, &l, PASS_FIND, false, stats,
					 err);
	if (!ret && (steps & OCI_STEP_ASSEMBLE))
		ret = run_pass(&run, &l, PASS_SOURCES, false, stats, err);
	if (!ret && (steps & OCI_STEP_ASSEMBLE))
		ret = oci_assemble(&run, &l, stats, err);
	if (!ret && stats->failed)
		ret = failures(&l, stats, err);
	oci_unlock(lock);
	oci_layout_free(&l);
	return ret;
}

int imgfs_oci_convert_units(const char *src, const char *dst,
			    const struct imgfs_oci_options *o,
			    struct imgfs_oci_stats *stats,
			    struct imgfs_error *err)
{
	return run_steps(src, dst, o, OCI_STEP_CONVERT, stats, err);
}

int imgfs_oci_assemble(const char *src, const char *dst,
		       const struct imgfs_oci_options *o,
		       struct imgfs_oci_stats *stats, struct imgfs_error *err)
{
	return run_steps(src, dst, o, OCI_STEP_ASSEMBLE, stats, err);
}

int imgfs_oci_convert(const char *src, const char *dst,
		      const struct imgfs_oci_options *o,
		      struct imgfs_oci_stats *stats, struct imgfs_error *err)
{
	return run_steps(src, dst, o, OCI_STEP_CONVERT | OCI_STEP_ASSEMBLE,
			 stats, err);
}
