// SPDX-License-Identifier: MIT
/*
 * check.c - image checker: reporting, inode table, superblock, tree walk.
 *
 * The walk is breadth first over directories with an explicit queue, so a
 * deep (hostile) tree cannot exhaust the stack. Every inode gets one record
 * in a hash table keyed by nid; a directory is only queued when its first
 * entry is met, which bounds the walk even when entries form cycles.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/internal.h"
#include "reader/dir.h"

#define NODES_PER_CHUNK 4096u

static const char *const severity_names[] = { "error", "warning", "note" };
static const char *const area_names[] = { "superblock", "inode", "directory",
					  "xattr", "data", "layout" };

const char *imgfs_check_severity_name(enum imgfs_check_severity s)
{
	return (unsigned int)s < 3 ? severity_names[s] : "?";
}

const char *imgfs_check_area_name(enum imgfs_check_area a)
{
	return (unsigned int)a < 6 ? area_names[a] : "?";
}

void imgfs_check_options_init(struct imgfs_check_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->struct_size = sizeof(*opts);
}

void check_report(struct check_ctx *c, enum imgfs_check_severity sev,
		  enum imgfs_check_area area, uint64_t nid, const char *fmt,
		  ...)
{
	struct imgfs_check_problem p = { .severity = sev, .area = area,
					 .nid = nid };
	char msg[1024];
	va_list ap;

	if (sev == IMGFS_CHECK_ERROR)
		c->res->errors++;
	else if (sev == IMGFS_CHECK_WARNING)
		c->res->warnings++;
	else
		c->res->notes++;
	if (!c->opts.report)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p.msg = msg;
	if (nid != IMGFS_CHECK_NO_NID && check_node_find(c, nid))
		p.path = check_node_path_buf(c, nid, &c->rpath);
	c->opts.report(c->opts.report_arg, &p);
}

/* ---- inode table: chunked node storage (stable pointers) + index hash */

struct node_table {
	struct check_node **chunks;
	size_t nr_chunks;
	size_t count;
	uint32_t *slots; /* index + 1, 0 = empty */
	size_t cap;
};

static uint64_t nid_hash(uint64_t nid)
{
	nid *= 0x9E3779B97F4A7C15ull;
	return nid ^ (nid >> 31);
}

static struct check_node *node_at(struct node_table *t, size_t i)
{
	return &t->chunks[i / NODES_PER_CHUNK][i % NODES_PER_CHUNK];
}

static struct node_table *table(struct check_ctx *c)
{
	return (struct node_table *)c->nodes;
}

struct check_node *check_node_find(struct check_ctx *c, uint64_t nid)
{
	struct node_table *t = table(c);
	size_t i;

	if (!t->cap)
		return NULL;
	for (i = nid_hash(nid) & (t->cap - 1); t->slots[i];
	     i = (i + 1) & (t->cap - 1)) {
		struct check_node *n = node_at(t, t->slots[i] - 1);

		if (n->nid == nid)
			return n;
	}
	return NULL;
}

