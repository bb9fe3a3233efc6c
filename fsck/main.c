// SPDX-License-Identifier: MIT
/*
 * fsck.img - check an EROFS image; optionally extract it or compare it with
 * the tar it was built from.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <json-c/json_object.h>
#include <json-c/printbuf.h>
#include "frontend/error.h"
#include "frontend/escape.h"
#include "frontend/json_rec.h"
#include "frontend/number.h"
#include "frontend/usage.h"
#include "fsck.h"
#include "imgfs/stats.h"
#include "imgfs/verity.h"
#include "imgfs/version.h"
#include "report.h"

struct fsck_opts {
	const char *image;
	bool digest;
	bool no_data;
	const char *extract_dir;
	uint64_t extract_limit; /* 0: none */
	bool overwrite;
	const char *compare_tar;
	/* how mkfs.img converted the tar: --compare replays it (the rules) */
	struct imgfs_mkfs_options cmp;
	/* dm-verity: 1 require a tree, 0 check one if present, -1 skip */
	int verity;
	bool have_roothash;
	uint8_t roothash[IMGFS_VERITY_DIGEST_SIZE];
	const char *sidecar; /* NULL: IMAGE.dmverity if it exists */
	bool fsverity_digest;
	unsigned int threads; /* 0: one per online CPU */
};

struct fsck_run {
	struct fsck_opts *o;
	struct fsck_out *out;
	struct fsck_extract *x;
	struct fsck_compare *cmp;
};

enum {
	OPT_JSON = 256,
	OPT_DIGEST,
	OPT_EXTRACT,
	OPT_OVERWRITE,
	OPT_COMPARE,
	OPT_KEEP_WHITEOUTS,
	OPT_IGNORE_FLAGS,
	OPT_FILE_FLAGS,
	OPT_ALL_ROOT,
	OPT_FORCE_UID,
	OPT_FORCE_GID,
	OPT_UID_OFFSET,
	OPT_GID_OFFSET,
	OPT_NO_DATA,
	OPT_EXTRACT_LIMIT,
	OPT_ALLOW_MISSING_END,
	OPT_REQUIRE_END,
	OPT_VERITY,
	OPT_NO_VERITY,
	OPT_VERITY_ROOTHASH,
	OPT_VERITY_SIDECAR,
	OPT_FSVERITY_DIGEST,
	OPT_THREADS,
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "digest", no_argument, NULL, OPT_DIGEST },
	{ "no-data", no_argument, NULL, OPT_NO_DATA },
	{ "extract", required_argument, NULL, OPT_EXTRACT },
	{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
	{ "extract-limit", required_argument, NULL, OPT_EXTRACT_LIMIT },
	{ "compare", required_argument, NULL, OPT_COMPARE },
	{ "keep-whiteouts", no_argument, NULL, OPT_KEEP_WHITEOUTS },
	{ "ignore-file-flags", no_argument, NULL, OPT_IGNORE_FLAGS },
	{ "file-flags", required_argument, NULL, OPT_FILE_FLAGS },
	{ "allow-missing-end", no_argument, NULL, OPT_ALLOW_MISSING_END },
	{ "require-end", no_argument, NULL, OPT_REQUIRE_END },
	{ "all-root", no_argument, NULL, OPT_ALL_ROOT },
	{ "force-uid", required_argument, NULL, OPT_FORCE_UID },
	{ "force-gid", required_argument, NULL, OPT_FORCE_GID },
	{ "uid-offset", required_argument, NULL, OPT_UID_OFFSET },
	{ "gid-offset", required_argument, NULL, OPT_GID_OFFSET },
	{ "verity", no_argument, NULL, OPT_VERITY },
	{ "no-verity", no_argument, NULL, OPT_NO_VERITY },
	{ "verity-roothash", required_argument, NULL, OPT_VERITY_ROOTHASH },
	{ "verity-sidecar", required_argument, NULL, OPT_VERITY_SIDECAR },
	{ "fsverity-digest", no_argument, NULL, OPT_FSVERITY_DIGEST },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: fsck.img [OPTIONS] IMAGE\n"
		"       fsck.img --oci=DIR [--compare=SRC_LAYOUT] [--json]\n"
		"Check an EROFS image, or an OCI image layout (--oci=DIR --help).\n\n"
		"  -q, --quiet          print only errors\n"
		"  -v, --verbose        list every path checked\n"
		"      --json           print a JSON report on standard output\n"
		"      --digest         print the SHA-256 of every regular file, as\n"
		"                       sha256sum does, with paths relative to the\n"
		"                       root (./PATH): 'sha256sum -c' checks them\n"
		"                       in a tree extracted with --extract\n"
		"      --no-data        do not read file data\n"
		"      --threads=N      threads reading and decompressing file data,\n"
		"                       1 to %u (default: online CPUs); the report\n"
		"                       is the same whatever N\n"
		"      --extract=DIR    write the tree into DIR\n"
		"      --overwrite      allow --extract into a non-empty DIR\n"
		"      --extract-limit=SIZE  write at most SIZE bytes of file data\n"
		"                       (suffixes K, M, G, T: powers of 1024)\n"
		"      --compare=TAR    check that the image represents TAR exactly\n"
		"  transformations applied to TAR by --compare (as given to mkfs.img):\n"
		"      --keep-whiteouts  .wh.* entries were stored verbatim\n"
		"      --file-flags=warn|error|ignore  file flags a user set: one warning\n"
		"                        (default), a difference per entry, or nothing\n"
		"      --ignore-file-flags  same as --file-flags=ignore (deprecated)\n"
		"      --all-root        owners were set to 0:0\n"
		"      --require-end     TAR must end with its end-of-archive marker\n"
		"                        (by default a missing one is a warning)\n"
		"      --allow-missing-end  TAR may be empty (and cancels --require-end)\n"
		"      --force-uid=N, --force-gid=N, --uid-offset=N, --gid-offset=N\n"
		"  dm-verity tree after the image (checked whenever one is there):\n"
		"      --verity         require one\n"
		"      --verity-roothash=HEX  its expected root hash (implies --verity)\n"
		"      --verity-sidecar=FILE  root hash and hash offset from containerd's\n"
		"                       sidecar (default: IMAGE.dmverity when it exists)\n"
		"      --no-verity      do not check it\n"
		"      --fsverity-digest  print the image file's fs-verity digest as\n"
		"                       'fsverity digest' does, and nothing else\n"
		"  -h, --help           show this help\n"
		"  -V, --version        show the version\n\n"
		"\nExit status:\n"
		"  0   no errors (warnings may have been printed)\n"
		"  4   errors in the image, or differences from TAR\n"
		"  8   operational error (the image or TAR could not be read,\n"
		"      --extract failed)\n"
		"  16  usage error\n"
		"\nThe summary goes to standard error; digests, listings and --json\n"
		"to standard output.\n",
		IMGFS_CHECK_THREADS_MAX);
}

