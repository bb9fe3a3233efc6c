// SPDX-License-Identifier: MIT
/*
 * imgfs/verity.h: hash areas against an in-memory reference built level by
 * level (whole-data, no streaming), for every way of feeding the data;
 * the verifier on clean and damaged areas; parameter errors; derived salts;
 * the sidecar JSON; fs-verity digests against values "fsverity digest"
 * printed. tests/unit/verity.sh compares with the real tools.
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "imgfs/verity.h"
#include "unit.h"

#define HBS 4096

static void sha(const uint8_t *salt, size_t salt_size, const uint8_t *p,
		size_t len, uint8_t *out)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	EVP_DigestUpdate(c, salt, salt_size);
	EVP_DigestUpdate(c, p, len);
	EVP_DigestFinal_ex(c, out, NULL);
	EVP_MD_CTX_free(c);
}

struct ref {
	uint8_t *area; /* superblock block, then the levels, top first */
	size_t len;
	uint64_t hash_offset;
	uint8_t root[32];
};

/* The hash area of @size bytes of @data, one level at a time. */
static void ref_build(struct ref *r, const uint8_t *data, size_t size,
		      uint32_t dbs, const uint8_t *salt, size_t salt_size,
		      const uint8_t *uuid)
{
	uint64_t n = (size + dbs - 1) / dbs;
	uint8_t *digests = malloc(n * 32), *levels[20], *blk = calloc(1, dbs);
	size_t nlev = 0, lsize[20];

	for (uint64_t i = 0; i < n; i++) {
		size_t len = size - i * dbs < dbs ? size - i * dbs : dbs;

		memset(blk, 0, dbs);
		memcpy(blk, data + i * dbs, len);
		sha(salt, salt_size, blk, dbs, digests + i * 32);
	}
	while (n > 1) {
		uint64_t nb = (n + 127) / 128;

		levels[nlev] = calloc(nb, HBS);
		memcpy(levels[nlev], digests, n * 32);
		lsize[nlev] = nb * HBS;
		for (uint64_t i = 0; i < nb; i++)
			sha(salt, salt_size, levels[nlev] + i * HBS, HBS,
			    digests + i * 32);
		n = nb;
		nlev++;
	}
	memcpy(r->root, digests, 32);
	r->hash_offset = (size + dbs - 1) / dbs * dbs;
	r->hash_offset = (r->hash_offset + HBS - 1) / HBS * HBS;
	r->len = HBS;
	for (size_t i = 0; i < nlev; i++)
		r->len += lsize[i];
	r->area = calloc(1, r->len);
	/* the verity superblock, field by field */
	memcpy(r->area, "verity", 6);
	r->area[8] = 1;
	r->area[12] = 1;
	memcpy(r->area + 16, uuid, 16);
	memcpy(r->area + 32, "sha256", 6);
	memcpy(r->area + 64, &dbs, 4);
	r->area[69] = HBS >> 8;
	n = (size + dbs - 1) / dbs;
	memcpy(r->area + 72, &n, 8);
	r->area[80] = salt_size;
	memcpy(r->area + 88, salt, salt_size);
	for (size_t i = nlev, off = HBS; i-- > 0; off += lsize[i]) {
		memcpy(r->area + off, levels[i], lsize[i]);
		free(levels[i]);
	}
	free(digests);
	free(blk);
}

static int mkfile(const uint8_t *data, size_t size)
{
	int fd = memfd_create("verity", 0);

	if (fd < 0 || pwrite(fd, data, size, 0) != (ssize_t)size) {
		perror("memfd");
		exit(2);
	}
	return fd;
}

/* The hash area in @fd equals the reference, and nothing follows it. */
static int area_matches(int fd, const struct ref *r)
{
	uint8_t *got = malloc(r->len + 1);
	ssize_t n = pread(fd, got, r->len + 1, r->hash_offset);
	int same = n == (ssize_t)r->len && !memcmp(got, r->area, r->len);

	free(got);
	return same;
}

static int stream(int fd, const uint8_t *data, size_t size, uint32_t dbs,
		  const uint8_t *salt, const uint8_t *uuid, int known,
		  size_t chunk, struct imgfs_verity_result *res)
{
	struct imgfs_verity_params p = {
		.data_block_size = dbs,
		.hash_offset = IMGFS_VERITY_HASH_OFFSET_AUTO,
		.data_size = known ? size : 0,
		.hash_fd = fd,
		.salt = salt,
		.salt_size = 32,
		.uuid = uuid,
	};
	struct imgfs_error err = { 0 };
	struct imgfs_verity *v;
	int ret = imgfs_verity_create(&v, &p, &err);

	for (size_t off = 0; !ret && off < size; off += chunk)
		ret = imgfs_verity_update(
			v, data + off, size - off < chunk ? size - off : chunk,
			&err);
	if (!ret)
		ret = imgfs_verity_finish(v, res, &err);
	imgfs_verity_free(v);
	if (ret)
		fprintf(stderr, "stream: %s\n", err.msg);
	return ret;
}

