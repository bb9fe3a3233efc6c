// SPDX-License-Identifier: MIT
/*
 * imgfs_oci_gc(): remove the blobs and unit records of a destination
 * layout that its index.json does not reach (through indexes, manifests,
 * configs, layers and subjects), and the temporary files of killed runs.
 * It holds the layout's lock exclusively (dst.c), so no run writes
 * meanwhile; a document it cannot read whole stops it before anything is
 * removed (what it names would look unreached).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, O_TMPFILE, pipe2 */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "oci/internal.h"
#include "util/error.h"

struct reach {
	const char *root;
	char **hex; /* reached blob digests (hex), sorted at the end */
	size_t n, cap;
};

static int hex_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool reached(const struct reach *r, const char *hex)
{
	return bsearch(&hex, r->hex, r->n, sizeof(*r->hex), hex_cmp) != NULL;
}

static int mark(struct reach *r, const struct oci_digest *d,
		struct imgfs_error *err)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->hex[i], oci_digest_hex(d)))
			return 1; /* already walked */
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		char **p = realloc(r->hex, cap * sizeof(*p));

		if (!p)
			return error_set(err, -ENOMEM, "out of memory");
		r->hex = p;
		r->cap = cap;
	}
	r->hex[r->n] = strdup(oci_digest_hex(d));
	if (!r->hex[r->n])
		return error_set(err, -ENOMEM, "out of memory");
	r->n++;
	return 0;
}

static int walk(struct reach *r, struct json_object *desc, int depth,
		struct imgfs_error *err);

/* Is the blob @desc names in the layout? */
static bool have_blob(const char *root, struct json_object *desc)
{
	struct oci_digest d;
	struct imgfs_error e;
	struct stat st;
	uint64_t size;
	char *path;
	bool yes;

	if (oci_desc_get(desc, &d, &size, NULL, "subject", &e))
		return false;
	path = oci_blob_path(root, &d);
	yes = path && !lstat(path, &st) && S_ISREG(st.st_mode);
	free(path);
	return yes;
}

static int walk_array(struct reach *r, struct json_object *doc, const char *key,
		      int depth, struct imgfs_error *err)
{
	struct json_object *v;
	int ret = 0;

	if (!json_object_object_get_ex(doc, key, &v) ||
	    !json_object_is_type(v, json_type_array))
		return 0;
	for (size_t i = 0; !ret && i < json_object_array_length(v); i++)
		ret = walk(r, json_object_array_get_idx(v, i), depth, err);
	return ret;
}

static int walk(struct reach *r, struct json_object *desc, int depth,
		struct imgfs_error *err)
{
	struct json_object *doc = NULL, *v;
	struct oci_digest d;
	const char *mt;
	uint64_t size;
	int ret = oci_check_depth(depth, err);

	if (!ret)
		ret = oci_desc_get(desc, &d, &size, &mt, "garbage collection",
				   err);
	if (!ret)
		ret = mark(r, &d, err);
	if (ret)
		return ret < 0 ? ret : 0;
	if (!oci_is_index_type(mt) && !oci_is_manifest_type(mt) &&
	    (!mt ||
	     strcmp(mt, "application/vnd.oci.artifact.manifest.v1+json")))
		return 0;
	ret = oci_json_load(r->root, &d, size, &doc, err);
	if (!ret)
		ret = walk_array(r, doc, "manifests", depth + 1, err);
	if (!ret && json_object_object_get_ex(doc, "config", &v))
		ret = walk(r, v, depth + 1, err);
	if (!ret)
		ret = walk_array(r, doc, "layers", depth + 1, err);
	if (!ret)
		ret = walk_array(r, doc, "blobs", depth + 1, err);
	/* a subject kept in the layout (--subject, referrers) stays; it is
	 * a source document whose own blobs are not copied: not walked */
	if (!ret && json_object_object_get_ex(doc, "subject", &v) &&
	    have_blob(r->root, v) &&
	    !oci_desc_get(v, &d, &size, NULL, "subject", err) &&
	    mark(r, &d, err) < 0)
		ret = err->code;
	json_object_put(doc);
	return ret;
}

static bool is_hex64(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == 64;
}

/* Remove @dir/@name (a regular file only); count it in @st. */
static int drop(int dfd, const char *dir, const char *name, bool blob,
		struct imgfs_oci_gc_stats *st, struct imgfs_error *err)
{
	struct stat sb;

	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) ||
	    !S_ISREG(sb.st_mode))
		return 0; /* not ours to remove */
	if (unlinkat(dfd, name, 0) && errno != ENOENT)
		return error_set(err, -errno, "%s/%s: %s", dir, name,
				 strerror(errno));
	if (blob) {
		st->blobs_removed++;
		st->bytes_removed += (uint64_t)sb.st_size;
	} else {
		st->records_removed++;
	}
	return 0;
}

