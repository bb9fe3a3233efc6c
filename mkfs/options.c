// SPDX-License-Identifier: MIT
/*
 * mkfs.img's options: one table and one parsing pass for the native
 * command line and the OCI mode (--oci is an ordinary option; the
 * options of that mode need it), filling struct mkfs_args. main.c and
 * oci.c check the operands of their mode and run; the mkfs.erofs drop-in
 * (erofs_cli.c) has that tool's own syntax. Numbers are parsed by
 * frontend/number.h, compressor names by the library.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uuid/uuid.h>

#include "frontend/number.h"
#include "imgfs/oci.h"
#include "imgfs/writer.h"
#include "mkfs.h"

/* The native options' values are strtoll's decimal form. */
static int parse_decimal(const char *s, int64_t min, int64_t max,
			   int64_t *out)
{
	return fe_parse_int(s, 10, min, max, out);
}

enum {
	OPT_INLINE = 256,
	OPT_KEEP_WH,
	OPT_ALL_ROOT,
	OPT_FORCE_UID,
	OPT_FORCE_GID,
	OPT_UID_OFF,
	OPT_GID_OFF,
	OPT_IMMUTABLE,
	OPT_VERIFY,
	OPT_WORKERS,
	OPT_ZTAILPACKING,
	OPT_FRAGMENTS,
	OPT_IGNORE_FLAGS,
	OPT_FILE_FLAGS,
	OPT_ALLOW_MISSING_END,
	OPT_REQUIRE_END,
	OPT_NO_FSYNC,
	OPT_DM_VERITY,
	OPT_DM_VERITY_SALT,
	OPT_DM_VERITY_UUID,
	OPT_DM_VERITY_NO_SIDECAR,
	OPT_TAR_INDEX,
	OPT_TAR,
	OPT_JSON,
};

enum {
	/* the OCI mode's own options */
	OPT_OCI = 1024,
	OPT_REF,
	OPT_PLATFORM,
	OPT_JOBS,
	OPT_CACHE_DIR,
	OPT_NO_VERIFY,
	OPT_LAYER_MT,
	OPT_SUBJECT,
	OPT_LIST_UNITS,
	OPT_SHARD,
	OPT_ASSEMBLE,
	OPT_FLATTEN,
	OPT_MERGE,
	OPT_TRUST_RECORDS,
	OPT_GC,
	OPT_KEEP_GOING,
};

static const struct option long_opts[] = {
	{ "inline-data", no_argument, NULL, OPT_INLINE },
	{ "keep-whiteouts", no_argument, NULL, OPT_KEEP_WH },
	{ "all-root", no_argument, NULL, OPT_ALL_ROOT },
	{ "force-uid", required_argument, NULL, OPT_FORCE_UID },
	{ "force-gid", required_argument, NULL, OPT_FORCE_GID },
	{ "uid-offset", required_argument, NULL, OPT_UID_OFF },
	{ "gid-offset", required_argument, NULL, OPT_GID_OFF },
	{ "immutable", no_argument, NULL, OPT_IMMUTABLE },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "ztailpacking", no_argument, NULL, OPT_ZTAILPACKING },
	{ "fragments", no_argument, NULL, OPT_FRAGMENTS },
	{ "ignore-file-flags", no_argument, NULL, OPT_IGNORE_FLAGS },
	{ "file-flags", required_argument, NULL, OPT_FILE_FLAGS },
	{ "allow-missing-end", no_argument, NULL, OPT_ALLOW_MISSING_END },
	{ "require-end", no_argument, NULL, OPT_REQUIRE_END },
	{ "no-fsync", no_argument, NULL, OPT_NO_FSYNC },
	{ "dm-verity", no_argument, NULL, OPT_DM_VERITY },
	{ "dm-verity-salt", required_argument, NULL, OPT_DM_VERITY_SALT },
	{ "dm-verity-uuid", required_argument, NULL, OPT_DM_VERITY_UUID },
	{ "no-dm-verity-sidecar", no_argument, NULL, OPT_DM_VERITY_NO_SIDECAR },
	{ "tar-index", optional_argument, NULL, OPT_TAR_INDEX },
	/* named exactly, so that it is not taken for an abbreviation of
	 * --tar-index */
	{ "tar", optional_argument, NULL, OPT_TAR },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },


	/* the OCI mode: --oci, and options that need it */
	{ "oci", no_argument, NULL, OPT_OCI },
	{ "ref", required_argument, NULL, OPT_REF },
	{ "platform", required_argument, NULL, OPT_PLATFORM },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
	{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
	{ "layer-media-type", required_argument, NULL, OPT_LAYER_MT },
	{ "subject", no_argument, NULL, OPT_SUBJECT },
	{ "list-units", no_argument, NULL, OPT_LIST_UNITS },
	{ "shard", required_argument, NULL, OPT_SHARD },
	{ "assemble", no_argument, NULL, OPT_ASSEMBLE },
	{ "flatten", no_argument, NULL, OPT_FLATTEN },
	{ "merge", no_argument, NULL, OPT_MERGE },
	{ "trust-records", no_argument, NULL, OPT_TRUST_RECORDS },
	{ "gc", no_argument, NULL, OPT_GC },
	{ "keep-going", no_argument, NULL, OPT_KEEP_GOING },
	{ NULL, 0, NULL, 0 },
};


