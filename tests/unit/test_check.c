// SPDX-License-Identifier: MIT
/*
 * test_check.c - the checker on a clean hand-built image and on one precise
 * corruption at a time: each must be reported with its area and reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imgfs/check.h"
#include "reader_img.h"
#include "unit.h"

struct found {
	char text[16384];
	unsigned int paths;
	unsigned int links;
	uint8_t file_sha[IMGFS_SHA256_SIZE];
	bool have_sha;
};

static void report(void *arg, const struct imgfs_check_problem *p)
{
	struct found *f = arg;
	char line[1400];

	snprintf(line, sizeof(line), "%s|%s|%s|%s\n",
		 imgfs_check_severity_name(p->severity),
		 imgfs_check_area_name(p->area), p->path ? p->path : "-",
		 p->msg);
	if (strlen(f->text) + strlen(line) < sizeof(f->text))
		strcat(f->text, line);
}

static int entry(void *arg, const struct imgfs_check_entry *e)
{
	struct found *f = arg;

	f->paths++;
	f->links += e->link_to != NULL;
	if (!strcmp(e->path, "/file") && e->sha256) {
		memcpy(f->file_sha, e->sha256, IMGFS_SHA256_SIZE);
		f->have_sha = true;
	}
	return 0;
}

static struct imgfs_check_result run_raw(struct timg *t, size_t size,
					 struct found *f)
{
	struct imgfs_check_options o;
	struct imgfs_check_result res = { 0 };
	struct imgfs_error err = { 0 };
	struct imgfs_image *img;
	int ret;

	memset(f, 0, sizeof(*f));
	ret = imgfs_image_open_mem(t->b, size, IMGFS_OPEN_IGNORE_CHECKSUM |
					     IMGFS_OPEN_IGNORE_FEATURES,
				   &img, &err);
	if (ret) {
		/* what imgfs_check_path() does: a superblock error */
		res.errors = 1;
		snprintf(f->text, sizeof(f->text), "error|superblock|-|%s\n",
			 err.msg);
		return res;
	}
	imgfs_check_options_init(&o);
	o.flags = IMGFS_CHECK_F_DIGEST;
	o.report = report;
	o.report_arg = f;
	o.entry = entry;
	o.entry_arg = f;
	CHECK(!imgfs_check_image(img, &o, &res, &err));
	imgfs_image_close(img);
	return res;
}

/* Check the image after fixing its checksum (most tests change bytes). */
static struct imgfs_check_result run(struct timg *t, size_t size,
				     struct found *f)
{
	timg_finish(t);
	return run_raw(t, size, f);
}

/* One error (or warning) whose line contains all of @what ("a|b|..."). */
static bool has(const struct found *f, const char *sev, const char *area,
		const char *what)
{
	const char *line = f->text;

	while (*line) {
		const char *end = strchr(line, '\n');
		char buf[1400];
		size_t len = (size_t)(end - line);

		memcpy(buf, line, len);
		buf[len] = '\0';
		if (!strncmp(buf, sev, strlen(sev)) && strstr(buf, area) &&
		    strstr(buf, what))
			return true;
		line = end + 1;
	}
	fprintf(stderr, "missing %s/%s/\"%s\" in:\n%s", sev, area, what,
		f->text);
	return false;
}

static void test_clean(void)
{
	struct imgfs_check_result res;
	uint8_t want[IMGFS_SHA256_SIZE];
	struct found f;
	struct timg t;

	timg_sample(&t);
	res = run(&t, t.size, &f);
	CHECK(res.errors == 0 && res.warnings == 0);
	if (res.errors || res.warnings)
		fprintf(stderr, "%s", f.text);
	CHECK(res.inodes == 6 && res.dirs == 2 && res.regular == 2 &&
	      res.symlinks == 1 && res.specials == 1 && res.hardlinks == 1);
	CHECK(res.xattrs == 2 && res.data_bytes == SAMPLE_FILE_SIZE + 10);
	CHECK(f.paths == 7 && f.links == 1);
	CHECK(!imgfs_sha256(t.b + 2 * 4096, SAMPLE_FILE_SIZE, want));
	CHECK(f.have_sha && !memcmp(f.file_sha, want, sizeof(want)));
	free(t.b);
}