static int table_grow(struct node_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024, i, j;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->count; i++) {
		for (j = nid_hash(node_at(t, i)->nid) & (cap - 1); slots[j];
		     j = (j + 1) & (cap - 1))
			;
		slots[j] = (uint32_t)(i + 1);
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

static struct check_node *node_insert(struct check_ctx *c, uint64_t nid)
{
	struct node_table *t = table(c);
	struct check_node *n;
	size_t i;

	if (t->count >= UINT32_MAX - 1)
		return NULL;
	if ((t->count + 1) * 2 > t->cap && table_grow(t))
		return NULL;
	if (t->count == t->nr_chunks * NODES_PER_CHUNK) {
		struct check_node **ch = realloc(t->chunks, (t->nr_chunks + 1) *
							  sizeof(*ch));

		if (!ch)
			return NULL;
		t->chunks = ch;
		ch[t->nr_chunks] = calloc(NODES_PER_CHUNK, sizeof(**ch));
		if (!ch[t->nr_chunks])
			return NULL;
		t->nr_chunks++;
	}
	n = node_at(t, t->count);
	memset(n, 0, sizeof(*n));
	n->nid = nid;
	for (i = nid_hash(nid) & (t->cap - 1); t->slots[i];
	     i = (i + 1) & (t->cap - 1))
		;
	t->slots[i] = (uint32_t)(++t->count);
	return n;
}

static void table_free(struct node_table *t)
{
	size_t i;

	for (i = 0; i < t->count; i++)
		free(node_at(t, i)->name);
	for (i = 0; i < t->nr_chunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->slots);
	free(t);
}

static int buf_reserve(struct check_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 256;
	char *s;

	if (need <= b->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	s = realloc(b->s, cap);
	if (!s)
		return -ENOMEM;
	b->s = s;
	b->cap = cap;
	return 0;
}

/*
 * Length of the path of @n (0 for the root), or SIZE_MAX when its chain
 * does not reach the root. The chain holds no cycle: a node's parent is a
 * directory inserted before it.
 */
static size_t node_path_len(struct check_ctx *c, struct check_node *n)
{
	size_t len = 0;

	while (n && n->name) {
		len += 1 + strlen(n->name);
		n = check_node_find(c, n->parent);
	}
	return n ? len : SIZE_MAX;
}

/* Write the path of @n (@len bytes) backwards into @out, all but its
 * first @skip bytes: byte i of the path goes to out[i - skip]. */
static void node_path_fill(struct check_ctx *c, struct check_node *n, char *out,
			   size_t len, size_t skip)
{
	size_t pos = len, l;

	while (n && n->name && pos > skip) {
		l = strlen(n->name);
		while (l-- > 0)
			if (pos-- > skip)
				out[pos - skip] = n->name[l];
		if (pos-- > skip)
			out[pos - skip] = '/';
		n = check_node_find(c, n->parent);
	}
}

static const char *nid_path(struct check_ctx *c, uint64_t nid)
{
	snprintf(c->nid_path, sizeof(c->nid_path), "<nid %llu>",
		 (unsigned long long)nid);
	return c->nid_path;
}

const char *check_node_path_buf(struct check_ctx *c, uint64_t nid,
				struct check_buf *b)
{
	struct check_node *n = check_node_find(c, nid);
	size_t len = node_path_len(c, n);

	if (len == SIZE_MAX || buf_reserve(b, len + 2))
		return nid_path(c, nid);
	if (!len) {
		strcpy(b->s, "/");
		return b->s;
	}
	node_path_fill(c, n, b->s, len, 0);
	b->s[len] = '\0';
	return b->s;
}

const char *check_node_path(struct check_ctx *c, uint64_t nid, char *buf,
			    size_t size)
{
	struct check_node *n = check_node_find(c, nid);
	size_t len = node_path_len(c, n);

	if (len == SIZE_MAX) {
		snprintf(buf, size, "<nid %llu>", (unsigned long long)nid);
		return buf;
	}
	if (!len) {
		snprintf(buf, size, "/");
		return buf;
	}
	if (len < size) {
		node_path_fill(c, n, buf, len, 0);
		buf[len] = '\0';
		return buf;
	}
	/* too long: "..." and the end of the path */
	if (size < 8) {
		snprintf(buf, size, "...");
		return buf;
	}
	node_path_fill(c, n, buf + 3, len, len - (size - 1 - 3));
	memcpy(buf, "...", 3);
	buf[size - 1] = '\0';
	return buf;
}

/* ---- superblock */

static void check_compr_cfgs(struct check_ctx *c, uint64_t *pos)
{
	unsigned int alg;

	if (!(c->sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_COMPR_CFGS))
		return;
	if (c->sb->compr_algs >> IMGFS_COMPR_MAX)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "unknown compression algorithms in bitmap 0x%x",
			     c->sb->compr_algs);
	for (alg = 0; alg < IMGFS_COMPR_MAX; alg++) {
		uint8_t l[2];
		struct imgfs_error e = { 0 };

		if (!(c->sb->compr_algs & (1u << alg)))
			continue;
		*pos = (*pos + 3) & ~3ull;
		if (imgfs_img_read(c->img, l, 2, *pos, "compression config",
				   0, &e)) {
			check_report(c, IMGFS_CHECK_ERROR,
				     IMGFS_CHECK_SUPERBLOCK, IMGFS_CHECK_NO_NID,
				     "compression config of algorithm %u: %s",
				     alg, e.msg);
			return;
		}
		*pos += 2 + (imgfs_get_le16(l) ? imgfs_get_le16(l) : 65536);
	}
}

static void check_area_addr(struct check_ctx *c, const char *what,
			    uint64_t pos)
{
	if (pos > c->img->size)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "%s at byte %llu is beyond the end of the image (%llu bytes)",
			     what, (unsigned long long)pos,
			     (unsigned long long)c->img->size);
}

