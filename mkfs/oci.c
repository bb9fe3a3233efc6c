// SPDX-License-Identifier: MIT
/*
 * mkfs.img --oci: an OCI image layout in, an OCI image layout of EROFS
 * layers out (imgfs/oci.h does the work; docs/oci.md). This file parses
 * the command line (the ordinary options apply to every layer image) and
 * prints progress and the summary.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "frontend/escape.h"
#include "frontend/json_rec.h"
#include "frontend/json_str.h"
#include "frontend/usage.h"
#include "imgfs/oci.h"
#include "imgfs/version.h"
#include "mkfs.h"

#define OCI_USAGE_LINE                                            \
	"usage: mkfs.img --oci [OPTIONS] SRC_LAYOUT DST_LAYOUT\n" \
	"       mkfs.img --oci --gc DST_LAYOUT\n"

void mkfs_oci_usage(FILE *f)
{
	fprintf(f, OCI_USAGE_LINE
		"Convert every tar layer of the images of the OCI image layout SRC_LAYOUT\n"
		"into an EROFS layer, and write a layout of the converted images to\n"
		"DST_LAYOUT (new configs, manifests and indexes; other blobs as they are).\n\n"
		"      --ref=NAME       only the index.json entries with this ref name\n"
		"                       (org.opencontainers.image.ref.name; repeatable)\n"
		"      --platform=OS/ARCH[/VARIANT]  only manifests of this platform\n"
		"                       (repeatable)\n"
		"      --jobs=N         layers converted at once (default: online CPUs)\n"
		"      --cache-dir=DIR  also keep each layer image as\n"
		"                       DIR/sha256/XX/DIFFID.erofs (containerd's\n"
		"                       layer_content_caches) and reuse them\n"
		"      --no-verify      do not check each image and compare it with its\n"
		"                       source before publishing it\n"
		"      --trust-records  reuse units recorded in DST_LAYOUT or the cache\n"
		"                       once their blobs match the records, without\n"
		"                       checking and comparing them again\n"
		"      --layer-media-type=TYPE  application/vnd.erofs.layer.v1 (default),\n"
		"                       application/vnd.erofs.layer.v1+zstd or\n"
		"                       application/vnd.erofs\n"
		"      --subject        converted manifests name the original as subject\n"
		"      --list-units     print the work units (diffID, blob, media type)\n"
		"      --shard=I/N      convert only the units of shard I of N\n"
		"      --assemble       write configs, manifests and indexes from the units\n"
		"                       already converted\n"
		"      --flatten        SRC_LAYOUT OUT.img: the one image selected (--ref,\n"
		"                       --platform) flattened into one EROFS image\n"
		"      --merge          CONVERTED_LAYOUT OUT.img: the one image selected,\n"
		"                       as a metadata-only image over its EROFS layer\n"
		"                       blobs (mount -o device=BLOB,... in layer order)\n"
		"      --keep-going     convert every unit that can be, publish only the\n"
		"                       images whose units all converted, then fail\n"
		"      --gc             then remove the blobs and unit records of DST_LAYOUT\n"
		"                       that its index.json does not reach; alone\n"
		"                       (mkfs.img --oci --gc DST_LAYOUT) only that\n"
		"      --json           the summary as JSON on standard output\n"
		"  -q, --quiet          no progress or summary\n\n"
		"Every other mkfs.img option (-z, -C, -b, -T, --all-root, --dm-verity, ...)\n"
		"applies to each layer image; see mkfs.img --help and mkfs.img(1).\n"
		"Exit status: 0 done, 1 failed, 2 usage error.\n");
}

void mkfs_oci_usage_error(void)
{
	fe_usage_hint("mkfs.img", OCI_USAGE_LINE);
}

/* Ordinary options that make no sense for layers of a layout. */
static int refuse(const char *name)
{
	fprintf(stderr, "mkfs.img: %s does not apply with --oci%s\n", name,
		!strcmp(name, "-U")
			? " (each layer's UUID is derived from its diffID)"
			: "");
	return -1;
}

