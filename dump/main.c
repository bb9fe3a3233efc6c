// SPDX-License-Identifier: MIT
/*
 * dump.img - show what is inside an EROFS image without mounting it.
 *
 * All option parsing lives here; the views (super.c, inode.c, ls.c,
 * stats.c) only print. Exit status: 0 success, 1 the image could not be
 * read or the path was not found, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json_object.h>

#include "frontend/error.h"
#include "frontend/escape.h"
#include "frontend/usage.h"
#include "imgfs/stats.h"
#include "imgfs/version.h"
#include "dump.h"
#include "frontend/number.h"

#define EXIT_USAGE 2

struct options {
	const char *image;
	bool superblock;
	bool stats;
	bool ls;
	bool cat;
	bool recursive;
	bool json;
	const char *path; /* target given by path */
	bool has_nid;
	uint64_t nid; /* target given by nid */
	unsigned int targets; /* how many targets were given */
};

enum {
	OPT_PATH = 256,
	OPT_NID,
	OPT_LS,
	OPT_CAT,
	OPT_JSON,
};

static const struct option long_opts[] = {
	{ "superblock", no_argument, NULL, 's' },
	{ "stats", no_argument, NULL, 'S' },
	{ "path", required_argument, NULL, OPT_PATH },
	{ "nid", required_argument, NULL, OPT_NID },
	{ "ls", optional_argument, NULL, OPT_LS },
	{ "cat", optional_argument, NULL, OPT_CAT },
	{ "recursive", no_argument, NULL, 'R' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fputs("usage: dump.img [OPTIONS] IMAGE\n"
	      "Show what is inside an EROFS image, without mounting it.\n"
	      "\n"
	      "Views (the superblock when none is given):\n"
	      "  -s, --superblock   the superblock\n"
	      "  --path=PATH        one inode, by path\n"
	      "  --nid=NID          one inode, by node number\n"
	      "  --ls[=PATH]        list a directory like ls -l (default /,\n"
	      "                     or the --path/--nid target)\n"
	      "  -R, --recursive    with --ls: list subdirectories too\n"
	      "  --cat[=PATH]       write a regular file's contents to stdout\n"
	      "                     (symlinks followed, inside the image)\n"
	      "  -S, --stats        statistics over the whole tree\n"
	      "Output:\n"
	      "  --json             one JSON document (see dump.img(1))\n"
	      "  -h, --help         show this help\n"
	      "  -V, --version      show the version\n"
	      "\n"
	      "Exit status:\n"
	      "  0  success\n"
	      "  1  the image could not be read, or the path was not found\n"
	      "  2  usage error\n",
	      f);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fe_usage_vmsg("dump.img", fmt, ap);
	va_end(ap);
	fe_usage_hint("dump.img", "usage: dump.img [OPTIONS] IMAGE\n");
	exit(EXIT_USAGE);
}

static uint64_t parse_nid(const char *s)
{
	uint64_t v;

	if (fe_parse_uint(s, 0, 0, UINT64_MAX, &v))
		usage_error("invalid nid '%s'", s);
	return v;
}

static void set_path(struct options *o, const char *path)
{
	o->path = path;
	o->targets++;
}

static void parse_args(int argc, char **argv, struct options *o)
{
	int c;

	opterr = 0; /* our messages name the program the same way */
	while ((c = getopt_long(argc, argv, ":sSRhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->superblock = true;
			break;
		case 'S':
			o->stats = true;
			break;
		case 'R':
			o->recursive = true;
			break;
		case OPT_PATH:
			set_path(o, optarg);
			break;
		case OPT_NID:
			o->nid = parse_nid(optarg);
			o->has_nid = true;
			o->targets++;
			break;
		case OPT_LS:
			o->ls = true;
			if (optarg)
				set_path(o, optarg);
			break;
		case OPT_CAT:
			o->cat = true;
			if (optarg)
				set_path(o, optarg);
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("dump.img (imgfs) %s\n", imgfs_version());
			exit(0);
		case ':':
			usage_error("option '%s' needs an argument",
				    argv[optind - 1]);
		default:
			if (optopt)
				usage_error("unknown option '-%c'", optopt);
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		usage_error("%s", optind >= argc ? "no IMAGE given" :
						   "only one IMAGE expected");
	o->image = argv[optind];
	if (o->targets > 1)
		usage_error("%s", "give one target: a path or a nid");
	if (o->ls && o->cat)
		usage_error("%s", "--ls and --cat do not go together");
	if (o->cat && (o->superblock || o->stats))
		usage_error("%s", "--cat goes alone");
	if (o->cat && !o->targets)
		usage_error("%s", "--cat needs a file: --cat=PATH");
	if (o->recursive && !o->ls)
		usage_error("%s", "-R goes with --ls");
}

/* Resolve the target to a nid (the root when none is given). */
static int resolve(struct dump_ctx *ctx, const struct options *o,
		   struct dump_target *t)
{
	int ret;

	t->path = o->path;
	if (o->has_nid) {
		t->nid = o->nid;
		return 0;
	}
	if (!o->path) {
		t->nid = ctx->sb->root_nid;
		t->path = "/";
		return 0;
	}
	/* --cat reads what the path names, as cat(1) does: symlinks are
	 * followed, inside the image */
	if (o->cat)
		ret = imgfs_resolve(ctx->img, o->path, true, &t->nid,
				    &ctx->err);
	else
		ret = imgfs_lookup(ctx->img, o->path, &t->nid, &ctx->err);
	if (ret == -ENOENT || ret == -ENOTDIR || ret == -ELOOP) {
		imgfs_error_clear(&ctx->err);
		return fe_error_set(&ctx->err, ret, "%s: %s", o->path,
				       strerror(-ret));
	}
	return ret;
}

static void warn_sb(const struct dump_ctx *ctx)
{
	const struct imgfs_sb_info *sb = ctx->sb;

	if (!sb->checksum_ok)
		fprintf(stderr, "%s: warning: superblock checksum mismatch "
				"(stored 0x%08x, computed 0x%08x)\n",
			ctx->prog, sb->checksum, sb->checksum_calc);
	if (sb->unknown_incompat)
		fprintf(stderr, "%s: warning: unknown incompatible features "
				"0x%x\n", ctx->prog, sb->unknown_incompat);
}

/* Run the views asked for, in a fixed order. */
static int run_views(struct dump_ctx *ctx, const struct options *o)
{
	bool inode = o->targets && !o->ls && !o->cat;
	bool sb = o->superblock || (!inode && !o->ls && !o->cat && !o->stats);
	bool sep = false;
	struct dump_target t;
	int ret;

	ret = resolve(ctx, o, &t);
	if (ret)
		return ret;
	if (o->cat)
		return dump_cat(ctx, &t);
	if (sb) {
		ret = dump_superblock(ctx);
		sep = true;
	}
	if (!ret && inode) {
		if (sep && !ctx->json)
			fputc('\n', ctx->out);
		ret = dump_inode(ctx, &t);
		sep = true;
	}
	if (!ret && o->ls) {
		if (sep && !ctx->json)
			fputc('\n', ctx->out);
		ret = dump_ls(ctx, &t, o->recursive);
		sep = true;
	}
	if (!ret && o->stats) {
		if (sep && !ctx->json)
			fputc('\n', ctx->out);
		ret = dump_stats(ctx);
	}
	return ret;
}

static int run(struct dump_ctx *ctx, const struct options *o)
{
	int ret;

	if (ctx->json) {
		json_init(&ctx->j, ctx->out);
		json_obj_open(&ctx->j, NULL);
		json_put(&ctx->j, "schema_version", fe_json_checked(
			json_object_new_int(DUMP_SCHEMA_VERSION)));
	}
	ret = run_views(ctx, o);
	if (ctx->json) {
		json_obj_close(&ctx->j);
		json_finish(&ctx->j);
	}
	return ret;
}

/* Messages name entries of the image: never print their bytes raw. */
static void print_error(const char *prog, const char *image, const char *msg)
{
	fprintf(stderr, "%s: ", prog);
	if (image) {
		fe_escape_fputs(stderr, image, 0);
		fputs(": ", stderr);
	}
	fe_escape_fputs(stderr, msg, 0);
	fputc('\n', stderr);
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct dump_ctx ctx = { .prog = "dump.img", .out = stdout };
	int ret;

	fe_json_on_oom("dump.img", 1);
	parse_args(argc, argv, &o);
	ctx.json = o.json;
	imgfs_error_clear(&ctx.err);
	ret = imgfs_image_open(o.image, IMGFS_OPEN_IGNORE_CHECKSUM |
					       IMGFS_OPEN_IGNORE_FEATURES,
			       &ctx.img, &ctx.err);
	if (ret) {
		/* the reader's message may already name the file */
		if (!strncmp(ctx.err.msg, o.image, strlen(o.image)))
			print_error(ctx.prog, NULL, ctx.err.msg);
		else
			print_error(ctx.prog, o.image,
				    ctx.err.msg[0] ? ctx.err.msg
						   : strerror(-ret));
		return 1;
	}
	ctx.sb = imgfs_image_sb(ctx.img);
	warn_sb(&ctx);
	ret = run(&ctx, &o);
	if (fflush(stdout) && !ret)
		ret = fe_error_set(&ctx.err, -EIO,
				      "writing to standard output failed");
	if (ret)
		print_error(ctx.prog, o.image,
			    ctx.err.msg[0] ? ctx.err.msg : strerror(-ret));
	imgfs_image_close(ctx.img);
	return ret ? 1 : 0;
}
