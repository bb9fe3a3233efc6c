// SPDX-License-Identifier: MIT
/*
 * fsck.img - check an EROFS image; optionally extract it or compare it with
 * the tar it was built from.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsck.h"
#include "imgfs/escape.h"
#include "imgfs/stats.h"

struct fsck_opts {
	const char *image;
	bool digest;
	bool no_data;
	const char *extract_dir;
	uint64_t extract_limit; /* 0: none */
	bool overwrite;
	const char *compare_tar;
	struct fsck_compare_opts cmp;
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
	OPT_ALL_ROOT,
	OPT_FORCE_UID,
	OPT_FORCE_GID,
	OPT_UID_OFFSET,
	OPT_GID_OFFSET,
	OPT_NO_DATA,
	OPT_EXTRACT_LIMIT,
	OPT_ALLOW_MISSING_END,
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
	{ "allow-missing-end", no_argument, NULL, OPT_ALLOW_MISSING_END },
	{ "all-root", no_argument, NULL, OPT_ALL_ROOT },
	{ "force-uid", required_argument, NULL, OPT_FORCE_UID },
	{ "force-gid", required_argument, NULL, OPT_FORCE_GID },
	{ "uid-offset", required_argument, NULL, OPT_UID_OFFSET },
	{ "gid-offset", required_argument, NULL, OPT_GID_OFFSET },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fsck.img [OPTIONS] IMAGE\n"
		"Check an EROFS image.\n\n"
		"  -q, --quiet          print only errors\n"
		"  -v, --verbose        list every path checked\n"
		"      --json           print a JSON report on standard output\n"
		"      --digest         print the SHA-256 of every regular file\n"
		"      --no-data        do not read file data\n"
		"      --extract=DIR    write the tree into DIR\n"
		"      --overwrite      allow --extract into a non-empty DIR\n"
		"      --extract-limit=SIZE  write at most SIZE bytes of file data\n"
		"                       (suffixes K, M, G, T: powers of 1024)\n"
		"      --compare=TAR    check that the image represents TAR exactly\n"
		"  transformations applied to TAR by --compare (as given to mkfs.img):\n"
		"      --keep-whiteouts  .wh.* entries were stored verbatim\n"
		"      --ignore-file-flags  file flags were dropped\n"
		"      --all-root        owners were set to 0:0\n"
		"      --allow-missing-end  TAR may end without its end-of-archive\n"
		"                        marker (or be empty)\n"
		"      --force-uid=N, --force-gid=N, --uid-offset=N, --gid-offset=N\n"
		"  -h, --help           show this help\n"
		"  -V, --version        show the version\n\n"
		"Exit status: 0 no errors, 4 errors or differences found,\n"
		"8 operational error, 16 usage error.\n");
}

static int parse_id(const char *arg, const char *opt, bool offset,
		    int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || (!offset && v < 0) ||
	    v > (long long)UINT32_MAX || v < -(long long)UINT32_MAX) {
		fprintf(stderr, "fsck.img: invalid value for --%s: %s\n", opt,
			arg);
		return -1;
	}
	*out = v;
	return 0;
}

/* SIZE with an optional K, M, G or T suffix (powers of 1024), above 0. */
static int parse_size(const char *arg, const char *opt, uint64_t *out)
{
	static const char suffixes[] = "KMGT";
	unsigned long long v;
	const char *sfx;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*end && !end[1] && (sfx = strchr(suffixes, *end)) != NULL) {
		shift = 10 * (unsigned int)(sfx - suffixes + 1);
		end++;
	}
	if (errno || end == arg || *end || arg[0] == '-' || !v ||
	    v > (UINT64_MAX >> shift)) {
		fprintf(stderr,
			"fsck.img: invalid value for --%s: '%s' (bytes above 0, with an optional K, M, G or T suffix)\n",
			opt, arg);
		return -1;
	}
	*out = (uint64_t)v << shift;
	return 0;
}

/* Returns -1 to exit with a usage error, 1 to exit 0 (help/version). */
static int parse_args(int argc, char **argv, struct fsck_opts *o,
		      struct fsck_out *out)
{
	int c, ret = 0;