static int parse_blocksize(const char *s, unsigned int *bits)
{
	int64_t v;

	if (parse_decimal(s, 512, 4096, &v))
		return -1;
	for (unsigned int b = 9; b <= 12; b++) {
		if (v == (1 << b)) {
			*bits = b;
			return 0;
		}
	}
	return -1;
}

/* @valid says what would be accepted: the range, the choices. */
static int bad_value(const char *opt, const char *val, const char *valid)
{
	fprintf(stderr, "mkfs.img: invalid value for %s: '%s' (%s)\n", opt,
		val, valid);
	return -1;
}

static int bad_arg(const char *opt, const char *val)
{
	fprintf(stderr, "mkfs.img: invalid value for %s: '%s'\n", opt, val);
	return -1;
}

/* "--dm-verity-salt=HEX": veritysetup's form, "-" for no salt */
static int parse_salt(const char *s, struct imgfs_mkfs_options *o)
{
	size_t n = strlen(s);

	o->dm_verity_have_salt = true;
	o->dm_verity_salt_size = 0;
	if (!strcmp(s, "-"))
		return 0;
	if (!n || n % 2 || n / 2 > sizeof(o->dm_verity_salt))
		return bad_arg("--dm-verity-salt (even number of hex digits, at most 512, or -)", s);
	for (size_t i = 0; i < n / 2; i++) {
		unsigned int b;

		if (!isxdigit((unsigned char)s[2 * i]) ||
		    !isxdigit((unsigned char)s[2 * i + 1]) ||
		    sscanf(s + 2 * i, "%2x", &b) != 1)
			return bad_arg("--dm-verity-salt (hex digits)", s);
		o->dm_verity_salt[i] = (uint8_t)b;
	}
	o->dm_verity_salt_size = n / 2;
	return 0;
}

/* "-z ALG[,LEVEL][,DICTSIZE]" */
static int parse_compress(const char *arg, struct imgfs_mkfs_options *o)
{
	char buf[64], *level, *dict;
	int64_t v;

	if (strlen(arg) >= sizeof(buf))
		return bad_value("-z", arg, "ALG[,LEVEL][,DICT]");
	strcpy(buf, arg);
	level = strchr(buf, ',');
	if (level)
		*level++ = '\0';
	dict = level ? strchr(level, ',') : NULL;
	if (dict)
		*dict++ = '\0';
	if (imgfs_compress_kind_parse(buf, &o->compress))
		return bad_value("-z", arg,
				 "the algorithms are lz4, lz4hc, lzma, deflate and zstd");
	/* each algorithm's range is checked with the other options
	 * (imgfs_mkfs_options_check()), which names it */
	if (level && *level) {
		if (parse_decimal(level, 0, INT_MAX, &v))
			return bad_value("-z", arg,
					 "the level is a number: lz4hc 1 to 12, lzma 0 to 9, deflate 1 to 9, zstd 1 to 22");
		o->compress_level = (int)v;
	}
	if (dict) {
		if (parse_decimal(dict, 1, UINT32_MAX, &v))
			return bad_value("-z", arg,
					 "the dictionary size is a number of bytes");
		o->compress_dictsize = (uint32_t)v;
	}
	return 0;
}

