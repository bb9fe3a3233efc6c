/* SPDX-License-Identifier: MIT */
/*
 * frontend/json_rec.h - JSON records of the programs' documents (json-c).
 *
 * One way for mkfs.img, fsck.img and dump.img to build a JSON record: a
 * json-c object whose strings from outside (names, paths, messages
 * quoting them) always go in as bytes (frontend/json_str.h), so a name
 * that is not UTF-8 reads the same in every document. json-c fails only
 * when out of memory; a document cannot be written then, so these
 * helpers end the program (fe_json_on_oom() says how).
 */
#ifndef FRONTEND_JSON_REC_H
#define FRONTEND_JSON_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;

/* Out of memory: "@prog: out of memory" on stderr, exit(@code). */
void fe_json_on_oom(const char *prog, int code);
void fe_json_oom(void) __attribute__((noreturn));
/* @v, or the end of the program when it is NULL (a json-c constructor
 * failed). */
struct json_object *fe_json_checked(struct json_object *v);

struct json_object *fe_rec_new(void);
struct json_object *fe_rec_array(void);
/* Member @key = @v (@v must not be NULL: use fe_rec_null()). */
void fe_rec_set(struct json_object *o, const char *key, struct json_object *v);
void fe_rec_null(struct json_object *o, const char *key);
void fe_rec_u64(struct json_object *o, const char *key, uint64_t v);
void fe_rec_i64(struct json_object *o, const char *key, int64_t v);
void fe_rec_int(struct json_object *o, const char *key, int v);
void fe_rec_bool(struct json_object *o, const char *key, bool v);
void fe_rec_double(struct json_object *o, const char *key, double v);
/* Bytes from outside, as fe_json_add_bytes() (escapes listed). */
void fe_rec_bytes(struct json_object *o, const char *key, const void *s,
		  size_t len);
/* fe_rec_bytes() of a NUL-terminated string; JSON null when @s is NULL. */
void fe_rec_str(struct json_object *o, const char *key, const char *s);
void fe_rec_append(struct json_object *a, struct json_object *v);
/* An array element from outside: bytes as fe_json_bytes(). */
void fe_rec_append_str(struct json_object *a, const char *s);

/* @o as json-c writes it with @flags, then a newline, on @f. */
void fe_json_print(FILE *f, struct json_object *o, int flags);

#endif /* FRONTEND_JSON_REC_H */
