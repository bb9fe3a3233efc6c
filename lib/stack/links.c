// SPDX-License-Identifier: MIT
/*
 * Hidden entries kept while their layer is read (stack/links.h). A
 * regular file's data goes to an unlinked temporary file as the archive
 * gives it, block by block; only the blocks' offsets and lengths stay in
 * memory, so that a sparse file keeps its holes when it is given back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "stack/links.h"
#include "util/tmpfile.h"
#include "util/vec.h"

#define SPILL_CHUNK (128u * 1024u)

static uint64_t path_hash(const char *path)
{
	return imgfs_hash_bytes(0, path, strlen(path));
}

static bool saved_eq(const struct imgfs_hnode *n, const void *key)
{
	return !strcmp(imgfs_container_of(n, struct stack_saved, hnode)->path,
		       key);
}

void stack_links_init(struct stack_links *l)
{
	memset(l, 0, sizeof(*l));
	l->spill_fd = -1;
}

static void saved_free(struct stack_saved *s)
{
	if (s->entry)
		archive_entry_free(s->entry);
	free(s->blocks);
	free(s->alias);
	free(s->shown);
	for (size_t i = 0; i < s->nr_pending; i++)
		free(s->pending[i]);
	free(s->pending);
	free(s);
}

void stack_links_reset(struct stack_links *l)
{
	while (l->all) {
		struct stack_saved *next = l->all->next_all;

		saved_free(l->all);
		l->all = next;
	}
	imgfs_hashtab_free(&l->tab);
	memset(&l->tab, 0, sizeof(l->tab));
	/* the next layer starts from an empty file (or, should truncating
	 * fail, after what is there) */
	if (l->spill_fd >= 0 && l->spill_end && !ftruncate(l->spill_fd, 0))
		l->spill_end = 0;
}

void stack_links_free(struct stack_links *l)
{
	stack_links_reset(l);
	if (l->spill_fd >= 0)
		close(l->spill_fd);
	free(l->buf);
	stack_links_init(l);
}

struct stack_saved *stack_links_find(const struct stack_links *l,
				     const char *path)
{
	struct imgfs_hnode *n =
		imgfs_hashtab_find(&l->tab, path_hash(path), saved_eq, path);

	return n ? imgfs_container_of(n, struct stack_saved, hnode) : NULL;
}

struct stack_saved *stack_links_get(struct stack_links *l, const char *path,
				    struct imgfs_error *err)
{
	struct stack_saved *s = stack_links_find(l, path);
	size_t len = strlen(path);

	if (s)
		return s;
	s = calloc(1, sizeof(*s) + len + 1);
	if (!s || imgfs_hashtab_insert(&l->tab, &s->hnode, path_hash(path))) {
		free(s);
		imgfs_error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	memcpy(s->path, path, len + 1);
	s->next_all = l->all;
	l->all = s;
	return s;
}

static int spill_open(struct stack_links *l, struct imgfs_error *err)
{
	if (l->spill_fd >= 0)
		return 0;
	l->spill_fd = imgfs_tmpfile_open(imgfs_tmpdir(NULL), "imgfs-flatten");
	if (l->spill_fd < 0)
		return imgfs_error_set(err, -errno,
				       "temporary file in %s for hidden hard link targets: %s",
				       imgfs_tmpdir(NULL), strerror(errno));
	return 0;
}

static int spill_write(struct stack_links *l, const void *buf, size_t len,
		       struct imgfs_error *err)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(l->spill_fd, p, len, (off_t)l->spill_end);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return imgfs_error_set(err, n < 0 ? -errno : -EIO,
					       "temporary file for hidden hard link targets: %s",
					       n < 0 ? strerror(errno) :
						       "short write");
		p += n;
		len -= (size_t)n;
		l->spill_end += (uint64_t)n;
	}
	return 0;
}

/* Append a data block to @s's list, joining it to the last when adjacent. */
static int add_block(struct stack_saved *s, int64_t off, size_t len)
{
	struct imgfs_data_range *last =
		s->nr_blocks ? &s->blocks[s->nr_blocks - 1] : NULL;

	if (last && last->offset + last->length == (uint64_t)off) {
		last->length += len;
		return 0;
	}
	if (IMGFS_VEC_RESERVE(s->blocks, s->cap_blocks, s->nr_blocks + 1, 4))
		return -ENOMEM;
	s->blocks[s->nr_blocks].offset = (uint64_t)off;
	s->blocks[s->nr_blocks++].length = len;
	return 0;
}

