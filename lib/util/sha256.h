/* SPDX-License-Identifier: MIT */
/*
 * sha256.h - SHA-256 through OpenSSL's EVP interface (not installed): the
 * one place a digest context is made and set up.
 */
#ifndef IMGFS_SHA256_H
#define IMGFS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

/* A context ready for updates, or NULL (out of memory, no SHA-256). */
EVP_MD_CTX *sha256_new(void);

/* @out (32 bytes) = SHA-256(@a || @b); either part may be empty. 0 or -EIO. */
int sha256_join(const void *a, size_t alen, const void *b, size_t blen,
		uint8_t *out);

#endif /* IMGFS_SHA256_H */
