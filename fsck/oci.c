// SPDX-License-Identifier: MIT
/*
 * fsck.img --oci=DIR: check an OCI image layout (imgfs_oci_check(),
 * imgfs/oci.h), optionally against the layout it was converted from.
 * Its own command line: the image options do not apply to a layout.
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json_object.h>

#include "frontend/number.h"
#include "fsck.h"
#include "frontend/escape.h"
#include "frontend/json_rec.h"
#include "frontend/usage.h"
#include "imgfs/oci.h"

/* 1: the first form (docs in man/fsck.img.1, "OCI IMAGE LAYOUTS"). */
#define OCI_SCHEMA_VERSION 1

struct oci_out {
	bool json, quiet, verbose;
	struct json_object *problems; /* --json */
	struct json_object *blobs;
};

enum { OPT_OCI = 256, OPT_COMPARE, OPT_JSON, OPT_MAX_DIFFERENCES };

static const struct option oci_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "oci", required_argument, NULL, OPT_OCI },
	{ "compare", required_argument, NULL, OPT_COMPARE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "max-differences", required_argument, NULL, OPT_MAX_DIFFERENCES },
	{ NULL, 0, NULL, 0 },
};

bool fsck_oci_requested(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "--oci") || !strncmp(argv[i], "--oci=", 6))
			return true;
	}
	return false;
}

static void oci_usage(FILE *f)
{
	fprintf(f,
		"usage: fsck.img --oci=DIR [--compare=SRC_LAYOUT] [--json] [-q|-v]\n"
		"Check an OCI image layout: every blob its index.json leads to\n"
		"(nested indexes, manifests, configs, layers) against the digest\n"
		"and size of each descriptor naming it, the configs' diff_ids,\n"
		"\"erofs\" in os.features, and every EROFS layer with the image\n"
		"checker.\n\n"
		"      --oci=DIR        the layout to check\n"
		"      --compare=SRC_LAYOUT  compare each EROFS layer with the source\n"
		"                       layer its org.imgfs.source.digest annotation\n"
		"                       names in SRC_LAYOUT (the layout it was\n"
		"                       converted from with mkfs.img --oci)\n"
		"      --max-differences=N  report at most N differences per layer\n"
		"                       (default 20, 0: all; all are counted)\n"
		"      --json           print a JSON report on standard output\n"
		"  -q, --quiet          print only errors\n"
		"  -v, --verbose        list every blob checked\n"
		"  -h, --help           show this help\n\n"
		"Exit status: 0 no errors, 4 errors found, 8 operational error,\n"
		"16 usage error. The summary goes to standard error.\n");
}

static int __attribute__((format(printf, 1, 2)))
oci_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fe_usage_vmsg("fsck.img", fmt, ap);
	va_end(ap);
	fe_usage_hint("fsck.img", "usage: fsck.img --oci=DIR "
			"[--compare=SRC_LAYOUT] [--json] [-q|-v]\n");
	return FSCK_EXIT_USAGE;
}

static void finding_cb(void *arg, const struct imgfs_oci_finding *f)
{
	struct oci_out *out = arg;
	const char *sev = imgfs_check_severity_name(f->severity);

	if (out->json) {
		struct json_object *rec = fe_json_checked(json_object_new_object());

		fe_rec_set(rec, "severity", fe_json_checked(json_object_new_string(sev)));
		fe_rec_str(rec, "blob", f->blob);
		fe_rec_str(rec, "media_type", f->media_type);
		fe_rec_str(rec, "where", f->where);
		fe_rec_str(rec, "message", f->msg);
		if (json_object_array_add(out->problems, rec))
			fe_json_oom();
		return;
	}
	if (out->quiet && f->severity != IMGFS_CHECK_ERROR)
		return;
	printf("%s: ", sev);
	/* messages quote names and annotations from the layout */
	fe_escape_fputs(stdout, f->msg, 0);
	if (f->where && !strstr(f->msg, f->where)) {
		fputs(" (in ", stdout);
		fe_escape_fputs(stdout, f->where, 0);
		putchar(')');
	}
	putchar('\n');
}