static void check_prefix_table(struct check_ctx *c)
{
	uint64_t start = (uint64_t)c->sb->xattr_prefix_start << 2, pos = start;
	unsigned int i;

	if (!(c->sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_XATTR_PREFIXES)) {
		if (c->sb->xattr_prefix_count)
			check_report(c, IMGFS_CHECK_WARNING,
				     IMGFS_CHECK_SUPERBLOCK, IMGFS_CHECK_NO_NID,
				     "xattr_prefix_count %u without the XATTR_PREFIXES feature",
				     c->sb->xattr_prefix_count);
		return;
	}
	if (c->sb->xattr_prefix_count > 128)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "xattr_prefix_count %u exceeds 128",
			     c->sb->xattr_prefix_count);
	if (c->img->nr_prefixes < c->sb->xattr_prefix_count) {
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "long xattr prefixes stored in the packed inode or metabox are not verified");
		return;
	}
	for (i = 0; i < c->img->nr_prefixes; i++) {
		pos = (pos + 3) & ~3ull;
		pos += 3 + c->img->prefixes[i].infix_len;
	}
	if (pos > start)
		check_add_range(c, start, pos - start, IMGFS_CHECK_NO_NID,
				CHECK_RANGE_META);
}

/* The packed inode (FRAGMENTS) holds tails of compressed files. */
static void check_packed_inode(struct check_ctx *c)
{
	struct imgfs_error e = { 0 };
	struct imgfs_inode in;

	if (!(c->sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_FRAGMENTS) ||
	    !c->sb->packed_nid)
		return;
	if (imgfs_inode_read(c->img, c->sb->packed_nid, &in, &e)) {
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID, "packed inode: %s", e.msg);
		return;
	}
	if (!imgfs_inode_is_reg(&in))
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "packed inode nid %llu is not a regular file",
			     (unsigned long long)in.nid);
	check_add_range(c, in.pos, in.data_pos - in.pos, in.nid,
			CHECK_RANGE_META);
	if (imgfs_inode_is_reg(&in))
		check_packed_storage(c, &in);
	c->hidden_inodes++;
}

static void check_superblock(struct check_ctx *c)
{
	const struct imgfs_sb_info *sb = c->sb;
	uint64_t pos = IMGFS_SUPER_OFFSET + sb->sb_size;
	uint64_t blocks_bytes = sb->blocks << sb->blkszbits;
	uint8_t raw[IMGFS_SUPER_BASE_SIZE];
	struct imgfs_error e = { 0 };

	if (!sb->checksum_ok)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "bad checksum 0x%08x (computed 0x%08x)",
			     sb->checksum, sb->checksum_calc);
	if (sb->unknown_incompat)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "unknown incompatible features 0x%x: the kernel refuses to mount",
			     sb->unknown_incompat);
	if (sb->unknown_compat)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "unknown compatible features 0x%x",
			     sb->unknown_compat);
	check_area_addr(c, "meta_blkaddr", c->img->meta_base);
	check_area_addr(c, "xattr_blkaddr", c->img->xattr_base);
	/* a tar-index image's tar follows its blocks: checked in tarindex.c */
	if (sb->blocks && !check_is_tarindex(c) &&
	    (sb->blocks >> 52 || blocks_bytes != c->img->size))
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "superblock says %llu blocks (%llu bytes) but the image has %llu bytes",
			     (unsigned long long)sb->blocks,
			     (unsigned long long)blocks_bytes,
			     (unsigned long long)c->img->size);
	if (sb->fixed_nsec >= 1000000000u)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID, "fixed_nsec %u >= 10^9",
			     sb->fixed_nsec);
	if (!imgfs_img_read(c->img, raw, sizeof(raw), IMGFS_SUPER_OFFSET,
			    "superblock", 0, &e) &&
	    (raw[106] | raw[107]))
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID, "reserved bytes are not zero");
	if (sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_DEVICE_TABLE) {
		uint64_t devt = (uint64_t)sb->devt_slotoff * IMGFS_DEVICE_SLOT_SIZE;

		check_area_addr(c, "device table",
				devt + (uint64_t)sb->extra_devices *
					       IMGFS_DEVICE_SLOT_SIZE);
		if (sb->extra_devices && !check_is_tarindex(c))
			check_report(c, IMGFS_CHECK_WARNING,
				     IMGFS_CHECK_SUPERBLOCK, IMGFS_CHECK_NO_NID,
				     "%u extra devices: their data is not verified",
				     sb->extra_devices);
	}
	if (sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_METABOX)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "metabox images are not verified");
	check_compr_cfgs(c, &pos);
	check_add_range(c, IMGFS_SUPER_OFFSET, pos - IMGFS_SUPER_OFFSET,
			IMGFS_CHECK_NO_NID, CHECK_RANGE_META);
	check_prefix_table(c);
	check_packed_inode(c);
}