/*
 * A usage error's reason; parse_args() then returns -1 and main() adds
 * where to look, so that every usage error ends with the same hint.
 */
static int __attribute__((format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fe_usage_vmsg("fsck.img", fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_id(const char *arg, const char *opt, bool offset,
		    int64_t *out)
{
	if (fe_parse_int(arg, 10, offset ? -(int64_t)UINT32_MAX : 0,
			 UINT32_MAX, out))
		return usage_error("invalid value for --%s: '%s' (%s)", opt,
				   arg,
				   offset ? "an integer from -4294967295 to 4294967295" :
					    "an integer from 0 to 4294967295");
	return 0;
}

/* --file-flags=warn|error|ignore, as mkfs.img takes it */
static int parse_file_flags(const char *arg, enum imgfs_file_flags *out)
{
	if (!strcmp(arg, "warn"))
		*out = IMGFS_FILE_FLAGS_WARN;
	else if (!strcmp(arg, "error"))
		*out = IMGFS_FILE_FLAGS_ERROR;
	else if (!strcmp(arg, "ignore"))
		*out = IMGFS_FILE_FLAGS_IGNORE;
	else {
		fprintf(stderr,
			"fsck.img: invalid value for --file-flags: %s (warn, error or ignore)\n",
			arg);
		return -1;
	}
	return 0;
}

/* SIZE with an optional K, M, G or T suffix (powers of 1024), above 0. */
static int parse_size(const char *arg, const char *opt, uint64_t *out)
{
	if (fe_parse_size(arg, 10, "KMGT", 1, UINT64_MAX, out))
		return usage_error("invalid value for --%s: '%s' (bytes above 0, with an optional K, M, G or T suffix)",
				   opt, arg);
	return 0;
}

static int parse_threads(const char *arg, unsigned int *out)
{
	uint64_t v;

	if (fe_parse_uint(arg, 10, 1, IMGFS_CHECK_THREADS_MAX, &v))
		return usage_error("invalid value for --threads: '%s' (the range is 1 to %u)",
				   arg, IMGFS_CHECK_THREADS_MAX);
	*out = (unsigned int)v;
	return 0;
}

/* Returns -1 to exit with a usage error, 1 to exit 0 (help/version). */
static int parse_args(int argc, char **argv, struct fsck_opts *o,
		      struct fsck_out *out)
{
	int c, ret = 0;

	/* the conversion rules --compare replays, as mkfs.img takes them */
	imgfs_mkfs_options_init(&o->cmp);
	opterr = 0; /* our messages name the program as fsck.img */
	while ((c = getopt_long(argc, argv, ":hVqv", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("fsck.img (imgfs) %s\n", imgfs_version());
			return 1;
		case 'q':
			out->quiet = true;
			break;
		case 'v':
			out->verbose = true;
			break;
		case OPT_JSON:
			out->json = true;
			break;
		case OPT_DIGEST:
			o->digest = true;
			break;
		case OPT_NO_DATA:
			o->no_data = true;
			break;
		case OPT_EXTRACT:
			o->extract_dir = optarg;
			break;
		case OPT_OVERWRITE:
			o->overwrite = true;
			break;
		case OPT_EXTRACT_LIMIT:
			ret = parse_size(optarg, "extract-limit",
					 &o->extract_limit);
			break;
		case OPT_COMPARE:
			o->compare_tar = optarg;
			break;
		case OPT_KEEP_WHITEOUTS:
			o->cmp.whiteouts = IMGFS_WHITEOUT_KEEP;
			break;
		case OPT_ALL_ROOT:
			o->cmp.all_root = true;
			break;
		case OPT_ALLOW_MISSING_END:
			o->cmp.allow_missing_end = true;
			o->cmp.require_end = false;
			break;
		case OPT_REQUIRE_END:
			o->cmp.require_end = true;
			o->cmp.allow_missing_end = false;
			break;
		case OPT_IGNORE_FLAGS:
			o->cmp.file_flags = IMGFS_FILE_FLAGS_IGNORE;
			break;
		case OPT_FILE_FLAGS:
			ret = parse_file_flags(optarg, &o->cmp.file_flags);
			break;
		case OPT_FORCE_UID:
			ret = parse_id(optarg, "force-uid", false,
				       &o->cmp.force_uid);
			break;
		case OPT_FORCE_GID:
			ret = parse_id(optarg, "force-gid", false,
				       &o->cmp.force_gid);
			break;
		case OPT_UID_OFFSET:
			ret = parse_id(optarg, "uid-offset", true,
				       &o->cmp.uid_offset);
			break;
		case OPT_GID_OFFSET:
			ret = parse_id(optarg, "gid-offset", true,
				       &o->cmp.gid_offset);
			break;
		case OPT_VERITY:
			o->verity = 1;
			break;
		case OPT_NO_VERITY:
			o->verity = -1;
			break;
		case OPT_VERITY_ROOTHASH:
			o->verity = 1;
			o->have_roothash = true;
			if (imgfs_verity_parse_root(optarg, o->roothash))
				ret = usage_error("invalid value for --verity-roothash: '%s' (%d hex digits)",
						  optarg,
						  2 * IMGFS_VERITY_DIGEST_SIZE);
			break;
		case OPT_VERITY_SIDECAR:
			o->verity = 1;
			o->sidecar = optarg;
			break;
		case OPT_FSVERITY_DIGEST:
			o->fsverity_digest = true;
			break;
		case OPT_THREADS:
			ret = parse_threads(optarg, &o->threads);
			break;
		case ':':
			return usage_error("option '%s' needs an argument",
					   argv[optind - 1]);
		default:
			if (optopt)
				return usage_error("unknown option '-%c'",
						   optopt);
			return usage_error("unknown option '%s'",
					   argv[optind - 1]);
		}
		if (ret)
			return -1;
	}
	if (optind >= argc)
		return usage_error("no IMAGE given");
	if (optind + 1 != argc)
		return usage_error("only one IMAGE expected, got %d",
				   argc - optind);
	if (o->digest && o->no_data) {
		return usage_error("--digest needs the data (drop --no-data)");
	}
	if (o->compare_tar && o->no_data) {
		/* every file's content would be reported as unreadable */
		return usage_error("--compare needs the data (drop --no-data)");
	}
	if (o->cmp.allow_missing_end && !o->compare_tar) {
		return usage_error("--allow-missing-end only makes sense with --compare");
	}
	if (o->cmp.require_end && !o->compare_tar) {
		return usage_error("--require-end only makes sense with --compare");
	}
	if (o->overwrite && !o->extract_dir) {
		return usage_error("--overwrite only makes sense with --extract");
	}
	if (o->extract_limit && !o->extract_dir) {
		return usage_error("--extract-limit only makes sense with --extract");
	}
	if (o->have_roothash && o->sidecar) {
		return usage_error("give --verity-roothash or --verity-sidecar, not both");
	}
	o->image = argv[optind];
	return 0;
}

static int entry_cb(void *arg, const struct imgfs_check_entry *e)
{
	struct fsck_run *r = arg;
	int ret;

	fsck_report_entry(r->out, e);
	if (r->x) {
		ret = fsck_extract_entry(r->x, e);
		if (ret)
			return ret;
	}
	return r->cmp ? fsck_compare_entry(r->cmp, e) : 0;
}

/* A dm-verity finding: an error of the image (exit 4). */
static void verity_problem(struct fsck_out *out, struct imgfs_check_result *res,
			   enum imgfs_check_severity sev, const char *msg)
{
	struct imgfs_check_problem p = {
		.severity = sev,
		.area = IMGFS_CHECK_VERITY,
		.nid = IMGFS_CHECK_NO_NID,
		.msg = msg,
	};

	if (sev == IMGFS_CHECK_ERROR)
		res->errors++;
	else if (sev == IMGFS_CHECK_WARNING)
		res->warnings++;
	fsck_report_problem(out, &p);
}

/*
 * The expected root hash: --verity-roothash, else the sidecar (named, or
 * IMAGE.dmverity when it exists). Returns 1 when there is one, 0 when
 * none was given, -1 after reporting a bad sidecar as a finding, or a
 * negative errno (other than -1's meaning: below -1) when reading fails.
 */
/* A regular file only (a FIFO would hang the check), as a stream. */
static FILE *open_regular(const char *name)
{
	int fd = open(name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	FILE *f = NULL;
	int e = EINVAL;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st))
		e = errno;
	else if (S_ISREG(st.st_mode) &&
		 (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) ||
		  !(f = fdopen(fd, "r"))))
		e = errno;
	if (!f) {
		close(fd);
		errno = e;
	}
	return f;
}

static int expected_root(const struct fsck_opts *o, struct fsck_verity *v,
			 struct fsck_out *out, struct imgfs_check_result *res,
			 uint8_t root[IMGFS_VERITY_DIGEST_SIZE],
			 struct imgfs_error *err)
{
	char path[PATH_MAX], buf[4096], msg[PATH_MAX + sizeof(err->msg) + 8];
	const char *name = o->sidecar;
	uint64_t off;
	size_t n;
	FILE *f;

	if (o->have_roothash) {
		memcpy(root, o->roothash, IMGFS_VERITY_DIGEST_SIZE);
		v->root_from = "--verity-roothash";
		return 1;
	}
	if (!name) {
		if ((size_t)snprintf(path, sizeof(path), "%s.dmverity",
				     o->image) >= sizeof(path))
			return 0;
		if (access(path, F_OK))
			return 0;
		name = path;
	}
	f = open_regular(name);
	if (!f)
		return fe_error_set(err, -errno, "%s: %s", name,
				       errno == EINVAL ? "not a regular file"
						       : strerror(errno));
	n = fread(buf, 1, sizeof(buf), f);
	if (ferror(f)) {
		fclose(f);
		return fe_error_set(err, -EIO, "%s: read error", name);
	}
	/* what is not read cannot be checked: a sidecar is a few dozen bytes */
	if (n == sizeof(buf) && fgetc(f) != EOF) {
		fclose(f);
		snprintf(msg, sizeof(msg),
			 "%s: larger than %zu bytes: not a dm-verity sidecar",
			 name, sizeof(buf));
		verity_problem(out, res, IMGFS_CHECK_ERROR, msg);
		return -1;
	}
	fclose(f);
	if (imgfs_verity_sidecar_parse(buf, n, root, &off, err)) {
		snprintf(msg, sizeof(msg), "%s: %s", name, err->msg);
		verity_problem(out, res, IMGFS_CHECK_ERROR, msg);
		return -1;
	}
	if (off != v->hash_offset) {
		snprintf(msg, sizeof(msg),
			 "%s gives hash offset %" PRIu64
			 ", the image's tree is at %" PRIu64,
			 name, off, v->hash_offset);
		verity_problem(out, res, IMGFS_CHECK_ERROR, msg);
		return -1;
	}
	v->root_from = name == path ? "IMAGE.dmverity" : "--verity-sidecar";
	return 1;
}

/*
 * The dm-verity tree after the image, when there is one (or --verity
 * requires it): checked like the kernel would, over the whole file.
 * Mismatches are findings; only failing to read is an operational error.
 */
static int check_verity(const struct fsck_opts *o, struct fsck_out *out,
			struct imgfs_image *img, struct imgfs_check_result *res,
			struct fsck_verity *v, struct imgfs_error *err)
{
	uint8_t root[IMGFS_VERITY_DIGEST_SIZE];
	char msg[256];
	int have, ret;

	if (o->verity < 0)
		return 0;
	v->hash_offset = imgfs_check_verity_offset(img);
	if (!imgfs_check_has_verity(img)) {
		if (o->verity > 0) {
			snprintf(msg, sizeof(msg),
				 "no dm-verity tree: no verity superblock at offset %" PRIu64
				 " (the image size rounded up to 4096)",
				 v->hash_offset);
			verity_problem(out, res, IMGFS_CHECK_ERROR, msg);
		}
		return 0;
	}
	v->present = true;
	have = expected_root(o, v, out, res, root, err);
	if (have < -1)
		return have;
	if (have < 0)
		return 0;
	ret = imgfs_check_verity(img, have ? root : NULL, &v->chk, err);
	if (ret == -EBADMSG) {
		verity_problem(out, res, IMGFS_CHECK_ERROR, err->msg);
		imgfs_error_clear(err);
		return 0;
	}
	if (ret)
		return ret;
	v->ok = true;
	if (!have)
		verity_problem(out, res, IMGFS_CHECK_NOTE,
			       "the tree matches the image; its root hash was not compared (no --verity-roothash, no sidecar)");
	if (v->chk.info.hash_end < imgfs_image_sb(img)->image_size) {
		uint64_t extra =
			imgfs_image_sb(img)->image_size - v->chk.info.hash_end;

		snprintf(msg, sizeof(msg),
			 "%" PRIu64 " %s after the dm-verity tree", extra,
			 extra == 1 ? "byte" : "bytes");
		verity_problem(out, res, IMGFS_CHECK_WARNING, msg);
	}
	return 0;
}

/* fs-verity digest of the image file, in the form "fsverity digest" uses. */
static int print_fsverity_digest(const char *path)
{
	uint8_t d[IMGFS_VERITY_DIGEST_SIZE];
	char hex[2 * IMGFS_VERITY_DIGEST_SIZE + 1];
	struct imgfs_error err = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "fsck.img: %s: %s\n", path, strerror(errno));
		return FSCK_EXIT_OPERATIONAL;
	}
	if (imgfs_fsverity_digest_fd(fd, d, &err)) {
		fprintf(stderr, "fsck.img: %s: %s\n", path, err.msg);
		close(fd);
		return FSCK_EXIT_OPERATIONAL;
	}
	close(fd);
	imgfs_verity_hex(d, sizeof(d), hex);
	printf("sha256:%s ", hex);
	fe_escape_fputs(stdout, path, 0);
	putchar('\n');
	return FSCK_EXIT_OK;
}

