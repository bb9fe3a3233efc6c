// SPDX-License-Identifier: MIT
/*
 * sha256.c - SHA-256 contexts and one-shot digests for every folder that
 * hashes (verity trees, OCI digests, dedupe, check and compare).
 */
#include <errno.h>

#include "util/sha256.h"

EVP_MD_CTX *sha256_new(void)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	if (c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(c);
		c = NULL;
	}
	return c;
}

int sha256_join(const void *a, size_t alen, const void *b, size_t blen,
		uint8_t *out)
{
	EVP_MD_CTX *c = sha256_new();
	int ok = c && EVP_DigestUpdate(c, a, alen) &&
		 EVP_DigestUpdate(c, b, blen) &&
		 EVP_DigestFinal_ex(c, out, NULL);

	EVP_MD_CTX_free(c);
	return ok ? 0 : -EIO;
}
