/* SPDX-License-Identifier: MIT */
/*
 * compare/internal.h - what the files of the comparison share.
 *
 * report.c  differences: message, count, callback
 * digest.c  the digest contents are compared by
 * expect.c  the expected tree: dentries, inodes, xattr lists, path lookup
 * attrs.c   one tar entry's attributes as mkfs.img stores them
 * names.c   one tar entry's names, from its header blocks
 * replay.c  the tar replayed with mkfs.img's path, whiteout and link rules
 * image.c   the image side: its paths, by parent and name, and by nid
 * match.c   the expected tree against the image
 * compare.c the public calls
 */
#ifndef COMPARE_INTERNAL_H
#define COMPARE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imgfs/compare.h"
#include "source/fflags.h"
#include "util/hashtab.h"

#include <openssl/evp.h>
#include <xxhash.h>

struct archive;
struct archive_entry;

/* the largest digest of cmp_digest_*() (SHA-256's) */
#define CMP_DIGEST_SIZE 32
/* the key of keyed XXH3 (at least XXH3_SECRET_SIZE_MIN) */
#define CMP_SECRET_SIZE 192

struct cmp_kv {
	char *name;
	uint8_t *value;
	size_t len;
};

/* An inode of the expected tree (hard links share one). */
struct exp_inode {
	uint32_t mode, uid, gid;
	int64_t mtime;
	uint32_t nsec;
	uint64_t size;
	unsigned long major, minor;
	char *symlink;
	uint8_t sum[CMP_DIGEST_SIZE]; /* content (digest.c) */
	struct cmp_kv *xattrs; /* util/vec.h */
	size_t nr_xattrs, cap_xattrs;
	bool matched; /* an image nid was bound to it */
	bool at_build_time; /* its mtime is the image's build time */
	uint64_t nid;
	struct img_entry *first; /* the image entry first bound to it */
	struct exp_inode *next_all;
};

/* A path of the expected tree. */
struct exp_dentry {
	char *name;
	struct exp_dentry *parent;
	struct exp_inode *inode; /* NULL: hard link not resolved yet */
	char *link_target;
	char *entry_path;
	bool dead, opaque, whiteouts;
	bool whiteout; /* made from ".wh.NAME" by the archive */
	struct exp_dentry **children; /* util/vec.h */
	size_t nr_children, cap_children;
	struct imgfs_hnode hnode; /* in c->dentries, by (parent, name) */
	struct exp_dentry *next_all;
};

/* Where the content digest of an image file stands. */
enum img_digest {
	IMG_DIGEST_NONE = 0, /* the checker could not read the data */
	IMG_DIGEST_SET, /* sum holds it */
	IMG_DIGEST_LATER, /* read the file when the sizes match */
};

/*
 * One path of the image: its name and its parent directory's entry (full
 * paths are built only to print them, so memory does not grow with depth
 * times path length).
 */
struct img_entry {
	char *name; /* "" for the root */
	struct img_entry *parent; /* NULL for the root */
	struct imgfs_inode inode;
	enum img_digest digest;
	uint8_t sum[CMP_DIGEST_SIZE]; /* content (digest.c) */
	bool seen;
	struct exp_inode *bound; /* expected inode matched to this nid */
	struct imgfs_hnode hnode; /* in c->ientries, by (parent, name) */
	struct img_entry *next_all; /* in the order the walk met them */
};

struct imgfs_compare {
	struct imgfs_image *img;
	struct imgfs_compare_options o;
	struct imgfs_compare_result res;
	char *msg; /* the message being reported */
	size_t msg_cap;
	int64_t build_time;
	/* libarchive gives "-1.5" as -1 s + 0.5 s (see cmp_pax_sign_lost) */
	bool pax_trunc;
	bool ran;
	bool tar_read; /* imgfs_compare_read_tar() is done */
	bool fast; /* contents by keyed XXH3-128, not SHA-256 */
	uint8_t secret[CMP_SECRET_SIZE];
	/* expected tree */
	struct exp_dentry *root;
	struct imgfs_hashtab dentries;
	struct exp_dentry *all_dentries;
	struct exp_inode *all_inodes;
	/* image side, hashed by (parent, name) */
	struct imgfs_hashtab ientries;
	struct img_entry *iroot;
	struct img_entry *iall, **itail; /* every entry, in walk order */
	/* nid -> first image entry met with it (a struct img_entry *), for
	 * hard-link grouping */
	struct imgfs_u64map by_nid;
	/* nid -> image entry of each directory, to find entries' parents */
	struct imgfs_u64map dirs;
	/* paths built for messages */
	char *pbuf, *pbuf2;
	size_t pbuf_cap, pbuf2_cap;
	int oom;
	/* entries with file flags a user set (IMGFS_FILE_FLAGS_WARN) */
	struct imgfs_fflags_tally fflags;
};

