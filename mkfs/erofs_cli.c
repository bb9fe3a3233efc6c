// SPDX-License-Identifier: MIT
/*
 * mkfs.erofs's command line (erofs-utils 1.9), taken when mkfs.img is
 * invoked under that name: "mkfs.erofs [OPTIONS] IMAGE [SOURCE]", for
 * callers that run mkfs.erofs by name (containerd's EROFS differ,
 * snapshotter and converter). Every option means what it means there and
 * fills the same struct imgfs_mkfs_options as the native command line; an
 * option with no counterpart here is refused by name, never ignored.
 * man/mkfs.img.1 (DROP-IN MODE) lists what still differs.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <uuid/uuid.h>

#include "frontend/number.h"
#include "frontend/usage.h"
#include "mkfs.h"

enum {
	OPT_TAR = 256,
	OPT_AUFS,
	OPT_QUIET,
	OPT_MKFS_TIME,
	OPT_ALL_TIME,
	OPT_ALL_ROOT,
	OPT_FORCE_UID,
	OPT_FORCE_GID,
	OPT_UID_OFF,
	OPT_GID_OFF,
	OPT_SORT,
	OPT_DECOMPRESS,
	OPT_WORKERS,
	/* mkfs.erofs options with no counterpart: refused by name */
	OPT_UNSUPPORTED,
};

static const struct option long_opts[] = {
	{ "tar", optional_argument, NULL, OPT_TAR },
	{ "aufs", no_argument, NULL, OPT_AUFS },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "mkfs-time", no_argument, NULL, OPT_MKFS_TIME },
	{ "all-time", no_argument, NULL, OPT_ALL_TIME },
	{ "all-root", no_argument, NULL, OPT_ALL_ROOT },
	{ "force-uid", required_argument, NULL, OPT_FORCE_UID },
	{ "force-gid", required_argument, NULL, OPT_FORCE_GID },
	{ "uid-offset", required_argument, NULL, OPT_UID_OFF },
	{ "gid-offset", required_argument, NULL, OPT_GID_OFF },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "gzip", no_argument, NULL, OPT_DECOMPRESS },
	{ "ungzip", optional_argument, NULL, OPT_DECOMPRESS },
	{ "unxz", optional_argument, NULL, OPT_DECOMPRESS },
	{ "unlzma", optional_argument, NULL, OPT_DECOMPRESS },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	/* optional arguments: the refusal comes before any argument check */
	{ "exclude-path", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "exclude-regex", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "file-contexts", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "max-extent-bytes", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "compress-hints", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "chunksize", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "blobdev", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "ignore-mtime", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "preserve-mtime", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "mount-point", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "product-out", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "fs-config-file", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "ovlfs-strip", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "offset", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "gzinfo", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "zfeature-bits", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "clean", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "incremental", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "root-xattr-isize", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "hard-dereference", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "dsunit", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "async-queue-limit", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "fsalignblks", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "vmdk-desc", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "s3", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "oci", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "zD", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "MZ", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "xattr-prefix", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "xattr-inode-digest", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "random-pclusterblks", optional_argument, NULL, OPT_UNSUPPORTED },
	{ "random-algorithms", optional_argument, NULL, OPT_UNSUPPORTED },
	{ NULL, 0, NULL, 0 },
};

/* mkfs.erofs's -T, --mkfs-time and --all-time: the last one given wins */
enum time_mode { TIME_UNSET, TIME_BUILD_ONLY, TIME_ALL };

struct cli_state {
	bool tar;
	bool aufs;
	bool have_time;
	enum time_mode time_mode;
	bool inline_given; /* -Einline_data or -Enoinline_data */
};

