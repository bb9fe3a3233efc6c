// SPDX-License-Identifier: MIT
/*
 * mkfs.img - build an EROFS image from a tar layer or a directory.
 *
 * One library call does the job (imgfs_convert()): the image is written
 * to an unnamed file in the target's directory, fsynced and renamed into
 * place, so the target path never holds a partial image and a killed run
 * leaves nothing behind. This file parses options and prints. Invoked as
 * "mkfs.erofs", the program takes that tool's command line instead
 * (erofs_cli.c).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include <json-c/json.h>
#include <uuid/uuid.h>

#include "frontend/error.h"
#include "imgfs/check.h"
#include "imgfs/reader.h"
#include "frontend/escape.h"
#include "frontend/json_rec.h"
#include "frontend/usage.h"
#include "frontend/verify.h"
#include "imgfs/version.h"
#include "imgfs/writer.h"
#include "mkfs.h"

/*
 * The output's temporary name, for the signal handler to remove: it has
 * one only on filesystems without O_TMPFILE.
 */
static char tmp_path[PATH_MAX];
static volatile sig_atomic_t tmp_live;

static void on_signal(int sig)
{
	if (tmp_live)
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

#define USAGE_LINE "usage: mkfs.img [OPTIONS] SOURCE IMAGE\n"

/* Version of the JSON summary (--json): bumped when a field changes. */
#define SUMMARY_SCHEMA_VERSION 1

static void usage(FILE *f)
{
	fprintf(f,
		USAGE_LINE
		"Build an EROFS image from SOURCE: a tar layer (plain, gzip, zstd, xz,\n"
		"bzip2, lz4; '-' reads standard input) or a directory.\n\n"
		"  -b SIZE              block size: 512, 1024, 2048 or 4096 (default 4096)\n"
		"      --inline-data    store file tails inline (smaller, not direct-I/O friendly)\n"
		"      --keep-whiteouts store OCI .wh.* entries verbatim\n"
		"      --file-flags=warn|error|ignore  file flags a user set (immutable,\n"
		"                       nodump, ...; EROFS cannot store them): dropped with\n"
		"                       one warning (default), refused, or dropped silently;\n"
		"                       internal ones (extent, ...) are always dropped\n"
		"      --ignore-file-flags same as --file-flags=ignore (deprecated)\n"
		"      --require-end    refuse a tar that ends without its end-of-archive\n"
		"                       marker (by default: read, with a warning)\n"
		"      --allow-missing-end accept an empty input as an empty layer (a\n"
		"                       warning instead); cancels --require-end\n"
		"      --all-root       make every entry owned by 0:0\n"
		"      --force-uid=N    set every uid to N\n"
		"      --force-gid=N    set every gid to N\n"
		"      --uid-offset=N   add N to every uid\n"
		"      --gid-offset=N   add N to every gid\n"
		"  -T SECONDS           build time (also used for implied directories)\n"
		"  -U UUID              volume UUID (default: random)\n"
		"  -L LABEL             volume label (up to 16 bytes)\n"
		"  -x N                 share an xattr stored by N or more inodes (0: never; default 2)\n"
		"  -z ALG[,LEVEL][,DICT] compress file data: lz4, lz4hc, lzma, deflate, zstd\n"
		"  -C SIZE              largest physical cluster in bytes (default: one block)\n"
		"      --workers=N      compression threads, 1 to 256 (default: online CPUs)\n"
		"      --ztailpacking   inline the last compressed cluster of each file\n"
		"      --fragments      pack file ends and small files into one compressed\n"
		"                       inode (Linux 6.1+)\n"
		"      --tar-index[=append|only] file data stays in the tar: the image is an\n"
		"                       index (512-byte blocks) followed by the uncompressed\n"
		"                       tar, byte for byte; 'only' writes the index alone,\n"
		"                       for a caller that appends the tar itself\n"
		"      --immutable      set the immutable flag on the finished image\n"
		"      --no-fsync       do not sync the image before renaming it into place\n"
		"                       (for callers that sync themselves)\n"
		"      --verify         check the image before putting it in place\n"
		"      --dm-verity      append a dm-verity hash tree, write IMAGE.dmverity\n"
		"                       and print the root hash and hash offset\n"
		"      --dm-verity-salt=HEX  salt ('-': none; default derived from -U, -T)\n"
		"      --dm-verity-uuid=UUID verity superblock UUID (default derived)\n"
		"      --no-dm-verity-sidecar  do not write IMAGE.dmverity\n"
		"      --json           print the summary as a JSON document on standard\n"
		"                       output (also with -q)\n"
		"  -q, --quiet          no progress, summary or warnings\n"
		"  -h, --help           this help\n"
		"  -V, --version        version\n"
		"      --oci            convert OCI image layouts: mkfs.img --oci --help\n\n"
		"Environment: SOURCE_DATE_EPOCH is the build time unless -T is given;\n"
		"file mtimes are kept as the source has them.\n\n"
		"Exit status: 0 image written, 1 conversion failed (nothing was written),\n"
		"2 usage error.\n");
}

/* The end of every usage error: what to type, and where to read more. */
static int usage_error(void)
{
	fe_usage_hint("mkfs.img", USAGE_LINE);
	return -1;
}

/* Say which operand is missing, or which one is too many. */
static int check_operands(int n, char **rest)
{
	if (n == 2)
		return 0;
	if (n == 0)
		fputs("mkfs.img: missing SOURCE (a tar layer, '-' or a directory) and IMAGE (the image to write)\n",
		      stderr);
	else if (n == 1)
		fprintf(stderr,
			"mkfs.img: missing IMAGE (the image to write) after SOURCE '%s'\n",
			rest[0]);
	else
		fprintf(stderr,
			"mkfs.img: too many arguments from '%s' on: SOURCE and IMAGE only\n",
			rest[2]);
	return -1;
}

/* The native mode's operands and the options that go together. */
static int check_native(int argc, char **argv, struct mkfs_args *a)
{
	struct imgfs_error err;
	struct stat sb;

	if (check_operands(argc - a->optind, argv + a->optind))
		return -1;
	if (imgfs_mkfs_options_check(&a->opts, &err)) {
		fprintf(stderr, "mkfs.img: %s\n", err.msg);
		return -1;
	}
	if (!a->opts.dm_verity &&
	    (a->opts.dm_verity_have_salt || a->opts.dm_verity_have_uuid ||
	     a->opts.dm_verity_no_sidecar)) {
		fprintf(stderr,
			"mkfs.img: --dm-verity-salt, --dm-verity-uuid and --no-dm-verity-sidecar need --dm-verity\n");
		return -1;
	}
	a->source = argv[a->optind];
	a->target = argv[a->optind + 1];
	if (a->opts.tar_index && a->have_blksz && a->opts.blkszbits != 9) {
		fprintf(stderr,
			"mkfs.img: --tar-index images use 512-byte blocks (tar data lies on 512-byte boundaries): -b %u does not apply\n",
			1u << a->opts.blkszbits);
		return -1;
	}
	/* a directory has no end-of-archive marker to miss */
	if ((a->opts.allow_missing_end || a->opts.require_end) &&
	    strcmp(a->source, "-") && !stat(a->source, &sb) &&
	    S_ISDIR(sb.st_mode)) {
		fprintf(stderr,
			"mkfs.img: %s has no effect with a directory source (%s): it applies to tar streams\n",
			a->opts.require_end ? "--require-end" :
					      "--allow-missing-end",
			a->source);
		return -1;
	}
	if (a->opts.tar_index == IMGFS_TAR_INDEX_ONLY && a->verify) {
		fprintf(stderr,
			"mkfs.img: --verify cannot check an index without its tar (--tar-index=only): check the image once the tar is appended (fsck.img)\n");
		return -1;
	}
	return 0;
}

/*
 * Both modes: 0 to run, 1 to exit successfully (help, version), -1 on a
 * usage error (reported with the usage line of the mode).
 */
static int parse_args(int argc, char **argv, struct mkfs_args *a)
{
	int r = mkfs_parse(argc, argv, a);

	if (r == MKFS_PARSE_HELP) {
		if (a->oci_mode)
			mkfs_oci_usage(stdout);
		else
			usage(stdout);
		return 1;
	}
	if (r == MKFS_PARSE_VERSION) {
		printf("mkfs.img (imgfs) %s\n", imgfs_version());
		return 1;
	}
	if (!r)
		r = a->oci_mode ? mkfs_oci_check(argc, argv, a) :
				  check_native(argc, argv, a);
	if (r >= 0)
		return 0;
	if (a->oci_mode)
		mkfs_oci_usage_error();
	else
		usage_error();
	return -1;
}

struct progress_state {
	struct timespec start;
	struct timespec last;
	bool shown;
};

static double elapsed(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void show_warning(const char *msg, void *arg)
{
	const struct mkfs_args *a = arg;

	fprintf(stderr, "%s: warning: ", a->prog);
	fe_escape_fputs(stderr, msg, 0);
	fputc('\n', stderr);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* "512 B", "3.4 KiB", "12.0 MiB": four significant digits at most. */
static const char *human_size(char *buf, size_t size, uint64_t n)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	int u = -1;

	if (n < 1024) {
		snprintf(buf, size, "%" PRIu64 " B", n);
		return buf;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, "%.1f %s", v, units[u]);
	return buf;
}

/*
 * One line, rewritten in place: with the source's size known, the share
 * of it read (compressed bytes for a compressed layer) and an estimate of
 * the time left from the rate so far.
 */
static void show_progress(const struct imgfs_progress *p, void *arg)
{
	struct progress_state *ps = arg;
	struct timespec now;
	char data[32];
	double t;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (ps->shown && elapsed(&ps->last, &now) < 0.25)
		return;
	ps->last = now;
	t = elapsed(&ps->start, &now);
	fputc('\r', stderr);
	if (p->source_size && p->source_bytes <= p->source_size) {
		double frac = (double)p->source_bytes / (double)p->source_size;

		fprintf(stderr, "%3d%% ", (int)(frac * 100));
		if (frac > 0 && t >= 1) {
			uint64_t left = (uint64_t)(t / frac - t + 0.5);

			fprintf(stderr, "ETA %" PRIu64 ":%02" PRIu64 ", ",
				left / 60, left % 60);
		}
	}
	fprintf(stderr, "%" PRIu64 " %s, %s data read\033[K", p->entries,
		plural(p->entries, "entry", "entries"),
		human_size(data, sizeof(data), p->bytes_in));
	ps->shown = true;
}

/* The progress line is done with: leave no stale figures behind. */
static void clear_progress(struct progress_state *ps)
{
	if (ps->shown)
		fputs("\r\033[K", stderr);
	ps->shown = false;
}

static int set_immutable(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int flags, ret = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0) {
		ret = -errno;
	} else {
		flags |= FS_IMMUTABLE_FL;
		if (ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0)
			ret = -errno;
	}
	close(fd);
	return ret;
}

/* imgfs_convert() hooks: the state of one run. */
struct job {
	struct mkfs_args *a;
	sigset_t old; /* signal mask before the commit */
	bool blocked;
	bool verified; /* --verify ran and found nothing wrong */
};

static void output_created(const char *temp_path, void *arg)
{
	(void)arg;
	if (temp_path && strlen(temp_path) < sizeof(tmp_path)) {
		strcpy(tmp_path, temp_path);
		tmp_live = 1;
	}
}

/*
 * The image is complete: verify it if asked to, then hold signals while
 * it is put in place (the file briefly has a temporary name before it is
 * renamed over the target).
 */
static int before_commit(int fd, void *arg, struct imgfs_error *err)
{
	struct job *j = arg;
	sigset_t set;
	int ret;

	if (j->a->verify) {
		ret = fe_verify_fd("mkfs.img", fd, j->a->opts.dm_verity, err);
		if (ret)
			return ret;
		j->verified = true;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, &j->old);
	j->blocked = true;
	return 0;
}

/* data bytes per stored byte; 0 when nothing was stored */
static double ratio(const struct imgfs_mkfs_stats *st)
{
	return st->stored_data_bytes ? (double)st->data_bytes /
					       (double)st->stored_data_bytes :
				       0;
}

static void print_summary(const struct mkfs_args *a,
			  const struct imgfs_mkfs_stats *st, bool verified,
			  double secs)
{
	char data[32], image[32], pad[32];

	/* the drop-in mode keeps the line it always printed */
	if (strcmp(a->prog, "mkfs.img")) {
		fprintf(stderr,
			"%s: %" PRIu64 " entries, %" PRIu64 " inodes, %.1f MiB data, image %.1f MiB, %.2f s\n",
			a->target, st->entries, st->inodes,
			(double)st->data_bytes / 1048576.0,
			(double)st->image_bytes / 1048576.0, secs);
		return;
	}
	fprintf(stderr, "%s: ", a->prog);
	fe_escape_fputs(stderr, a->target, 0);
	fprintf(stderr,
		": %" PRIu64 " %s, %" PRIu64 " %s, %s data, image %s",
		st->entries, plural(st->entries, "entry", "entries"),
		st->inodes, plural(st->inodes, "inode", "inodes"),
		human_size(data, sizeof(data), st->data_bytes),
		human_size(image, sizeof(image), st->image_bytes));
	if (st->stored_data_bytes)
		fprintf(stderr, ", ratio %.3g", ratio(st));
	fprintf(stderr, ", %s alignment waste, %.2f s, %s\n",
		human_size(pad, sizeof(pad), st->padding_bytes), secs,
		!a->verify ? "not verified (no --verify)" :
		verified   ? "verified" :
			     "verification failed");
}

/* The summary as one JSON document on stdout (--json). */
static int print_json(const struct mkfs_args *a,
		      const struct imgfs_mkfs_stats *st, bool verified,
		      double secs)
{
	struct json_object *o = fe_rec_new(), *v = fe_rec_new();
	const char *text;
	int ret = 0;

	fe_rec_int(o, "schema_version", SUMMARY_SCHEMA_VERSION);
	fe_rec_str(o, "tool", a->prog);
	fe_rec_str(o, "version", imgfs_version());
	/* paths are bytes: not always UTF-8 */
	fe_rec_str(o, "source", a->source);
	fe_rec_str(o, "image", a->target);
	fe_rec_u64(o, "entries", st->entries);
	fe_rec_u64(o, "inodes", st->inodes);
	fe_rec_u64(o, "data_bytes", st->data_bytes);
	fe_rec_u64(o, "stored_data_bytes", st->stored_data_bytes);
	fe_rec_u64(o, "image_bytes", st->image_bytes);
	if (st->stored_data_bytes)
		fe_rec_double(o, "compression_ratio", ratio(st));
	else
		fe_rec_null(o, "compression_ratio");
	fe_rec_u64(o, "alignment_waste_bytes", st->padding_bytes);
	fe_rec_double(o, "seconds", secs);
	fe_rec_bool(v, "ran", a->verify);
	fe_rec_bool(v, "passed", a->verify && verified);
	fe_rec_set(o, "verify", v);
	if (a->opts.dm_verity) {
		v = fe_rec_new();
		fe_rec_str(v, "root_hash", st->dm_verity.root_hex);
		fe_rec_u64(v, "hash_offset", st->dm_verity.hash_offset);
		fe_rec_set(o, "dm_verity", v);
	} else {
		fe_rec_null(o, "dm_verity");
	}
	text = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text)
		fe_json_oom();
	if (puts(text) < 0)
		ret = -EIO;
	json_object_put(o);
	return ret;
}

