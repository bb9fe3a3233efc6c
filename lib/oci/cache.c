// SPDX-License-Identifier: MIT
/*
 * Unit records: what a converted unit produced, keyed by the source
 * diffID and the options digest (SHA-256 of a canonical text of every
 * option that changes the bytes of the layer blob, the library version
 * included). A record is written after its blob, so a record always
 * names a complete blob. They live in the destination layout
 * (.imgfs/units/) and, with --cache-dir, beside the images containerd's
 * layer_content_caches reads (DIR/sha256/<xx>/<hex>.erofs).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, O_TMPFILE, pipe2 */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imgfs/version.h"
#include "oci/internal.h"
#include "util/error.h"

static int hexdump(char *p, size_t size, const uint8_t *b, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 3 <= size; i++)
		o += (size_t)snprintf(p + o, size - o, "%02x", b[i]);
	return (int)o;
}

int oci_options_digest(const struct imgfs_oci_options *o, struct oci_digest *d,
		       struct imgfs_error *err)
{
	char *text;
	int ret = oci_options_text(o, &text, err);

	if (ret)
		return ret;
	oci_sha256_buf(text, strlen(text), d);
	free(text);
	return 0;
}

/*
 * Every field of struct imgfs_mkfs_options that changes the bytes of a
 * layer or the verdict on it has a line below (callbacks, workers,
 * no_fsync and the per-layer UUID do not). A field added to the struct
 * stops the build here until it is listed or said not to matter, and
 * the size below is updated.
 */
#if defined(__x86_64__) || defined(__aarch64__)
#define IMGFS_OCI_MKFS_OPTIONS_SIZE 496
_Static_assert(sizeof(struct imgfs_mkfs_options) == IMGFS_OCI_MKFS_OPTIONS_SIZE,
	       "struct imgfs_mkfs_options changed: list the new field in oci_options_text() (or say why not) and update the size");
#endif

int oci_options_text(const struct imgfs_oci_options *o, char **out,
		     struct imgfs_error *err)
{
	struct imgfs_mkfs_options mo, *m = &mo;
	char salt[2 * IMGFS_VERITY_SALT_MAX + 1] = "", vuuid[33] = "";
	char *text;
	int n;

	oci_mkfs_of(o, m);
	hexdump(salt, sizeof(salt), m->dm_verity_salt,
		m->dm_verity_have_salt ? m->dm_verity_salt_size : 0);
	hexdump(vuuid, sizeof(vuuid), m->dm_verity_uuid,
		m->dm_verity_have_uuid ? 16 : 0);
	/* one line per option; a new option that changes bytes adds one */
	n = asprintf(&text,
		     "imgfs-oci-unit 1\n"
		     "library %s\n"
		     "layer-media-type %s\n"
		     "block-bits %u\n"
		     "inline-data %d\n"
		     "whiteouts %d\n"
		     "all-root %d\n"
		     "force-uid %" PRId64 "\n"
		     "force-gid %" PRId64 "\n"
		     "uid-offset %" PRId64 "\n"
		     "gid-offset %" PRId64 "\n"
		     "build-time %" PRId64 "\n"
		     "label %s\n"
		     "shared-xattr-min %u\n"
		     "compress %d level %d dict %" PRIu32 " pcluster %" PRIu32
		     "\n"
		     "ztailpacking %d\n"
		     "fragments %d\n"
		     "file-flags %d\n"
		     "allow-missing-end %d\n"
		     "require-end %d\n"
		     "mtime-policy %d\n"
		     "dm-verity %d block %" PRIu32 " salt %d:%s uuid %s\n"
		     "tar-index %d\n",
		     imgfs_version(), imgfs_oci_layer_media_type(o->layer_type),
		     m->blkszbits, m->inline_data, (int)m->whiteouts,
		     m->all_root, m->force_uid, m->force_gid, m->uid_offset,
		     m->gid_offset, m->have_build_time ? m->build_time : 0,
		     m->label, m->shared_xattr_min, (int)m->compress,
		     m->compress_level, m->compress_dictsize, m->pcluster_size,
		     m->ztailpacking, m->fragments,
		     m->ignore_file_flags ? (int)IMGFS_FILE_FLAGS_IGNORE
					  : (int)m->file_flags,
		     m->allow_missing_end, m->require_end, (int)m->mtime_policy,
		     m->dm_verity,
		     m->dm_verity_data_block_size, m->dm_verity_have_salt, salt,
		     vuuid, (int)m->tar_index);
	if (n < 0)
		return error_set(err, -ENOMEM, "out of memory");
	*out = text;
	return 0;
}

