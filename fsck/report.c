// SPDX-License-Identifier: MIT
/*
 * report.c - fsck.img's output model (report.h): findings printed as text
 * as they come, or kept as JSON records for one document at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json_object.h>
#include <json-c/printbuf.h>

#include "frontend/escape.h"
#include "frontend/json_rec.h"
#include "fsck.h"
#include "imgfs/stats.h"
#include "report.h"

/*
 * 1: the first versioned form; byte strings as frontend/json_str.h says.
 * 2: laid out like dump.img's document: the superblock's fields in a
 * "superblock" object, every key always present (null when it does not
 * apply).
 */
#define FSCK_SCHEMA_VERSION 2

/*
 * --json: one document, made by json-c. Findings, files and differences
 * are records serialized as they come (one line each, in memory streams:
 * text holds far less than live json-c objects) and go into the document
 * whole at the end, through a custom serializer of their array.
 */
#define RECORD_FLAGS (JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)
#define DOCUMENT_FLAGS (RECORD_FLAGS | JSON_C_TO_STRING_PRETTY)

/* Serialize @rec as one line of @f, and drop it. */
static void put_record(FILE *f, bool *first, struct json_object *rec)
{
	const char *s = json_object_to_json_string_ext(rec, RECORD_FLAGS);

	if (!s)
		fe_json_oom();
	fputs(s, f);
	fputc('\n', f);
	*first = false;
	json_object_put(rec);
}

void fsck_report_problem(void *arg, const struct imgfs_check_problem *p)
{
	struct fsck_out *out = arg;

	if (out->json) {
		struct json_object *rec = fe_json_checked(json_object_new_object());

		fe_rec_set(rec, "severity", json_object_new_string(
				imgfs_check_severity_name(p->severity)));
		fe_rec_set(rec, "area", json_object_new_string(
				imgfs_check_area_name(p->area)));
		if (p->nid != IMGFS_CHECK_NO_NID)
			fe_rec_u64(rec, "nid", p->nid);
		if (p->path)
			fe_rec_str(rec, "path", p->path);
		fe_rec_str(rec, "message", p->msg);
		put_record(out->problems, &out->problems_first, rec);
		return;
	}
	if (out->quiet && p->severity != IMGFS_CHECK_ERROR)
		return;
	if (p->severity == IMGFS_CHECK_NOTE && !out->verbose)
		return;
	printf("%s: %s: ", imgfs_check_severity_name(p->severity),
	       imgfs_check_area_name(p->area));
	if (p->path) {
		fe_escape_fputs(stdout, p->path, 0);
		printf(" (nid %" PRIu64 "): ", p->nid);
	} else if (p->nid != IMGFS_CHECK_NO_NID) {
		printf("nid %" PRIu64 ": ", p->nid);
	}
	/* messages quote names from the image */
	fe_escape_fputs(stdout, p->msg, 0);
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
		struct json_object *rec = fe_json_checked(json_object_new_object());

		fe_rec_str(rec, "path", path);
		fe_rec_set(rec, "kind", json_object_new_string(kind));
		fe_rec_str(rec, "message", msg);
		put_record(out->diffs, &out->diffs_first, rec);
		return;
	}
	fputs("differs: ", stdout);
	fe_escape_fputs(stdout, path, 0);
	printf(": %s: ", kind);
	fe_escape_fputs(stdout, msg, 0);
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
 * The path is relative to the image's root as "./PATH", so that
 * "sha256sum -c" run inside an extracted tree reads the extracted files
 * (an absolute path would name the host's), and a file named "-" is not
 * taken for standard input.
 */
static void print_digest(const char *hex, const char *path)
{
	size_t len;

	while (*path == '/')
		path++;
	len = strlen(path);
	if (fe_escape_needed(path, len, FE_ESC_NL))
		putchar('\\');
	printf("%s  ./", hex);
	fe_escape_fwrite(stdout, path, len, FE_ESC_NL);
	putchar('\n');
}

void fsck_report_entry(struct fsck_out *out, const struct imgfs_check_entry *e)
{
	char hex[2 * IMGFS_SHA256_SIZE + 1];
	bool show = out->verbose || (out->digest && e->sha256);
	int i;

	if (!show)
		return;
	for (i = 0; e->sha256 && i < IMGFS_SHA256_SIZE; i++)
		sprintf(hex + 2 * i, "%02x", e->sha256[i]);
	if (out->json) {
		struct json_object *rec = fe_json_checked(json_object_new_object());

		fe_rec_str(rec, "path", e->path);
		fe_rec_u64(rec, "nid", e->inode->nid);
		fe_rec_set(rec, "type",
		    json_object_new_string(type_name(e->inode->mode)));
		fe_rec_u64(rec, "size", e->inode->size);
		if (e->link_to)
			fe_rec_str(rec, "link_to", e->link_to);
		if (e->sha256)
			fe_rec_set(rec, "sha256", json_object_new_string(hex));
		put_record(out->files, &out->files_first, rec);
		return;
	}
	if (out->digest && e->sha256) {
		print_digest(hex, e->path);
	} else if (out->verbose) {
		printf("%s ", type_name(e->inode->mode));
		fe_escape_fputs(stdout, e->path, 0);
		printf(" (nid %" PRIu64 ", %" PRIu64 " %s)", e->inode->nid,
		       e->inode->size, e->inode->size == 1 ? "byte" : "bytes");
		if (e->link_to) {
			fputs(" link to ", stdout);
			fe_escape_fputs(stdout, e->link_to, 0);
		}
		putchar('\n');
	}
}

int fsck_out_open(struct fsck_out *out)
{
	out->problems_first = out->files_first = out->diffs_first = true;
	if (!out->json)
		return 0;
	out->problems = open_memstream(&out->problems_buf, &out->problems_len);
	out->files = open_memstream(&out->files_buf, &out->files_len);
	out->diffs = open_memstream(&out->diffs_buf, &out->diffs_len);
	return out->problems && out->files && out->diffs ? 0 : -ENOMEM;
}

/* Indentation of json-c's pretty output at @level. */
static int indent(struct printbuf *pb, int level, int flags)
{
	int i;

	if (!(flags & JSON_C_TO_STRING_PRETTY))
		return 0;
	if (printbuf_memappend(pb, "\n", 1) < 0)
		return -1;
	for (i = 0; i < level; i++)
		if ((flags & JSON_C_TO_STRING_PRETTY_TAB ?
			     printbuf_memappend(pb, "\t", 1) :
			     printbuf_memappend(pb, "  ", 2)) < 0)
			return -1;
	return 0;
}

/* An array of records already serialized by put_record(), one a line. */
struct record_lines {
	const char *buf;
	size_t len;
};

static int records_to_json(struct json_object *jso, struct printbuf *pb,
			   int level, int flags)
{
	const struct record_lines *r = json_object_get_userdata(jso);
	const char *p = r->buf, *end = r->buf + r->len, *nl;

	if (printbuf_memappend(pb, "[", 1) < 0)
		return -1;
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if ((p != r->buf && printbuf_memappend(pb, ",", 1) < 0) ||
		    indent(pb, level + 1, flags) < 0 ||
		    printbuf_memappend(pb, p, (int)(nl - p)) < 0)
			return -1;
	}
	if (r->len && indent(pb, level, flags) < 0)
		return -1;
	return printbuf_memappend(pb, "]", 1) < 0 ? -1 : 0;
}