/* Open the image; format problems are findings (exit 4), I/O ones are not. */
static int open_image(struct fsck_opts *o, struct fsck_out *out,
		      struct imgfs_image **img, struct imgfs_check_result *res,
		      struct imgfs_error *err)
{
	int ret = imgfs_image_open(o->image, IMGFS_OPEN_IGNORE_CHECKSUM |
					     IMGFS_OPEN_IGNORE_FEATURES,
				   img, err);
	struct imgfs_check_problem p = {
		.severity = IMGFS_CHECK_ERROR,
		.area = IMGFS_CHECK_SUPERBLOCK,
		.nid = IMGFS_CHECK_NO_NID,
		.msg = err->msg,
	};

	char msg[sizeof(err->msg)];

	if (ret == -EINVAL || ret == -IMGFS_EFSCORRUPTED ||
	    ret == -EOPNOTSUPP || ret == -EBADMSG) {
		res->errors++;
		fsck_report_problem(out, &p);
		return 1;
	}
	/* an operational error names the image, whatever failed */
	if (ret < 0 && strncmp(err->msg, o->image, strlen(o->image))) {
		snprintf(msg, sizeof(msg), "%s",
			 err->code ? err->msg : strerror(-ret));
		imgfs_error_clear(err);
		fe_error_set(err, ret, "%s: %s", o->image, msg);
	}
	return ret;
}

