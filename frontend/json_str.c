// SPDX-License-Identifier: MIT
/*
 * json_str.c - JSON strings for bytes that may not be UTF-8 (frontend/json_str.h).
 *
 * A string that is valid UTF-8 is an ordinary json-c string, escaped by
 * json-c itself. Any other gets a custom serializer that writes the same
 * escapes json-c would and "\udcXX" for each byte outside valid UTF-8;
 * the object still holds the original bytes.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json_object.h>
#include <json-c/printbuf.h>

#include "frontend/json_str.h"

/*
 * Length of the valid UTF-8 sequence starting at @s (@left bytes there),
 * or 0 when its first byte is not part of one. The second byte's range
 * excludes overlong forms (E0, F0), surrogates (ED) and code points past
 * U+10FFFF (F4), as RFC 3629's table says.
 */
static size_t utf8_seq(const unsigned char *s, size_t left)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2)
		return 0;
	if (s[0] < 0xe0)
		n = 2;
	else if (s[0] < 0xf0)
		n = 3;
	else if (s[0] < 0xf5)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (left < n || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

bool fe_utf8_valid(const void *p, size_t len)
{
	const unsigned char *s = p;
	size_t i = 0, n;

	while (i < len) {
		n = utf8_seq(s + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

/* The escape of ASCII byte @c as json-c writes it, or NULL if none. */
static const char *ascii_escape(unsigned char c, int flags, char *buf)
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '/':
		return flags & JSON_C_TO_STRING_NOSLASHESCAPE ? NULL : "\\/";
	case '\b':
		return "\\b";
	case '\f':
		return "\\f";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	}
	if (c >= 0x20)
		return NULL;
	snprintf(buf, 8, "\\u%04x", c);
	return buf;
}

/* The json-c serializer of strings that are not valid UTF-8. */
static int escaped_to_json(struct json_object *jso, struct printbuf *pb,
			   int level, int flags)
{
	const unsigned char *s =
		(const unsigned char *)json_object_get_string(jso);
	size_t len = (size_t)json_object_get_string_len(jso);
	size_t i = 0, run = 0, n;
	const char *esc;
	char buf[8];

	if (printbuf_memappend(pb, "\"", 1) < 0)
		return -1;
	while (i < len) {
		n = utf8_seq(s + i, len - i);
		esc = NULL;
		if (!n) {
			snprintf(buf, sizeof(buf), "\\udc%02x", s[i]);
			esc = buf;
			n = 1;
		} else if (n == 1) {
			esc = ascii_escape(s[i], flags, buf);
		}
		if (!esc) {
			i += n;
			continue;
		}
		/* the run of bytes that pass as they are, then the escape */
		if ((i > run && printbuf_memappend(pb, (const char *)s + run,
						   (int)(i - run)) < 0) ||
		    printbuf_memappend(pb, esc, (int)strlen(esc)) < 0)
			return -1;
		i += n;
		run = i;
	}
	if (i > run &&
	    printbuf_memappend(pb, (const char *)s + run, (int)(i - run)) < 0)
		return -1;
	return printbuf_memappend(pb, "\"", 1) < 0 ? -1 : 0;
}

struct json_object *fe_json_bytes(const void *p, size_t len)
{
	struct json_object *s;

	if (len > INT_MAX)
		return NULL;
	s = json_object_new_string_len(len ? p : "", (int)len);
	if (s && !fe_utf8_valid(p, len))
		json_object_set_serializer(s, escaped_to_json, NULL, NULL);
	return s;
}

bool fe_json_is_escaped(struct json_object *s)
{
	if (!json_object_is_type(s, json_type_string))
		return false;
	return !fe_utf8_valid(json_object_get_string(s),
				 (size_t)json_object_get_string_len(s));
}

/* Append @key to @obj's list of escaped members. */
static int mark_escaped(struct json_object *obj, const char *key)
{
	struct json_object *list, *k;

	if (!json_object_object_get_ex(obj, FE_JSON_ESCAPED_KEY, &list)) {
		list = json_object_new_array();
		if (!list)
			return -ENOMEM;
		if (json_object_object_add(obj, FE_JSON_ESCAPED_KEY, list)) {
			json_object_put(list);
			return -ENOMEM;
		}
	}
	k = json_object_new_string(key);
	if (!k || json_object_array_add(list, k)) {
		json_object_put(k);
		return -ENOMEM;
	}
	return 0;
}

int fe_json_add_bytes(struct json_object *obj, const char *key,
			 const void *p, size_t len)
{
	struct json_object *s = fe_json_bytes(p, len);

	if (!s)
		return -ENOMEM;
	if (json_object_object_add(obj, key, s)) {
		json_object_put(s);
		return -ENOMEM;
	}
	return fe_json_is_escaped(s) ? mark_escaped(obj, key) : 0;
}

int fe_json_add_str(struct json_object *obj, const char *key, const char *s)
{
	if (!s)
		return json_object_object_add(obj, key, NULL) ? -ENOMEM : 0;
	return fe_json_add_bytes(obj, key, s, strlen(s));
}