/* Close memory stream @f and add its records as array @key of @doc. */
static void set_records(struct json_object *doc, const char *key, FILE *f,
			char *const *buf, const size_t *len,
			struct record_lines *r)
{
	struct json_object *arr = fe_json_checked(json_object_new_array());

	/* the stream's buffer and length are current after a flush */
	if (fflush(f))
		fe_json_oom();
	r->buf = *buf ? *buf : "";
	r->len = *buf ? *len : 0;
	json_object_set_serializer(arr, records_to_json, r, NULL);
	fe_rec_set(doc, key, arr);
}

/* "superblock": the fields dump.img shows under the same names */
static struct json_object *json_superblock(const struct imgfs_sb_info *sb)
{
	struct json_object *d = fe_json_checked(json_object_new_object());

	fe_rec_u64(d, "block_size", sb->blksz);
	fe_rec_u64(d, "feature_compat", sb->feature_compat);
	fe_rec_u64(d, "feature_incompat", sb->feature_incompat);
	return d;
}

/* "dm_verity": what was found after the image, when a tree is there */
static struct json_object *json_verity(const struct fsck_verity *v)
{
	struct json_object *d = fe_json_checked(json_object_new_object());

	fe_rec_u64(d, "hash_offset", v->hash_offset);
	fe_rec_set(d, "verified", json_object_new_boolean(v->ok));
	if (v->ok) {
		fe_rec_set(d, "root_hash",
		    json_object_new_string(v->chk.info.root_hex));
		fe_rec_u64(d, "data_block_size", v->chk.info.data_block_size);
		fe_rec_u64(d, "data_blocks", v->chk.info.data_blocks);
	}
	if (v->root_from)
		fe_rec_set(d, "root_hash_from", json_object_new_string(v->root_from));
	return d;
}

