// SPDX-License-Identifier: MIT
/*
 * The destination layout as a whole: its lock, the index.json an earlier
 * run left (read as untrusted input, validated, then merged with this
 * run's entries so that images converted one at a time accumulate), and
 * the garbage collection of blobs and unit records no entry reaches.
 *
 * Every run that writes into a destination holds DST/.imgfs/lock shared
 * (flock) for its whole duration; the collection takes it exclusively
 * and without waiting, so it never runs beside a conversion, a shard or
 * an assembly. What it removes is what index.json does not reach, so
 * units a shard converted for an assembly still to come are removed too:
 * collect after --assemble (docs/sharding.md).
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
#include <sys/file.h>
#include <sys/stat.h>

#include "oci/internal.h"
#include "util/error.h"

#define REF_NAME "org.opencontainers.image.ref.name"

int oci_lock(const char *dst, bool exclusive, int *fd, struct imgfs_error *err)
{
	int dfd = oci_dir_open(dst, ".imgfs", true, err), ret = 0;

	*fd = -1;
	if (dfd < 0)
		return dfd;
	*fd = openat(dfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		     0644);
	close(dfd);
	if (*fd < 0)
		return error_set(err, -errno, "%s/.imgfs/lock: %s", dst,
				 strerror(errno));
	if (flock(*fd, exclusive ? LOCK_EX | LOCK_NB : LOCK_SH)) {
		ret = errno == EWOULDBLOCK
			      ? error_set(
					err, -EBUSY,
					"%s: another run is writing into this layout (%s/.imgfs/lock is locked): nothing removed",
					dst, dst)
			      : error_set(err, -errno, "%s/.imgfs/lock: %s",
					  dst, strerror(errno));
		close(*fd);
		*fd = -1;
	}
	return ret;
}

void oci_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the flock */
}

/* The whole of @dst/index.json, if any: no link followed, bounded. */
static int read_index(const char *dst, char **buf, size_t *len,
		      struct imgfs_error *err)
{
	int fd, ret;

	*buf = NULL;
	fd = oci_open_file(dst, "index.json", err);
	if (fd == -ENOENT) {
		imgfs_error_clear(err); /* a new destination */
		return 0;
	}
	if (fd < 0)
		return fd;
	ret = oci_read_fd(fd, OCI_JSON_MAX, buf, len,
			  "the destination's index.json", err);
	close(fd);
	return ret;
}

/* Entry @i of an earlier index.json: a descriptor whose blob is there. */
static int check_entry(const char *dst, struct json_object *e, size_t i,
		       struct imgfs_error *err)
{
	struct json_object *ann = NULL;
	struct oci_digest d;
	uint64_t size;
	const char *mt;
	char what[96], *buf;
	int ret;

	snprintf(what, sizeof(what), "%s/index.json entry %zu", dst, i);
	ret = oci_desc_get(e, &d, &size, &mt, what, err);
	if (ret)
		return ret;
	if (!mt ||
	    (json_object_object_get_ex(e, "annotations", &ann) &&
	     !json_object_is_type(ann, json_type_object)) ||
	    (ann && json_object_object_get_ex(ann, REF_NAME, NULL) &&
	     !oci_json_str(ann, REF_NAME)))
		return error_set(
			err, -EINVAL,
			"%s: no mediaType, or annotations that are not strings",
			what);
	/* its document must be there, whole: it is what keeps the rest */
	ret = oci_blob_load(dst, &d, size, &buf, err);
	free(buf);
	if (ret)
		return error_prefix(err, ret, "%s", what);
	return 0;
}

int oci_dst_index_load(const char *dst, struct json_object **entries,
		       struct imgfs_error *err)
{
	struct json_tokener *tok;
	struct json_object *ix = NULL, *m;
	size_t len;
	char *buf;
	int ret = read_index(dst, &buf, &len, err);

	*entries = NULL;
	if (ret || !buf)
		return ret;
	tok = json_tokener_new();
	if (tok)
		ix = json_tokener_parse_ex(tok, buf, (int)len);
	if (!tok || !ix ||
	    json_tokener_get_error(tok) != json_tokener_success ||
	    (size_t)json_tokener_get_parse_end(tok) != len ||
	    !json_object_is_type(ix, json_type_object) ||
	    !json_object_object_get_ex(ix, "manifests", &m) ||
	    !json_object_is_type(m, json_type_array))
		ret = error_set(
			err, -EINVAL,
			"%s/index.json: the destination's index is not a JSON object with a manifests array; remove it or choose another destination",
			dst);
	for (size_t i = 0; !ret && i < json_object_array_length(m); i++)
		ret = check_entry(dst, json_object_array_get_idx(m, i), i, err);
	if (!ret)
		*entries = json_object_get(m);
	json_object_put(ix);
	if (tok)
		json_tokener_free(tok);
	free(buf);
	return ret;
}

static const char *ref_of(struct json_object *e)
{
	struct json_object *ann;

	if (!json_object_object_get_ex(e, "annotations", &ann))
		return NULL;
	return oci_json_str(ann, REF_NAME);
}

/* Index in @news of the entry standing for @old, or -1. */
static long same_entry(struct json_object *news, struct json_object *old)
{
	const char *r = ref_of(old), *d = oci_json_str(old, "digest");

	for (size_t j = 0; j < json_object_array_length(news); j++) {
		struct json_object *n = json_object_array_get_idx(news, j);
		const char *nr = ref_of(n), *nd = oci_json_str(n, "digest");

		if (r ? nr && !strcmp(r, nr) : !nr && nd && d && !strcmp(nd, d))
			return (long)j;
	}
	return -1;
}

struct json_object *oci_index_merge(struct json_object *olds,
				    struct json_object *news)
{
	size_t n = json_object_array_length(news);
	struct json_object *out = json_object_new_array();
	bool *used = calloc(n + 1, sizeof(*used));

	if (!out || !used) {
		free(used);
		json_object_put(out);
		return NULL;
	}
	/* an entry of the same ref name is replaced where it stands */
	for (size_t i = 0; olds && i < json_object_array_length(olds); i++) {
		struct json_object *o = json_object_array_get_idx(olds, i);
		long j = same_entry(news, o);

		if (j < 0)
			json_object_array_add(out, json_object_get(o));
		else if (!used[j]) {
			used[j] = true;
			json_object_array_add(
				out, json_object_get(json_object_array_get_idx(
					     news, (size_t)j)));
		}
	}
	for (size_t j = 0; j < n; j++)
		if (!used[j])
			json_object_array_add(
				out, json_object_get(json_object_array_get_idx(
					     news, j)));
	free(used);
	return out;
}