/*
 * As stream(), with the first @head bytes given last (a writer that writes
 * its header at the end); the size is not known up front.
 */
static int stream_head(int fd, const uint8_t *data, size_t size, uint32_t dbs,
		       const uint8_t *salt, const uint8_t *uuid, size_t head,
		       size_t chunk, struct imgfs_verity_result *res)
{
	struct imgfs_verity_params p = {
		.data_block_size = dbs,
		.hash_offset = IMGFS_VERITY_HASH_OFFSET_AUTO,
		.hash_fd = fd,
		.salt = salt,
		.salt_size = 32,
		.uuid = uuid,
		.head_size = head,
	};
	struct imgfs_error err = { 0 };
	struct imgfs_verity *v;
	int ret = imgfs_verity_create(&v, &p, &err);

	for (size_t off = head; !ret && off < size; off += chunk)
		ret = imgfs_verity_update(
			v, data + off, size - off < chunk ? size - off : chunk,
			&err);
	if (!ret)
		ret = imgfs_verity_set_head(v, data, head, &err);
	if (!ret)
		ret = imgfs_verity_finish(v, res, &err);
	imgfs_verity_free(v);
	if (ret)
		fprintf(stderr, "stream_head: %s\n", err.msg);
	return ret;
}

static void flip(int fd, uint64_t off)
{
	uint8_t b;

	CHECK(pread(fd, &b, 1, off) == 1);
	b ^= 0x5a;
	CHECK(pwrite(fd, &b, 1, off) == 1);
}

static void check_verifier(int fd, const struct ref *r, uint32_t dbs,
			   size_t size)
{
	struct imgfs_verity_check chk;
	struct imgfs_error err = { 0 };
	uint64_t blocks = (size + dbs - 1) / dbs, k = blocks / 2;
	uint8_t wrong[32];

	CHECK(imgfs_verity_verify_fd(fd, fd, r->hash_offset, r->root, &chk,
				     &err) == 0);
	CHECK(chk.root_ok && chk.bad_data_block == IMGFS_VERITY_NONE &&
	      chk.bad_level == IMGFS_VERITY_NONE &&
	      chk.info.data_blocks == blocks);
	CHECK_BYTES(chk.info.root_hash, r->root, 32);
	/* a data byte: the block is named */
	flip(fd, k * dbs + 7);
	imgfs_error_clear(&err);
	CHECK(imgfs_verity_verify_fd(fd, fd, r->hash_offset, r->root, &chk,
				     &err) == -EBADMSG);
	CHECK(chk.bad_data_block == k && !chk.root_ok);
	CHECK(strstr(err.msg, "data block") != NULL);
	flip(fd, k * dbs + 7);
	/*
	 * The last byte of the top level's first block (padding, or the last
	 * digest when full): that level is named, the data is still fine.
	 */
	if (r->len > HBS) {
		uint64_t top = chk.info.levels - 1;

		flip(fd, r->hash_offset + 2 * HBS - 1);
		imgfs_error_clear(&err);
		CHECK(imgfs_verity_verify_fd(fd, fd, r->hash_offset, r->root,
					     &chk, &err) == -EBADMSG);
		CHECK(chk.bad_level == top && chk.bad_hash_block == 0 &&
		      chk.root_ok);
		CHECK(chk.bad_data_block ==
		      (blocks == 128 ? 127 : IMGFS_VERITY_NONE));
		flip(fd, r->hash_offset + 2 * HBS - 1);
	}
	/* another root */
	memcpy(wrong, r->root, 32);
	wrong[31] ^= 1;
	imgfs_error_clear(&err);
	CHECK(imgfs_verity_verify_fd(fd, fd, r->hash_offset, wrong, &chk,
				     &err) == -EBADMSG);
	CHECK(!chk.root_ok && strstr(err.msg, "root hash") != NULL);
	/* no superblock there */
	imgfs_error_clear(&err);
	CHECK(imgfs_verity_verify_fd(fd, fd, r->hash_offset + HBS, NULL, &chk,
				     &err) < 0);
}