void fsck_report_json(struct fsck_out *out, const struct fsck_outcome *oc)
{
	const struct imgfs_check_result *res = oc->res;
	const struct fsck_verity *v = oc->v;
	struct json_object *doc = fe_json_checked(json_object_new_object());
	struct record_lines problems, files, diffs;
	const char *text;

	fe_rec_u64(doc, "schema_version", FSCK_SCHEMA_VERSION);
	fe_rec_str(doc, "image", oc->image);
	if (oc->sb)
		fe_rec_set(doc, "superblock", json_superblock(oc->sb));
	else
		fe_rec_null(doc, "superblock");
	fe_rec_u64(doc, "errors", res->errors);
	fe_rec_u64(doc, "warnings", res->warnings);
	fe_rec_u64(doc, "notes", res->notes);
	fe_rec_set(doc, "stats", fsck_json_check_stats(res));
	set_records(doc, "problems", out->problems, &out->problems_buf,
		    &out->problems_len, &problems);
	if (out->verbose || out->digest)
		set_records(doc, "files", out->files, &out->files_buf,
			    &out->files_len, &files);
	else
		fe_rec_null(doc, "files");
	if (oc->compare_tar)
		set_records(doc, "differences", out->diffs, &out->diffs_buf,
			    &out->diffs_len, &diffs);
	else
		fe_rec_null(doc, "differences");
	if (oc->extracting)
		fe_rec_u64(doc, "extracted", oc->extracted);
	else
		fe_rec_null(doc, "extracted");
	if (v->present)
		fe_rec_set(doc, "dm_verity", json_verity(v));
	else
		fe_rec_null(doc, "dm_verity");
	if (oc->fatal)
		fe_rec_str(doc, "fatal", oc->fatal);
	else
		fe_rec_null(doc, "fatal");
	fe_rec_set(doc, "exit_code", json_object_new_int(oc->code));
	text = json_object_to_json_string_ext(doc, DOCUMENT_FLAGS);
	if (!text)
		fe_json_oom();
	puts(text);
	json_object_put(doc);
	fclose(out->problems);
	fclose(out->files);
	fclose(out->diffs);
	free(out->problems_buf);
	free(out->files_buf);
	free(out->diffs_buf);
}

/* "1 error", "2 errors": @n then the word in the form its number needs. */
static void count(FILE *f, uint64_t n, const char *one, const char *many)
{
	fprintf(f, "%" PRIu64 " %s", n, n == 1 ? one : many);
}

/* The human summary, on standard error: stdout holds only data. */
void fsck_report_summary(const struct fsck_out *out,
			 const struct fsck_outcome *oc)
{
	const struct imgfs_check_result *res = oc->res;
	const struct fsck_verity *v = oc->v;
	FILE *f = stderr;

	if (out->quiet)
		return;
	if (v->ok) {
		fe_escape_fputs(f, oc->image, 0);
		fprintf(f, ": dm-verity tree at offset %" PRIu64 " matches the image (",
			v->hash_offset);
		count(f, v->chk.info.data_blocks, "data block", "data blocks");
		fprintf(f, " of %u bytes), root hash %s%s%s\n",
			v->chk.info.data_block_size, v->chk.info.root_hex,
			v->root_from ? " as given by " : " (not compared)",
			v->root_from ? v->root_from : "");
	}
	fe_escape_fputs(f, oc->image, 0);
	fputs(": ", f);
	count(f, res->inodes, "inode", "inodes");
	fputs(" (", f);
	count(f, res->dirs, "directory", "directories");
	fputs(", ", f);
	count(f, res->regular, "regular", "regular");
	fputs(", ", f);
	count(f, res->symlinks, "symlink", "symlinks");
	fputs(", ", f);
	count(f, res->specials, "special", "special");
	fputs(", ", f);
	count(f, res->hardlinks, "extra hard link", "extra hard links");
	fputs("), ", f);
	count(f, res->data_bytes, "data byte", "data bytes");
	fputs(" read; ", f);
	count(f, res->errors, "error", "errors");
	fputs(", ", f);
	count(f, res->warnings, "warning", "warnings");
	if (oc->compare_tar) {
		fputs(", ", f);
		count(f, out->differences, "difference", "differences");
		fputs(" from ", f);
		fe_escape_fputs(f, oc->compare_tar, 0);
	}
	fputc('\n', f);
	if (res->physical_bytes) {
		fe_escape_fputs(f, oc->image, 0);
		fputs(": file data ", f);
		count(f, res->logical_bytes, "byte", "bytes");
		fputs(" from ", f);
		count(f, res->physical_bytes, "image byte", "image bytes");
		fprintf(f, ": amplification %.1f (warning above %u)\n",
			(double)res->logical_bytes /
				(double)res->physical_bytes,
			IMGFS_CHECK_AMPLIFICATION_MAX);
	}
}
