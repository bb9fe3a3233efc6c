// SPDX-License-Identifier: MIT
/*
 * Tar-index images (mkfs.img --tar-index, mkfs.erofs --tar=i plus the tar
 * appended): file data lives on extra device 1, the tar, which the device
 * table maps right after the index. The tar is part of the image, not
 * bytes after it: its extent must fit the device slot. Its headers are
 * walked by the ustar layout so that every data extent on it can be
 * checked to lie inside one entry's data, never in a header block or in
 * an extended header's records (pax, GNU long names).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check/internal.h"
#include "util/error.h"

#define TAR_BLOCK 512u

/* Data of one tar entry: [start, end), image offsets, end 512-aligned. */
struct tar_payload {
	uint64_t start, end;
};

struct check_tar {
	unsigned int device; /* the device holding the tar (1) */
	uint64_t start, end; /* the device's bytes in the image */
	struct tar_payload *p;
	size_t n, cap;
	bool walked; /* headers read up to the end-of-archive marker */
};

/* A numeric header field: octal text, or base-256 when the top bit is set. */
static bool tar_number(const uint8_t *f, size_t len, uint64_t *v)
{
	size_t i = 0;

	*v = 0;
	if (f[0] & 0x80) {
		if (f[0] & 0x40)
			return false; /* negative */
		*v = f[0] & 0x3F;
		for (i = 1; i < len; i++) {
			if (*v >> 55)
				return false;
			*v = (*v << 8) | f[i];
		}
		return true;
	}
	while (i < len && f[i] == ' ')
		i++;
	for (; i < len && f[i] >= '0' && f[i] <= '7'; i++) {
		if (*v >> 60)
			return false;
		*v = (*v << 3) | (uint64_t)(f[i] - '0');
	}
	return i == len || f[i] == ' ' || f[i] == '\0';
}

static bool tar_checksum_ok(const uint8_t *h)
{
	uint64_t want;
	unsigned int u = 0;
	int s = 0;

	if (!tar_number(h + 148, 8, &want))
		return false;
	for (unsigned int i = 0; i < TAR_BLOCK; i++) {
		unsigned int b = (i >= 148 && i < 156) ? ' ' : h[i];

		u += b;
		s += (signed char)b;
	}
	/* some old writers summed signed bytes */
	return want == u || (int64_t)want == s;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static int add_payload(struct check_tar *t, uint64_t start, uint64_t end)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct tar_payload *p = realloc(t->p, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->p = p;
		t->cap = cap;
	}
	t->p[t->n].start = start;
	t->p[t->n++].end = end;
	return 0;
}

/* Entry types whose data is metadata of the next entry, not file data. */
static bool meta_type(uint8_t type)
{
	return type == 'x' || type == 'g' || type == 'X' || type == 'L' ||
	       type == 'K';
}

/* Entry types that never carry data, whatever their size field says. */
static bool dataless_type(uint8_t type)
{
	return type == '2' || type == '3' || type == '4' || type == '5' ||
	       type == '6';
}

static void tar_report(struct check_ctx *c, struct check_tar *t, uint64_t at,
		       const char *what)
{
	check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
		     IMGFS_CHECK_NO_NID,
		     "tar index: %s at byte %llu of the tar (image byte %llu)",
		     what, (unsigned long long)(at - t->start),
		     (unsigned long long)at);
}

/* pax records longer than this are not searched for a size */
#define PAX_SCAN_MAX (1u << 20)

/*
 * The "size" record of the pax extended header at image bytes [@pos,
 * @pos + @len), which overrides the next header's size field (files of
 * 8 GiB and more); false if it has none.
 */
static bool pax_size(struct check_ctx *c, uint64_t pos, uint64_t len,
		     uint64_t *size)
{
	struct imgfs_error e = { 0 };
	bool found = false;
	uint8_t *b, *p, *end;

	if (!len || len > PAX_SCAN_MAX || !(b = malloc(len)))
		return false;
	if (img_read(c->img, b, len, pos, "pax header", 0, &e)) {
		free(b);
		return false;
	}
	/* records: "LEN KEY=VALUE\n", LEN counting the whole record */
	for (p = b, end = b + len; p < end;) {
		uint64_t n = 0;
		uint8_t *q = p, *r;

		while (q < end && *q >= '0' && *q <= '9' && n < len)
			n = n * 10 + (uint64_t)(*q++ - '0');
		if (q == p || q >= end || *q != ' ' || n > (uint64_t)(end - p) ||
		    n < 2)
			break;
		r = q + 1;
		if ((uint64_t)(p + n - r) > 5 && !memcmp(r, "size=", 5)) {
			uint64_t v = 0;

			for (r += 5; r < p + n - 1 && *r >= '0' && *r <= '9' &&
				     !(v >> 59);
			     r++)
				v = v * 10 + (uint64_t)(*r - '0');
			*size = v;
			found = true;
		}
		p += n;
	}
	free(b);
	return found;
}