static int run(struct fsck_opts *o, struct fsck_out *out,
	       struct imgfs_check_result *res, struct imgfs_image *img,
	       uint64_t *extracted, struct imgfs_error *err)
{
	struct imgfs_check_options copts;
	struct fsck_run r = { .o = o, .out = out };
	uint64_t failures = 0;
	int ret = 0, ret2;

	imgfs_check_options_init(&copts);
	copts.flags = (o->digest || o->compare_tar ? IMGFS_CHECK_F_DIGEST : 0) |
		      (o->no_data ? IMGFS_CHECK_F_NO_DATA : 0);
	copts.report = fsck_report_problem;
	copts.report_arg = out;
	copts.entry = entry_cb;
	copts.entry_arg = &r;
	copts.threads = o->threads;
	if (o->extract_dir) {
		r.x = fsck_extract_new(o->extract_dir, o->overwrite,
				       o->extract_limit, img, err);
		if (!r.x)
			return err->code ? err->code : -ENOMEM;
	}
	if (o->compare_tar) {
		r.cmp = fsck_compare_new(img, &o->cmp, out);
		if (!r.cmp)
			ret = fe_error_set(err, -ENOMEM, "out of memory");
	}
	if (!ret)
		ret = imgfs_check_image(img, &copts, res, err);
	if (r.x) {
		ret2 = fsck_extract_finish(r.x, extracted, &failures, err);
		if (!ret)
			ret = ret2;
		if (!ret && failures)
			ret = fe_error_set(err, -EIO,
					      "%" PRIu64 " %s not be extracted",
					      failures,
					      failures == 1 ? "entry could" :
							      "entries could");
	}
	if (r.cmp) {
		if (!ret)
			ret = fsck_compare_run(r.cmp, o->compare_tar, err);
		fsck_compare_free(r.cmp);
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct fsck_out out = { 0 };
	struct fsck_opts o = { 0 };
	struct imgfs_check_result res = { 0 };
	struct imgfs_error err = { 0 };
	struct imgfs_image *img = NULL;
	struct fsck_verity v = { 0 };
	struct fsck_outcome oc = { .res = &res, .v = &v };
	uint64_t extracted = 0;
	int ret, code;

	fe_json_on_oom("fsck.img", FSCK_EXIT_OPERATIONAL);
	if (fsck_oci_requested(argc, argv))
		return fsck_oci_main(argc, argv);
	ret = parse_args(argc, argv, &o, &out);
	if (ret < 0)
		fe_usage_hint("fsck.img", "usage: fsck.img [OPTIONS] IMAGE\n");
	if (ret)
		return ret > 0 ? FSCK_EXIT_OK : FSCK_EXIT_USAGE;
	if (o.fsverity_digest)
		return print_fsverity_digest(o.image);
	out.digest = o.digest;
	oc.image = o.image;
	oc.compare_tar = o.compare_tar;
	oc.extracting = o.extract_dir != NULL;
	if (fsck_out_open(&out)) {
		fprintf(stderr, "fsck.img: out of memory\n");
		return FSCK_EXIT_OPERATIONAL;
	}
	ret = open_image(&o, &out, &img, &res, &err);
	if (!ret)
		ret = run(&o, &out, &res, img, &extracted, &err);
	if (!ret)
		ret = check_verity(&o, &out, img, &res, &v, &err);
	if (ret < 0)
		code = FSCK_EXIT_OPERATIONAL;
	else if (res.errors || out.differences)
		code = FSCK_EXIT_ERRORS;
	else
		code = FSCK_EXIT_OK;
	if (ret < 0) {
		fputs("fsck.img: ", stderr);
		fe_escape_fputs(stderr, err.code ? err.msg : strerror(-ret),
				   0);
		fputc('\n', stderr);
	}
	oc.extracted = extracted;
	oc.sb = img ? imgfs_image_sb(img) : NULL;
	oc.fatal = ret < 0 ? (err.code ? err.msg : strerror(-ret)) : NULL;
	oc.code = code;
	if (out.json)
		fsck_report_json(&out, &oc);
	else if (ret >= 0)
		/* after an operational error, counts would claim a check
		 * that did not happen */
		fsck_report_summary(&out, &oc);
	imgfs_image_close(img);
	return code;
}