/* ---- inode-level checks */

static void check_inode_fields(struct check_ctx *c,
			       const struct imgfs_inode *inode)
{
	uint32_t type = inode->mode & 0170000;
	bool special = type != 0100000 && type != 0040000 && type != 0120000;
	bool is48 = c->sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_48BIT;
	uint64_t nid = inode->nid;

	if ((inode->nlink_1 || inode->dot_omitted) && !is48)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE, nid,
			     "i_format bit 4 (NLINK_1/DOT_OMITTED) needs Linux 6.15+");
	if (inode->version == IMGFS_INODE_EXTENDED && inode->raw_nb && !is48)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE, nid,
			     "extended inode has i_nb 0x%x (startblk_hi) without the 48BIT feature",
			     inode->raw_nb);
	if (inode->mtime_nsec >= 1000000000u)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE, nid,
			     "mtime nanoseconds %u >= 10^9", inode->mtime_nsec);
	if (inode->layout == IMGFS_LAYOUT_CHUNK_BASED &&
	    !(c->sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_CHUNKED_FILE))
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE, nid,
			     "chunk-based inode but the CHUNKED_FILE feature is not set");
	if (inode->layout == IMGFS_LAYOUT_CHUNK_BASED && type != 0100000)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE, nid,
			     "chunk-based layout on a non-regular file");
	if (inode->layout == IMGFS_LAYOUT_FLAT_INLINE && inode->size &&
	    !(inode->size & (c->img->blksz - 1)))
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE, nid,
			     "FLAT_INLINE with a block-aligned size %llu",
			     (unsigned long long)inode->size);
	if (special) {
		if (inode->size)
			check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE,
				     nid, "special file with size %llu",
				     (unsigned long long)inode->size);
		if (inode->layout != IMGFS_LAYOUT_FLAT_PLAIN &&
		    inode->layout != IMGFS_LAYOUT_FLAT_INLINE)
			check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE,
				     nid, "special file with data layout %u",
				     inode->layout);
		if ((type == 0010000 || type == 0140000) && inode->raw_u)
			check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_INODE,
				     nid, "FIFO/socket with non-zero i_u 0x%x",
				     inode->raw_u);
	}
	if (type == 0120000 && (!inode->size || inode->size > IMGFS_SYMLINK_MAX))
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE, nid,
			     "symlink target length %llu not in 1..%u",
			     (unsigned long long)inode->size, IMGFS_SYMLINK_MAX);
	if (type == 0040000 && !inode->size)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, nid,
			     "directory of size 0 (no \"..\" entry)");
	if (type == 0040000 && inode->nlink < 1)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE, nid,
			     "directory with link count 0");
}

static void check_inode(struct check_ctx *c, const struct imgfs_inode *inode,
			struct check_node *n)
{
	uint32_t type = inode->mode & 0170000;

	n->checked = true;
	c->res->inodes++;
	if (type == 0040000)
		c->res->dirs++;
	else if (type == 0100000)
		c->res->regular++;
	else if (type == 0120000)
		c->res->symlinks++;
	else
		c->res->specials++;
	check_inode_fields(c, inode);
	check_add_range(c, inode->pos, inode->data_pos - inode->pos,
			inode->nid, CHECK_RANGE_META);
	check_xattrs(c, inode);
	check_data(c, inode, n);
}