static int run(struct mkfs_args *a)
{
	struct progress_state ps = { 0 };
	struct imgfs_mkfs_stats st = { 0 };
	struct job j = { .a = a };
	struct imgfs_convert_hooks hooks = {
		.struct_size = sizeof(hooks),
		.created = output_created,
		.before_commit = before_commit,
		.arg = &j,
	};
	struct imgfs_error err;
	struct timespec end;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &ps.start);
	if (!a->quiet) {
		a->opts.warn = show_warning;
		a->opts.warn_arg = a;
	}
	if (!a->quiet && isatty(STDERR_FILENO)) {
		a->opts.progress = show_progress;
		a->opts.progress_arg = &ps;
	}
	ret = imgfs_convert(a->source, a->target, &a->opts, &hooks, &st, &err);
	tmp_live = 0;
	if (j.blocked)
		sigprocmask(SIG_SETMASK, &j.old, NULL);
	clear_progress(&ps);
	if (ret) {
		/* messages name archive entries: no raw control bytes */
		fprintf(stderr, "%s: ", a->prog);
		fe_escape_fputs(stderr,
				   err.msg[0] ? err.msg : strerror(-ret), 0);
		fputc('\n', stderr);
		return 1;
	}
	if (a->immutable) {
		ret = set_immutable(a->target);
		if (ret) {
			fprintf(stderr, "%s: %s: cannot set the immutable flag: %s (the image itself is complete)\n",
				a->prog, a->target, strerror(-ret));
			return 1;
		}
	}
	/* the result, as veritysetup format shows it: even with -q (in the
	 * JSON document with --json) */
	if (a->opts.dm_verity && !a->json)
		printf("Root hash:\t%s\nHash offset:\t%" PRIu64 "\n",
		       st.dm_verity.root_hex, st.dm_verity.hash_offset);
	clock_gettime(CLOCK_MONOTONIC, &end);
	if (!a->quiet)
		print_summary(a, &st, j.verified, elapsed(&ps.start, &end));
	if (a->json) {
		ret = print_json(a, &st, j.verified, elapsed(&ps.start, &end));
		if (!ret && fflush(stdout))
			ret = -errno;
		if (ret) {
			fprintf(stderr, "%s: writing the JSON summary: %s (the image itself is complete)\n",
				a->prog, strerror(-ret));
			return 1;
		}
	}
	return 0;
}

/* The last component of the name the program was invoked under. */
static const char *invoked_as(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;

	return slash ? slash + 1 : argv0 ? argv0 : "";
}

int main(int argc, char **argv)
{
	struct mkfs_args a;
	int r;

	fe_json_on_oom("mkfs.img", 1);
	if (!strcmp(invoked_as(argv[0]), MKFS_EROFS_NAME))
		r = erofs_cli_parse(argc, argv, &a);
	else
		r = parse_args(argc, argv, &a);
	if (r) {
		mkfs_args_free(&a);
		return r > 0 ? 0 : 2;
	}
	if (a.oci_mode) {
		r = mkfs_oci_run(&a);
		mkfs_args_free(&a);
		return r;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	/* past the file size limit, writes fail with EFBIG and are reported */
	signal(SIGXFSZ, SIG_IGN);
	return run(&a);
}
