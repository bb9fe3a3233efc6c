/* SPDX-License-Identifier: MIT */
/*
 * mkfs.img's two command lines share one run: the native one (main.c)
 * and mkfs.erofs's (erofs_cli.c), chosen by the name the program is
 * invoked under. Both fill struct mkfs_args.
 */
#ifndef MKFS_MKFS_H
#define MKFS_MKFS_H

#include <stdbool.h>
#include <stdint.h>

#include "imgfs/writer.h"

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
};

/*
 * $SOURCE_DATE_EPOCH into *@t (strtoll's form): 1 when set, 0 when
 * unset, -1 when it is not a number from 0 to INT64_MAX (nothing
 * reported). Shared by both command lines.
 */
int mkfs_source_date_epoch(int64_t *t);

/* The name that switches to mkfs.erofs's command line. */
#define MKFS_EROFS_NAME "mkfs.erofs"

/*
 * Parse mkfs.erofs's command line into @a. Returns 0 to run, 1 to exit
 * successfully (--help, --version), -1 on a usage error (reported).
 */
int erofs_cli_parse(int argc, char **argv, struct mkfs_args *a);

/* The native command line's long options and their parser (main.c),
 * shared with the OCI mode. */
struct option;
const struct option *mkfs_long_options(void);
int mkfs_parse_opt(struct mkfs_args *a, int c, const char *arg);

/* Whether the command line asks for the OCI mode (--oci before "--"). */
bool mkfs_oci_requested(int argc, char **argv);
/* The OCI mode (oci.c): parses its command line, runs, gives the exit
 * status. */
int mkfs_oci_main(int argc, char **argv);

#endif /* MKFS_MKFS_H */