/* ---- directory walk */

struct nid_queue {
	uint64_t *v;
	size_t head, len, cap;
};

static int queue_push(struct nid_queue *q, uint64_t nid)
{
	if (q->len == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256;
		uint64_t *v = realloc(q->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		q->v = v;
		q->cap = cap;
	}
	q->v[q->len++] = nid;
	return 0;
}

struct dir_scan {
	struct check_ctx *c;
	struct nid_queue *queue;
	uint64_t nid;
	uint64_t parent;
	bool dot_omitted;
	unsigned int dots, dotdots;
	bool have_prev;
	size_t prev_len;
	char prev[IMGFS_NAME_MAX + 1];
	const char *dirpath; /* in c->dirpath */
};

static const char *const type_names[] = { "unknown", "regular file",
					  "directory", "character device",
					  "block device", "FIFO", "socket",
					  "symlink" };

static void check_order(struct dir_scan *s, const struct imgfs_dirent_info *de)
{
	size_t min = de->name_len < s->prev_len ? de->name_len : s->prev_len;
	int cmp;

	if (s->have_prev) {
		cmp = memcmp(de->name, s->prev, min);
		if (!cmp)
			cmp = de->name_len < s->prev_len ? -1 :
			      de->name_len > s->prev_len;
		if (!cmp)
			check_report(s->c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR,
				     s->nid, "duplicate entry \"%s\"",
				     de->name);
		else if (cmp < 0)
			check_report(s->c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR,
				     s->nid,
				     "entry \"%s\" (block %llu) is not sorted after \"%s\"",
				     de->name, (unsigned long long)de->block,
				     s->prev);
	}
	memcpy(s->prev, de->name, de->name_len + 1);
	s->prev_len = de->name_len;
	s->have_prev = true;
}

static int check_dot_entry(struct dir_scan *s,
			   const struct imgfs_dirent_info *de, bool dotdot)
{
	uint64_t want = dotdot ? s->parent : s->nid;

	if (dotdot)
		s->dotdots++;
	else
		s->dots++;
	if (de->nid != want)
		check_report(s->c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, s->nid,
			     "\"%s\" points to nid %llu instead of %llu",
			     de->name, (unsigned long long)de->nid,
			     (unsigned long long)want);
	if (de->file_type != IMGFS_FT_DIR)
		check_report(s->c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, s->nid,
			     "\"%s\" has file type %u instead of 2 (directory)",
			     de->name, de->file_type);
	if (!dotdot && s->dot_omitted)
		check_report(s->c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, s->nid,
			     "\".\" present in a directory flagged DOT_OMITTED");
	return 0;
}

/* "<directory path>/<name>" in c->epath ("/" for the root: @s NULL). */
static const char *entry_path(struct check_ctx *c, const struct dir_scan *s,
			      const char *name)
{
	size_t dl, nl;

	if (!s) {
		if (buf_reserve(&c->epath, 2))
			return NULL;
		strcpy(c->epath.s, "/");
		return c->epath.s;
	}
	dl = c->dirpath_len; /* 0 for the root */
	nl = strlen(name);
	if (buf_reserve(&c->epath, dl + nl + 2))
		return NULL;
	memcpy(c->epath.s, s->dirpath, dl);
	c->epath.s[dl] = '/';
	memcpy(c->epath.s + dl + 1, name, nl + 1);
	return c->epath.s;
}

static int call_entry(struct check_ctx *c, struct imgfs_check_entry *e)
{
	int ret;

	if (!e->path)
		return imgfs_error_set(c->err, -ENOMEM, "out of memory");
	ret = c->opts.entry(c->opts.entry_arg, e);
	if (ret) {
		c->res->stopped = true;
		return ret < 0 ? ret : 1;
	}
	return 0;
}

/* The first path of an inode, found in directory @s (NULL: the root). */
static int emit_entry(struct check_ctx *c, const struct dir_scan *s,
		      const struct imgfs_inode *inode, struct check_node *n,
		      const char *name)
{
	struct imgfs_check_entry e = {
		.inode = inode,
		.sha256 = n->have_digest ? n->sha256 : NULL,
		.data_ok = n->data_ok,
		.parent_nid = s ? s->nid : n->nid,
	};

	if (!c->opts.entry)
		return 0;
	e.path = entry_path(c, s, name);
	return call_entry(c, &e);
}

/* A second or later path to a non-directory inode (hard link). */
static int emit_link(struct dir_scan *s, struct check_node *n,
		     const struct imgfs_inode *inode, const char *name)
{
	struct check_ctx *c = s->c;
	struct imgfs_check_entry e = {
		.inode = inode,
		.link_to = check_node_path_buf(c, n->nid, &c->lpath),
		.sha256 = n->have_digest ? n->sha256 : NULL,
		.data_ok = n->data_ok,
		.parent_nid = s->nid,
	};

	e.path = entry_path(c, s, name);
	return call_entry(c, &e);
}

/* First (or later) reference to a non-directory inode. */
static int visit_file(struct dir_scan *s, struct check_node *n,
		      const struct imgfs_inode *inode, const char *name)
{
	struct check_ctx *c = s->c;

	n->refs++;
	if (n->refs == 1) {
		check_inode(c, inode, n);
		return emit_entry(c, s, inode, n, name);
	}
	c->res->hardlinks++;
	return c->opts.entry ? emit_link(s, n, inode, name) : 0;
}

static int visit_dir(struct dir_scan *s, struct check_node *n,
		     const struct imgfs_inode *inode, const char *name)
{
	struct check_ctx *c = s->c;
	int ret;

	n->refs++;
	if (n->refs > 1) {
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, s->nid,
			     "entry \"%s\" reaches directory nid %llu a second time (hard-linked directory or cycle)",
			     name, (unsigned long long)n->nid);
		return 0;
	}
	check_inode(c, inode, n);
	ret = queue_push(s->queue, n->nid);
	if (ret)
		return imgfs_error_set(c->err, ret, "out of memory");
	return emit_entry(c, s, inode, n, name);
}

