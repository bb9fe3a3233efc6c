/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the parts of the extraction (imgfs/extract.h) share.
 *
 * dirs.c keeps the directories written and a cursor of fds along the path
 * to the one in use; create.c makes each kind of node below such an fd;
 * meta.c applies owner, mode, xattrs and times through an fd of the node;
 * report.c hands failures and warnings to the caller; extract.c drives them
 * from the checker's entries, walk.c from its own walk of the image.
 */
#ifndef IMGFS_EXTRACT_INTERNAL_H
#define IMGFS_EXTRACT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "imgfs/check.h"
#include "imgfs/extract.h"
#include "imgfs/reader.h"

#define EXTRACT_COPY_BUFSZ (1u << 20)

/*
 * A directory of the image, at the index of its walk serial (the root 0,
 * then in the order met, parents first), so no table by nid is needed;
 * @made once it is written.
 */
struct extract_dir {
	uint64_t nid;
	char *name; /* NULL for the root */
	size_t parent; /* the root is its own parent */
	size_t depth;
	int fd; /* open while on the cursor's path and kept, else -1 */
	bool made;
};

struct imgfs_extract {
	int rootfd;
	struct imgfs_image *img;
	struct imgfs_extract_options o;
	bool overwrite;
	bool root;
	bool warned_owner;
	bool warned_xattr;
	bool no_fchmodat2;
	bool finished;
	struct extract_dir *dirs;
	size_t nr_dirs, cap_dirs;
	/* the cursor: dirs[lv[k]] is at depth k on the current path */
	size_t *lv, nr_lv, cap_lv;
	size_t *chain, cap_chain; /* scratch for extract_cursor_goto() */
	size_t open_fds, fd_budget, window;
	struct imgfs_extract_result res;
	uint8_t *buf;
};

/*
 * Where metadata goes: @fd is an fd opened for reading or writing (regular
 * files, directories), or an O_PATH fd of a node just created and checked
 * (FIFO, device, symlink); never a name resolved again.
 */
struct extract_target {
	const char *path; /* for messages; NULL: directory @dir */
	size_t dir;
	char **pbuf; /* where that directory's path is built */
	int fd;
	bool opath;
	char proc[32]; /* "/proc/self/fd/N" for O_PATH fds */
};

/* report.c: a notice to the caller; a failure of @path (counted) */
void extract_fail(struct imgfs_extract *x, const char *path, const char *what,
		  int errnum);
void extract_notice(struct imgfs_extract *x,
		    const struct imgfs_extract_notice *n);

/* dirs.c */
size_t extract_fd_budget(void);
int extract_dir_is_empty(int fd);
int extract_cursor_goto(struct imgfs_extract *x, size_t t);
void extract_cursor_close(struct imgfs_extract *x);
int extract_add_dir(struct imgfs_extract *x, uint64_t serial, uint64_t nid,
		    size_t parent, const char *name);
size_t extract_made_dir(const struct imgfs_extract *x, uint64_t serial);
int extract_add_root(struct imgfs_extract *x, uint64_t nid);
const char *extract_dir_path(struct imgfs_extract *x, size_t i, char **buf);

/* meta.c */
const char *extract_tpath(struct imgfs_extract *x,
			  const struct extract_target *t);
void extract_set_meta(struct imgfs_extract *x, const struct imgfs_inode *inode,
		      const struct extract_target *t);

/* create.c */
bool extract_bad_name(const char *name);
void extract_remove_existing(struct imgfs_extract *x, int pfd,
			     const char *name);
void extract_write_file(struct imgfs_extract *x,
			const struct imgfs_inode *inode, const char *path,
			int pfd, const char *name);
void extract_write_node(struct imgfs_extract *x,
			const struct imgfs_inode *inode, const char *path,
			int pfd, const char *name);
void extract_write_link(struct imgfs_extract *x,
			const struct imgfs_check_entry *e, size_t pidx,
			const char *name);

#endif /* IMGFS_EXTRACT_INTERNAL_H */
