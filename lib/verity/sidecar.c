// SPDX-License-Identifier: MIT
/*
 * sidecar.c - dm-verity's root hash as text: hex out and in, and the JSON
 * sidecar (root hash and hash offset) mkfs.img writes beside an image.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json_object.h>
#include <json-c/json_tokener.h>

#include "imgfs/verity.h"
#include "util/error.h"

#define DIGEST IMGFS_VERITY_DIGEST_SIZE

void imgfs_verity_hex(const uint8_t *bytes, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * len] = '\0';
}

int imgfs_verity_sidecar_json(const struct imgfs_verity_result *res, char *buf,
			      size_t size)
{
	/* written by json-c, like every JSON document of the project */
	struct json_object *doc = json_object_new_object();
	const char *text;
	int n = -ENOMEM;

	if (!doc ||
	    json_object_object_add(doc, "roothash",
				   json_object_new_string(res->root_hex)) ||
	    json_object_object_add(doc, "hashoffset",
				   json_object_new_uint64(res->hash_offset)))
		goto out;
	text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
	if (!text)
		goto out;
	n = snprintf(buf, size, "%s\n", text);
	if (n < 0 || (size_t)n >= size)
		n = -ENOSPC;
out:
	json_object_put(doc);
	return n;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int imgfs_verity_parse_root(const char *hex, uint8_t root_hash[DIGEST])
{
	if (strlen(hex) != 2 * DIGEST)
		return -EINVAL;
	for (int i = 0; i < DIGEST; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		root_hash[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* JSON's white space only (mkfs.img ends the sidecar with a newline). */
static bool only_space(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\n\r", p[i]) || !p[i])
			return false;
	return true;
}

int imgfs_verity_sidecar_parse(const char *json, size_t len,
			       uint8_t root_hash[DIGEST], uint64_t *hash_offset,
			       struct imgfs_error *err)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *doc = NULL, *root, *off;
	int ret = 0;

	if (!tok)
		return error_set(err, -ENOMEM, "verity: out of memory");
	if (len <= INT_MAX)
		doc = json_tokener_parse_ex(tok, json, (int)len);
	if (!doc || json_tokener_get_error(tok) != json_tokener_success ||
	    !json_object_is_type(doc, json_type_object))
		ret = error_set(err, -EBADMSG,
				"dm-verity sidecar: not a JSON object");
	else if (!only_space(json + json_tokener_get_parse_end(tok),
			     len - json_tokener_get_parse_end(tok)))
		ret = error_set(
			err, -EBADMSG,
			"dm-verity sidecar: bytes after the JSON object (at offset %zu)",
			json_tokener_get_parse_end(tok));
	else if (!json_object_object_get_ex(doc, "roothash", &root) ||
		 !json_object_is_type(root, json_type_string) ||
		 imgfs_verity_parse_root(json_object_get_string(root),
					 root_hash))
		ret = error_set(
			err, -EBADMSG,
			"dm-verity sidecar: \"roothash\" is not %d hex digits",
			2 * DIGEST);
	else if (!json_object_object_get_ex(doc, "hashoffset", &off) ||
		 !json_object_is_type(off, json_type_int) ||
		 json_object_get_int64(off) < 0)
		ret = error_set(
			err, -EBADMSG,
			"dm-verity sidecar: \"hashoffset\" is not a byte offset");
	else
		*hash_offset = (uint64_t)json_object_get_int64(off);
	json_object_put(doc);
	json_tokener_free(tok);
	return ret;
}
