/* SPDX-License-Identifier: MIT */
/*
 * stack/links.h - hard links whose target a layer above hides.
 *
 * In a layer, a hard link shares its target's inode; when a layer above
 * replaces or deletes the target's path but not the link's, the link must
 * still show the target's data and metadata (as an extraction layer by
 * layer, or overlayfs, shows it). While a layer is read, every entry of it
 * hidden by the layers above that is not a directory is remembered here
 * (its metadata in memory, a regular file's data in an unlinked temporary
 * file), in case a visible link of the same layer names it later; a
 * visible link naming such a path before it arrives waits for it. All of
 * it is dropped at the end of the layer.
 */
#ifndef IMGFS_STACK_LINKS_H
#define IMGFS_STACK_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/error.h"
#include "imgfs/writer.h"
#include "util/hashtab.h"
#include "writer/intake.h"

struct archive;
struct archive_entry;

/* A path of the layer that the layers above hide. */
struct stack_saved {
	struct imgfs_hnode hnode; /* by path */
	struct stack_saved *next_all;
	/* a hidden entry that is not a link: a copy of its header, and a
	 * regular file's data blocks (offset, length in the file), stored
	 * one after another from spill_off in the spill file */
	struct archive_entry *entry;
	uint64_t spill_off;
	struct imgfs_data_range *blocks;
	size_t nr_blocks, cap_blocks;
	/* a hidden hard link: the path it names */
	char *alias;
	/* the visible path the entry was given for a link, once it was */
	char *shown;
	/* visible links that named it before it came */
	char **pending;
	size_t nr_pending, cap_pending;
	char path[];
};

struct stack_links {
	struct imgfs_hashtab tab;
	struct stack_saved *all;
	int spill_fd; /* -1 until a file has data to keep */
	uint64_t spill_end;
	/* reading a saved file's data back */
	uint8_t *buf;
	const struct stack_saved *cur;
	size_t cur_block;
	uint64_t cur_done, cur_pos;
};

void stack_links_init(struct stack_links *l);
/* Forget the layer's paths and empty the spill file. */
void stack_links_reset(struct stack_links *l);
void stack_links_free(struct stack_links *l);

/* The record of @path, or NULL. */
struct stack_saved *stack_links_find(const struct stack_links *l,
				     const char *path);
/* The record of @path, created empty when missing; NULL on no memory. */
struct stack_saved *stack_links_get(struct stack_links *l, const char *path,
				    struct imgfs_error *err);

/*
 * Keep entry @e (read from @a, its data not read yet) in @s: its header,
 * and a regular file's data, read to its end.
 */
int stack_links_save(struct stack_links *l, struct stack_saved *s,
		     struct archive *a, struct archive_entry *e,
		     const char *name, struct imgfs_error *err);

/* Make @s a hidden hard link to @target (a path named twice: the later). */
int stack_links_alias(struct stack_saved *s, const char *target,
		      struct imgfs_error *err);

/* Add a visible link @path waiting for @s. */
int stack_links_wait(struct stack_saved *s, const char *path,
		     struct imgfs_error *err);

/* A block source giving back the data saved in @s (one at a time). */
void stack_links_source(struct stack_links *l, const struct stack_saved *s,
			struct imgfs_block_source *src);

#endif /* IMGFS_STACK_LINKS_H */