/* Offsets of names in the root directory block of the sample. */
static uint8_t *root_name(struct timg *t, unsigned int i)
{
	uint8_t *blk = t->b + timg_nid_pos(t, SAMPLE_ROOT) + 32;

	return blk + imgfs_get_le16(blk + 12 * i + 8);
}

static uint8_t *root_dirent(struct timg *t, unsigned int i)
{
	return t->b + timg_nid_pos(t, SAMPLE_ROOT) + 32 + 12 * i;
}

static uint8_t *inode_at(struct timg *t, uint64_t nid)
{
	return t->b + timg_nid_pos(t, nid);
}

static void test_directories(void)
{
	struct imgfs_check_result res;
	struct found f;
	struct timg t;

	timg_sample(&t);
	root_name(&t, 2)[0] = 'z'; /* "zev" before "file" */
	res = run(&t, t.size, &f);
	CHECK(res.errors && has(&f, "error", "directory", "not sorted"));
	root_name(&t, 2)[0] = 'd';

	memcpy(root_name(&t, 4), "file", 4); /* "hard" -> second "file" */
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "directory", "duplicate entry \"file\""));
	memcpy(root_name(&t, 4), "hard", 4);

	root_dirent(&t, 2)[10] = IMGFS_FT_REG_FILE; /* dev typed regular */
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "directory", "\"dev\": file type 1"));
	root_dirent(&t, 2)[10] = 9;
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "directory", "invalid file type 9"));
	root_dirent(&t, 2)[10] = IMGFS_FT_CHRDEV;

	imgfs_put_le64(root_dirent(&t, 0), SAMPLE_SUB); /* "." elsewhere */
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "directory", "\".\" points to nid 56"));
	imgfs_put_le64(root_dirent(&t, 0), SAMPLE_ROOT);

	/* "/sub/.." pointing at /sub itself */
	imgfs_put_le64(t.b + 4 * 4096 + 12, SAMPLE_SUB);
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "directory", "\"..\" points to nid 56 instead of 36"));
	imgfs_put_le64(t.b + 4 * 4096 + 12, SAMPLE_ROOT);

	/* /sub/inner -> the root directory: a cycle */
	imgfs_put_le64(t.b + 4 * 4096 + 24, SAMPLE_ROOT);
	t.b[4 * 4096 + 24 + 10] = IMGFS_FT_DIR;
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "directory", "second time"));
	CHECK(res.inodes == 5);
	imgfs_put_le64(t.b + 4 * 4096 + 24, SAMPLE_INNER);
	t.b[4 * 4096 + 24 + 10] = IMGFS_FT_REG_FILE;

	/* a broken block: first nameoff not a multiple of 12 */
	imgfs_put_le16(t.b + 4 * 4096 + 8, 30);
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "directory", "block 0"));
	CHECK(has(&f, "error", "directory", "\"..\" entries"));
	imgfs_put_le16(t.b + 4 * 4096 + 8, 36);

	/* a name with '/' */
	root_name(&t, 5)[1] = '/';
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "directory", "'/'"));
	root_name(&t, 5)[1] = 'i';
	res = run(&t, t.size, &f);
	CHECK(!res.errors);
	free(t.b);
}

static void test_inodes(void)
{
	struct imgfs_check_result res;
	struct found f;
	struct timg t;

	timg_sample(&t);
	imgfs_put_le32(inode_at(&t, SAMPLE_FILE) + 44, 3); /* nlink 3 */
	res = run(&t, t.size, &f);
	CHECK(res.errors == 1);
	CHECK(has(&f, "error", "inode", "link count 3, but 2"));
	imgfs_put_le32(inode_at(&t, SAMPLE_FILE) + 44, 2);

	imgfs_put_le16(inode_at(&t, SAMPLE_ROOT) + 6, 5); /* root nlink */
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "inode", "link count 5, but 3"));
	imgfs_put_le16(inode_at(&t, SAMPLE_ROOT) + 6, 3);

	imgfs_put_le32(inode_at(&t, SAMPLE_LINK) + 8, 0); /* empty symlink */
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "inode", "symlink target length 0"));
	imgfs_put_le32(inode_at(&t, SAMPLE_LINK) + 8, 6);

	imgfs_put_le32(inode_at(&t, SAMPLE_DEV) + 8, 10); /* device size */
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "inode", "special file with size 10"));
	imgfs_put_le32(inode_at(&t, SAMPLE_DEV) + 8, 0);

	inode_at(&t, SAMPLE_INNER)[1] = 0x40; /* reserved format bit */
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "inode", "unsupported i_format"));
	CHECK(has(&f, "error", "inode|/sub/inner", "unsupported i_format"));
	inode_at(&t, SAMPLE_INNER)[1] = 0;

	/* inline tail crossing the block */
	imgfs_put_le32(inode_at(&t, SAMPLE_INNER) + 8, 3000);
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "data", "crosses a block boundary"));
	imgfs_put_le32(inode_at(&t, SAMPLE_INNER) + 8, 10);
	free(t.b);
}