	o->cmp.force_uid = -1;
	o->cmp.force_gid = -1;
	while ((c = getopt_long(argc, argv, "hVqv", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("fsck.img (imgfs) %s\n", PACKAGE_VERSION);
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
			o->cmp.keep_whiteouts = true;
			break;
		case OPT_ALL_ROOT:
			o->cmp.all_root = true;
			break;
		case OPT_ALLOW_MISSING_END:
			o->cmp.allow_missing_end = true;
			break;
		case OPT_IGNORE_FLAGS:
			o->cmp.ignore_file_flags = true;
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
		default:
			ret = -1;
		}
		if (ret)
			return -1;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "fsck.img: expected exactly one IMAGE argument\n");
		return -1;
	}
	if (o->digest && o->no_data) {
		fprintf(stderr, "fsck.img: --digest needs the data (drop --no-data)\n");
		return -1;
	}
	if (o->cmp.allow_missing_end && !o->compare_tar) {
		fprintf(stderr, "fsck.img: --allow-missing-end only makes sense with --compare\n");
		return -1;
	}
	if (o->overwrite && !o->extract_dir) {
		fprintf(stderr, "fsck.img: --overwrite only makes sense with --extract\n");
		return -1;
	}
	if (o->extract_limit && !o->extract_dir) {
		fprintf(stderr, "fsck.img: --extract-limit only makes sense with --extract\n");
		return -1;
	}
	o->image = argv[optind];
	return 0;
}

/* ---- output */

void json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		unsigned int n = 0, i;

		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p);
			continue;
		}
		if (*p < 0x20 || *p == 0x7F) {
			fprintf(f, "\\u%04x", *p);
			continue;
		}
		if (*p < 0x80) {
			fputc(*p, f);
			continue;
		}
		/* Pass valid UTF-8 through; other bytes become U+0080..U+00FF. */
		if ((*p & 0xE0) == 0xC0 && *p >= 0xC2)
			n = 1;
		else if ((*p & 0xF0) == 0xE0)
			n = 2;
		else if ((*p & 0xF8) == 0xF0 && *p <= 0xF4)
			n = 3;
		for (i = 1; i <= n; i++)
			if ((p[i] & 0xC0) != 0x80)
				break;
		if (n && i > n) {
			fwrite(p, 1, n + 1, f);
			p += n;
		} else {
			fprintf(f, "\\u%04x", *p);
		}
	}
	fputc('"', f);
}

static void json_sep(FILE *f, bool *first)
{
	fputs(*first ? "\n    " : ",\n    ", f);
	*first = false;
}

static void report_cb(void *arg, const struct imgfs_check_problem *p)
{
	struct fsck_out *out = arg;

	if (out->json) {
		json_sep(out->problems, &out->problems_first);
		fprintf(out->problems, "{\"severity\": \"%s\", \"area\": \"%s\", ",
			imgfs_check_severity_name(p->severity),
			imgfs_check_area_name(p->area));
		if (p->nid != IMGFS_CHECK_NO_NID)
			fprintf(out->problems, "\"nid\": %" PRIu64 ", ", p->nid);
		if (p->path) {
			fputs("\"path\": ", out->problems);
			json_string(out->problems, p->path);
			fputs(", ", out->problems);
		}
		fputs("\"message\": ", out->problems);
		json_string(out->problems, p->msg);
		fputc('}', out->problems);
		return;
	}
	if (out->quiet && p->severity != IMGFS_CHECK_ERROR)
		return;
	if (p->severity == IMGFS_CHECK_NOTE && !out->verbose)
		return;
	printf("%s: %s: ", imgfs_check_severity_name(p->severity),
	       imgfs_check_area_name(p->area));
	if (p->path) {
		imgfs_escape_fputs(stdout, p->path, 0);
		printf(" (nid %" PRIu64 "): ", p->nid);
	} else if (p->nid != IMGFS_CHECK_NO_NID) {
		printf("nid %" PRIu64 ": ", p->nid);
	}
	/* messages quote names from the image */
	imgfs_escape_fputs(stdout, p->msg, 0);
	putchar('\n');
}

void fsck_difference(struct fsck_out *out, const char *path, const char *kind,
		     const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	out->differences++;
	if (out->json) {
		json_sep(out->diffs, &out->diffs_first);
		fputs("{\"path\": ", out->diffs);
		json_string(out->diffs, path);
		fprintf(out->diffs, ", \"kind\": \"%s\", \"message\": ", kind);
		json_string(out->diffs, msg);
		fputc('}', out->diffs);
		return;
	}
	fputs("differs: ", stdout);
	imgfs_escape_fputs(stdout, path, 0);
	printf(": %s: ", kind);
	imgfs_escape_fputs(stdout, msg, 0);
	putchar('\n');
}

static const char *type_name(uint32_t mode)
{
	const char *name = imgfs_mode_type_name(mode);

	return name ? name : "unknown";
}

