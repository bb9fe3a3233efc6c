// SPDX-License-Identifier: MIT
/*
 * compare/digest.c - the digest file contents are compared by, the same
 * for both sides: SHA-256, or with IMGFS_COMPARE_F_FAST_CONTENT a 128-bit
 * XXH3 keyed with a secret drawn for each comparison (several times
 * faster; nobody who does not see the secret can choose two contents
 * that collide).
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "compare/internal.h"
#include "util/sha256.h"

int cmp_digest_key(struct imgfs_compare *c)
{
	if (!(c->o.flags & IMGFS_COMPARE_F_FAST_CONTENT))
		return 0;
	/* up to 256 bytes come whole, never cut short by a signal */
	if (getrandom(c->secret, sizeof(c->secret), 0) !=
	    (ssize_t)sizeof(c->secret))
		return -EIO;
	c->fast = true;
	return 0;
}

int cmp_digest_begin(const struct imgfs_compare *c, struct cmp_digest *d)
{
	memset(d, 0, sizeof(*d));
	if (c->fast) {
		d->xx = XXH3_createState();
		if (!d->xx ||
		    XXH3_128bits_reset_withSecret(
			    d->xx, c->secret, sizeof(c->secret)) != XXH_OK) {
			XXH3_freeState(d->xx);
			return -ENOMEM;
		}
		return 0;
	}
	d->md = sha256_new();
	return d->md ? 0 : -ENOMEM;
}

void cmp_digest_update(struct cmp_digest *d, const void *p, size_t len)
{
	if (d->xx)
		XXH3_128bits_update(d->xx, p, len);
	else
		EVP_DigestUpdate(d->md, p, len);
}

void cmp_digest_final(struct cmp_digest *d, uint8_t out[CMP_DIGEST_SIZE])
{
	unsigned int n = 0;

	memset(out, 0, CMP_DIGEST_SIZE);
	if (d->xx) {
		XXH128_canonical_t h;

		XXH128_canonicalFromHash(&h, XXH3_128bits_digest(d->xx));
		memcpy(out, h.digest, sizeof(h.digest));
	} else {
		EVP_DigestFinal_ex(d->md, out, &n);
	}
	cmp_digest_abort(d);
}

void cmp_digest_abort(struct cmp_digest *d)
{
	XXH3_freeState(d->xx);
	EVP_MD_CTX_free(d->md);
	memset(d, 0, sizeof(*d));
}

const char *cmp_digest_name(const struct imgfs_compare *c)
{
	return c->fast ? "keyed XXH3-128" : "SHA-256";
}
