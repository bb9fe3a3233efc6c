/* SPDX-License-Identifier: MIT */
/*
 * frontend/json_str.h - JSON strings for bytes that may not be UTF-8 (json-c).
 *
 * Names, symlink targets, xattrs, labels and messages quoting them come
 * from images and archives: any bytes at all. Every JSON document of the
 * tools writes them with one policy:
 *
 *   valid UTF-8 passes through unchanged (json-c escapes '"', '\' and
 *   control characters as usual); each byte that is not part of a valid
 *   UTF-8 sequence becomes the lone surrogate U+DC80 + byte, written as
 *   the escape "\udcXX" (two lower-case hex digits, XX = 80..ff).
 *
 * This is the convention of Python's "surrogateescape" error handler
 * (PEP 383). Valid UTF-8 never encodes a surrogate, so distinct byte
 * strings always give distinct JSON strings, and in Python
 * json.loads(s).encode("utf-8", "surrogateescape") gives the bytes back.
 * "Valid" is RFC 3629: no overlong forms, no encoded surrogates, nothing
 * past U+10FFFF. A JSON object holding such an escaped string also lists
 * the member names in an array under FE_JSON_ESCAPED_KEY.
 */
#ifndef FRONTEND_JSON_STR_H
#define FRONTEND_JSON_STR_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json_object.h>

/* Member listing the names of the members whose strings hold "\udcXX". */
#define FE_JSON_ESCAPED_KEY "surrogate_escaped"

/* Whether the @len bytes at @p are valid UTF-8 (RFC 3629). */
bool fe_utf8_valid(const void *p, size_t len);

/*
 * A new json-c string holding the @len bytes at @p (NUL bytes included).
 * json_object_get_string() gives the bytes back as they are; serialized,
 * it follows the policy above (a json-c custom serializer writes the
 * "\udcXX" escapes; json_object_set_serializer() on it would undo that).
 * Returns NULL when out of memory or @len exceeds INT_MAX.
 */
struct json_object *fe_json_bytes(const void *p, size_t len);

/* Whether string @s (from fe_json_bytes()) serializes with "\udcXX". */
bool fe_json_is_escaped(struct json_object *s);

/*
 * Add member @key = fe_json_bytes(@p, @len) to object @obj, and when
 * the string needs "\udcXX" escapes, append @key to the array member
 * FE_JSON_ESCAPED_KEY of @obj (created then). Returns 0 or -ENOMEM.
 */
int fe_json_add_bytes(struct json_object *obj, const char *key,
			 const void *p, size_t len);

/* fe_json_add_bytes() of a NUL-terminated string; null when @s is NULL. */
int fe_json_add_str(struct json_object *obj, const char *key, const char *s);

#endif /* FRONTEND_JSON_STR_H */