static void one_case(uint32_t dbs, size_t size)
{
	struct imgfs_verity_params p = {
		.data_block_size = dbs,
		.hash_offset = IMGFS_VERITY_HASH_OFFSET_AUTO,
	};
	struct imgfs_verity_result res, res2;
	struct imgfs_error err = { 0 };
	uint8_t *data = malloc(size), salt[32], uuid[16];
	struct ref r;
	int fd;

	for (size_t i = 0; i < size; i++)
		data[i] = (uint8_t)rand();
	for (size_t i = 0; i < 32; i++)
		salt[i] = (uint8_t)rand();
	for (size_t i = 0; i < 16; i++)
		uuid[i] = (uint8_t)rand();
	ref_build(&r, data, size, dbs, salt, 32, uuid);

	fd = mkfile(data, size);
	p.hash_fd = fd;
	p.salt = salt;
	p.salt_size = 32;
	p.uuid = uuid;
	CHECK(imgfs_verity_format_fd(fd, size, &p, &res, &err) == 0);
	CHECK_BYTES(res.root_hash, r.root, 32);
	CHECK(res.hash_offset == r.hash_offset &&
	      res.hash_end == r.hash_offset + r.len);
	CHECK(area_matches(fd, &r));
	check_verifier(fd, &r, dbs, size);
	close(fd);

	/* streamed: the same bytes whether the size is known or not */
	for (int known = 0; known < 2; known++) {
		size_t chunk = known ? 1000 : dbs + 1;

		fd = mkfile(data, size);
		CHECK(stream(fd, data, size, dbs, salt, uuid, known, chunk,
			     &res2) == 0);
		CHECK_BYTES(res2.root_hash, r.root, 32);
		CHECK(area_matches(fd, &r));
		close(fd);
	}
	/* the head last, as mkfs writes the EROFS superblock last */
	for (size_t h = 0; h < 4; h++) {
		static const size_t heads[] = { 1536, 2048, 4096, 700 };

		if (heads[h] > size)
			continue;
		fd = mkfile(data, size);
		CHECK(stream_head(fd, data, size, dbs, salt, uuid, heads[h],
				  h & 1 ? 777 : 64 * 1024, &res2) == 0);
		CHECK_BYTES(res2.root_hash, r.root, 32);
		CHECK(area_matches(fd, &r));
		close(fd);
	}
	/* no hash fd: the root only */
	CHECK(stream(-1, data, size, dbs, salt, uuid, 0, 3 * dbs, &res2) == 0);
	CHECK_BYTES(res2.root_hash, r.root, 32);
	free(r.area);
	free(data);
}

static void errors(void)
{
	struct imgfs_verity_params p = IMGFS_VERITY_PARAMS_INIT;
	struct imgfs_verity_result res;
	struct imgfs_error err = { 0 };
	struct imgfs_verity *v;
	uint8_t buf[600] = { 0 };
	int fd;

	p.data_block_size = 8192;
	CHECK(imgfs_verity_create(&v, &p, &err) == -EINVAL && !v);
	p.data_block_size = 0;
	p.hash_offset = 1000;
	imgfs_error_clear(&err);
	CHECK(imgfs_verity_create(&v, &p, &err) == -EINVAL);
	CHECK(strstr(err.msg, "multiple of 512") != NULL);
	p.hash_offset = IMGFS_VERITY_HASH_OFFSET_AUTO;
	/* nothing fed */
	imgfs_error_clear(&err);
	CHECK(imgfs_verity_create(&v, &p, &err) == 0);
	CHECK(imgfs_verity_finish(v, &res, &err) == -EINVAL);
	imgfs_verity_free(v);
	/* more, then less than announced */
	p.data_size = 500;
	imgfs_error_clear(&err);
	CHECK(imgfs_verity_create(&v, &p, &err) == 0);
	CHECK(imgfs_verity_update(v, buf, 600, &err) == -EINVAL);
	imgfs_verity_free(v);
	imgfs_error_clear(&err);
	CHECK(imgfs_verity_create(&v, &p, &err) == 0);
	CHECK(imgfs_verity_update(v, buf, 400, &err) == 0);
	CHECK(imgfs_verity_finish(v, &res, &err) == -EINVAL);
	CHECK(strstr(err.msg, "announced") != NULL);
	imgfs_verity_free(v);
	/* a salt too big for the superblock */
	p.salt_size = 257;
	imgfs_error_clear(&err);
	CHECK(imgfs_verity_create(&v, &p, &err) == -EINVAL);
	p.salt_size = 0;
	/* a hash area over the data it hashes */
	fd = mkfile(buf, 600);
	p.hash_fd = fd;
	p.hash_offset = 512;
	imgfs_error_clear(&err);
	CHECK(imgfs_verity_format_fd(fd, 600, &p, &res, &err) == -EINVAL);
	CHECK(strstr(err.msg, "inside the data") != NULL);
	close(fd);
	/* a hash area in its own file: the data file cut short is damage */
	{
		struct imgfs_verity_check chk;
		uint8_t data[3 * 512] = { 1, 2, 3 };
		int dfd = mkfile(data, sizeof(data));

		fd = mkfile(buf, 0);
		p = (struct imgfs_verity_params)IMGFS_VERITY_PARAMS_INIT;
		p.data_block_size = 512;
		p.hash_offset = 0;
		p.hash_fd = fd;
		p.salt_size = 100; /* derived */
		imgfs_error_clear(&err);
		CHECK(imgfs_verity_format_fd(dfd, sizeof(data), &p, &res,
					     &err) == 0);
		CHECK(res.salt_size == 100 && res.hash_offset == 0 &&
		      res.tree_offset == 4096 && res.hash_end == 8192);
		CHECK(imgfs_verity_verify_fd(dfd, fd, 0, res.root_hash, &chk,
					     &err) == 0);
		CHECK(chk.info.salt_size == 100 &&
		      !memcmp(chk.info.salt, res.salt, 100));
		CHECK(ftruncate(dfd, 1000) == 0);
		CHECK(imgfs_verity_verify_fd(dfd, fd, 0, res.root_hash, &chk,
					     &err) == -EBADMSG);
		CHECK(strstr(err.msg, "the data is 1000 bytes") != NULL);
		close(dfd);
		close(fd);
	}
}

