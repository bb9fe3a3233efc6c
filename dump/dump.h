/* SPDX-License-Identifier: MIT */
/*
 * dump.h - what the files of dump.img share.
 *
 * Each view (superblock, inode, listing, contents, statistics) prints
 * either plain text or one section of the JSON document. Views return 0 or
 * a negative errno; the reason is in ctx->err and main() prints it once.
 */
#ifndef DUMP_DUMP_H
#define DUMP_DUMP_H

#include "frontend/json_rec.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "frontend/json_rec.h"
#include "imgfs/reader.h"
#include "imgfs/stats.h"

/* 2: byte strings follow frontend/json_str.h (UTF-8, "\udcXX"), not ISO-8859-1 */
#define DUMP_SCHEMA_VERSION 2
#define JSON_MAX_DEPTH 32

struct json_object;

/*
 * The JSON document, written as it is produced (json.c): levels opened and
 * closed here, values and records made by json-c. @key names a member of
 * the open object; NULL makes an element of the open array.
 */
struct json {
	FILE *f;
	int depth;
	bool has_items[JSON_MAX_DEPTH]; /* a comma is due before the next */
	/* per open object: its members holding "\udcXX" escapes, or NULL */
	struct json_object *escaped[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *f);
void json_obj_open(struct json *j, const char *key);
void json_obj_close(struct json *j);
void json_arr_open(struct json *j, const char *key);
void json_arr_close(struct json *j);
/* Write @v (nested objects and arrays laid out like the open levels) and
 * drop the reference. Objects list their escaped members last
 * (FE_JSON_ESCAPED_KEY), the open ones when they are closed. */
void json_put(struct json *j, const char *key, struct json_object *v);
/* Write the members of record @o into the open object; drops @o. */
void json_put_members(struct json *j, struct json_object *o);
/* A string value written in pieces: begin, any number of raw pieces (no
 * character needing an escape: base64), end. */
void json_str_begin(struct json *j, const char *key);
void json_str_raw(struct json *j, const char *s, size_t len);
void json_str_end(struct json *j);
/* Finish the document with a newline. */
void json_finish(struct json *j);

/* Records: frontend/json_rec.h; and a ratio with six decimals, or null. */
void rec_ratio(struct json_object *o, const char *key, uint64_t num,
	       uint64_t den);

/* Text helpers (util.c). */
/* @one when @n is 1, else @many: "1 byte", "2 bytes". */
const char *plural(uint64_t n, const char *one, const char *many);
enum esc_mode {
	ESC_NAME, /* fe_escape() with no flags: valid UTF-8 passes */
	ESC_VALUE, /* all but printable ASCII escaped (\xNN), '\' as \\ */
};
void print_escaped(FILE *f, const void *s, size_t len, enum esc_mode mode);
/* "-rwxr-xr-x" with s/S/t/T; @buf holds 11 bytes. */
void mode_string(uint32_t mode, char *buf);
/* ISO 8601 UTC time, with ".nnnnnnnnnZ" when @with_nsec; a plain number
 * when out of range. @buf holds 48 bytes. */
void iso_time(int64_t sec, uint32_t nsec, bool with_nsec, char *buf);
/* The short type letter of ls ("-", "d", "l", "c", "b", "p", "s", "?"). */
char mode_type_char(uint32_t mode);

struct dump_ctx {
	const char *prog;
	struct imgfs_image *img;
	const struct imgfs_sb_info *sb;
	struct imgfs_error err;
	bool json;
	FILE *out;
	struct json j;
};

/* A file to show: by path, by nid, or both (path resolved to nid). */
struct dump_target {
	const char *path; /* NULL if given by nid */
	uint64_t nid;
};

int dump_superblock(struct dump_ctx *ctx);
int dump_inode(struct dump_ctx *ctx, const struct dump_target *t);
int dump_ls(struct dump_ctx *ctx, const struct dump_target *t, bool recursive);
int dump_cat(struct dump_ctx *ctx, const struct dump_target *t);
int dump_stats(struct dump_ctx *ctx);

/* Helpers shared by the views (inode.c). */
int read_symlink(struct dump_ctx *ctx, const struct imgfs_inode *inode,
		 char **target, size_t *len);
bool inode_is_device(const struct imgfs_inode *inode);
/* Add the facts common to the inode view and ls entries to record @o. */
void json_inode_basics(struct json_object *o, const struct imgfs_inode *inode);

#endif /* DUMP_DUMP_H */