static void usage(void)
{
	printf("Usage: mkfs.erofs [OPTIONS] IMAGE [SOURCE]\n"
	       "Build the EROFS image IMAGE from the directory SOURCE, or with --tar from\n"
	       "the tar stream SOURCE (standard input when SOURCE is absent or '-').\n"
	       "This is imgfs's mkfs.img taking mkfs.erofs's command line: see mkfs.img(1),\n"
	       "DROP-IN MODE.\n\n"
	       " -b#                   block size: 512, 1024, 2048 or 4096 (default 4096)\n"
	       " -C#                   largest physical cluster of compressed data, in bytes\n"
	       " -d#                   verbosity 0-9 (0: as --quiet)\n"
	       " -EX[,...]             extended options: [^]inline_data, noinline_data,\n"
	       "                       [^]ztailpacking, [^]fragments, ^dedupe\n"
	       " -L LABEL              volume label (at most 15 bytes)\n"
	       " -T#                   build time, and every file's mtime unless --mkfs-time\n"
	       "    --all-time         the -T time is every file's mtime (the default)\n"
	       "    --mkfs-time        the -T time is the build time only\n"
	       " -U UUID|clear|random  volume UUID\n"
	       " -x#                   share an xattr used by more than # inodes (default 2)\n"
	       " -zX[,level=Y][,dictsize=Z]  compress with X: lz4, lz4hc, lzma, deflate,\n"
	       "                       libdeflate or zstd (also -zX,Y)\n"
	       " --all-root            make every file owned by 0:0\n"
	       " --aufs                turn OCI/aufs whiteouts (.wh.*) into overlayfs ones\n"
	       " --force-uid=#         set every uid to #\n"
	       " --force-gid=#         set every gid to #\n"
	       " --uid-offset=#        add # to every uid\n"
	       " --gid-offset=#        add # to every gid\n"
	       " --quiet               print nothing but errors\n"
	       " --sort=<path,none>    data order for tar input (accepted: data follows the tar)\n"
	       " --tar=X               build from a tar stream (X = f: full image; i: index\n"
	       "                       only, the caller appends the tar)\n"
	       " --ungzip, --unxz      accepted: compressed input is detected anyway\n"
	       " --workers=#           compression threads (default: online CPUs)\n"
	       " -h, --help            this help\n"
	       " -V, --version         version\n"
	       "Environment: SOURCE_DATE_EPOCH is the build time, and no mtime is later.\n");
}