static int dirent_cb(void *arg, const struct imgfs_dirent_info *de)
{
	struct dir_scan *s = arg;
	struct check_ctx *c = s->c;
	struct imgfs_error e = { 0 };
	struct imgfs_inode inode;
	struct check_node *n, *dir;
	bool is_new;

	check_order(s, de);
	if (de->file_type >= IMGFS_FT_MAX)
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, s->nid,
			     "entry \"%s\" has invalid file type %u",
			     de->name, de->file_type);
	if (!strcmp(de->name, "."))
		return check_dot_entry(s, de, false);
	if (!strcmp(de->name, ".."))
		return check_dot_entry(s, de, true);

	n = check_node_find(c, de->nid);
	is_new = !n;
	if (is_new) {
		n = node_insert(c, de->nid);
		if (!n)
			return imgfs_error_set(c->err, -ENOMEM, "out of memory");
		n->parent = s->nid;
		n->name = strdup(de->name);
		if (!n->name)
			return imgfs_error_set(c->err, -ENOMEM, "out of memory");
	}
	if (n->bad) {
		n->refs++;
		return 0;
	}
	if (imgfs_inode_read(c->img, de->nid, &inode, &e)) {
		n->bad = true;
		n->refs++;
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE, de->nid,
			     "%s", e.msg);
		return 0;
	}
	if (is_new) {
		n->mode = inode.mode;
		n->nlink = inode.nlink;
	}
	if (de->file_type < IMGFS_FT_MAX &&
	    de->file_type != imgfs_mode_to_ftype(inode.mode))
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, s->nid,
			     "entry \"%s\": file type %u (%s) but the inode is a %s",
			     de->name, de->file_type,
			     type_names[de->file_type],
			     type_names[imgfs_mode_to_ftype(inode.mode)]);
	if (!imgfs_inode_is_dir(&inode))
		return visit_file(s, n, &inode, de->name);
	dir = check_node_find(c, s->nid);
	if (dir)
		dir->subdirs++;
	return visit_dir(s, n, &inode, de->name);
}

static int bad_block_cb(void *arg, uint64_t block, unsigned int entry,
			const char *why)
{
	struct dir_scan *s = arg;

	check_report(s->c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, s->nid,
		     "directory block %llu (entry %u): %s",
		     (unsigned long long)block, entry, why);
	return 0;
}