/* Walk the tar's headers from its first byte to its end-of-archive marker. */
static int walk_tar(struct check_ctx *c, struct check_tar *t)
{
	struct imgfs_error e = { 0 };
	uint8_t h[TAR_BLOCK];
	uint64_t pos = t->start, size, data, next_size = 0;
	bool have_next_size = false;

	while (pos + TAR_BLOCK <= t->end) {
		if (img_read(c->img, h, TAR_BLOCK, pos, "tar header", 0, &e))
			break;
		if (all_zero(h, TAR_BLOCK)) {
			t->walked = true;
			return 0;
		}
		if (!tar_checksum_ok(h) || !tar_number(h + 124, 12, &size)) {
			tar_report(c, t, pos, "no valid tar header");
			return 0;
		}
		pos += TAR_BLOCK;
		/* old GNU sparse headers continue in extension blocks */
		if (h[156] == 'S' && h[482]) {
			do {
				if (pos + TAR_BLOCK > t->end ||
				    img_read(c->img, h, TAR_BLOCK, pos,
					     "tar header", 0, &e)) {
					tar_report(c, t, pos,
						   "sparse header extension cut short");
					return 0;
				}
				pos += TAR_BLOCK;
			} while (h[504]);
			h[156] = 'S';
		}
		if (have_next_size && !meta_type(h[156])) {
			size = next_size;
			have_next_size = false;
		}
		if (dataless_type(h[156]))
			size = 0;
		data = (size + TAR_BLOCK - 1) & ~(uint64_t)(TAR_BLOCK - 1);
		if (data > t->end - pos) {
			tar_report(c, t, pos, "entry data runs past the tar's end");
			return 0;
		}
		if (data && !meta_type(h[156]) &&
		    add_payload(t, pos, pos + data))
			return -ENOMEM;
		if (h[156] == 'x' && pax_size(c, pos, size, &next_size))
			have_next_size = true;
		pos += data;
	}
	tar_report(c, t, pos, "no end-of-archive marker before the tar's end");
	return 0;
}

void check_tarindex_init(struct check_ctx *c)
{
	const struct imgfs_image *img = c->img;
	const struct imgfs_sb_info *sb = c->sb;
	uint64_t primary = sb->blocks << img->blkszbits;
	uint64_t size_blk, end;
	struct check_tar *t;

	/* one extra device, mapped into the image: an index and its tar */
	if (!(sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_DEVICE_TABLE) ||
	    sb->extra_devices != 1 || !img->dev_base || !img->dev_base[0])
		return;
	end = (img->dev_base[0] + img->dev_blocks[0]) << img->blkszbits;
	size_blk = (img->size + img->blksz - 1) & ~(uint64_t)(img->blksz - 1);
	if (img->dev_base[0] != sb->blocks)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "tar index: the tar is mapped at block %llu, not right after the index's %llu blocks",
			     (unsigned long long)img->dev_base[0],
			     (unsigned long long)sb->blocks);
	/* mkfs.erofs sizes the slot up to where it stopped reading (the
	 * end-of-archive marker): the tar's zero padding may lie beyond */
	if (size_blk < end) {
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "tar index: the image should hold the index (%llu bytes) and the tar (%llu blocks) up to byte %llu at least, but has %llu bytes%s",
			     (unsigned long long)primary,
			     (unsigned long long)img->dev_blocks[0],
			     (unsigned long long)end,
			     (unsigned long long)img->size,
			     img->size <= primary ?
				     ": the tar is not appended" :
				     "");
		return;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		c->fatal = error_set(c->err, -ENOMEM, "out of memory");
		return;
	}
	t->device = 1;
	t->start = img->dev_base[0] << img->blkszbits;
	/* a dm-verity tree after the tar is not part of it */
	t->end = imgfs_check_has_verity(c->img) ?
			 imgfs_check_verity_offset(c->img) :
			 img->size;
	c->tar = t;
	if (walk_tar(c, t))
		c->fatal = error_set(c->err, -ENOMEM, "out of memory");
}

/* The payload holding image byte @pos, or NULL. */
static const struct tar_payload *find_payload(const struct check_tar *t,
					      uint64_t pos)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->p[mid].end <= pos)
			lo = mid + 1;
		else if (t->p[mid].start > pos)
			hi = mid;
		else
			return &t->p[mid];
	}
	return NULL;
}

void check_tarindex_extent(struct check_ctx *c, uint64_t nid,
			   const struct imgfs_extent *ext)
{
	const struct check_tar *t = c->tar;
	const struct tar_payload *p;
	uint64_t end = ext->pos + ext->plen;

	if (!t || ext->device != t->device || ext->kind != IMGFS_EXTENT_PLAIN)
		return;
	if (ext->pos < t->start || end > t->end) {
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DATA, nid,
			     "bytes %llu..%llu: tar offset %lld is outside the tar",
			     (unsigned long long)ext->logical,
			     (unsigned long long)(ext->logical + ext->length),
			     (long long)(ext->pos - t->start));
		return;
	}
	if (!t->walked)
		return; /* the tar itself is reported */
	p = find_payload(t, ext->pos);
	if (!p || end > p->end)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DATA, nid,
			     "bytes %llu..%llu point at tar bytes %llu..%llu, which are not all inside one entry's data (a tar header or extended header is there)",
			     (unsigned long long)ext->logical,
			     (unsigned long long)(ext->logical + ext->length),
			     (unsigned long long)(ext->pos - t->start),
			     (unsigned long long)(end - t->start));
}

void check_tarindex_free(struct check_ctx *c)
{
	if (!c->tar)
		return;
	free(c->tar->p);
	free(c->tar);
	c->tar = NULL;
}
