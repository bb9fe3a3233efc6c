// SPDX-License-Identifier: MIT
/*
 * The names of a pax entry exactly as archived. libarchive converts pax
 * path and linkpath records from UTF-8 to the locale's charset, and under
 * a UTF-8 locale composes them (NFC): two names that differ only in their
 * Unicode form would become one file. Names are bytes, so the records are
 * read here from the entry's header blocks and replace what libarchive
 * decoded. ustar and GNU names reach the entry unconverted already.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <archive_entry.h>

#include "source/tar.h"

#define BLK 512u

/* The size field of a header: octal, or base-256 (GNU); -1 when neither. */
static int64_t field_size(const uint8_t *h)
{
	const uint8_t *f = h + 124;
	uint64_t v = 0;
	size_t i = 0;

	if (f[0] & 0x80) {
		for (i = 1; i < 12; i++) {
			if (v >> 55)
				return -1;
			v = v << 8 | f[i];
		}
		return (f[0] & 0x7f) ? -1 : (int64_t)v;
	}
	while (i < 12 && (f[i] == ' ' || f[i] == '\0'))
		i++;
	for (; i < 12 && f[i] >= '0' && f[i] <= '7'; i++)
		v = v << 3 | (uint64_t)(f[i] - '0');
	return (int64_t)v;
}

/* libarchive's header types that only carry metadata for what follows */
static bool meta_type(uint8_t t)
{
	return t && strchr("AgKLVXx", t);
}

/* The value of @key in the pax records [@p, @p + @n), up to a NUL. */
static const char *record(const uint8_t *p, size_t n, const char *key,
			  size_t *len)
{
	size_t klen = strlen(key);
	const char *found = NULL;

	while (n) {
		size_t l = 0, i = 0;

		while (i < n && p[i] >= '0' && p[i] <= '9' && l < 1000000)
			l = l * 10 + (size_t)(p[i++] - '0');
		if (!l || l > n || i >= n || p[i] != ' ' || p[l - 1] != '\n')
			return found; /* libarchive refuses the entry anyway */
		i++;
		if (l - 1 - i > klen && !memcmp(p + i, key, klen) &&
		    p[i + klen] == '=') {
			found = (const char *)p + i + klen + 1;
			*len = strnlen(found, l - 1 - (i + klen + 1));
		}
		p += l;
		n -= l;
	}
	return found;
}

struct pax_hdrs {
	const uint8_t *last_x; /* records of the last 'x' header */
	size_t last_x_len;
	char path_from; /* first header that sets the name: 'x', 'L' or 0 */
	char link_from;
};

/* The name the last 'x' header gives, as libarchive picks it. */
static const char *x_path(const struct pax_hdrs *h, size_t *len)
{
	const char *v =
		record(h->last_x, h->last_x_len, "GNU.sparse.name", len);

	if (!v || !*len)
		v = record(h->last_x, h->last_x_len, "path", len);
	return v && *len ? v : NULL;
}

static const char *x_link(const struct pax_hdrs *h, size_t *len)
{
	const char *v = record(h->last_x, h->last_x_len, "linkpath", len);

	return v && *len ? v : NULL;
}

/* Where the next header starts, or 0 when the header at @off is not a
 * metadata header wholly in [@p, @p + @n). */
static size_t next_hdr(const uint8_t *p, size_t n, size_t off)
{
	int64_t size;

	if (off + BLK > n || !meta_type(p[off + 156]))
		return 0;
	size = field_size(p + off);
	if (size < 0 || (uint64_t)size > n - off - BLK)
		return 0;
	return off + BLK + (((size_t)size + BLK - 1) & ~(size_t)(BLK - 1));
}

/*
 * libarchive applies the headers before an entry innermost first, and
 * every 'x' level applies the records of the last 'x' header: the first
 * header that sets a name wins.
 */
static void walk(const uint8_t *p, size_t n, struct pax_hdrs *h)
{
	size_t off, next, len;

	memset(h, 0, sizeof(*h));
	for (off = 0; (next = next_hdr(p, n, off)); off = next)
		if (p[off + 156] == 'x' || p[off + 156] == 'X') {
			h->last_x = p + off + BLK;
			h->last_x_len = (size_t)field_size(p + off);
		}
	for (off = 0; (next = next_hdr(p, n, off)); off = next) {
		uint8_t t = p[off + 156];
		bool x = t == 'x' || t == 'X';

		if (!h->path_from && ((x && x_path(h, &len)) || t == 'L'))
			h->path_from = (char)t;
		if (!h->link_from && ((x && x_link(h, &len)) || t == 'K'))
			h->link_from = (char)t;
	}
}

static int copy_name(struct archive_entry *e, const char *v, size_t len,
		     bool link)
{
	char *s = strndup(v, len);

	if (!s)
		return -ENOMEM;
	if (link)
		archive_entry_copy_link(e, s);
	else
		archive_entry_copy_pathname(e, s);
	free(s);
	return 0;
}

int tar_raw_pax_names(const uint8_t *hdr, size_t len, struct archive_entry *e)
{
	struct pax_hdrs h;
	const char *v;
	size_t vlen;
	int ret = 0;

	walk(hdr, len, &h);
	if ((h.path_from == 'x' || h.path_from == 'X') &&
	    (v = x_path(&h, &vlen)))
		ret = copy_name(e, v, vlen, false);
	if (!ret && (h.link_from == 'x' || h.link_from == 'X') &&
	    (v = x_link(&h, &vlen)))
		ret = copy_name(e, v, vlen, true);
	return ret;
}