static void test_layout(void)
{
	struct imgfs_check_result res;
	struct found f;
	struct timg t;

	timg_sample(&t);
	/* inner becomes a plain file inside /file's blocks */
	timg_compact(&t, SAMPLE_INNER, IMGFS_LAYOUT_FLAT_PLAIN, 0100600, 1, 10,
		     3, 0);
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "layout", "overlaps data of /file"));
	/* ... or inside block 0 (superblock and inodes) */
	timg_compact(&t, SAMPLE_INNER, IMGFS_LAYOUT_FLAT_PLAIN, 0100600, 1, 10,
		     0, 0);
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "layout", "overlaps data of /sub/inner"));
	CHECK(has(&f, "error", "layout", "metadata at bytes 1024..1152"));
	/* ... or beyond the end of the image */
	timg_compact(&t, SAMPLE_INNER, IMGFS_LAYOUT_FLAT_PLAIN, 0100600, 1, 10,
		     100, 0);
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "data", "beyond the end of the image"));
	timg_compact(&t, SAMPLE_INNER, IMGFS_LAYOUT_FLAT_INLINE, 0100600, 1, 10,
		     IMGFS_NULL_ADDR, 0);

	/* two inodes overlapping: sub's nid moved into /file's inode */
	imgfs_put_le64(root_dirent(&t, 6), SAMPLE_FILE + 1);
	res = run(&t, t.size, &f);
	CHECK(res.errors > 0);
	imgfs_put_le64(root_dirent(&t, 6), SAMPLE_SUB);

	/* truncated image: /sub's block is gone */
	res = run(&t, 4 * 4096, &f);
	CHECK(has(&f, "error", "directory", "beyond the end"));
	CHECK(has(&f, "warning", "superblock", "8 blocks"));
	free(t.b);
}

static void put_acl(uint8_t *p, const uint16_t *ents, unsigned int n,
		    uint32_t version)
{
	unsigned int i;

	imgfs_put_le32(p, version);
	for (i = 0; i < n; i++) {
		imgfs_put_le16(p + 4 + 8 * i, ents[3 * i]);
		imgfs_put_le16(p + 6 + 8 * i, ents[3 * i + 1]);
		imgfs_put_le32(p + 8 + 8 * i, ents[3 * i + 2] == 0xFFFF ?
						      IMGFS_ACL_UNDEFINED_ID :
						      ents[3 * i + 2]);
	}
}