/* digest.c: one content digest, begun, updated, ended */
struct cmp_digest {
	EVP_MD_CTX *md;
	XXH3_state_t *xx;
};
int cmp_digest_key(struct imgfs_compare *c);
int cmp_digest_begin(const struct imgfs_compare *c, struct cmp_digest *d);
void cmp_digest_update(struct cmp_digest *d, const void *p, size_t len);
void cmp_digest_final(struct cmp_digest *d, uint8_t out[CMP_DIGEST_SIZE]);
void cmp_digest_abort(struct cmp_digest *d);
const char *cmp_digest_name(const struct imgfs_compare *c);

/* report.c */
void cmp_diff(struct imgfs_compare *c, const char *path,
	      enum imgfs_compare_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void cmp_unrepresentable(struct imgfs_compare *c, const char *path,
			 const char *why);
/* "directory", "regular file", ... for messages */
const char *cmp_type_words(uint32_t mode);

/* expect.c */
int cmp_expect_init(struct imgfs_compare *c);
void cmp_expect_build_time(struct imgfs_compare *c, int64_t t);
void cmp_expect_free(struct imgfs_compare *c);
struct exp_inode *cmp_inode_new(struct imgfs_compare *c);
struct exp_dentry *cmp_dlookup(struct imgfs_compare *c, struct exp_dentry *dir,
			       const char *name, size_t len);
struct exp_dentry *cmp_dadd(struct imgfs_compare *c, struct exp_dentry *dir,
			    const char *name, size_t len,
			    struct exp_inode *inode);
bool cmp_is_dir(const struct exp_dentry *d);
int cmp_kv_set(struct exp_inode *in, const char *name, const void *v,
	       size_t len);
void cmp_kv_clear(struct exp_inode *in);
int cmp_kv_cmp(const void *a, const void *b);

/* A path split by the rules mkfs.img documents ("..": up, never above /). */
struct cmp_comps {
	char *buf;
	char **v;
	size_t n;
};
int cmp_split_path(const char *path, struct cmp_comps *cp);
void cmp_comps_free(struct cmp_comps *cp);
struct exp_dentry *cmp_walk_parent(struct imgfs_compare *c,
				   const struct cmp_comps *cp, bool create,
				   const char *path);
struct exp_dentry *cmp_find_path(struct imgfs_compare *c, const char *path);

/* attrs.c */
bool cmp_pax_sign_lost(void);
bool cmp_set_owner_time(struct imgfs_compare *c, struct exp_inode *in,
			struct archive_entry *ae, const char *path);
int cmp_set_xattrs(struct imgfs_compare *c, struct exp_inode *in,
		   struct archive_entry *ae, const char *path);
unsigned int cmp_tar_mode(struct archive_entry *ae);
int cmp_fill_inode(struct imgfs_compare *c, struct archive *a,
		   struct archive_entry *ae, struct exp_inode *in,
		   const char *path);

/* replay.c */
/*
 * The path and link target (empty: none) that the tar header blocks
 * [@p, @p + @n) of one entry give, in new strings: 0, -EINVAL when the
 * blocks do not hold a whole entry header, -ENOMEM.
 */
int cmp_tar_names(const uint8_t *p, size_t n, char **path, char **link);

/* The tar at @tar read into what the image should hold. */
int cmp_replay_tar(struct imgfs_compare *c, const char *tar,
		   struct imgfs_error *err);
/* The same from @t, open already (the caller closes it); @tar names it. */
int cmp_replay_opened(struct imgfs_compare *c, struct imgfs_tar *t,
		      const char *tar, struct imgfs_error *err);

/* image.c */
int cmp_image_add(struct imgfs_compare *c, uint64_t parent_nid,
		  const char *name, size_t name_len,
		  const struct imgfs_inode *inode, bool first,
		  enum img_digest digest, const uint8_t *sha256);
int cmp_image_walk(struct imgfs_compare *c, struct imgfs_error *err);
struct img_entry *cmp_image_lookup(struct imgfs_compare *c,
				   const struct img_entry *parent,
				   const char *name);
struct img_entry *cmp_image_bind_nid(struct imgfs_compare *c,
				     struct img_entry *ie);
const char *cmp_image_path(struct imgfs_compare *c, const struct img_entry *e,
			   char **buf, size_t *cap);
/* Make sure @ie's digest is known: 0, or -errno (message in @err). */
int cmp_image_digest(struct imgfs_compare *c, struct img_entry *ie,
		     struct imgfs_error *err);
void cmp_image_free(struct imgfs_compare *c);

/* match.c */
void cmp_match_tree(struct imgfs_compare *c);
void cmp_report_extra(struct imgfs_compare *c);

#endif /* COMPARE_INTERNAL_H */