/* A layer's image check: its counts, errors and warnings. */
static struct json_object *json_check(const struct imgfs_check_result *r)
{
	struct json_object *o = fsck_json_check_stats(r);

	fe_rec_u64(o, "errors", r->errors);
	fe_rec_u64(o, "warnings", r->warnings);
	return o;
}

static void blob_cb(void *arg, const struct imgfs_oci_blob_result *b)
{
	struct oci_out *out = arg;
	struct json_object *rec, *cmp;

	if (!out->json) {
		if (!out->verbose)
			return;
		printf("%s %s %s %" PRIu64 " bytes: %s", b->digest,
		       imgfs_oci_blob_role_name(b->role),
		       b->media_type ? b->media_type : "(no media type)",
		       b->size, b->errors ? "errors" : "ok");
		if (b->erofs)
			printf(", EROFS: %" PRIu64 " inodes", b->check.inodes);
		if (b->dm_verity)
			printf(", dm-verity tree %s",
			       b->dm_verity_ok ? "verified" : "wrong");
		if (b->compared)
			printf(", %" PRIu64 " differences from %s",
			       b->compare.differences, b->source);
		putchar('\n');
		return;
	}
	rec = fe_json_checked(json_object_new_object());
	fe_rec_str(rec, "digest", b->digest);
	fe_rec_str(rec, "media_type", b->media_type);
	fe_rec_set(rec, "role",
	    fe_json_checked(json_object_new_string(imgfs_oci_blob_role_name(b->role))));
	fe_rec_u64(rec, "size", b->size);
	fe_rec_str(rec, "referenced_by", b->where);
	fe_rec_set(rec, "present", fe_json_checked(json_object_new_boolean(b->present)));
	fe_rec_set(rec, "verified", fe_json_checked(json_object_new_boolean(b->verified)));
	fe_rec_str(rec, "diff_id", b->diff_id);
	if (b->erofs)
		fe_rec_set(rec, "check", json_check(&b->check));
	else
		fe_rec_null(rec, "check");
	if (b->dm_verity)
		fe_rec_set(rec, "dm_verity_verified",
		    fe_json_checked(json_object_new_boolean(b->dm_verity_ok)));
	else
		fe_rec_null(rec, "dm_verity_verified");
	if (b->compared) {
		cmp = fe_json_checked(json_object_new_object());
		fe_rec_str(cmp, "source", b->source);
		fe_rec_u64(cmp, "differences", b->compare.differences);
		fe_rec_u64(cmp, "archive_entries", b->compare.archive_entries);
		fe_rec_u64(cmp, "image_entries", b->compare.image_entries);
		fe_rec_set(rec, "compare", cmp);
	} else {
		fe_rec_null(rec, "compare");
	}
	fe_rec_u64(rec, "errors", b->errors);
	fe_rec_u64(rec, "warnings", b->warnings);
	if (json_object_array_add(out->blobs, rec))
		fe_json_oom();
}

static void print_json(struct oci_out *out, const char *dir, const char *src,
		       const struct imgfs_oci_check_result *r,
		       const char *fatal, int code)
{
	struct json_object *doc = fe_json_checked(json_object_new_object());
	struct json_object *st = fe_json_checked(json_object_new_object());
	const char *text;

	fe_rec_u64(doc, "schema_version", OCI_SCHEMA_VERSION);
	fe_rec_str(doc, "layout", dir);
	fe_rec_str(doc, "compare_source", src);
	fe_rec_u64(doc, "errors", r->errors);
	fe_rec_u64(doc, "warnings", r->warnings);
	fe_rec_u64(st, "blobs", r->blobs);
	fe_rec_u64(st, "indexes", r->indexes);
	fe_rec_u64(st, "manifests", r->manifests);
	fe_rec_u64(st, "configs", r->configs);
	fe_rec_u64(st, "layers", r->layers);
	fe_rec_u64(st, "erofs_layers", r->erofs_layers);
	fe_rec_u64(st, "compared_layers", r->compared_layers);
	fe_rec_u64(st, "differences", r->differences);
	fe_rec_u64(st, "bytes_read", r->bytes);
	fe_rec_set(doc, "stats", st);
	fe_rec_set(doc, "problems", out->problems);
	fe_rec_set(doc, "blobs", out->blobs);
	fe_rec_str(doc, "fatal", fatal);
	fe_rec_set(doc, "exit_code", fe_json_checked(json_object_new_int(code)));
	text = json_object_to_json_string_ext(
		doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			     JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text)
		fe_json_oom();
	puts(text);
	json_object_put(doc);
}

