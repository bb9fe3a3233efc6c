/* SPDX-License-Identifier: MIT */
/*
 * stack/links.h - hard links whose target a layer above hides.
 *
 * In a layer, a hard link shares its target's inode; when a layer above
 * replaces or deletes the target's path but not the link's, the link must
 * still show the target's data and metadata (as an extraction layer by
 * layer, or overlayfs, shows it). While a layer is read, every entry of it
 * that the layers above hide and that is not a directory is kept, header
 * and data, as a tar stream in an unlinked temporary file (the spill), in
 * case a visible link of the same layer names it later: memory keeps only
 * its offset there (in its path's node, stack/paths.h). A visible link
 * naming such a path before it arrives waits for it; a hidden link stands
 * for its target. All of it is dropped at the end of the layer.
 */
#ifndef IMGFS_STACK_LINKS_H
#define IMGFS_STACK_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/error.h"
#include "util/hashtab.h"
#include "util/spill.h"

struct archive;
struct archive_entry;

/* What the layer's links made of a hidden path (the few that need it). */
struct stack_saved {
	struct imgfs_hnode hnode; /* by path */
	struct stack_saved *next_all;
	/* a hidden hard link: the path it names */
	char *alias;
	/* the visible path the entry was written under for a link */
	char *shown;
	/* visible links that named it before it came */
	char **pending;
	size_t nr_pending, cap_pending;
	char path[];
};

struct stack_links {
	struct imgfs_hashtab tab;
	struct stack_saved *all;
	struct imgfs_spill spill_file; /* made when an entry is first kept */
	struct archive *spill; /* the tar writer appending to it */
	/* reading one entry back */
	struct archive *back;
	uint64_t back_pos;
	uint8_t *buf;
};

/* An entry that could not be kept (the spill's offset otherwise). */
#define STACK_UNSAVED UINT64_MAX
/* holes of a hidden sparse file kept for a link, at most (docs/stack.md) */
#define STACK_SPILL_HOLES_MAX (64ull << 30)

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
 * Append entry @e (read from @a, its data not read yet) to the spill,
 * header and data; *@off is where it starts, or STACK_UNSAVED when the
 * tar writer refused it or its holes are more than STACK_SPILL_HOLES_MAX
 * (only an error if a link needs it later). Fails
 * only when the spill file cannot be written or @a cannot be read.
 */
int stack_links_save(struct stack_links *l, struct archive *a,
		     struct archive_entry *e, const char *name, uint64_t *off,
		     struct imgfs_error *err);

/*
 * Read back the entry kept at @off: a tar reader in *@a positioned on it,
 * its header in *@e (data readable with archive_read_data_block()), valid
 * until stack_links_done().
 */
int stack_links_load(struct stack_links *l, uint64_t off, struct archive **a,
		     struct archive_entry **e, struct imgfs_error *err);
void stack_links_done(struct stack_links *l);

/* Make @s a hidden hard link to @target (a path named twice: the later). */
int stack_links_alias(struct stack_saved *s, const char *target,
		      struct imgfs_error *err);
/* A path named twice in a layer: forget what links made of the earlier. */
void stack_links_forget(struct stack_saved *s);

/* Add a visible link @path waiting for @s. */
int stack_links_wait(struct stack_saved *s, const char *path,
		     struct imgfs_error *err);

#endif /* IMGFS_STACK_LINKS_H */
