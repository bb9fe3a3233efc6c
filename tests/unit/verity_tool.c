// SPDX-License-Identifier: MIT
/*
 * verity_tool - a command-line face of imgfs/verity.h for tests/unit/verity.sh,
 * which compares it with veritysetup and fsverity.
 *
 *   verity_tool format [OPTIONS] FILE      tree appended to FILE's data
 *     --data-block-size=N  --hash-offset=N  --salt=HEX|-  --uuid=UUID
 *     --seed=STRING  --stream=known|unknown (feed in --chunk=N pieces)
 *   verity_tool verify FILE HASH_OFFSET [ROOT_HEX]
 *   verity_tool fsverity [--chunk=N] FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imgfs/verity.h"

static int usage(void)
{
	fprintf(stderr,
		"usage: verity_tool format [OPTIONS] FILE | verify FILE OFFSET [ROOT] | fsverity [--chunk=N] FILE\n");
	return 2;
}

static int unhex(const char *s, uint8_t *out, size_t max, size_t *len)
{
	size_t n = strlen(s);
	unsigned int b;

	if (n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = b;
	}
	*len = n / 2;
	return 0;
}

static int parse_uuid(const char *s, uint8_t *uuid)
{
	char hex[33];
	size_t n = 0, len;

	for (; *s && n < 32; s++)
		if (*s != '-')
			hex[n++] = *s;
	hex[n] = '\0';
	return *s || unhex(hex, uuid, 16, &len) || len != 16 ? -1 : 0;
}

/* Feed the file in @chunk-byte pieces through the incremental API. */
static int stream(int fd, uint64_t size, int known, size_t chunk,
		  struct imgfs_verity_params *p,
		  struct imgfs_verity_result *res, struct imgfs_error *err)
{
	struct imgfs_verity *v;
	uint8_t *buf = malloc(chunk);
	int ret;

	p->data_size = known ? size : 0;
	ret = buf ? imgfs_verity_create(&v, p, err) : -ENOMEM;
	for (uint64_t off = 0; !ret && off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;

		if (pread(fd, buf, n, off) != (ssize_t)n)
			ret = -EIO;
		else
			ret = imgfs_verity_update(v, buf, n, err);
	}
	if (!ret)
		ret = imgfs_verity_finish(v, res, err);
	if (buf)
		imgfs_verity_free(v);
	free(buf);
	return ret;
}

static int cmd_format(int argc, char **argv)
{
	struct imgfs_verity_params p = IMGFS_VERITY_PARAMS_INIT;
	struct imgfs_verity_result res;
	struct imgfs_error err = { 0 };
	uint8_t salt[IMGFS_VERITY_SALT_MAX], uuid[16];
	const char *mode = NULL;
	size_t chunk = 4096, n;
	char json[256];
	struct stat st;
	int i, fd, ret;

	for (i = 2; i < argc - 1; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');

		if (!eq)
			return usage();
		eq++;
		if (!strncmp(a, "--data-block-size=", 18))
			p.data_block_size = strtoul(eq, NULL, 0);
		else if (!strncmp(a, "--hash-offset=", 14))
			p.hash_offset = strtoull(eq, NULL, 0);
		else if (!strncmp(a, "--salt=", 7) && !strcmp(eq, "-"))
			p.salt = salt, p.salt_size = 0;
		else if (!strncmp(a, "--salt=", 7) &&
			 !unhex(eq, salt, sizeof(salt), &n))
			p.salt = salt, p.salt_size = n;
		else if (!strncmp(a, "--uuid=", 7) && !parse_uuid(eq, uuid))
			p.uuid = uuid;
		else if (!strncmp(a, "--seed=", 7))
			p.seed = eq, p.seed_size = strlen(eq);
		else if (!strncmp(a, "--stream=", 9))
			mode = eq;
		else if (!strncmp(a, "--chunk=", 8))
			chunk = strtoul(eq, NULL, 0);
		else
			return usage();
	}
	if (i != argc - 1 || !chunk)
		return usage();
	fd = open(argv[i], O_RDWR);
	if (fd < 0 || fstat(fd, &st)) {
		perror(argv[i]);
		return 1;
	}
	p.hash_fd = fd;
	if (mode)
		ret = stream(fd, st.st_size, !strcmp(mode, "known"), chunk, &p,
			     &res, &err);
	else
		ret = imgfs_verity_format_fd(fd, st.st_size, &p, &res, &err);
	close(fd);
	if (ret) {
		fprintf(stderr, "verity_tool: %s\n", err.msg);
		return 1;
	}
	printf("root %s\nhash_offset %" PRIu64 "\nhash_end %" PRIu64 "\n"
	       "data_blocks %" PRIu64 "\nlevels %u\nsalt %s\nuuid %s\n",
	       res.root_hex, res.hash_offset, res.hash_end, res.data_blocks,
	       res.levels, res.salt_hex, res.uuid_str);
	if (imgfs_verity_sidecar_json(&res, json, sizeof(json)) < 0)
		return 1;
	printf("json %s", json);
	return 0;
}