/*
 * One line as sha256sum(1) writes it: a name holding a backslash, newline
 * or carriage return (or any other byte we escape) is written escaped
 * ("\\", "\n", "\r", "\xNN") and the line then starts with a
 * backslash, so no name can forge a line or reach the terminal raw.
 */
static void print_digest(const char *hex, const char *path)
{
	size_t len = strlen(path);

	if (imgfs_escape_needed(path, len, IMGFS_ESC_NL))
		putchar('\\');
	printf("%s  ", hex);
	imgfs_escape_fwrite(stdout, path, len, IMGFS_ESC_NL);
	putchar('\n');
}

static void print_entry(struct fsck_run *r, const struct imgfs_check_entry *e)
{
	struct fsck_out *out = r->out;
	char hex[2 * IMGFS_SHA256_SIZE + 1];
	bool show = out->verbose || (r->o->digest && e->sha256);
	int i;

	if (!show)
		return;
	for (i = 0; e->sha256 && i < IMGFS_SHA256_SIZE; i++)
		sprintf(hex + 2 * i, "%02x", e->sha256[i]);
	if (out->json) {
		json_sep(out->files, &out->files_first);
		fputs("{\"path\": ", out->files);
		json_string(out->files, e->path);
		fprintf(out->files, ", \"nid\": %" PRIu64 ", \"type\": \"%s\", \"size\": %" PRIu64,
			e->inode->nid, type_name(e->inode->mode),
			e->inode->size);
		if (e->link_to) {
			fputs(", \"link_to\": ", out->files);
			json_string(out->files, e->link_to);
		}
		if (e->sha256)
			fprintf(out->files, ", \"sha256\": \"%s\"", hex);
		fputc('}', out->files);
		return;
	}
	if (r->o->digest && e->sha256) {
		print_digest(hex, e->path);
	} else if (out->verbose) {
		printf("%s ", type_name(e->inode->mode));
		imgfs_escape_fputs(stdout, e->path, 0);
		printf(" (nid %" PRIu64 ", %" PRIu64 " bytes)", e->inode->nid,
		       e->inode->size);
		if (e->link_to) {
			fputs(" link to ", stdout);
			imgfs_escape_fputs(stdout, e->link_to, 0);
		}
		putchar('\n');
	}
}

static int entry_cb(void *arg, const struct imgfs_check_entry *e)
{
	struct fsck_run *r = arg;
	int ret;

	print_entry(r, e);
	if (r->x) {
		ret = fsck_extract_entry(r->x, e);
		if (ret)
			return ret;
	}
	return r->cmp ? fsck_compare_entry(r->cmp, e) : 0;
}

static int out_open(struct fsck_out *out)
{
	out->problems_first = out->files_first = out->diffs_first = true;
	if (!out->json)
		return 0;
	out->problems = open_memstream(&out->problems_buf, &out->problems_len);
	out->files = open_memstream(&out->files_buf, &out->files_len);
	out->diffs = open_memstream(&out->diffs_buf, &out->diffs_len);
	return out->problems && out->files && out->diffs ? 0 : -ENOMEM;
}

static void print_json(struct fsck_out *out, const struct fsck_opts *o,
		       const struct imgfs_check_result *res,
		       const struct imgfs_sb_info *sb, const char *fatal,
		       uint64_t extracted, int code)
{
	fclose(out->problems);
	fclose(out->files);
	fclose(out->diffs);
	printf("{\n  \"image\": ");
	json_string(stdout, o->image);
	if (sb)
		printf(",\n  \"block_size\": %u,\n  \"feature_compat\": %u,\n  \"feature_incompat\": %u",
		       sb->blksz, sb->feature_compat, sb->feature_incompat);
	printf(",\n  \"errors\": %" PRIu64 ",\n  \"warnings\": %" PRIu64
	       ",\n  \"notes\": %" PRIu64, res->errors, res->warnings,
	       res->notes);
	printf(",\n  \"stats\": {\"inodes\": %" PRIu64 ", \"directories\": %" PRIu64
	       ", \"regular\": %" PRIu64 ", \"symlinks\": %" PRIu64
	       ", \"specials\": %" PRIu64 ", \"hardlinks\": %" PRIu64
	       ", \"xattrs\": %" PRIu64 ", \"data_bytes\": %" PRIu64
	       ", \"image_bytes\": %" PRIu64 ", \"logical_bytes\": %" PRIu64
	       ", \"physical_bytes\": %" PRIu64 "}",
	       res->inodes, res->dirs, res->regular, res->symlinks,
	       res->specials, res->hardlinks, res->xattrs, res->data_bytes,
	       res->image_bytes, res->logical_bytes, res->physical_bytes);
	printf(",\n  \"problems\": [%s%s]", out->problems_buf,
	       out->problems_first ? "" : "\n  ");
	if (out->verbose || o->digest)
		printf(",\n  \"files\": [%s%s]", out->files_buf,
		       out->files_first ? "" : "\n  ");
	if (o->compare_tar)
		printf(",\n  \"differences\": [%s%s]", out->diffs_buf,
		       out->diffs_first ? "" : "\n  ");
	if (o->extract_dir)
		printf(",\n  \"extracted\": %" PRIu64, extracted);
	if (fatal) {
		printf(",\n  \"fatal\": ");
		json_string(stdout, fatal);
	}
	printf(",\n  \"exit_code\": %d\n}\n", code);
	free(out->problems_buf);
	free(out->files_buf);
	free(out->diffs_buf);
}