/* How tar entries become inodes: the rules fsck --compare replays. */
static int parse_rule_opt(struct imgfs_mkfs_options *o, int c,
			   const char *arg)
{
	int64_t v;

	switch (c) {
	case OPT_KEEP_WH:
		o->whiteouts = IMGFS_WHITEOUT_KEEP;
		return 0;
	case OPT_IGNORE_FLAGS:
		o->file_flags = IMGFS_FILE_FLAGS_IGNORE;
		return 0;
	case OPT_FILE_FLAGS:
		if (!strcmp(arg, "warn"))
			o->file_flags = IMGFS_FILE_FLAGS_WARN;
		else if (!strcmp(arg, "error"))
			o->file_flags = IMGFS_FILE_FLAGS_ERROR;
		else if (!strcmp(arg, "ignore"))
			o->file_flags = IMGFS_FILE_FLAGS_IGNORE;
		else
			return bad_arg("--file-flags (warn, error or ignore)",
				       arg);
		return 0;
	case OPT_ALLOW_MISSING_END:
		o->allow_missing_end = true;
		o->require_end = false;
		return 0;
	case OPT_REQUIRE_END:
		o->require_end = true;
		o->allow_missing_end = false;
		return 0;
	case OPT_ALL_ROOT:
		o->all_root = true;
		return 0;
	case OPT_FORCE_UID:
	case OPT_FORCE_GID:
		if (parse_decimal(arg, 0, UINT32_MAX, &v))
			return bad_value(c == OPT_FORCE_UID ? "--force-uid" :
							      "--force-gid",
					 arg, "0 to 4294967295");
		*(c == OPT_FORCE_UID ? &o->force_uid : &o->force_gid) = v;
		return 0;
	case OPT_UID_OFF:
	case OPT_GID_OFF:
		if (parse_decimal(arg, -(int64_t)UINT32_MAX, UINT32_MAX, &v))
			return bad_value(c == OPT_UID_OFF ? "--uid-offset" :
							    "--gid-offset",
					 arg, "-4294967295 to 4294967295");
		*(c == OPT_UID_OFF ? &o->uid_offset : &o->gid_offset) = v;
		return 0;
	}
	return 1; /* not a rule */
}

/* Compression: algorithm, cluster size, workers, packing. */
static int parse_compress_opt(struct imgfs_mkfs_options *o, int c,
			       const char *arg)
{
	int64_t v;

	switch (c) {
	case 'z':
		return parse_compress(arg, o);
	case 'C':
		/* the block size is checked later, with -b */
		if (parse_decimal(arg, 1, 1 << 20, &v))
			return bad_value("-C", arg,
					 "a multiple of the block size up to 1048576 bytes");
		o->pcluster_size = (uint32_t)v;
		return 0;
	case OPT_WORKERS:
		if (parse_decimal(arg, 1, IMGFS_MAX_WORKERS, &v)) {
			fprintf(stderr,
				"mkfs.img: invalid value for --workers: '%s' (the range is 1 to %u)\n",
				arg, IMGFS_MAX_WORKERS);
			return -1;
		}
		o->workers = (unsigned int)v;
		return 0;
	case OPT_ZTAILPACKING:
		o->ztailpacking = true;
		return 0;
	case OPT_FRAGMENTS:
		o->fragments = true;
		return 0;
	}
	return 1; /* not a compression option */
}

/* The dm-verity tree after the image. */
static int parse_verity_opt(struct imgfs_mkfs_options *o, int c,
			     const char *arg)
{
	switch (c) {
	case OPT_DM_VERITY:
		o->dm_verity = true;
		return 0;
	case OPT_DM_VERITY_SALT:
		return parse_salt(arg, o);
	case OPT_DM_VERITY_UUID:
		if (uuid_parse(arg, o->dm_verity_uuid))
			return bad_arg("--dm-verity-uuid", arg);
		o->dm_verity_have_uuid = true;
		return 0;
	case OPT_DM_VERITY_NO_SIDECAR:
		o->dm_verity_no_sidecar = true;
		return 0;
	}
	return 1; /* not a dm-verity option */
}