/*
 * The path of directory @n into c->dirpath. Directories are scanned in
 * breadth-first order, so the next one is most often a child or a sibling
 * of the previous one: then only its name is added, and a chain of
 * directories costs time linear in its depth, not quadratic.
 */
static const char *dir_path(struct check_ctx *c, uint64_t nid,
			    struct check_node *n)
{
	struct check_buf *b = &c->dirpath;
	bool valid = c->dirpath_valid;
	size_t base, nl;

	c->dirpath_valid = false;
	if (!n->name) { /* the root: "" here, its entries are "/name" */
		base = 0;
		nl = 0;
	} else if (valid && n->parent == c->dirpath_nid) {
		base = c->dirpath_len;
	} else if (valid && n->parent == c->dirpath_parent) {
		base = c->dirpath_parent_len;
	} else {
		struct check_node *p = check_node_find(c, n->parent);

		base = node_path_len(c, p);
		if (base == SIZE_MAX || buf_reserve(b, base + 1))
			return NULL;
		node_path_fill(c, p, b->s, base, 0);
	}
	if (n->name)
		nl = strlen(n->name);
	if (buf_reserve(b, base + nl + 2))
		return NULL;
	c->dirpath_parent = n->parent;
	c->dirpath_parent_len = base;
	if (n->name) {
		b->s[base] = '/';
		memcpy(b->s + base + 1, n->name, nl);
		base += 1 + nl;
	}
	b->s[base] = '\0';
	c->dirpath_len = base;
	c->dirpath_nid = nid;
	c->dirpath_valid = true;
	return b->s;
}

static int scan_dir(struct check_ctx *c, struct nid_queue *q, uint64_t nid)
{
	struct check_node *n = check_node_find(c, nid);
	struct imgfs_error e = { 0 };
	struct imgfs_inode dir;
	struct dir_scan *s;
	int ret;

	if (imgfs_inode_read(c->img, nid, &dir, &e))
		return 0; /* reported when first reached */
	s = calloc(1, sizeof(*s));
	if (!s)
		return imgfs_error_set(c->err, -ENOMEM, "out of memory");
	s->c = c;
	s->queue = q;
	s->nid = nid;
	s->parent = n->name ? n->parent : nid;
	s->dot_omitted = dir.dot_omitted;
	s->dirpath = dir_path(c, nid, n);
	if (!s->dirpath) {
		free(s);
		return imgfs_error_set(c->err, -ENOMEM, "out of memory");
	}
	ret = imgfs_dir_walk(c->img, &dir, dirent_cb, s, bad_block_cb, s, &e);
	if (ret < 0 && !c->err->code && e.code) {
		/* A reader error (unreadable block): report, go on. */
		if (ret == -ENOMEM) {
			imgfs_error_set(c->err, ret, "%s", e.msg);
		} else {
			check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, nid,
				     "%s", e.msg);
			ret = 0;
		}
	}
	if (ret >= 0) {
		if (!s->dot_omitted && s->dots != 1)
			check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, nid,
				     "%u \".\" entries (expected 1)", s->dots);
		if (s->dotdots != 1)
			check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_DIR, nid,
				     "%u \"..\" entries (expected 1)",
				     s->dotdots);
	}
	free(s);
	return ret < 0 ? ret : (ret > 0 ? 1 : 0);
}

static int walk(struct check_ctx *c)
{
	struct nid_queue q = { 0 };
	struct imgfs_error e = { 0 };
	struct imgfs_inode root;
	struct check_node *n;
	int ret;

	n = node_insert(c, c->sb->root_nid);
	if (!n)
		return imgfs_error_set(c->err, -ENOMEM, "out of memory");
	n->parent = c->sb->root_nid;
	n->refs = 1;
	if (imgfs_inode_read_root(c->img, &root, &e)) {
		n->bad = true;
		check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE,
			     c->sb->root_nid, "root inode: %s", e.msg);
		return 0;
	}
	n->mode = root.mode;
	n->nlink = root.nlink;
	check_inode(c, &root, n);
	ret = emit_entry(c, NULL, &root, n, NULL);
	if (!ret)
		ret = queue_push(&q, root.nid);
	while (!ret && q.head < q.len)
		ret = scan_dir(c, &q, q.v[q.head++]);
	free(q.v);
	return ret < 0 ? ret : 0;
}