static int cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs(MKFS_EROFS_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* mkfs.erofs's sizes: C base prefixes, an optional k, m or g suffix. */
static int parse_size(const char *s, int64_t min, int64_t max, int64_t *out)
{
	uint64_t v;

	if (fe_parse_size(s, 0, "kKmMgG", (uint64_t)min, (uint64_t)max, &v))
		return -1;
	*out = (int64_t)v;
	return 0;
}

/* Plain numbers (ids, times, counts): C base prefixes, no suffix. */
static int parse_num(const char *s, int64_t min, int64_t max, int64_t *out)
{
	return fe_parse_int(s, 0, min, max, out);
}

/* One -z option of the form "X,level=Y,dictsize=Z" (after X). */
static int parse_compress_params(char *p, struct imgfs_mkfs_options *o,
				 const char *arg)
{
	int64_t v;

	for (char *opt = p, *next; opt; opt = next) {
		next = strchr(opt, ',');
		if (next)
			*next++ = '\0';
		if (!strncmp(opt, "level=", 6)) {
			if (parse_num(opt + 6, 0, 255, &v))
				return cli_error("invalid compression level in -z %s",
						 arg);
			o->compress_level = (int)v;
		} else if (!strncmp(opt, "dictsize=", 9)) {
			if (parse_size(opt + 9, 1, UINT32_MAX, &v))
				return cli_error("invalid dictionary size in -z %s",
						 arg);
			o->compress_dictsize = (uint32_t)v;
		} else {
			return cli_error("-z %s: compressor option '%s' is not supported",
					 arg, opt);
		}
	}
	return 0;
}

/* "-z X[,LEVEL]" or "-z X[,level=Y][,dictsize=Z]" */
static int parse_compress(const char *arg, struct imgfs_mkfs_options *o)
{
	char buf[128], *p;
	int64_t v;

	if (strlen(arg) >= sizeof(buf))
		return cli_error("invalid -z %s", arg);
	if (strchr(arg, ':'))
		return cli_error("-z %s: alternative compressors (':') are not supported; give one",
				 arg);
	strcpy(buf, arg);
	p = strchr(buf, ',');
	if (p)
		*p++ = '\0';
	/* libdeflate: another encoder of the same format */
	if (imgfs_compress_kind_parse(strcmp(buf, "libdeflate") ? buf :
								  "deflate",
				      &o->compress))
		return cli_error("-z %s: unknown compressor '%s'", arg, buf);
	o->compress_level = -1;
	o->compress_dictsize = 0;
	if (!p)
		return 0;
	/* the older "X,LEVEL" form */
	if (*p >= '0' && *p <= '9') {
		if (parse_num(p, 0, 255, &v))
			return cli_error("invalid compression level in -z %s",
					 arg);
		o->compress_level = (int)v;
		return 0;
	}
	return parse_compress_params(p, o, arg);
}

/* One -E option: NAME, ^NAME (cleared) or NAME=VALUE. */
static int parse_extended_one(const char *tok, size_t len,
			      struct imgfs_mkfs_options *o,
			      struct cli_state *st)
{
	const char *eq = memchr(tok, '=', len);
	size_t klen = eq ? (size_t)(eq - tok) : len;
	bool clear = tok[0] == '^';
	const char *key = tok + clear;

	klen -= clear;
	if (!klen)
		return cli_error("invalid extended option '%.*s'", (int)len,
				 tok);
#define IS(name) (klen == strlen(name) && !memcmp(key, name, klen))
	if (eq && (IS("noinline_data") || IS("inline_data") ||
		   IS("ztailpacking") || IS("dedupe")))
		return cli_error("extended option '%.*s' takes no value",
				 (int)len, tok);
	if (IS("noinline_data") && !clear) {
		o->inline_data = false;
		st->inline_given = true;
	} else if (IS("inline_data")) {
		o->inline_data = !clear;
		st->inline_given = true;
	} else if (IS("ztailpacking")) {
		o->ztailpacking = !clear;
	} else if (IS("fragments") && !eq) {
		o->fragments = !clear;
	} else if (IS("dedupe") && clear) {
		/* deduplication is never done here: off already */
	} else {
		return cli_error("extended option '%.*s' is not supported (see mkfs.img(1), DROP-IN MODE)",
				 (int)len, tok);
	}
#undef IS
	return 0;
}

static int parse_extended(const char *arg, struct imgfs_mkfs_options *o,
			  struct cli_state *st)
{
	const char *tok = arg;

	while (*tok) {
		const char *comma = strchr(tok, ',');
		size_t len = comma ? (size_t)(comma - tok) : strlen(tok);

		if (len && parse_extended_one(tok, len, o, st))
			return -1;
		tok += len + (comma ? 1 : 0);
	}
	return 0;
}

/*
 * --tar[=f|i]: mkfs.erofs also takes "0" for index mode. The index is
 * written alone, for the caller to append the tar (containerd's differ
 * does), with 512-byte blocks whatever -b says, as mkfs.erofs does.
 */
static int parse_tar(const char *arg, struct imgfs_mkfs_options *o,
		     struct cli_state *st)
{
	st->tar = true;
	if (!arg || !strcmp(arg, "f"))
		return 0;
	if (!strcmp(arg, "i") || !strcmp(arg, "0")) {
		o->tar_index = IMGFS_TAR_INDEX_ONLY;
		return 0;
	}
	if (!strcmp(arg, "headerball") || strchr(arg, ','))
		return cli_error("--tar=%s is not supported", arg);
	return cli_error("--tar=%s: expected f or i", arg);
}

static int parse_id(const char *opt, const char *arg, int64_t *out)
{
	/* (uint32_t)-1 is no id: mkfs.erofs refuses it too */
	if (parse_num(arg, 0, UINT32_MAX - 1, out))
		return cli_error("invalid %s %s", opt, arg);
	return 0;
}

static int parse_long(struct mkfs_args *a, struct cli_state *st, int c,
		      const char *arg, const char *name)
{
	struct imgfs_mkfs_options *o = &a->opts;
	int64_t v;

	switch (c) {
	case OPT_TAR:
		return parse_tar(arg, o, st);
	case OPT_AUFS:
		st->aufs = true;
		return 0;
	case OPT_QUIET:
		a->quiet = true;
		return 0;
	case OPT_MKFS_TIME:
		st->time_mode = TIME_BUILD_ONLY;
		return 0;
	case OPT_ALL_TIME:
		st->time_mode = TIME_ALL;
		return 0;
	case OPT_ALL_ROOT:
		o->all_root = true;
		return 0;
	case OPT_FORCE_UID:
		return parse_id("--force-uid", arg, &o->force_uid);
	case OPT_FORCE_GID:
		return parse_id("--force-gid", arg, &o->force_gid);
	case OPT_UID_OFF:
		return parse_id("--uid-offset", arg, &o->uid_offset);
	case OPT_GID_OFF:
		return parse_id("--gid-offset", arg, &o->gid_offset);
	case OPT_SORT:
		/* tar data is written in stream order either way */
		if (strcmp(arg, "none") && strcmp(arg, "path"))
			return cli_error("invalid --sort=%s (path or none)",
					 arg);
		return 0;
	case OPT_DECOMPRESS:
		if (arg)
			return cli_error("--%s=%s: keeping a copy of the raw stream is not supported",
					 name, arg);
		return 0;
	case OPT_WORKERS:
		if (parse_num(arg, 0, IMGFS_MAX_WORKERS, &v))
			return cli_error("invalid --workers=%s (0 to %u)", arg,
					 IMGFS_MAX_WORKERS);
		o->workers = v ? (unsigned int)v : 1;
		return 0;
	case OPT_UNSUPPORTED:
		return cli_error("option --%s is not supported (see mkfs.img(1), DROP-IN MODE)",
				 name);
	}
	return -1;
}

static int parse_short(struct mkfs_args *a, struct cli_state *st, int c,
		       const char *arg)
{
	struct imgfs_mkfs_options *o = &a->opts;
	int64_t v;

	switch (c) {
	case 'b':
		if (parse_size(arg, 512, 4096, &v) || (v & (v - 1)))
			return cli_error("invalid block size %s (512, 1024, 2048 or 4096)",
					 arg);
		o->blkszbits = (unsigned int)__builtin_ctzll((uint64_t)v);
		return 0;
	case 'C':
		if (parse_size(arg, 1, INT32_MAX, &v))
			return cli_error("invalid physical clustersize %s", arg);
		o->pcluster_size = (uint32_t)v;
		return 0;
	case 'd':
		if (parse_num(arg, 0, 9, &v))
			return cli_error("invalid debug level %s", arg);
		a->quiet = v == 0;
		return 0;
	case 'E':
		return parse_extended(arg, o, st);
	case 'L':
		if (strlen(arg) > 15)
			return cli_error("invalid volume label (at most 15 bytes)");
		strcpy(o->label, arg);
		return 0;
	case 'T':
		if (parse_num(arg, 0, INT64_MAX, &v))
			return cli_error("invalid UNIX timestamp %s", arg);
		o->have_build_time = true;
		o->build_time = v;
		st->have_time = true;
		return 0;
	case 'U':
		if (!strcmp(arg, "clear")) {
			memset(o->uuid, 0, sizeof(o->uuid));
			o->have_uuid = true;
		} else if (!strcmp(arg, "random")) {
			o->have_uuid = false;
		} else if (uuid_parse(arg, o->uuid)) {
			return cli_error("invalid UUID %s", arg);
		} else {
			o->have_uuid = true;
		}
		return 0;
	case 'x':
		if (parse_num(arg, LONG_MIN, LONG_MAX, &v))
			return cli_error("invalid xattr tolerance %s", arg);
		if (v < 0)
			return cli_error("-x %s: images without xattrs are not supported",
					 arg);
		/* shared when used by more than v inodes; INT_MAX: never */
		o->shared_xattr_min = v >= INT_MAX ? 0 : (unsigned int)v + 1;
		return 0;
	case 'z':
		return parse_compress(arg, o);
	case 'm':
		return cli_error("option -m (metadata compression) is not supported");
	}
	return -1;
}

/* SOURCE_DATE_EPOCH: the build time, and no mtime later (as mkfs.erofs). */
static int source_date_epoch(struct imgfs_mkfs_options *o)
{
	int64_t v;
	int r = fe_source_date_epoch(MKFS_EROFS_NAME, &v);

	if (r <= 0)
		return r;
	o->have_build_time = true;
	o->build_time = v;
	o->mtime_policy = IMGFS_MTIME_CLAMP;
	return 0;
}

static int parse_operands(int argc, char **argv, struct mkfs_args *a,
			  const struct cli_state *st)
{
	struct stat sb;

	if (optind >= argc)
		return cli_error("missing argument: IMAGE");
	a->target = argv[optind++];
	if (argc - optind > 1)
		return cli_error("unexpected argument: %s (one SOURCE only)",
				 argv[optind + 1]);
	a->source = optind < argc ? argv[optind] : NULL;
	if (st->tar) {
		if (!a->source)
			a->source = "-";
		else if (strcmp(a->source, "-") && !stat(a->source, &sb) &&
			 S_ISDIR(sb.st_mode))
			return cli_error("%s: is a directory; --tar takes a tar stream",
					 a->source);
		return 0;
	}
	if (!a->source)
		return cli_error("missing argument: SOURCE");
	if (lstat(a->source, &sb))
		return cli_error("failed to stat %s: %s", a->source,
				 strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return cli_error("%s: not a directory (rebuilding from EROFS images is not supported; tar input needs --tar)",
				 a->source);
	return 0;
}

int erofs_cli_parse(int argc, char **argv, struct mkfs_args *a)
{
	struct cli_state st = { 0 };
	struct imgfs_mkfs_options *o = &a->opts;
	int c, idx;

	memset(a, 0, sizeof(*a));
	a->prog = MKFS_EROFS_NAME;
	imgfs_mkfs_options_init(o);
	/* mkfs.erofs's defaults */
	o->inline_data = true;
	o->whiteouts = IMGFS_WHITEOUT_KEEP;
	o->shared_xattr_min = 3;
	/* durability is the caller's business, as with mkfs.erofs */
	o->no_fsync = true;
	/* mkfs.erofs drops a tar's file flags without a word */
	o->file_flags = IMGFS_FILE_FLAGS_IGNORE;

	while ((c = getopt_long(argc, argv, "C:E:L:T:U:b:d:m:x:z:Vh",
				long_opts, &idx)) != -1) {
		int r;

		if (c == 'h') {
			usage();
			return 1;
		}
		if (c == 'V') {
			printf("mkfs.erofs (imgfs %s)\n", PACKAGE_VERSION);
			return 1;
		}
		if (c == '?')
			goto bad;
		if (c >= OPT_TAR)
			r = parse_long(a, &st, c, optarg, long_opts[idx].name);
		else
			r = parse_short(a, &st, c, optarg);
		if (r)
			goto bad;
	}
	/* -T alone stamps every inode; --mkfs-time keeps their own mtimes */
	if (st.time_mode == TIME_ALL ||
	    (st.have_time && st.time_mode == TIME_UNSET))
		o->mtime_policy = IMGFS_MTIME_BUILD_TIME;
	/* read after the options: it overrides -T, as in mkfs.erofs */
	if (source_date_epoch(o))
		goto bad;
	/* --aufs acts on tar entries only; a directory is taken as it is */
	if (st.tar && st.aufs)
		o->whiteouts = IMGFS_WHITEOUT_OVERLAY;
	if (parse_operands(argc, argv, a, &st))
		goto bad;
	/*
	 * Inline data is only mkfs.erofs's default where it can do nothing
	 * (a tar index, fragments): no warning for what was not asked.
	 * Options given that do nothing are accepted, as mkfs.erofs does,
	 * with a warning from the library (imgfs_mkfs_options_unused()).
	 */
	if (!st.inline_given &&
	    (o->tar_index ||
	     (o->fragments && o->compress != IMGFS_COMPRESS_NONE)))
		o->inline_data = false;
	return 0;
bad:
	fe_usage_hint(MKFS_EROFS_NAME, NULL);
	return -1;
}