static int parse_native_opt(struct mkfs_args *a, int c, const char *arg)
{
	struct imgfs_mkfs_options *o = &a->opts;
	int64_t v;
	int r = parse_rule_opt(o, c, arg);

	if (r == 1)
		r = parse_compress_opt(o, c, arg);
	if (r == 1)
		r = parse_verity_opt(o, c, arg);
	if (r != 1)
		return r;
	switch (c) {
	case 'b':
		a->have_blksz = true;
		return parse_blocksize(arg, &o->blkszbits) ?
			       bad_value("-b", arg,
					 "the block size is 512, 1024, 2048 or 4096") :
			       0;
	case OPT_TAR:
		fprintf(stderr,
			"mkfs.img: --tar is mkfs.erofs's option: mkfs.img takes SOURCE IMAGE (a tar or a directory), and --tar-index[=only] for tar-index images\n");
		return -1;
	case OPT_TAR_INDEX:
		if (!arg || !strcmp(arg, "append"))
			o->tar_index = IMGFS_TAR_INDEX_APPEND;
		else if (!strcmp(arg, "only"))
			o->tar_index = IMGFS_TAR_INDEX_ONLY;
		else
			return bad_arg("--tar-index (append or only)", arg);
		return 0;
	case OPT_INLINE:
		o->inline_data = true;
		return 0;
	case 'T':
		if (parse_decimal(arg, 0, INT64_MAX, &v))
			return bad_value("-T", arg,
					 "seconds since 1970, 0 or more");
		o->have_build_time = true;
		o->build_time = v;
		return 0;
	case 'U':
		if (uuid_parse(arg, o->uuid))
			return bad_value("-U", arg,
					 "a UUID: 8-4-4-4-12 hex digits");
		o->have_uuid = true;
		return 0;
	case 'L':
		if (strlen(arg) > 16)
			return bad_value("-L", arg, "at most 16 bytes");
		strncpy(o->label, arg, sizeof(o->label) - 1);
		return 0;
	case 'x':
		if (parse_decimal(arg, 0, UINT32_MAX, &v))
			return bad_value("-x", arg, "0 to 4294967295");
		o->shared_xattr_min = (unsigned int)v;
		return 0;
	case OPT_IMMUTABLE:
		a->immutable = true;
		return 0;
	case OPT_NO_FSYNC:
		o->no_fsync = true;
		return 0;
	case OPT_VERIFY:
		a->verify = true;
		return 0;
	case OPT_JSON:
		a->json = true;
		return 0;
	case 'q':
		a->quiet = true;
		return 0;
	}
	return 1; /* an option of the OCI mode */
}

static int add_str(const char ***list, size_t *n, const char *s)
{
	const char **p = realloc(*list, (*n + 1) * sizeof(**list));

	if (!p)
		return -1;
	p[(*n)++] = s;
	*list = p;
	return 0;
}

/* "--shard=I/N": two numbers, digits only, I below N */
static int parse_shard(const char *s, struct imgfs_oci_options *o)
{
	const char *slash = strchr(s, '/');
	uint64_t i, n;
	char left[24];

	if (!slash || (size_t)(slash - s) >= sizeof(left))
		goto bad;
	memcpy(left, s, (size_t)(slash - s));
	left[slash - s] = '\0';
	if (fe_parse_uint(left, 10, 0, UINT64_MAX, &i) ||
	    fe_parse_uint(slash + 1, 10, 1, UINT64_MAX, &n) || i >= n)
		goto bad;
	o->shard_index = i;
	o->shard_count = n;
	return 0;
bad:
	fprintf(stderr,
		"mkfs.img: invalid value for --shard: '%s' (I/N with 0 <= I < N)\n",
		s);
	return -1;
}

static int parse_platform(const char *s)
{
	const char *a = strchr(s, '/');

	if (!a || a == s || !a[1] || a[1] == '/' ||
	    (strchr(a + 1, '/') &&
	     (!strchr(a + 1, '/')[1] || strchr(strchr(a + 1, '/') + 1, '/')))) {
		fprintf(stderr,
			"mkfs.img: invalid value for --platform: '%s' (OS/ARCH or OS/ARCH/VARIANT)\n",
			s);
		return -1;
	}
	return 0;
}

static int set_mode(struct mkfs_oci_args *x, int c, const char *arg)
{
	if (x->mode != MKFS_OCI_ALL) {
		fputs("mkfs.img: --list-units, --shard, --assemble, --flatten and --merge exclude each other\n",
		      stderr);
		return -1;
	}
	x->mode = c == OPT_LIST_UNITS ? MKFS_OCI_LIST
		  : c == OPT_SHARD    ? MKFS_OCI_SHARD
		  : c == OPT_FLATTEN  ? MKFS_OCI_FLATTEN
		  : c == OPT_MERGE    ? MKFS_OCI_MERGE
				      : MKFS_OCI_ASSEMBLE;
	return c == OPT_SHARD ? parse_shard(arg, &x->o) : 0;
}

