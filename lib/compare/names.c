// SPDX-License-Identifier: MIT
/*
 * The names of a tar entry read from its header blocks by the comparison
 * itself: path and link target as archived, by the rules of the formats
 * (pax records over GNU long names over the ustar fields). The writer
 * takes its names through libarchive; decoding them again here, apart,
 * lets the comparison see a name the writer changed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <archive_entry.h>

#include "compare/internal.h"
#include "source/tar.h"

#define BLK 512u

struct hdr_names {
	const uint8_t *pax_path, *pax_sparse, *pax_link, *gnu_path, *gnu_link;
	size_t pax_path_len, pax_sparse_len, pax_link_len, gnu_path_len,
		gnu_link_len;
};

/* A numeric header field: octal digits or GNU base-256; -1 if neither. */
static int64_t num(const uint8_t *f, size_t n)
{
	uint64_t v = 0;
	size_t i = 0;

	if (f[0] == 0x80) {
		for (i = 1; i < n && !(v >> 55); i++)
			v = v << 8 | f[i];
		return i == n ? (int64_t)v : -1;
	}
	while (i < n && f[i] == ' ')
		i++;
	for (; i < n && f[i] >= '0' && f[i] <= '7' && !(v >> 60); i++)
		v = v * 8 + (uint64_t)(f[i] - '0');
	return i < n && f[i] && f[i] != ' ' ? -1 : (int64_t)v;
}

/* Point @v at the value of a record whose key is @key. */
static void pick(const uint8_t *k, size_t klen, const uint8_t *val, size_t vlen,
		 const char *key, const uint8_t **v, size_t *len)
{
	if (klen == strlen(key) && !memcmp(k, key, klen)) {
		*v = val;
		*len = strnlen((const char *)val, vlen);
	}
}

/* The records of one pax header: "LEN key=value\n", the last one wins. */
static void pax_records(const uint8_t *p, size_t n, struct hdr_names *h)
{
	while (n) {
		size_t len = 0, i = 0, klen, vlen;
		const uint8_t *k, *eq;

		while (i < n && p[i] >= '0' && p[i] <= '9' && len <= n)
			len = len * 10 + (size_t)(p[i++] - '0');
		if (i >= n || p[i] != ' ' || !len || len > n ||
		    p[len - 1] != '\n')
			return;
		k = p + i + 1;
		eq = memchr(k, '=', (size_t)(p + len - 1 - k));
		if (eq) {
			klen = (size_t)(eq - k);
			vlen = (size_t)(p + len - 1 - (eq + 1));
			pick(k, klen, eq + 1, vlen, "path", &h->pax_path,
			     &h->pax_path_len);
			pick(k, klen, eq + 1, vlen, "GNU.sparse.name",
			     &h->pax_sparse, &h->pax_sparse_len);
			pick(k, klen, eq + 1, vlen, "linkpath", &h->pax_link,
			     &h->pax_link_len);
		}
		p += len;
		n -= len;
	}
}

static char *dup_field(const uint8_t *p, size_t max)
{
	return strndup((const char *)p, strnlen((const char *)p, max));
}

/* The entry's own header at @h, with what came before it in @n. */
static int names_from(const uint8_t *h, const struct hdr_names *n, char **path,
		      char **link)
{
	bool ustar = !memcmp(h + 257, "ustar\0", 6);

	if (n->pax_sparse_len)
		*path = strndup((const char *)n->pax_sparse, n->pax_sparse_len);
	else if (n->pax_path_len)
		*path = strndup((const char *)n->pax_path, n->pax_path_len);
	else if (n->gnu_path_len)
		*path = strndup((const char *)n->gnu_path, n->gnu_path_len);
	else if (ustar && h[345]) {
		size_t pl = strnlen((const char *)h + 345, 155);
		size_t nl = strnlen((const char *)h, 100);

		*path = malloc(pl + nl + 2);
		if (*path) {
			memcpy(*path, h + 345, pl);
			(*path)[pl] = '/';
			memcpy(*path + pl + 1, h, nl);
			(*path)[pl + 1 + nl] = '\0';
		}
	} else
		*path = dup_field(h, 100);
	if (n->pax_link_len)
		*link = strndup((const char *)n->pax_link, n->pax_link_len);
	else if (n->gnu_link_len)
		*link = strndup((const char *)n->gnu_link, n->gnu_link_len);
	else
		*link = dup_field(h + 157, 100);
	return *path && *link ? 0 : -ENOMEM;
}

int cmp_tar_names(const uint8_t *p, size_t n, char **path, char **link)
{
	struct hdr_names h = { 0 };
	size_t off = 0;

	*path = *link = NULL;
	while (off + BLK <= n) {
		const uint8_t *b = p + off;
		int64_t size = num(b + 124, 12);
		size_t body = off + BLK, len;

		if (!strchr("xXLKgAV", b[156]) || !b[156])
			return names_from(b, &h, path, link);
		if (size < 0 || (uint64_t)size > n - body)
			return -EINVAL;
		len = (size_t)size;
		if (b[156] == 'x' || b[156] == 'X')
			pax_records(p + body, len, &h);
		else if (b[156] == 'L')
			h.gnu_path = p + body,
			h.gnu_path_len = strnlen((const char *)p + body, len);
		else if (b[156] == 'K')
			h.gnu_link = p + body,
			h.gnu_link_len = strnlen((const char *)p + body, len);
		off = body + ((len + BLK - 1) & ~(size_t)(BLK - 1));
	}
	return -EINVAL;
}