static int save_data(struct stack_links *l, struct stack_saved *s,
		     struct archive *a, const char *name,
		     struct imgfs_error *err)
{
	const void *buf;
	size_t len;
	int64_t off;
	int r, ret;

	s->spill_off = l->spill_end;
	while ((r = archive_read_data_block(a, &buf, &len, &off)) ==
	       ARCHIVE_OK) {
		if (!len)
			continue;
		if (off < 0)
			return imgfs_error_set(err, -EIO,
					       "%s: data block at a negative offset",
					       name);
		ret = spill_open(l, err);
		if (!ret)
			ret = spill_write(l, buf, len, err);
		if (!ret && add_block(s, off, len))
			ret = imgfs_error_set(err, -ENOMEM, "out of memory");
		if (ret)
			return ret;
	}
	if (r != ARCHIVE_EOF) {
		const char *msg = archive_error_string(a);

		return imgfs_error_set(err, -EIO, "%s: reading data: %s",
				       name, msg ? msg : "unknown error");
	}
	return 0;
}

int stack_links_save(struct stack_links *l, struct stack_saved *s,
		     struct archive *a, struct archive_entry *e,
		     const char *name, struct imgfs_error *err)
{
	/* a path named twice in a layer: the later entry is the one */
	if (s->entry)
		archive_entry_free(s->entry);
	free(s->alias);
	free(s->shown);
	s->alias = NULL;
	s->shown = NULL;
	s->nr_blocks = 0;
	s->entry = archive_entry_clone(e);
	if (!s->entry)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	if (archive_entry_filetype(e) != AE_IFREG || !archive_entry_size(e))
		return 0;
	return save_data(l, s, a, name, err);
}

int stack_links_alias(struct stack_saved *s, const char *target,
		      struct imgfs_error *err)
{
	char *copy = strdup(target);

	if (!copy)
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	if (s->entry)
		archive_entry_free(s->entry);
	s->entry = NULL;
	free(s->alias);
	free(s->shown);
	s->shown = NULL;
	s->alias = copy;
	return 0;
}

int stack_links_wait(struct stack_saved *s, const char *path,
		     struct imgfs_error *err)
{
	char *copy = strdup(path);

	if (!copy || IMGFS_VEC_RESERVE(s->pending, s->cap_pending,
				       s->nr_pending + 1, 2)) {
		free(copy);
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	}
	s->pending[s->nr_pending++] = copy;
	return 0;
}

/* The next piece of the saved data, read back into the links' buffer. */
static int spill_next(void *arg, const void **buf, size_t *len, int64_t *off,
		      struct imgfs_error *err)
{
	struct stack_links *l = arg;
	const struct imgfs_data_range *b;
	uint64_t want;
	ssize_t n;

	if (l->cur_block < l->cur->nr_blocks &&
	    l->cur_done == l->cur->blocks[l->cur_block].length) {
		l->cur_block++;
		l->cur_done = 0;
	}
	if (l->cur_block >= l->cur->nr_blocks)
		return 0;
	if (!l->buf && !(l->buf = malloc(SPILL_CHUNK)))
		return imgfs_error_set(err, -ENOMEM, "out of memory");
	b = &l->cur->blocks[l->cur_block];
	want = b->length - l->cur_done;
	if (want > SPILL_CHUNK)
		want = SPILL_CHUNK;
	do
		n = pread(l->spill_fd, l->buf, (size_t)want, (off_t)l->cur_pos);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return imgfs_error_set(err, n < 0 ? -errno : -EIO,
				       "%s: reading back from the temporary file: %s",
				       l->cur->path,
				       n < 0 ? strerror(errno) : "short read");
	*buf = l->buf;
	*len = (size_t)n;
	*off = (int64_t)(b->offset + l->cur_done);
	l->cur_done += (uint64_t)n;
	l->cur_pos += (uint64_t)n;
	return 1;
}

void stack_links_source(struct stack_links *l, const struct stack_saved *s,
			struct imgfs_block_source *src)
{
	l->cur = s;
	l->cur_block = 0;
	l->cur_done = 0;
	l->cur_pos = s->spill_off;
	src->next = spill_next;
	src->arg = l;
}