static void check_links(struct check_ctx *c)
{
	struct node_table *t = table(c);
	size_t i;

	for (i = 0; i < t->count; i++) {
		struct check_node *n = node_at(t, i);
		bool dir = (n->mode & 0170000) == 0040000;
		uint64_t want = dir ? 2ull + n->subdirs : n->refs;

		if (n->bad || !n->checked || n->nlink == want)
			continue;
		if (dir && n->nlink == 1)
			check_report(c, IMGFS_CHECK_NOTE, IMGFS_CHECK_INODE,
				     n->nid,
				     "directory link count 1 (unknown) instead of %llu",
				     (unsigned long long)want);
		else
			check_report(c, IMGFS_CHECK_ERROR, IMGFS_CHECK_INODE,
				     n->nid, "link count %u, but %llu %s",
				     n->nlink, (unsigned long long)want,
				     dir ? "expected (2 + subdirectories)" :
					   "directory entries found");
	}
}

int imgfs_check_image(struct imgfs_image *img,
		      const struct imgfs_check_options *opts,
		      struct imgfs_check_result *res, struct imgfs_error *err)
{
	struct check_ctx *c;
	int ret;

	memset(res, 0, sizeof(*res));
	c = calloc(1, sizeof(*c));
	if (!c)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	c->img = img;
	c->sb = imgfs_image_sb(img);
	c->res = res;
	c->err = err;
	if (opts)
		memcpy(&c->opts, opts,
		       opts->struct_size < sizeof(c->opts) ? opts->struct_size :
							     sizeof(c->opts));
	c->nodes = calloc(1, sizeof(struct node_table));
	/* no file can hold more plain bytes than the image */
	c->bufsz = img->size < CHECK_BUFSZ ? (size_t)img->size + 1 :
					     CHECK_BUFSZ;
	c->buf = malloc(c->bufsz);
	if (!c->nodes || !c->buf) {
		ret = imgfs_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	res->image_bytes = img->size;
	check_superblock(c);
	check_tarindex_init(c);
	ret = walk(c);
	if (ret)
		goto out;
	if (c->fatal) {
		ret = c->fatal;
		goto out;
	}
	check_links(c);
	check_ranges(c);
	if (c->sb->inos != res->inodes + c->hidden_inodes && !res->stopped)
		check_report(c, IMGFS_CHECK_WARNING, IMGFS_CHECK_SUPERBLOCK,
			     IMGFS_CHECK_NO_NID,
			     "superblock inode count %llu, %llu inodes reachable",
			     (unsigned long long)c->sb->inos,
			     (unsigned long long)(res->inodes +
						  c->hidden_inodes));
out:
	if (c->nodes)
		table_free(table(c));
	free(c->rpath.s);
	free(c->epath.s);
	free(c->lpath.s);
	free(c->dirpath.s);
	check_tarindex_free(c);
	free(c->ranges);
	free(c->buf);
	free(c->readmap);
	free(c);
	return ret;
}

int imgfs_check_path(const char *path, const struct imgfs_check_options *opts,
		     struct imgfs_check_result *res, struct imgfs_error *err)
{
	struct imgfs_error e = { 0 };
	struct imgfs_image *img;
	int ret;

	memset(res, 0, sizeof(*res));
	ret = imgfs_image_open(path, IMGFS_OPEN_IGNORE_CHECKSUM |
				     IMGFS_OPEN_IGNORE_FEATURES, &img, &e);
	if (ret == -EINVAL || ret == -IMGFS_EFSCORRUPTED ||
	    ret == -EOPNOTSUPP || ret == -EBADMSG) {
		struct imgfs_check_problem p = {
			.severity = IMGFS_CHECK_ERROR,
			.area = IMGFS_CHECK_SUPERBLOCK,
			.nid = IMGFS_CHECK_NO_NID,
			.msg = e.msg,
		};

		res->errors = 1;
		if (opts && opts->report)
			opts->report(opts->report_arg, &p);
		return 0;
	}
	if (ret)
		return imgfs_error_set(err, ret, "%s", e.msg);
	ret = imgfs_check_image(img, opts, res, err);
	imgfs_image_close(img);
	return ret;
}