static void test_xattrs(void)
{
	static const uint16_t good[] = { 1, 6, 0xFFFF, 2, 6, 1234, 4, 4, 0xFFFF,
					 0x10, 6, 0xFFFF, 0x20, 4, 0xFFFF };
	static const uint16_t nomask[] = { 1, 6, 0xFFFF, 2, 6, 1234, 4, 4,
					   0xFFFF, 0x20, 4, 0xFFFF, 0x20, 4,
					   0xFFFF };
	struct imgfs_check_result res;
	uint8_t acl[4 + 5 * 8];
	struct found f;
	struct timg t;
	uint64_t pos;
	uint8_t *hdr;

	timg_sample(&t);
	/* dev gets an inline ACL: area 12 + 48 bytes */
	imgfs_put_le16(inode_at(&t, SAMPLE_DEV) + 2, 13);
	pos = timg_nid_pos(&t, SAMPLE_DEV) + 32 + 12;
	put_acl(acl, good, 5, 2);
	timg_xattr(&t, pos, IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS, "", acl,
		   sizeof(acl));
	res = run(&t, t.size, &f);
	CHECK(!res.errors && !res.warnings);
	put_acl(acl, good, 5, 1);
	timg_xattr(&t, pos, IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS, "", acl,
		   sizeof(acl));
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "xattr", "version is not 2"));
	put_acl(acl, nomask, 5, 2);
	timg_xattr(&t, pos, IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS, "", acl,
		   sizeof(acl));
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "xattr", "duplicate USER_OBJ"));
	t.b[pos + 1] = 9; /* name index without a prefix */
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "xattr", "invalid name index 9"));
	imgfs_put_le16(inode_at(&t, SAMPLE_DEV) + 2, 0);

	/* /file: duplicate name, then the bloom filter */
	hdr = t.b + timg_nid_pos(&t, SAMPLE_FILE) + 64;
	timg_xattr(&t, 4096, IMGFS_XATTR_INDEX_USER, "foo", "v", 1);
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "xattr", "duplicate xattr \"user.foo\""));
	timg_xattr(&t, 4096, IMGFS_XATTR_INDEX_TRUSTED, "sh", "v", 1);

	imgfs_put_le32(timg_sb(&t) + 8, IMGFS_FEATURE_COMPAT_XATTR_FILTER);
	imgfs_put_le32(hdr, 0xFFFFFFFFu);
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "xattr", "hides present names"));
	imgfs_put_le32(hdr, 0);
	res = run(&t, t.size, &f);
	CHECK(has(&f, "warning", "xattr", "not exact"));
	/* user.foo -> bit 12 and trusted.sh: compute the exact filter */
	{
		const char *want = strstr(f.text, "expected 0x");
		uint32_t v = want ? (uint32_t)strtoul(want + 9, NULL, 16) : 0;

		CHECK(!(v & (1u << 12)));
		imgfs_put_le32(hdr, v);
		res = run(&t, t.size, &f);
		CHECK(!res.errors && !res.warnings);
	}
	/* a shared id beyond the image */
	imgfs_put_le32(hdr + 12, 0x10000000);
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "xattr", "beyond the end of the image"));
	free(t.b);
}

static void test_superblock(void)
{
	struct imgfs_check_result res;
	struct found f;
	struct timg t;

	timg_sample(&t);
	t.b[2000] ^= 1;
	res = run_raw(&t, t.size, &f);
	CHECK(has(&f, "error", "superblock", "bad checksum"));
	t.b[2000] ^= 1;
	imgfs_put_le32(timg_sb(&t) + 8, 0x800);
	imgfs_put_le32(timg_sb(&t) + 80, 0x400);
	timg_finish(&t);
	res = run(&t, t.size, &f);
	CHECK(has(&f, "error", "superblock", "unknown incompatible features 0x400"));
	CHECK(has(&f, "warning", "superblock", "unknown compatible features 0x800"));
	imgfs_put_le32(timg_sb(&t) + 80, 0);
	imgfs_put_le32(timg_sb(&t) + 40, 1000); /* meta_blkaddr */
	timg_finish(&t);
	res = run(&t, t.size, &f);
	CHECK(res.errors == 2);
	CHECK(has(&f, "error", "superblock", "meta_blkaddr"));
	CHECK(has(&f, "error", "inode", "root inode"));
	free(t.b);
}

/*
 * Every single-byte corruption of the metadata: no crash, bounded work.
 * Block 0 is under the checksum, so each change is an error; with the
 * checksum fixed up, the structural checks alone catch most of them.
 */
static void test_exhaustive_bytes(void)
{
	unsigned int raw = 0, fixed = 0, total = 0;
	struct imgfs_check_result res;
	struct found f;
	struct timg t;
	uint64_t pos;

	timg_sample(&t);
	for (pos = 1024 + 8; pos < 2200; pos++) {
		uint8_t old = t.b[pos];

		t.b[pos] = (uint8_t)(old ^ 0x5A);
		res = run_raw(&t, t.size, &f);
		raw += res.errors > 0;
		res = run(&t, t.size, &f);
		fixed += res.errors > 0;
		total++;
		t.b[pos] = old;
		timg_finish(&t);
	}
	CHECK(raw == total);
	CHECK(fixed > 0);
	printf("test_check: single-byte corruptions of bytes 1032..2199: %u/%u detected, %u/%u with the checksum fixed up\n",
	       raw, total, fixed, total);
	free(t.b);
}

int main(void)
{
	test_clean();
	test_directories();
	test_inodes();
	test_layout();
	test_xattrs();
	test_superblock();
	test_exhaustive_bytes();
	return unit_done("test_check");
}