/* The record's layer blob digest (hex), or NULL for an unreadable one. */
static char *record_blob(int dfd, const char *name)
{
	struct json_object *r = NULL;
	struct oci_digest d;
	struct imgfs_error e;
	char buf[4096], *hex = NULL;
	ssize_t n;
	int fd = openat(dfd, name,
			O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	r = json_tokener_parse(buf);
	if (!oci_digest_parse(oci_json_str(r, "digest"), &d, name, &e))
		hex = strdup(oci_digest_hex(&d));
	json_object_put(r);
	return hex;
}

/* Every file of @dir that is no reached blob (or record of one). */
static int sweep(const struct reach *r, const char *dir, bool blobs,
		 struct imgfs_oci_gc_stats *st, struct imgfs_error *err)
{
	/* no link followed on the way: a planted one must not redirect */
	int dfd = oci_dir_open(r->root, dir, false, err);
	struct dirent *de;
	DIR *dh;
	int ret = 0;

	if (dfd == -ENOENT)
		return 0;
	if (dfd < 0)
		return dfd;
	dh = fdopendir(dfd);
	if (!dh) {
		close(dfd);
		return error_set(err, -errno, "%s/%s: %s", r->root, dir,
				 strerror(errno));
	}
	while (!ret && (de = readdir(dh))) {
		const char *n = de->d_name;
		bool keep;

		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		if (!strncmp(n, ".imgfs-", 7)) {
			/* a killed run's temporary file: no run is active */
			ret = drop(dirfd(dh), dir, n, blobs, st, err);
			continue;
		}
		if (blobs) {
			keep = is_hex64(n) && reached(r, n);
			if (keep)
				st->blobs_kept++;
		} else {
			char *hex = record_blob(dirfd(dh), n);

			keep = hex && reached(r, hex);
			free(hex);
		}
		if (!keep)
			ret = drop(dirfd(dh), dir, n, blobs, st, err);
	}
	closedir(dh);
	return ret;
}

/* A referrers tag ("sha256-<hex>..." ref name) keeps <hex> if present. */
static int mark_tag(struct reach *r, struct json_object *e,
		    struct imgfs_error *err)
{
	struct json_object *ann;
	struct oci_digest d;
	struct imgfs_error e2;
	struct stat st;
	const char *ref = NULL;
	char dig[OCI_DIGEST_MAX], *path;
	bool have;

	if (json_object_object_get_ex(e, "annotations", &ann))
		ref = oci_json_str(ann, "org.opencontainers.image.ref.name");
	if (!ref || strncmp(ref, "sha256-", 7))
		return 0;
	snprintf(dig, sizeof(dig), "sha256:%.64s", ref + 7);
	if (oci_digest_parse(dig, &d, "referrers tag", &e2))
		return 0;
	path = oci_blob_path(r->root, &d);
	have = path && !lstat(path, &st) && S_ISREG(st.st_mode);
	free(path);
	return have && mark(r, &d, err) < 0 ? err->code : 0;
}

static int collect(const char *dst, struct imgfs_oci_gc_stats *st,
		   struct imgfs_error *err)
{
	struct reach r = { .root = dst };
	struct json_object *entries = NULL;
	int ret = oci_dst_index_load(dst, &entries, err);

	if (!ret && !entries)
		ret = error_set(
			err, -ENOENT,
			"%s: no index.json: nothing is reached, nothing removed",
			dst);
	for (size_t i = 0; !ret && i < json_object_array_length(entries); i++) {
		ret = walk(&r, json_object_array_get_idx(entries, i), 0, err);
		if (!ret)
			ret = mark_tag(
				&r, json_object_array_get_idx(entries, i), err);
	}
	if (!ret)
		qsort(r.hex, r.n, sizeof(*r.hex), hex_cmp);
	if (!ret)
		ret = sweep(&r, "blobs/sha256", true, st, err);
	if (!ret)
		ret = sweep(&r, ".imgfs/units", false, st, err);
	for (size_t i = 0; i < r.n; i++)
		free(r.hex[i]);
	free(r.hex);
	json_object_put(entries);
	return ret;
}

int imgfs_oci_gc(const char *dst, struct imgfs_oci_gc_stats *st,
		 struct imgfs_error *err)
{
	struct imgfs_oci_gc_stats local;
	struct stat sb;
	int fd, ret;

	imgfs_error_clear(err);
	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	st->struct_size = sizeof(*st);
	if (lstat(dst, &sb) || !S_ISDIR(sb.st_mode))
		return error_set(err, -ENOTDIR, "%s: not a layout directory",
				 dst);
	ret = oci_lock(dst, true, &fd, err);
	if (ret)
		return ret;
	ret = collect(dst, st, err);
	oci_unlock(fd);
	return ret;
}