static int parse_oci_opt(struct mkfs_args *a, int c, const char *arg)
{
	struct mkfs_oci_args *x = &a->oci;
	struct imgfs_oci_options *o = &x->o;
	uint64_t v;

	switch (c) {
	case OPT_OCI:
		a->oci_mode = true;
		return 0;
	case OPT_REF:
		return add_str(&x->refs, &o->nr_refs, arg);
	case OPT_PLATFORM:
		if (parse_platform(arg))
			return -1;
		return add_str(&x->platforms, &o->nr_platforms, arg);
	case OPT_JOBS:
		if (fe_parse_uint(arg, 10, 1, 1024, &v)) {
			fprintf(stderr,
				"mkfs.img: invalid value for --jobs: '%s' (1 to 1024)\n",
				arg);
			return -1;
		}
		o->jobs = (unsigned int)v;
		return 0;
	case OPT_CACHE_DIR:
		o->cache_dir = arg;
		return 0;
	case OPT_NO_VERIFY:
		o->no_verify = true;
		return 0;
	case OPT_TRUST_RECORDS:
		o->trust_records = true;
		return 0;
	case OPT_LAYER_MT:
		if (imgfs_oci_layer_type_parse(arg, &o->layer_type)) {
			fprintf(stderr,
				"mkfs.img: invalid value for --layer-media-type: '%s' (application/vnd.erofs.layer.v1, application/vnd.erofs.layer.v1+zstd or application/vnd.erofs)\n",
				arg);
			return -1;
		}
		return 0;
	case OPT_SUBJECT:
		o->subject = true;
		return 0;
	case OPT_GC:
		x->gc = true;
		return 0;
	case OPT_KEEP_GOING:
		o->keep_going = true;
		return 0;
	}
	return set_mode(x, c, arg);
}

/*
 * One option: the OCI mode's are remembered by name, for the error when
 * --oci is not given.
 */
static int parse_opt(struct mkfs_args *a, int c, const char *arg, int idx)
{
	int r = parse_native_opt(a, c, arg);

	if (r <= 0)
		return r;
	if (c != OPT_OCI && !a->oci_only_opt)
		a->oci_only_opt = long_opts[idx].name;
	return parse_oci_opt(a, c, arg);
}

/* -T wins over the environment: an explicit option first. */
static int build_time(struct mkfs_args *a)
{
	int64_t t;
	int r;

	if (a->opts.have_build_time)
		return 0;
	r = fe_source_date_epoch("mkfs.img", &t);
	if (r < 0)
		return -1;
	if (r > 0) {
		a->opts.have_build_time = true;
		a->opts.build_time = t;
	}
	return 0;
}

void mkfs_args_free(struct mkfs_args *a)
{
	free(a->oci.refs);
	free(a->oci.platforms);
	a->oci.refs = a->oci.platforms = NULL;
}

int mkfs_parse(int argc, char **argv, struct mkfs_args *a)
{
	char *argv0 = argv[0];
	int c, idx = 0, ret = 0;

	memset(a, 0, sizeof(*a));
	a->prog = "mkfs.img";
	imgfs_mkfs_options_init(&a->opts);
	imgfs_oci_options_init(&a->oci.o);
	/* getopt's own messages start with argv[0]: the program's name */
	argv[0] = (char *)a->prog;
	while (!ret && (c = getopt_long(argc, argv, "b:T:U:L:x:z:C:qhV",
					long_opts, &idx)) != -1) {
		if (c == 'h' || c == 'V')
			ret = c == 'h' ? MKFS_PARSE_HELP : MKFS_PARSE_VERSION;
		else if (c == '?' || parse_opt(a, c, optarg, idx))
			ret = -1;
		idx = 0;
	}
	argv[0] = argv0;
	a->optind = optind;
	if (ret)
		return ret;
	if (a->oci_only_opt && !a->oci_mode) {
		fprintf(stderr, "mkfs.img: --%s needs --oci\n",
			a->oci_only_opt);
		return -1;
	}
	return build_time(a);
}