static int check_operands(int argc, char **argv, struct mkfs_args *a)
{
	struct mkfs_oci_args *x = &a->oci;
	int n = argc - a->optind;

	if (x->gc && x->mode == MKFS_OCI_ALL && n == 1) {
		x->dst = argv[a->optind];
		return 0;
	}
	if (x->mode == MKFS_OCI_LIST ? n != 1 && n != 2 : n != 2) {
		fprintf(stderr,
			"mkfs.img: --oci takes SRC_LAYOUT and DST_LAYOUT%s\n",
			x->mode == MKFS_OCI_LIST
				? " (DST_LAYOUT optional with --list-units)"
			: x->gc ? " (or DST_LAYOUT alone with --gc)"
				: "");
		return -1;
	}
	x->src = argv[a->optind];
	x->dst = argv[a->optind + 1];
	return 1;
}

int mkfs_oci_check(int argc, char **argv, struct mkfs_args *a)
{
	struct mkfs_oci_args *x = &a->oci;
	struct imgfs_error err;
	int r;

	if (a->opts.tar_index)
		return refuse("--tar-index");
	if (a->immutable)
		return refuse("--immutable");
	if (a->opts.have_uuid && x->mode != MKFS_OCI_FLATTEN &&
	    x->mode != MKFS_OCI_MERGE)
		return refuse("-U");
	if (x->gc && x->mode != MKFS_OCI_ALL && x->mode != MKFS_OCI_ASSEMBLE) {
		fputs("mkfs.img: --gc goes with a whole run or --assemble (a shard's units are reached only once assembled)\n",
		      stderr);
		return -1;
	}
	r = check_operands(argc, argv, a);
	if (r <= 0)
		return r;
	x->o.mkfs = &a->opts;
	x->o.refs = x->refs;
	x->o.platforms = x->platforms;
	if (imgfs_mkfs_options_check(&a->opts, &err)) {
		fprintf(stderr, "mkfs.img: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/*
 * Paths and messages are bytes, not always UTF-8: in JSON they are
 * written as the native summary writes them (imgfs/json.h).
 */
static struct json_object *json_str(const char *s)
{
	return fe_json_bytes(s, strlen(s));
}

/* Messages quote names and strings of the layout: escaped. */
static void show_message(const char *prefix, const char *msg)
{
	fprintf(stderr, "mkfs.img: %s", prefix);
	fe_escape_fputs(stderr, msg, 0);
	fputc('\n', stderr);
}

/* Progress: a status line on a terminal, lines in logs, JSON events. */
struct progress {
	bool tty; /* stderr is a terminal: one line redrawn in place */
	bool json; /* --json: one JSON object a line on stderr */
	/* warnings come from the conversion threads too: one writer at a
	 * time on stderr and on this state */
	pthread_mutex_t lock;
	bool quiet; /* -q: only collect the layers */
	bool drawn; /* a status line is on the screen */
	double last; /* when it was drawn (throttle) */
	uint64_t shown; /* the unit it showed */
	double *start; /* each unit's start, by its index */
	uint64_t nstart;
	struct json_object *layers; /* for the --json summary */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double *unit_start(struct progress *pg, uint64_t index)
{
	if (index >= pg->nstart) {
		double *p = realloc(pg->start, (index + 1) * sizeof(*p));

		if (!p)
			return NULL;
		for (uint64_t i = pg->nstart; i <= index; i++)
			p[i] = now();
		pg->start = p;
		pg->nstart = index + 1;
	}
	return &pg->start[index];
}

static const char *const event_names[] = {
	[IMGFS_OCI_UNIT_CONVERTED] = "unit-converted",
	[IMGFS_OCI_UNIT_REUSED] = "unit-reused",
	[IMGFS_OCI_LAYER_KEPT] = "layer-kept",
	[IMGFS_OCI_UNIT_STARTED] = "unit-started",
	[IMGFS_OCI_UNIT_READ] = "unit-read",
	[IMGFS_OCI_UNIT_FAILED] = "unit-failed",
};

/* The layer a unit gave, for the --json summary's "layers". */
static struct json_object *layer_json(const struct imgfs_oci_progress *p)
{
	struct json_object *o = fe_rec_new();

	fe_rec_str(o, "diff_id", p->diff_id);
	fe_rec_str(o, "source", p->blob);
	if (p->digest)
		fe_rec_str(o, "digest", p->digest);
	if (p->dm_verity_root_hash) {
		fe_rec_str(o, "dm_verity_root_hash", p->dm_verity_root_hash);
		fe_rec_i64(o, "dm_verity_hash_offset",  (int64_t)p->dm_verity_hash_offset);
	}
	return o;
}

static void json_event(struct progress *pg, const struct imgfs_oci_progress *p,
		       double t)
{
	struct json_object *o;

	if (p->event == IMGFS_OCI_UNIT_READ) {
		if (t - pg->last < 1.0)
			return;
		pg->last = t;
	}
	o = layer_json(p);
	fe_rec_str(o, "event", event_names[p->event]);
	fe_rec_i64(o, "index", (int64_t)p->index);
	fe_rec_i64(o, "total", (int64_t)p->total);
	fe_rec_i64(o, "size", (int64_t)p->blob_size);
	if (p->event == IMGFS_OCI_UNIT_READ)
		fe_rec_i64(o, "bytes_read", (int64_t)p->bytes_read);
	if (p->msg)
		fe_rec_str(o, "message", p->msg);
	fprintf(stderr, "%s\n",
		json_object_to_json_string_ext(
			o, JSON_C_TO_STRING_PLAIN |
				   JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void clear_status(struct progress *pg)
{
	if (pg->drawn)
		fputs("\r\033[K", stderr);
	pg->drawn = false;
}

/* The status line on a terminal, at most ten times a second. */
static void draw_status(struct progress *pg, const struct imgfs_oci_progress *p,
			double t, double begun)
{
	double mb = (double)p->bytes_read / 1e6;

	/* a new unit shows at once, then ten times a second */
	if (t - pg->last < 0.1 && p->index == pg->shown)
		return;
	pg->last = t;
	pg->shown = p->index;
	fprintf(stderr,
		"\r\033[Kmkfs.img: unit %" PRIu64 " of %" PRIu64
		" %.19s...: %.1f of %.1f MB read, %.1f MB/s",
		p->index, p->total, p->diff_id, mb, (double)p->blob_size / 1e6,
		t > begun ? mb / (t - begun) : 0.0);
	pg->drawn = true;
}

static void show_warning(const char *msg, void *arg)
{
	struct progress *pg = arg;

	if (pg)
		pthread_mutex_lock(&pg->lock);
	if (pg)
		clear_status(pg); /* the warning on a line of its own */
	show_message("warning: ", msg);
	if (pg)
		pthread_mutex_unlock(&pg->lock);
}

static void show_progress_locked(const struct imgfs_oci_progress *p,
				 struct progress *pg);

static void show_progress(const struct imgfs_oci_progress *p, void *arg)
{
	struct progress *pg = arg;

	pthread_mutex_lock(&pg->lock);
	show_progress_locked(p, pg);
	pthread_mutex_unlock(&pg->lock);
}

static void show_progress_locked(const struct imgfs_oci_progress *p,
				 struct progress *pg)
{
	double t = now(), *begun = unit_start(pg, p->index);
	bool done = p->event == IMGFS_OCI_UNIT_CONVERTED ||
		    p->event == IMGFS_OCI_UNIT_REUSED;

	if (done && pg->layers)
		fe_rec_append(pg->layers, layer_json(p));
	if (p->event == IMGFS_OCI_UNIT_STARTED && begun)
		*begun = t;
	if (pg->quiet)
		return;
	if (pg->json) {
		json_event(pg, p, t);
		return;
	}
	if (p->event == IMGFS_OCI_UNIT_READ) {
		if (pg->tty)
			draw_status(pg, p, t, begun ? *begun : t);
		return;
	}
	clear_status(pg);
	if (p->event == IMGFS_OCI_UNIT_STARTED && !pg->tty)
		fprintf(stderr,
			"mkfs.img: converting %s (unit %" PRIu64 " of %" PRIu64
			", blob %s, %" PRIu64 " bytes)\n",
			p->diff_id, p->index, p->total, p->blob, p->blob_size);
	if (!done)
		return;
	fprintf(stderr, "mkfs.img: %s %s -> %s",
		p->event == IMGFS_OCI_UNIT_CONVERTED ? "converted" : "reused",
		p->diff_id, p->digest);
	if (p->event == IMGFS_OCI_UNIT_CONVERTED && begun)
		fprintf(stderr, " (unit %" PRIu64 " of %" PRIu64 ", %.1f s)",
			p->index, p->total, t - *begun);
	if (p->dm_verity_root_hash)
		fprintf(stderr, " dm-verity root hash %s",
			p->dm_verity_root_hash);
	fputc('\n', stderr);
}

static int print_unit(const struct imgfs_oci_unit *u, void *arg)
{
	(void)arg;
	printf("%s %s %s\n", u->diff_id, u->digest, u->media_type);
	return 0;
}

static void add_gc_json(struct json_object *o,
			const struct imgfs_oci_gc_stats *g);

static void print_json(const struct mkfs_args *m,
		       const struct imgfs_oci_stats *st,
		       const struct imgfs_oci_gc_stats *g,
		       struct json_object *layers)
{
	const struct mkfs_oci_args *a = &m->oci;
	struct json_object *o = fe_rec_new();
	char dig[72] = "";
	struct imgfs_error err;

	imgfs_oci_options_digest(&a->o, dig, &err);
	fe_rec_int(o, "schema_version", 1);
	fe_rec_str(o, "source", a->src);
	fe_rec_str(o, "destination", a->dst);
	fe_rec_str(o, "options_digest", dig);
	fe_rec_i64(o, "units", (int64_t)st->units);
	fe_rec_i64(o, "converted", (int64_t)st->converted);
	fe_rec_i64(o, "reused", (int64_t)st->reused);
	fe_rec_i64(o, "reused_not_verified", (int64_t)st->reused_unverified);
	fe_rec_i64(o, "verified", (int64_t)st->verified);
	fe_rec_i64(o, "kept_layers", (int64_t)st->kept_layers);
	fe_rec_i64(o, "manifests", (int64_t)st->manifests);
	fe_rec_i64(o, "indexes", (int64_t)st->indexes);
	fe_rec_i64(o, "copied_blobs", (int64_t)st->copied_blobs);
	fe_rec_i64(o, "bytes_in", (int64_t)st->bytes_in);
	fe_rec_i64(o, "bytes_out", (int64_t)st->bytes_out);
	fe_rec_i64(o, "failed", (int64_t)st->failed);
	fe_rec_i64(o, "images_failed", (int64_t)st->images_failed);
	if (layers)
		fe_rec_set(o, "layers", json_object_get(layers));
	if (g)
		add_gc_json(o, g);
	puts(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/* @s quoted for a POSIX shell (single quotes), malloc'd. */
static char *shell_quote(const char *s)
{
	size_t n = 3;
	char *q, *p;

	for (const char *c = s; *c; c++)
		n += *c == '\'' ? 4 : 1;
	q = p = malloc(n);
	if (!q)
		return NULL;
	*p++ = '\'';
	for (const char *c = s; *c; c++) {
		if (*c == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			*p++ = *c;
		}
	}
	*p++ = '\'';
	*p = '\0';
	return q;
}

/*
 * The commands that mount a merged image: a loop device for each layer
 * blob, then mount(8) with them as device= options. mount(8) of
 * util-linux 2.38 puts a regular file given as the image on a loop
 * device, and the kernel then refuses regular files as device=, so the
 * blobs get loop devices of their own. Each line is added to @cmds.
 */
static void mount_commands(const char *image, char **paths, unsigned int n,
			   struct json_object *cmds)
{
	char *line = NULL, *q;
	size_t len = 0;
	FILE *f;

	for (unsigned int i = 0; i < n; i++) {
		q = shell_quote(paths[i]);
		f = open_memstream(&line, &len);
		if (q && f)
			fprintf(f, "d%u=$(losetup -f --show -r %s)", i + 1, q);
		if (f)
			fclose(f);
		free(q);
		fe_rec_append(cmds,
				      json_str(line ? line : ""));
		free(line);
		line = NULL;
	}
	q = shell_quote(image);
	f = open_memstream(&line, &len);
	if (q && f) {
		fputs("mount -t erofs -o ro", f);
		for (unsigned int i = 0; i < n; i++)
			fprintf(f, ",device=$d%u", i + 1);
		fprintf(f, " %s DIR", q);
	}
	if (f)
		fclose(f);
	free(q);
	fe_rec_append(cmds, json_str(line ? line : ""));
	free(line);
}

/* --flatten and --merge: one image; --merge also lists its devices. */
static int one_image(const struct mkfs_args *m, struct imgfs_error *err)
{
	const struct mkfs_oci_args *a = &m->oci;
	struct imgfs_mkfs_stats st;
	struct json_object *o, *devs = NULL, *cmds = fe_rec_array();
	char **paths = NULL;
	unsigned int n = 0;
	int r = a->mode == MKFS_OCI_MERGE
			? imgfs_oci_merge(a->src, &a->o, a->dst, &paths, &n,
					  &st, err)
			: imgfs_oci_flatten(a->src, &a->o, a->dst, &st, err);

	if (r) {
		json_object_put(cmds);
		return r;
	}
	if (paths)
		mount_commands(a->dst, paths, n, cmds);
	if (m->json) {
		o = fe_rec_new();
		fe_rec_int(o, "schema_version", 1);
		fe_rec_str(o, "source", a->src);
		fe_rec_str(o, "image", a->dst);
		fe_rec_i64(o, "inodes", (int64_t)st.inodes);
		fe_rec_i64(o, "image_bytes", (int64_t)st.image_bytes);
		if (paths) {
			devs = fe_rec_array();
			for (unsigned int i = 0; i < n; i++)
				fe_rec_append(devs, json_str(paths[i]));
			fe_rec_set(o, "devices", devs);
			fe_rec_set(o, "mount_commands", json_object_get(cmds));
		}
		puts(json_object_to_json_string_ext(
			o, JSON_C_TO_STRING_PRETTY |
				   JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else if (!m->quiet) {
		fprintf(stderr,
			"mkfs.img: %s: %" PRIu64 " inodes, %" PRIu64 " bytes\n",
			a->dst, st.inodes, st.image_bytes);
		if (paths) {
			fputs("mkfs.img: mount it on DIR with a loop device per layer blob, bottom first (losetup -d them after umount):\n",
			      stderr);
			for (size_t i = 0; i < json_object_array_length(cmds);
			     i++)
				fprintf(stderr, "  %s\n",
					json_object_get_string(
						json_object_array_get_idx(cmds,
									  i)));
		}
	}
	for (unsigned int i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
	json_object_put(cmds);
	return 0;
}

static void print_summary(const struct mkfs_args *m,
			  const struct imgfs_oci_stats *st)
{
	const struct mkfs_oci_args *a = &m->oci;
	const char *how = a->o.no_verify
				  ? "not verified (--no-verify)"
				  : "each checked and compared with its source";

	fprintf(stderr,
		"mkfs.img: %" PRIu64 " layers: %" PRIu64
		" converted (%s), %" PRIu64 " reused (%s); %" PRIu64
		" manifests and %" PRIu64 " indexes written, %" PRIu64
		" blobs passed through\n",
		st->units, st->converted, how, st->reused,
		st->reused_unverified ? "not verified (--trust-records)" : how,
		st->manifests, st->indexes, st->copied_blobs);
}

static void add_gc_json(struct json_object *o,
			const struct imgfs_oci_gc_stats *g)
{
	struct json_object *j = fe_rec_new();

	fe_rec_i64(j, "blobs_kept", (int64_t)g->blobs_kept);
	fe_rec_i64(j, "blobs_removed", (int64_t)g->blobs_removed);
	fe_rec_i64(j, "bytes_removed", (int64_t)g->bytes_removed);
	fe_rec_i64(j, "records_removed", (int64_t)g->records_removed);
	fe_rec_set(o, "gc", j);
}

/* --gc: after the run (if any), what DST/index.json does not reach. */
static int run_gc(const struct mkfs_args *m, struct imgfs_oci_gc_stats *g)
{
	const struct mkfs_oci_args *a = &m->oci;
	struct imgfs_error err;

	if (imgfs_oci_gc(a->dst, g, &err)) {
		show_message("--gc: ", err.msg);
		return 1;
	}
	if (!m->quiet && !m->json)
		fprintf(stderr,
			"mkfs.img: %s: %" PRIu64 " blobs removed (%" PRIu64
			" bytes), %" PRIu64 " unit records removed, %" PRIu64
			" blobs kept\n",
			a->dst, g->blobs_removed, g->bytes_removed,
			g->records_removed, g->blobs_kept);
	return 0;
}

int mkfs_oci_run(struct mkfs_args *m)
{
	struct imgfs_oci_stats st;
	struct imgfs_oci_gc_stats g;
	struct progress pg;
	struct imgfs_error err;
	struct mkfs_oci_args *a = &m->oci;
	int r;

	memset(&pg, 0, sizeof(pg));
	pthread_mutex_init(&pg.lock, NULL);
	pg.tty = isatty(STDERR_FILENO);
	pg.json = m->json;
	if (m->json)
		pg.layers = fe_rec_array();
	if (!m->quiet) {
		a->o.warn = show_warning;
		a->o.warn_arg = &pg;
		a->o.progress = show_progress;
		a->o.progress_arg = &pg;
	} else if (m->json) {
		a->o.progress = show_progress; /* for the summary's layers */
		a->o.progress_arg = &pg;
		pg.quiet = true;
	}
	imgfs_error_clear(&err);
	memset(&st, 0, sizeof(st));
	memset(&g, 0, sizeof(g));
	if (a->gc && !a->src) {
		r = run_gc(m, &g);
		if (!r && m->json) {
			struct json_object *o = fe_rec_new();

			fe_rec_int(o, "schema_version", 1);
			fe_rec_str(o, "destination", a->dst);
			add_gc_json(o, &g);
			puts(json_object_to_json_string_ext(
				o, JSON_C_TO_STRING_PRETTY |
					   JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(o);
		}
		return r;
	}
	switch (a->mode) {
	case MKFS_OCI_LIST:
		r = imgfs_oci_list_units(a->src, &a->o, print_unit, NULL, &err);
		break;
	case MKFS_OCI_SHARD:
		r = imgfs_oci_convert_units(a->src, a->dst, &a->o, &st, &err);
		break;
	case MKFS_OCI_ASSEMBLE:
		r = imgfs_oci_assemble(a->src, a->dst, &a->o, &st, &err);
		break;
	case MKFS_OCI_FLATTEN:
	case MKFS_OCI_MERGE:
		r = one_image(m, &err);
		break;
	default:
		r = imgfs_oci_convert(a->src, a->dst, &a->o, &st, &err);
		break;
	}
	clear_status(&pg);
	if (r) {
		show_message("", err.msg);
		if (m->json && st.failed)
			print_json(m, &st, NULL, pg.layers); /* --keep-going */
	} else if (a->mode != MKFS_OCI_LIST && a->mode != MKFS_OCI_FLATTEN &&
		   a->mode != MKFS_OCI_MERGE) {
		if (!m->json && !m->quiet)
			print_summary(m, &st);
		if (a->gc && run_gc(m, &g))
			r = 1;
		else if (m->json)
			print_json(m, &st, a->gc ? &g : NULL, pg.layers);
	}
	json_object_put(pg.layers);
	free(pg.start);
	pthread_mutex_destroy(&pg.lock);
	return r ? 1 : 0;
}
