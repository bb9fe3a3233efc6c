// SPDX-License-Identifier: MIT
/*
 * fuzz_oci.c - libFuzzer target: an OCI image layout built from the
 * input, then read (imgfs_oci_list_units), checked (imgfs_oci_check),
 * converted (imgfs_oci_convert, then again: reuse) and flattened
 * (imgfs_oci_flatten), in a temporary directory removed afterwards.
 *
 * The input is a sequence of files, each: one byte saying what it is,
 * two bytes (little-endian) of length, the bytes. What: 0 oci-layout,
 * 1 index.json, 2 a blob named by its SHA-256, 3 a blob named by the
 * first 32 bytes of its data (hex; a lying blob), 4 a unit record of the
 * destination (named by the next 64 + 64 bytes as hex diffID and
 * options digest). tests/fuzz/corpus-oci holds layouts so encoded.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "imgfs/oci.h"

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void put(const char *dir, const char *name, const uint8_t *d,
		size_t n)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (n && write(fd, d, n) < 0)
		n = 0;
	close(fd);
}

static void one_file(const char *root, uint8_t what, const uint8_t *d,
		     size_t n)
{
	char name[300], blobs[4096], h[129];
	uint8_t md[32];

	snprintf(blobs, sizeof(blobs), "%s/blobs/sha256", root);
	switch (what % 5) {
	case 0:
		put(root, "oci-layout", d, n);
		break;
	case 1:
		put(root, "index.json", d, n);
		break;
	case 2:
		EVP_Digest(d, n, md, NULL, EVP_sha256(), NULL);
		hex(md, 32, name);
		put(blobs, name, d, n);
		break;
	case 3:
		if (n < 32)
			return;
		hex(d, 32, name);
		put(blobs, name, d + 32, n - 32);
		break;
	case 4:
		if (n < 64)
			return;
		hex(d, 32, h);
		hex(d + 32, 32, h + 64);
		snprintf(name, sizeof(name), "%.64s.%.64s.json", h, h + 64);
		snprintf(blobs, sizeof(blobs), "%s-dst/.imgfs/units", root);
		put(blobs, name, d + 64, n - 64);
		break;
	}
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int no_unit(const struct imgfs_oci_unit *u, void *arg)
{
	(void)u;
	(void)arg;
	return 0;
}

static void run(const char *root, const char *dst, const char *img)
{
	struct imgfs_oci_check_options co;
	struct imgfs_oci_check_result cr;
	struct imgfs_oci_options o;
	struct imgfs_mkfs_options m;
	struct imgfs_oci_stats st;
	struct imgfs_mkfs_stats ms;
	struct imgfs_error err;

	imgfs_oci_options_init(&o);
	o.jobs = 1;
	imgfs_mkfs_options_init(&m);
	m.no_fsync = true;
	o.mkfs = &m;
	imgfs_oci_list_units(root, &o, no_unit, NULL, &err);
	imgfs_oci_check_options_init(&co);
	imgfs_oci_check(root, &co, &cr, &err);
	if (!imgfs_oci_convert(root, dst, &o, &st, &err)) {
		imgfs_oci_convert(root, dst, &o, &st, &err);
		co.compare_src = root;
		imgfs_oci_check(dst, &co, &cr, &err);
	}
	imgfs_oci_flatten(root, &o, img, &ms, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char root[4096], dst[4200], img[4200], path[4200];
	const char *tmp = getenv("TMPDIR");
	size_t off = 0;

	snprintf(root, sizeof(root), "%s/imgfs-fuzz-oci.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root))
		return 0;
	snprintf(path, sizeof(path), "%s/blobs", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/blobs/sha256", root);
	mkdir(path, 0755);
	snprintf(dst, sizeof(dst), "%s-dst", root);
	snprintf(path, sizeof(path), "%s/.imgfs", dst);
	mkdir(dst, 0755);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/.imgfs/units", dst);
	mkdir(path, 0755);
	snprintf(img, sizeof(img), "%s.img", root);
	while (off + 3 <= size) {
		size_t n = data[off + 1] | (size_t)data[off + 2] << 8;

		if (n > size - off - 3)
			n = size - off - 3;
		one_file(root, data[off], data + off + 3, n);
		off += 3 + n;
	}
	run(root, dst, img);
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	nftw(dst, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	unlink(img);
	return 0;
}
