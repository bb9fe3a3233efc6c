/* SPDX-License-Identifier: MIT */
/*
 * mkfs.img's command lines share one run. The native one and the OCI
 * mode are one option table parsed in one pass (options.c); the
 * mkfs.erofs drop-in (erofs_cli.c), chosen by the name the program is
 * invoked under, has that tool's syntax. All fill struct mkfs_args.
 * Calls go one way: main.c -> options.c, erofs_cli.c, oci.c.
 */
#ifndef MKFS_MKFS_H
#define MKFS_MKFS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "imgfs/oci.h"
#include "imgfs/writer.h"

/* What --oci does (one of --list-units, --shard, ..., or a whole run). */
enum mkfs_oci_mode {
	MKFS_OCI_ALL,
	MKFS_OCI_LIST,
	MKFS_OCI_SHARD,
	MKFS_OCI_ASSEMBLE,
	MKFS_OCI_FLATTEN,
	MKFS_OCI_MERGE
};

/* The OCI mode's own options (--oci). */
struct mkfs_oci_args {
	struct imgfs_oci_options o; /* its mkfs options: mkfs_args.opts */
	const char **refs;
	const char **platforms;
	enum mkfs_oci_mode mode;
	bool gc; /* then remove what DST/index.json does not reach */
	const char *src;
	const char *dst;
};

struct mkfs_args {
	struct imgfs_mkfs_options opts;
	const char *prog; /* for messages: "mkfs.img" or "mkfs.erofs" */
	const char *source; /* "-": standard input */
	const char *target;
	bool immutable;
	bool verify;
	bool quiet;
	bool have_blksz; /* -b given */
	bool json; /* --json: the summary as JSON on stdout */
	int optind; /* the first operand */
	bool oci_mode; /* --oci */
	const char *oci_only_opt; /* the first option that needs --oci */
	struct mkfs_oci_args oci;
};

/* The name that switches to mkfs.erofs's command line. */
#define MKFS_EROFS_NAME "mkfs.erofs"

/*
 * Parse mkfs.erofs's command line into @a. Returns 0 to run, 1 to exit
 * successfully (--help, --version), -1 on a usage error (reported).
 */
int erofs_cli_parse(int argc, char **argv, struct mkfs_args *a);

enum { MKFS_PARSE_HELP = 1, MKFS_PARSE_VERSION = 2 };

/*
 * Parse mkfs.img's options (both modes) into @a, SOURCE_DATE_EPOCH
 * included; the operands start at @a->optind. Returns 0 to go on,
 * MKFS_PARSE_HELP or MKFS_PARSE_VERSION (after the whole line: --oci
 * anywhere selects the OCI mode's help), -1 on a usage error (reported).
 */
int mkfs_parse(int argc, char **argv, struct mkfs_args *a);
void mkfs_args_free(struct mkfs_args *a);

/* The OCI mode (oci.c): its help, the end of its usage errors, the
 * check of its operands and options (-1: reported), the run (the exit
 * status). */
void mkfs_oci_usage(FILE *f);
void mkfs_oci_usage_error(void);
int mkfs_oci_check(int argc, char **argv, struct mkfs_args *a);
int mkfs_oci_run(struct mkfs_args *a);

#endif /* MKFS_MKFS_H */