static void print_summary(const char *dir, const char *src,
			  const struct imgfs_oci_check_result *r)
{
	fe_escape_fputs(stderr, dir, 0);
	fprintf(stderr,
		": %" PRIu64 " blobs (%" PRIu64 " indexes, %" PRIu64
		" manifests, %" PRIu64 " configs, %" PRIu64 " layers, %" PRIu64
		" EROFS layers checked)",
		r->blobs, r->indexes, r->manifests, r->configs, r->layers,
		r->erofs_layers);
	if (src) {
		fprintf(stderr, ", %" PRIu64 " layers compared with ",
			r->compared_layers);
		fe_escape_fputs(stderr, src, 0);
		fprintf(stderr, " (%" PRIu64 " differences)", r->differences);
	}
	fprintf(stderr,
		", %" PRIu64 " bytes read; %" PRIu64 " errors, %" PRIu64
		" warnings\n",
		r->bytes, r->errors, r->warnings);
}

int fsck_oci_main(int argc, char **argv)
{
	struct imgfs_oci_check_options o;
	struct imgfs_oci_check_result r = { 0 };
	struct imgfs_error err = { 0 };
	struct oci_out out = { 0 };
	const char *dir = NULL;
	uint64_t ul;
	int c, ret, code;

	imgfs_oci_check_options_init(&o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hqv", oci_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			oci_usage(stdout);
			return FSCK_EXIT_OK;
		case 'q':
			out.quiet = true;
			break;
		case 'v':
			out.verbose = true;
			break;
		case OPT_OCI:
			if (dir)
				return oci_usage_error("--oci given twice");
			dir = optarg;
			break;
		case OPT_COMPARE:
			o.compare_src = optarg;
			break;
		case OPT_JSON:
			out.json = true;
			break;
		case OPT_MAX_DIFFERENCES:
			if (fe_parse_uint(optarg, 10, 0, UINT_MAX, &ul))
				return oci_usage_error(
					"invalid value for --max-differences: '%s' (a count, 0 for all)",
					optarg);
			o.max_differences = (unsigned int)ul;
			break;
		case ':':
			return oci_usage_error("option '%s' needs an argument",
					       argv[optind - 1]);
		default:
			if (optopt)
				return oci_usage_error(
					"option '-%c' does not apply to --oci",
					optopt);
			return oci_usage_error(
				"option '%s' does not apply to --oci",
				argv[optind - 1]);
		}
	}
	if (optind < argc)
		return oci_usage_error("--oci=DIR takes no IMAGE, got '%s'",
				       argv[optind]);
	if (!dir || !*dir)
		return oci_usage_error("--oci needs a layout directory");
	if (out.quiet && out.verbose)
		return oci_usage_error("give -q or -v, not both");
	if (out.json) {
		out.problems = fe_json_checked(json_object_new_array());
		out.blobs = fe_json_checked(json_object_new_array());
	}
	o.report = finding_cb;
	o.report_arg = &out;
	o.blob = blob_cb;
	o.blob_arg = &out;
	ret = imgfs_oci_check(dir, &o, &r, &err);
	if (ret < 0)
		code = FSCK_EXIT_OPERATIONAL;
	else if (r.errors)
		code = FSCK_EXIT_ERRORS;
	else
		code = FSCK_EXIT_OK;
	if (ret < 0) {
		fputs("fsck.img: ", stderr);
		fe_escape_fputs(stderr, err.code ? err.msg : strerror(-ret),
				   0);
		fputc('\n', stderr);
	}
	if (out.json)
		print_json(&out, dir, o.compare_src, &r,
			   ret < 0 ? (err.code ? err.msg : strerror(-ret))
				   : NULL,
			   code);
	if (ret >= 0 && (!out.quiet || r.errors))
		print_summary(dir, o.compare_src, &r);
	return code;
}