static char *record_name(const struct oci_unit *u,
			 const struct oci_digest *opts)
{
	char *p;

	return asprintf(&p, "%s.%s.json", oci_digest_hex(&u->diff_id),
			oci_digest_hex(opts)) < 0
		       ? NULL
		       : p;
}

/* The record's dm-verity root hash and offset, if any: 0, or -EINVAL. */
static int record_verity(struct json_object *r, struct oci_unit *u)
{
	const char *h = oci_json_str(r, "dmVerityRootHash");
	struct json_object *v;
	size_t n = 0;

	u->verity_root[0] = '\0';
	if (!h)
		return 0;
	while (h[n] && n < 64 && strchr("0123456789abcdef", h[n]))
		n++;
	if (n != 64 || h[n] ||
	    !json_object_object_get_ex(r, "dmVerityHashOffset", &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) <= 0)
		return -EINVAL;
	memcpy(u->verity_root, h, 65);
	u->verity_offset = (uint64_t)json_object_get_int64(v);
	return 0;
}

int oci_record_load(const char *dir, const struct oci_digest *opts,
		    struct oci_unit *u, struct imgfs_error *err)
{
	char *name = record_name(u, opts), *path = NULL;
	struct json_object *r = NULL, *v;
	const char *mt;
	int ret = 0;