static void derive_and_json(void)
{
	uint8_t s1[100], s2[100], u1[16], u2[16];
	struct imgfs_verity_result res = { .hash_offset = 8192 };
	char json[128];

	imgfs_verity_derive("abc", 3, s1, sizeof(s1), u1);
	imgfs_verity_derive("abc", 3, s2, sizeof(s2), u2);
	CHECK(!memcmp(s1, s2, sizeof(s1)) && !memcmp(u1, u2, 16));
	CHECK(memcmp(s1, s1 + 32, 32) != 0); /* each 32 bytes differ */
	CHECK((u1[6] >> 4) == 8 && (u1[8] & 0xc0) == 0x80);
	imgfs_verity_derive("abd", 3, s2, sizeof(s2), u2);
	CHECK(memcmp(s1, s2, 32) != 0 && memcmp(u1, u2, 16) != 0);

	memset(res.root_hash, 0xab, 32);
	imgfs_verity_hex(res.root_hash, 32, res.root_hex);
	CHECK(imgfs_verity_sidecar_json(&res, json, sizeof(json)) == 98);
	CHECK(!strcmp(
		json,
		"{\"roothash\":\"abababababababababababababababababababababababababababababababab\",\"hashoffset\":8192}\n"));
	CHECK(imgfs_verity_sidecar_json(&res, json, 98) == -ENOSPC);
}

/* digests printed by fsverity-utils 1.5's "fsverity digest" */
static void fsverity_vectors(void)
{
	static const struct {
		size_t size;
		char byte;
		const char *hex;
	} vec[] = {
		{ 0, 0,
		  "3d248ca542a24fc62d1c43b916eae5016878e2533c88238480b26128a1f1af95" },
		{ 1, 'a',
		  "bce75948b9e7510293f8f2720412af9697c1479281323f3f220623fb8e94b557" },
		{ 100000, 'x',
		  "7185e12bbb7633dc93e0b49c0c5608701e81f65a4e121cb7b77bf7b609abf81f" },
	};
	struct imgfs_error err = { 0 };
	uint8_t d[32], *buf = malloc(100000);
	char hex[65];

	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		int fd;

		memset(buf, vec[i].byte, vec[i].size);
		fd = mkfile(buf, vec[i].size);
		CHECK(imgfs_fsverity_digest_fd(fd, d, &err) == 0);
		imgfs_verity_hex(d, 32, hex);
		CHECK(!strcmp(hex, vec[i].hex));
		close(fd);
		/* byte by byte, then in uneven pieces */
		for (size_t chunk = 1; chunk < 20000; chunk *= 37) {
			struct imgfs_fsverity *f;

			CHECK(imgfs_fsverity_create(&f, &err) == 0);
			for (size_t off = 0; off < vec[i].size; off += chunk)
				imgfs_fsverity_update(f, buf + off,
						      vec[i].size - off < chunk
							      ? vec[i].size -
									off
							      : chunk,
						      &err);
			CHECK(imgfs_fsverity_finish(f, d, &err) == 0);
			imgfs_verity_hex(d, 32, hex);
			CHECK(!strcmp(hex, vec[i].hex));
			imgfs_fsverity_free(f);
		}
	}
	free(buf);
}

int main(void)
{
	static const size_t blocks[] = { 1, 2, 127, 128, 129, 300 };

	srand(11);
	for (int b = 0; b < 2; b++) {
		uint32_t dbs = b ? 512 : 4096;

		for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++)
			one_case(dbs, blocks[i] * dbs);
		one_case(dbs, 129 * dbs + 5); /* ends inside a block */
	}
	one_case(512, (128 * 128 + 1) * 512); /* three levels */
	errors();
	derive_and_json();
	fsverity_vectors();
	return unit_done("test_verity");
}