static void print_summary(const struct fsck_out *out,
			  const struct fsck_opts *o,
			  const struct imgfs_check_result *res)
{
	if (out->quiet)
		return;
	imgfs_escape_fputs(stdout, o->image, 0);
	printf(": %" PRIu64 " inodes (%" PRIu64 " directories, %" PRIu64
	       " regular, %" PRIu64 " symlinks, %" PRIu64 " special, %" PRIu64
	       " extra hard links), %" PRIu64 " data bytes read; %" PRIu64
	       " errors, %" PRIu64 " warnings",
	       res->inodes, res->dirs, res->regular, res->symlinks,
	       res->specials, res->hardlinks, res->data_bytes, res->errors,
	       res->warnings);
	if (o->compare_tar) {
		printf(", %" PRIu64 " differences from ", out->differences);
		imgfs_escape_fputs(stdout, o->compare_tar, 0);
	}
	printf("\n");
	if (res->physical_bytes)
		printf("%s: file data %" PRIu64 " bytes from %" PRIu64
		       " image bytes: amplification %.1f (warning above %u)\n",
		       o->image, res->logical_bytes, res->physical_bytes,
		       (double)res->logical_bytes / (double)res->physical_bytes,
		       IMGFS_CHECK_AMPLIFICATION_MAX);
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

	if (ret == -EINVAL || ret == -IMGFS_EFSCORRUPTED ||
	    ret == -EOPNOTSUPP || ret == -EBADMSG) {
		res->errors++;
		report_cb(out, &p);
		return 1;
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
	copts.report = report_cb;
	copts.report_arg = out;
	copts.entry = entry_cb;
	copts.entry_arg = &r;
	if (o->extract_dir) {
		r.x = fsck_extract_new(o->extract_dir, o->overwrite, img, err);
		if (!r.x)
			return err->code ? err->code : -ENOMEM;
		fsck_extract_set_limit(r.x, o->extract_limit);
	}
	if (o->compare_tar) {
		r.cmp = fsck_compare_new(img, &o->cmp, out);
		if (!r.cmp)
			ret = imgfs_error_set(err, -ENOMEM, "out of memory");
	}
	if (!ret)
		ret = imgfs_check_image(img, &copts, res, err);
	if (r.x) {
		ret2 = fsck_extract_finish(r.x, extracted, &failures, err);
		if (!ret)
			ret = ret2;
		if (!ret && failures)
			ret = imgfs_error_set(err, -EIO,
					      "%" PRIu64 " entries could not be extracted",
					      failures);
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
	uint64_t extracted = 0;
	int ret, code;

	ret = parse_args(argc, argv, &o, &out);
	if (ret)
		return ret > 0 ? FSCK_EXIT_OK : FSCK_EXIT_USAGE;
	if (out_open(&out)) {
		fprintf(stderr, "fsck.img: out of memory\n");
		return FSCK_EXIT_OPERATIONAL;
	}
	ret = open_image(&o, &out, &img, &res, &err);
	if (!ret)
		ret = run(&o, &out, &res, img, &extracted, &err);
	if (ret < 0)
		code = FSCK_EXIT_OPERATIONAL;
	else if (res.errors || out.differences)
		code = FSCK_EXIT_ERRORS;
	else
		code = FSCK_EXIT_OK;
	if (ret < 0) {
		fputs("fsck.img: ", stderr);
		imgfs_escape_fputs(stderr, err.code ? err.msg : strerror(-ret),
				   0);
		fputc('\n', stderr);
	}
	if (out.json)
		print_json(&out, &o, &res, img ? imgfs_image_sb(img) : NULL,
			   ret < 0 ? (err.code ? err.msg : strerror(-ret)) :
				     NULL,
			   extracted, code);
	else
		print_summary(&out, &o, &res);
	imgfs_image_close(img);
	return code;
}