	if (!name || asprintf(&path, ".imgfs/units/%s", name) < 0) {
		path = NULL;
		ret = error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret = oci_read_json_file(dir, path, &r, err);
	if (ret == -ENOENT) {
		/* no record: 0, u->have unchanged */
		imgfs_error_clear(err);
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;
	mt = oci_json_str(r, "mediaType");
	if (!r || !mt ||
	    oci_digest_parse(oci_json_str(r, "digest"), &u->out, path, err) ||
	    oci_digest_parse(oci_json_str(r, "uncompressedDigest"),
			     &u->out_diff_id, path, err) ||
	    !json_object_object_get_ex(r, "size", &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) <= 0) {
		imgfs_error_clear(err);
		ret = error_set(err, -EINVAL, "%s/%s: not a valid unit record",
				dir, path);
		goto out;
	}
	u->out_size = (uint64_t)json_object_get_int64(v);
	if (record_verity(r, u)) {
		ret = error_set(
			err, -EINVAL,
			"%s: not a valid unit record (dm-verity root hash)",
			path);
		goto out;
	}
	u->verified = json_object_object_get_ex(r, "verified", &v) &&
		      json_object_is_type(v, json_type_boolean) &&
		      json_object_get_boolean(v);
	free(u->out_media_type);
	u->out_media_type = strdup(mt);
	if (!u->out_media_type)
		ret = error_set(err, -ENOMEM, "out of memory");
	else
		u->have = true;
out:
	json_object_put(r);
	free(path);
	free(name);
	return ret;
}

int oci_record_store(const char *dir, const struct oci_digest *opts,
		     const struct oci_unit *u, bool sync,
		     struct imgfs_error *err)
{
	char *name = record_name(u, opts);
	struct json_object *r = json_object_new_object();
	const char *text;
	size_t len;
	int ret;

	if (!name || !r) {
		ret = error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	json_object_object_add(r, "diffID",
			       json_object_new_string(u->diff_id.str));
	json_object_object_add(r, "options", json_object_new_string(opts->str));
	json_object_object_add(r, "mediaType",
			       json_object_new_string(u->out_media_type));
	json_object_object_add(r, "digest", json_object_new_string(u->out.str));
	json_object_object_add(r, "size",
			       json_object_new_int64((int64_t)u->out_size));
	json_object_object_add(r, "uncompressedDigest",
			       json_object_new_string(u->out_diff_id.str));
	json_object_object_add(r, "verified",
			       json_object_new_boolean(u->verified));
	if (u->verity_root[0]) {
		json_object_object_add(r, "dmVerityRootHash",
				       json_object_new_string(u->verity_root));
		json_object_object_add(
			r, "dmVerityHashOffset",
			json_object_new_int64((int64_t)u->verity_offset));
	}
	text = oci_json_text(r, &len);
	ret = oci_file_write(dir, ".imgfs/units", name, text, len, sync, err);
out:
	json_object_put(r);
	free(name);
	return ret;
}

void oci_cache_image_rel(const struct oci_digest *diff_id, char rel[96])
{
	const char *hex = oci_digest_hex(diff_id);

	snprintf(rel, 96, "sha256/%.2s/%s.erofs", hex, hex);
}

int oci_options_note(const struct imgfs_oci_options *o, const char *dst,
		     const struct oci_digest *d, bool sync,
		     struct imgfs_error *err)
{
	char *name = NULL, *text = NULL;
	int ret = oci_options_text(o, &text, err);

	if (!ret && asprintf(&name, "%s.txt", oci_digest_hex(d)) < 0) {
		name = NULL;
		ret = error_set(err, -ENOMEM, "out of memory");
	}
	if (!ret)
		ret = oci_file_write(dst, ".imgfs/options", name, text,
				     strlen(text), sync, err);
	free(text);
	free(name);
	return ret;
}

/* The options hex of a record of one of @ids made with others than @d. */
static bool other_record(const char *name, const struct oci_digest *d,
			 char *const *ids, size_t n, char hex[65])
{
	for (size_t i = 0; i < n; i++) {
		const char *id = ids[i] + 7;

		if (strlen(name) == 64 + 1 + 64 + 5 && !strncmp(name, id, 64) &&
		    name[64] == '.' &&
		    strncmp(name + 65, oci_digest_hex(d), 64)) {
			memcpy(hex, name + 65, 64);
			hex[64] = '\0';
			return true;
		}
	}
	return false;
}

/* "here 'LINE' / there 'LINE'" for each line of @a not in @b. */
static void diff_lines(FILE *f, const char *a, const char *b)
{
	char *ca = strdup(a), *save = NULL;

	for (char *l = ca ? strtok_r(ca, "\n", &save) : NULL; l;
	     l = strtok_r(NULL, "\n", &save)) {
		const char *sp = strchr(l, ' ');
		size_t klen = sp ? (size_t)(sp - l) : strlen(l);
		const char *m = b;

		while ((m = strstr(m, l)) &&
		       ((m != b && m[-1] != '\n') ||
			(m[strlen(l)] && m[strlen(l)] != '\n')))
			m++;
		if (m)
			continue; /* the same line there */
		for (m = b; m && *m;
		     m = strchr(m, '\n') ? strchr(m, '\n') + 1 : NULL)
			if (!strncmp(m, l, klen) && m[klen] == ' ')
				break;
		fprintf(f, "; this run: '%s', there: '%.*s'", l,
			m && *m ? (int)(strchrnul(m, '\n') - m) : 7,
			m && *m ? m : "unknown");
	}
	free(ca);
}

char *oci_options_mismatch(const struct imgfs_oci_options *o, const char *dst,
			   const struct oci_digest *d, char *const *ids,
			   size_t n)
{
	char *dir = NULL, *ours = NULL, *theirs = NULL, *msg = NULL, *p;
	char hex[65], buf[4096];
	struct imgfs_error e;
	size_t len = 0;
	struct dirent *de;
	DIR *dh;
	FILE *f;
	bool found = false;

	if (asprintf(&dir, "%s/.imgfs/units", dst) < 0)
		return NULL;
	dh = opendir(dir);
	while (dh && (de = readdir(dh)))
		if ((found = other_record(de->d_name, d, ids, n, hex)))
			break;
	if (dh)
		closedir(dh);
	free(dir);
	if (!found || oci_options_text(o, &ours, &e))
		return NULL;
	f = open_memstream(&msg, &len);
	if (!f) {
		free(ours);
		return NULL;
	}
	fprintf(f,
		"units of this layout are in %s converted with other options (options digest sha256:%s)",
		dst, hex);
	if (asprintf(&p, "%s/.imgfs/options/%s.txt", dst, hex) >= 0) {
		int fd =
			open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		FILE *t = fd >= 0 ? fdopen(fd, "r") : NULL;
		size_t got = t ? fread(buf, 1, sizeof(buf) - 1, t) : 0;

		if (t)
			fclose(t);
		buf[got] = '\0';
		theirs = got ? buf : NULL;
		free(p);
	}
	if (theirs)
		diff_lines(f, ours, theirs);
	fputs("; every step needs the same options (docs/sharding.md)", f);
	fclose(f);
	free(ours);
	return msg;
}