static int cmd_verify(int argc, char **argv)
{
	struct imgfs_verity_check chk;
	struct imgfs_error err = { 0 };
	uint8_t root[IMGFS_VERITY_DIGEST_SIZE];
	size_t n;
	int fd, ret;

	if (argc < 4 || argc > 5)
		return usage();
	if (argc == 5 &&
	    (unhex(argv[4], root, sizeof(root), &n) || n != sizeof(root)))
		return usage();
	fd = open(argv[2], O_RDONLY);
	if (fd < 0) {
		perror(argv[2]);
		return 2;
	}
	ret = imgfs_verity_verify_fd(fd, fd, strtoull(argv[3], NULL, 0),
				     argc == 5 ? root : NULL, &chk, &err);
	close(fd);
	printf("root %s\nroot_ok %d\n", chk.info.root_hex, chk.root_ok);
	if (chk.bad_data_block != IMGFS_VERITY_NONE)
		printf("bad_data_block %" PRIu64 "\n", chk.bad_data_block);
	if (chk.bad_level != IMGFS_VERITY_NONE)
		printf("bad_level %" PRIu64 " block %" PRIu64 "\n",
		       chk.bad_level, chk.bad_hash_block);
	if (ret)
		fprintf(stderr, "verity_tool: %s\n", err.msg);
	return ret == -EBADMSG ? 1 : ret ? 2 : 0;
}

static int cmd_fsverity(int argc, char **argv)
{
	struct imgfs_error err = { 0 };
	uint8_t d[IMGFS_VERITY_DIGEST_SIZE], *buf;
	struct imgfs_fsverity *f;
	char hex[2 * IMGFS_VERITY_DIGEST_SIZE + 1];
	size_t chunk = 0;
	ssize_t n;
	int fd, ret;

	if (argc == 4 && !strncmp(argv[2], "--chunk=", 8))
		chunk = strtoul(argv[2] + 8, NULL, 0);
	else if (argc != 3)
		return usage();
	fd = open(argv[argc - 1], O_RDONLY);
	if (fd < 0) {
		perror(argv[argc - 1]);
		return 1;
	}
	if (!chunk) {
		ret = imgfs_fsverity_digest_fd(fd, d, &err);
	} else {
		buf = malloc(chunk);
		ret = buf ? imgfs_fsverity_create(&f, &err) : -ENOMEM;
		while (!ret && (n = read(fd, buf, chunk)) > 0)
			ret = imgfs_fsverity_update(f, buf, n, &err);
		if (!ret)
			ret = imgfs_fsverity_finish(f, d, &err);
		if (buf)
			imgfs_fsverity_free(f);
		free(buf);
	}
	close(fd);
	if (ret) {
		fprintf(stderr, "verity_tool: %s\n", err.msg);
		return 1;
	}
	imgfs_verity_hex(d, sizeof(d), hex);
	printf("sha256:%s\n", hex);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "format"))
		return cmd_format(argc, argv);
	if (!strcmp(argv[1], "verify"))
		return cmd_verify(argc, argv);
	if (!strcmp(argv[1], "fsverity"))
		return cmd_fsverity(argc, argv);
	return usage();
}
