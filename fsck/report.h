/* SPDX-License-Identifier: MIT */
/*
 * report.h - fsck.img's output model: the findings of a check (problems,
 * files, --compare differences) as they come, counted, and printed as
 * text on stdout or kept for one JSON document; the summary at the end.
 */
#ifndef FSCK_REPORT_H
#define FSCK_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "imgfs/check.h"
#include "imgfs/reader.h"
#include "imgfs/verity.h"

/* Output sink: text on stdout, or JSON collected and printed at the end. */
struct fsck_out {
	bool json;
	bool quiet;
	bool verbose;
	bool digest; /* --digest: each file's SHA-256, sha256sum's lines */
	FILE *problems; /* JSON records, one a line (memstreams) */
	FILE *files;
	FILE *diffs;
	char *problems_buf, *files_buf, *diffs_buf;
	size_t problems_len, files_len, diffs_len;
	bool problems_first, files_first, diffs_first;
	uint64_t differences;
};

/* What the dm-verity step found, for the summary and the JSON report. */
struct fsck_verity {
	bool present; /* a tree was found (and checked) */
	bool ok;
	const char *root_from; /* what the root hash was compared with */
	struct imgfs_verity_check chk;
	uint64_t hash_offset;
};

/* How the run ended: what the summary and the JSON document tell. */
struct fsck_outcome {
	const char *image;
	const char *compare_tar; /* NULL: no --compare */
	bool extracting; /* --extract was asked for */
	uint64_t extracted;
	const struct imgfs_check_result *res;
	const struct imgfs_sb_info *sb; /* NULL: the image did not open */
	const struct fsck_verity *v;
	const char *fatal; /* the operational error, NULL if none */
	int code; /* the exit code */
};

/* Open the record streams of --json. Returns 0 or -ENOMEM. */
int fsck_out_open(struct fsck_out *out);

/* The checker's report callback (imgfs_check_options.report), @arg the
 * struct fsck_out; also for the program's own findings. */
void fsck_report_problem(void *arg, const struct imgfs_check_problem *p);

/* A file the check walked: listed with --verbose, digested with --digest. */
void fsck_report_entry(struct fsck_out *out,
		       const struct imgfs_check_entry *e);

/* Report one --compare difference about @path. */
void fsck_difference(struct fsck_out *out, const char *path, const char *kind,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* --json: the whole document on stdout; closes the record streams. */
void fsck_report_json(struct fsck_out *out, const struct fsck_outcome *oc);

/* The human summary, on standard error (stdout holds only data). */
void fsck_report_summary(const struct fsck_out *out,
			 const struct fsck_outcome *oc);

#endif /* FSCK_REPORT_H */
