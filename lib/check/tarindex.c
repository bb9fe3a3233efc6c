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
#include "util/vec.h"

#define TAR_BLOCK 512u

/* Data of one tar entry: [start, end), image offsets, end 512-aligned. */
struct tar_payload {
	uint64_t start, end;
};

/* An extent on the tar, checked against the entries once they are known. */
struct tar_extent {
	uint64_t nid, logical, length, pos, end;
};

struct check_tar {
	struct imgfs_work work; /* the header walk, on a worker thread */
	struct check_ctx *c;
	bool queued; /* the walk went to the pool */
	unsigned int device; /* the device holding the tar (1) */
	uint64_t start, end; /* the device's bytes in the image */
	struct tar_payload *p;
	size_t n, cap;
	bool walked; /* headers read up to the end-of-archive marker */
	int ret; /* the walk ran out of memory */
	/* what stopped the walk, reported by check_tarindex_finish() */
	const char *bad;
	uint64_t bad_at;
	struct tar_extent *ext; /* extents to check against the entries */
	size_t nr_ext, ext_cap;
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
	/* the checksum field counts as eight spaces */
	for (unsigned int i = 0; i < TAR_BLOCK; i++) {
		u += h[i];
		s += (signed char)h[i];
	}
	for (unsigned int i = 148; i < 156; i++) {
		u += (unsigned int)' ' - h[i];
		s += ' ' - (signed char)h[i];
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

/*
 * Header blocks are read through a window: after a small entry the next
 * headers are near, and one read of WIN_SMALL bytes serves several (a
 * layer of small files has thousands; a read each costs a system call).
 * After a large entry only the header's own unit is read.
 */
#define WIN_SMALL (32u << 10)
#define WIN_LARGE 4096u

struct tar_window {
	uint8_t buf[WIN_SMALL];
	uint64_t pos;
	size_t len;
	bool small; /* the last entry's data was small */
};

static int header_read(struct check_ctx *c, struct check_tar *t,
		       struct tar_window *w, uint64_t pos, uint8_t *h)
{
	struct imgfs_error e = { 0 };
	size_t n = w->small ? WIN_SMALL : WIN_LARGE;

	if (w->len && pos >= w->pos && pos - w->pos + TAR_BLOCK <= w->len) {
		memcpy(h, w->buf + (pos - w->pos), TAR_BLOCK);
		return 0;
	}
	if (n > t->end - pos)
		n = (size_t)(t->end - pos);
	w->len = 0;
	if (img_read(c->img, w->buf, n, pos, "tar header", 0, &e))
		return -1;
	w->pos = pos;
	w->len = n;
	memcpy(h, w->buf, TAR_BLOCK);
	return 0;
}

/* Note what stopped the walk (the first problem; the walk stops there). */
static void tar_bad(struct check_tar *t, uint64_t at, const char *what)
{
	t->bad = what;
	t->bad_at = at;
}

/*
 * Walk the tar's headers from its first byte to its end-of-archive marker.
 * Runs on a worker thread beside the image walk: it reads the image and
 * fills @t, nothing else of @c.
 */
static int walk_tar(struct check_ctx *c, struct check_tar *t)
{
	struct tar_window *w = calloc(1, sizeof(*w));
	uint8_t h[TAR_BLOCK];
	uint64_t pos = t->start, size, data, next_size = 0;
	bool have_next_size = false;
	int ret = 0;

	if (!w)
		return -ENOMEM;
	w->small = true;
	while (pos + TAR_BLOCK <= t->end) {
		if (header_read(c, t, w, pos, h))
			break;
		if (all_zero(h, TAR_BLOCK)) {
			t->walked = true;
			goto out;
		}
		if (!tar_checksum_ok(h) || !tar_number(h + 124, 12, &size)) {
			tar_bad(t, pos, "no valid tar header");
			goto out;
		}
		pos += TAR_BLOCK;
		/* old GNU sparse headers continue in extension blocks */
		if (h[156] == 'S' && h[482]) {
			do {
				if (pos + TAR_BLOCK > t->end ||
				    header_read(c, t, w, pos, h)) {
					tar_bad(t, pos,
						"sparse header extension cut short");
					goto out;
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
			tar_bad(t, pos, "entry data runs past the tar's end");
			goto out;
		}
		if (data && !meta_type(h[156]) &&
		    add_payload(t, pos, pos + data)) {
			ret = -ENOMEM;
			goto out;
		}
		if (h[156] == 'x' && pax_size(c, pos, size, &next_size))
			have_next_size = true;
		pos += data;
		w->small = data < WIN_SMALL / 4;
	}
	tar_bad(t, pos, "no end-of-archive marker before the tar's end");
out:
	free(w);
	return ret;
}

static void tar_work(struct imgfs_work *work, void **local)
{
	struct check_tar *t = (struct check_tar *)work;

	(void)local;
	t->ret = walk_tar(t->c, t);
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
	t->c = c;
	c->tar = t;
	/* thousands of headers, each a read: walked while the image is */
	if (c->threads > 1 && check_pool(c)) {
		t->work.run = tar_work;
		t->queued = true;
		workpool_submit(c->pool, &t->work);
	} else {
		t->ret = walk_tar(c, t);
	}
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
	struct check_tar *t = c->tar;
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
	/* checked once the headers are walked */
	if (IMGFS_VEC_RESERVE(t->ext, t->ext_cap, t->nr_ext + 1, 256)) {
		c->fatal = error_set(c->err, -ENOMEM, "out of memory");
		return;
	}
	t->ext[t->nr_ext++] = (struct tar_extent){ .nid = nid,
						   .logical = ext->logical,
						   .length = ext->length,
						   .pos = ext->pos,
						   .end = end };
}

void check_tarindex_finish(struct check_ctx *c)
{
	struct check_tar *t = c->tar;

	if (!t)
		return;
	if (t->queued) {
		workpool_wait(c->pool, &t->work);
		t->queued = false;
	}
	if (t->ret) {
		c->fatal = error_set(c->err, t->ret, "out of memory");
		return;
	}
	if (t->bad)
		tar_report(c, t, t->bad_at, t->bad);
	if (!t->walked)
		return; /* the tar itself is reported */
	for (size_t i = 0; i < t->nr_ext; i++) {
		const struct tar_extent *e = &t->ext[i];
		const struct tar_payload *p = find_payload(t, e->pos);

		if (!p || e->end > p->end)
			check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DATA,
				     e->nid,
				     "bytes %llu..%llu point at tar bytes %llu..%llu, which are not all inside one entry's data (a tar header or extended header is there)",
				     (unsigned long long)e->logical,
				     (unsigned long long)(e->logical +
							  e->length),
				     (unsigned long long)(e->pos - t->start),
				     (unsigned long long)(e->end - t->start));
	}
}

void check_tarindex_free(struct check_ctx *c)
{
	if (!c->tar)
		return;
	/* the pool is gone: the walk ran to its end or never started */
	free(c->tar->p);
	free(c->tar->ext);
	free(c->tar);
	c->tar = NULL;
}
