// SPDX-License-Identifier: MIT
/*
 * Content digests of the OCI layout: "sha256:<64 lowercase hex>" parsed
 * and formatted, SHA-256 streaming (libcrypto), and the UUIDv5 a layer
 * image takes from its diffID.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, O_TMPFILE, pipe2 */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "oci/internal.h"
#include "util/hashtab.h"
#include "util/error.h"
#include "util/sha256.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int oci_digest_parse(const char *s, struct oci_digest *d, const char *what,
		     struct imgfs_error *err)
{
	const char *colon = s ? strchr(s, ':') : NULL;
	size_t n;

	if (!colon)
		return error_set(err, -EINVAL,
				 "%s: '%s' is not a digest (ALGORITHM:HEX)",
				 what, s ? s : "(none)");
	if ((size_t)(colon - s) != 6 || strncmp(s, "sha256", 6)) {
		/* sha512 is registered, but no tool writes layouts with it */
		return error_set(
			err, -ENOTSUP,
			"%s: digest algorithm '%.*s' is not supported (only sha256)",
			what, (int)(colon - s), s);
	}
	n = strlen(colon + 1);
	if (n != 2 * OCI_SHA256_SIZE)
		return error_set(
			err, -EINVAL,
			"%s: '%s' is not a sha256 digest (64 hex digits)", what,
			s);
	for (size_t i = 0; i < OCI_SHA256_SIZE; i++) {
		int hi = hexval(colon[1 + 2 * i]),
		    lo = hexval(colon[2 + 2 * i]);

		if (hi < 0 || lo < 0)
			return error_set(
				err, -EINVAL,
				"%s: '%s' is not a sha256 digest (lowercase hex digits)",
				what, s);
		d->raw[i] = (uint8_t)(hi << 4 | lo);
	}
	snprintf(d->str, sizeof(d->str), "%s", s);
	return 0;
}

void oci_digest_from_raw(struct oci_digest *d,
			 const uint8_t raw[OCI_SHA256_SIZE])
{
	static const char hex[] = "0123456789abcdef";
	char *p = d->str;

	memcpy(d->raw, raw, OCI_SHA256_SIZE);
	memcpy(p, "sha256:", 7);
	p += 7;
	for (size_t i = 0; i < OCI_SHA256_SIZE; i++) {
		*p++ = hex[raw[i] >> 4];
		*p++ = hex[raw[i] & 15];
	}
	*p = '\0';
}

struct oci_hash {
	EVP_MD_CTX *ctx;
};

struct oci_hash *oci_hash_new(void)
{
	struct oci_hash *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->ctx = sha256_new();
	if (!h->ctx) {
		oci_hash_free(h);
		return NULL;
	}
	return h;
}

void oci_hash_update(struct oci_hash *h, const void *buf, size_t len)
{
	EVP_DigestUpdate(h->ctx, buf, len);
}

void oci_hash_final(struct oci_hash *h, struct oci_digest *d)
{
	uint8_t raw[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_DigestFinal_ex(h->ctx, raw, &n);
	oci_digest_from_raw(d, raw);
}

void oci_hash_free(struct oci_hash *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

int oci_sha256_buf(const void *buf, size_t len, struct oci_digest *d)
{
	struct oci_hash *h = oci_hash_new();

	if (!h)
		return -ENOMEM;
	oci_hash_update(h, buf, len);
	oci_hash_final(h, d);
	oci_hash_free(h);
	return 0;
}

int oci_uuid5_url(const char *name, uint8_t uuid[16])
{
	/* RFC 9562's NameSpace_URL, 6ba7b811-9dad-11d1-80b4-00c04fd430c8 */
	static const uint8_t ns_url[16] = { 0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad,
					    0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0,
					    0x4f, 0xd4, 0x30, 0xc8 };
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int ok;

	if (!c)
		return -ENOMEM;
	ok = EVP_DigestInit_ex(c, EVP_sha1(), NULL) == 1 &&
	     EVP_DigestUpdate(c, ns_url, sizeof(ns_url)) == 1 &&
	     EVP_DigestUpdate(c, name, strlen(name)) == 1 &&
	     EVP_DigestFinal_ex(c, md, &n) == 1;
	EVP_MD_CTX_free(c);
	if (!ok)
		return -EIO;
	memcpy(uuid, md, 16);
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x50); /* version 5 */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80); /* RFC variant */
	return 0;
}

struct oci_memo_entry *oci_memo_find(struct oci_memo *m,
				     const struct oci_digest *d, int tag)
{
	uint64_t h;

	memcpy(&h, d->raw, sizeof(h));
	for (struct imgfs_hnode *n = hashtab_first(&m->t, h ^ (uint64_t)tag); n;
	     n = hashtab_next(n)) {
		struct oci_memo_entry *e =
			imgfs_container_of(n, struct oci_memo_entry, node);

		if (e->tag == tag &&
		    !memcmp(e->key.raw, d->raw, OCI_SHA256_SIZE))
			return e;
	}
	return NULL;
}

struct oci_memo_entry *oci_memo_add(struct oci_memo *m,
				    const struct oci_digest *d, int tag)
{
	struct oci_memo_entry *e = calloc(1, sizeof(*e));
	uint64_t h;

	if (!e)
		return NULL;
	memcpy(&h, d->raw, sizeof(h));
	e->key = *d;
	e->tag = tag;
	if (hashtab_insert(&m->t, &e->node, h ^ (uint64_t)tag)) {
		free(e);
		return NULL;
	}
	e->next_all = m->all;
	m->all = e;
	return e;
}

void oci_memo_free(struct oci_memo *m)
{
	while (m->all) {
		struct oci_memo_entry *e = m->all;

		m->all = e->next_all;
		free(e);
	}
	hashtab_free(&m->t);
	memset(m, 0, sizeof(*m));
}
