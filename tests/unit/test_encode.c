// SPDX-License-Identifier: MIT
/*
 * Byte-level checks of the writer's encoders: inodes, dirents, xattr
 * entries and name filters, device numbers, POSIX ACL values. Expected
 * bytes are the worked examples of docs/format.md (§4.2, §4.4, §7.2,
 * §7.6).
 */
#include <errno.h>
#include <stdlib.h>

#include <archive.h>
#include <archive_entry.h>

#include "imgfs/format.h"
#include "format/acl.h"
#include "writer/tree.h"
#include "unit.h"
#include "writer/internal.h"
#include "writer/xattr.h"

static void test_dev(void)
{
	CHECK(imgfs_encode_dev(259, 300000) == 0x493103E0u);
	CHECK(imgfs_dev_major(0x493103E0u) == 259);
	CHECK(imgfs_dev_minor(0x493103E0u) == 300000);
	CHECK(imgfs_encode_dev(1, 3) == 0x103);
}

static void test_filter_bits(void)
{
	CHECK(xattr_filter_bit(IMGFS_XATTR_INDEX_USER, "foo", 3) == 12);
	CHECK(xattr_filter_bit(IMGFS_XATTR_INDEX_USER, "shared", 6) == 27);
	CHECK(xattr_filter_bit(IMGFS_XATTR_INDEX_SECURITY, "test", 4) == 0);
	CHECK(xattr_filter_bit(IMGFS_XATTR_INDEX_TRUSTED, "overlay.opaque",
			       14) == 20);
	CHECK(xattr_filter_bit(IMGFS_XATTR_INDEX_POSIX_ACL_ACCESS, "", 0) ==
	      30);
	CHECK(xattr_filter_bit(IMGFS_XATTR_INDEX_POSIX_ACL_DEFAULT, "", 0) ==
	      21);
}

static void test_xattr_ibody(void)
{
	static const uint8_t want_entry[20] = {
		0x0e, 0x04, 0x01, 0x00, 'o', 'v', 'e', 'r', 'l', 'a',
		'y',  '.',  'o',  'p',  'a', 'q', 'u', 'e', 'y', 0x00,
	};
	struct imgfs_xattr_table t = { 0 };
	struct imgfs_node inode = { 0 };
	struct imgfs_error err = { 0 };
	uint8_t buf[64];

	CHECK(!xattr_set(&t, &inode, "trusted.overlay.opaque", "y", 1, "d",
			 &err));
	CHECK(xattr_set(&t, &inode, "bogus.name", "y", 1, "d", &err) ==
	      -EOPNOTSUPP);
	xattr_layout_inode(&inode);
	CHECK(inode.xattr_isize == 12 + 20);
	CHECK(inode_xattr_icount(inode.xattr_isize) == 6);
	CHECK(!xattr_encode_ibody(&t, &inode, buf, &err));
	CHECK(imgfs_get_le32(buf) == 0xFFEFFFFFu); /* only bit 20 present */
	CHECK(buf[4] == 0);
	CHECK_BYTES(buf + 12, want_entry, sizeof(want_entry));

	/* a second inode with the same pair makes it shared (min 2 refs) */
	struct imgfs_node other = { 0 };

	CHECK(!xattr_set(&t, &other, "trusted.overlay.opaque", "y", 1, "e",
			 &err));
	CHECK(!xattr_set(&t, &other, "user.foo", "bar", 3, "e", &err));
	CHECK(!xattr_plan_shared(&t, 2));
	CHECK(t.nr_shared == 1 && t.shared_size == 20);
	xattr_layout_inode(&other);
	CHECK(other.nr_shared == 1);
	CHECK(other.xattr_isize == 12 + 4 + 12);
	CHECK(!xattr_encode_ibody(&t, &other, buf, &err));
	CHECK(buf[4] == 1 && imgfs_get_le32(buf + 12) == 0);
	CHECK(imgfs_get_le32(buf) == (~((1u << 20) | (1u << 12))));
	CHECK(buf[16] == 3 && buf[17] == IMGFS_XATTR_INDEX_USER);
	CHECK(imgfs_get_le16(buf + 18) == 3);
	CHECK_BYTES(buf + 20, "foobar", 6);
	CHECK(xattr_encode_entry(&t, t.shared[0], buf, &err) == 20);
	CHECK_BYTES(buf, want_entry, sizeof(want_entry));
	free(inode.xattrs.items);
	free(other.xattrs.items);
	xattr_table_free(&t);
}

/*
 * Large values live in the spill file: identical ones are still interned
 * once, and they encode back byte for byte. An inode over the inline limit
 * gets its largest values moved to the shared area.
 */
static void test_xattr_spill(void)
{
	struct imgfs_xattr_table t = { 0 };
	struct imgfs_node a = { .mode = 0100644 }, b = { .mode = 0100644 };
	struct imgfs_error err = { 0 };
	static uint8_t v[65535], buf[IMGFS_XATTR_ENTRY_MAX];
	char name[16];

	for (size_t i = 0; i < sizeof(v); i++)
		v[i] = (uint8_t)(i * 7 + (i >> 8));
	CHECK(!xattr_set(&t, &a, "user.big", v, 1000, "a", &err));
	CHECK(!xattr_set(&t, &b, "user.big", v, 1000, "b", &err));
	CHECK(a.xattrs.items[0] == b.xattrs.items[0]);
	CHECK(a.xattrs.items[0]->spilled && t.spill.open);
	/* same length and name, one byte differs: a distinct item */
	v[999] ^= 1;
	CHECK(!xattr_set(&t, &b, "user.big", v, 1000, "b", &err));
	CHECK(a.xattrs.items[0] != b.xattrs.items[0]);
	CHECK(xattr_encode_entry(&t, b.xattrs.items[0], buf, &err) ==
	      4 + 3 + 1000 + 1);
	CHECK(buf[0] == 3 && imgfs_get_le16(buf + 2) == 1000);
	CHECK_BYTES(buf + 7, v, 1000);
	v[999] ^= 1;
	CHECK(xattr_encode_entry(&t, a.xattrs.items[0], buf, &err) > 0);
	CHECK_BYTES(buf + 7, v, 1000);

	/* 100 + 4 x 65535 bytes (+ user.big): 263304 bytes, over 262148;
	 * moving one large value is enough */
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "user.v%d", i);
		v[0] = (uint8_t)i;
		CHECK(!xattr_set(&t, &a, name, v, i ? 65535 : 100, "a", &err));
	}
	CHECK(xattr_check_inode(&a, 0, "a", &err) == -E2BIG);
	CHECK(!xattr_check_inode(&a, 2, "a", &err));
	CHECK(!xattr_plan_shared(&t, 2));
	xattr_layout_inode(&a);
	CHECK(a.nr_shared == 1 && a.xattr_isize == 263304 - 65544 + 4);
	/* the symlink may not carry user. xattrs, nor an ACL */
	b.mode = 0120777;
	CHECK(xattr_check_inode(&b, 2, "b", &err) == -EOPNOTSUPP);
	free(a.xattrs.items);
	free(b.xattrs.items);
	xattr_table_free(&t);
}

static void test_acl_values(void)
{
	static const uint8_t ok[] = {
		2, 0, 0, 0, 1, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,
		2, 0, 6, 0, 0xe8, 3, 0, 0, 4, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
		0x10, 0, 6, 0, 0xff, 0xff, 0xff, 0xff, 0x20, 0, 4, 0, 0, 0, 0, 0,
	};
	uint8_t v[sizeof(ok)];

	CHECK(!acl_value_problem(ok, sizeof(ok)));
	CHECK(acl_value_problem(ok, 4)); /* no entries */
	CHECK(acl_value_problem(ok, sizeof(ok) - 1));
	memcpy(v, ok, sizeof(v));
	v[0] = 1; /* version */
	CHECK(acl_value_problem(v, sizeof(v)));
	memcpy(v, ok, sizeof(v));
	memset(v + 16, 0xff, 4); /* named user without an id */
	CHECK(acl_value_problem(v, sizeof(v)));
	memcpy(v, ok, sizeof(v));
	v[28] = 0x20; /* mask -> a second other entry */
	CHECK(acl_value_problem(v, sizeof(v)));
	memcpy(v, ok, sizeof(v));
	v[6] = 8; /* permission bits beyond rwx */
	CHECK(acl_value_problem(v, sizeof(v)));
}

static void test_inode(void)
{
	struct imgfs_writer w = { 0 };
	struct imgfs_node inode = { 0 };
	uint8_t buf[64];
	static const uint8_t want_symlink[32] = {
		0x04, 0x00, 0x00, 0x00, 0xff, 0xa1, 0x01, 0x00, 0x09, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x08, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};

	w.epoch = 1700000000;
	inode.mode = 0120777;
	inode.nlink = 1;
	inode.size = 9;
	inode.mtime = w.epoch;
	inode.layout = IMGFS_LAYOUT_FLAT_INLINE;
	inode.startblk = IMGFS_NULL_ADDR;
	inode.ino = 8;
	CHECK(!inode_needs_extended(&w, &inode));
	inode_encode(&w, &inode, buf);
	CHECK_BYTES(buf, want_symlink, 32);

	/* uid 70000 and a nanosecond mtime need the extended form */
	inode.mode = 0100644;
	inode.uid = 70000;
	inode.mtime = 1600000000;
	inode.mtime_nsec = 123456789;
	inode.size = 0x100000000ull;
	inode.layout = IMGFS_LAYOUT_FLAT_PLAIN;
	inode.startblk = 77;
	CHECK(inode_needs_extended(&w, &inode));
	inode.extended = 1;
	inode_encode(&w, &inode, buf);
	CHECK(imgfs_get_le16(buf) == 1);
	CHECK(imgfs_get_le64(buf + 8) == 0x100000000ull);
	CHECK(imgfs_get_le32(buf + 16) == 77);
	CHECK(imgfs_get_le32(buf + 24) == 70000);
	CHECK(imgfs_get_le64(buf + 32) == 1600000000);
	CHECK(imgfs_get_le32(buf + 40) == 123456789);
	CHECK(imgfs_get_le32(buf + 44) == 1);

	/* devices keep rdev in i_u */
	inode = (struct imgfs_node){ .mode = 0020600, .nlink = 1,
				      .mtime = w.epoch };
	inode.rdev = imgfs_encode_dev(259, 300000);
	inode_encode(&w, &inode, buf);
	CHECK(imgfs_get_le32(buf + 16) == 0x493103E0u);
}

static struct imgfs_dentry *child(struct imgfs_node *inode, const char *name)
{
	struct imgfs_dentry *d = calloc(1, sizeof(*d));

	d->name = (char *)name;
	d->name_len = (uint16_t)strlen(name);
	d->inode = inode;
	return d;
}

static void test_dir(void)
{
	struct imgfs_node dir_inode = { .mode = 040755, .nid = 1 };
	struct imgfs_node file = { .mode = 0100644, .nid = 40 };
	struct imgfs_dentry dir = { 0 };
	static const char *names[] = { "zeta", "..", "alpha", ".", "-dash",
				       "alphabet", "b" };
	uint8_t buf[4096];
	uint64_t size;

	dir.children = calloc(64, sizeof(*dir.children));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		dir.children[dir.nr_children++] =
			child(names[i][0] == '.' ? &dir_inode : &file, names[i]);
	dir_sort(&dir);
	/* '-' (0x2d) sorts before '.', a prefix before its extensions */
	CHECK(!strcmp(dir.children[0]->name, "-dash"));
	CHECK(!strcmp(dir.children[1]->name, "."));
	CHECK(!strcmp(dir.children[2]->name, ".."));
	CHECK(!strcmp(dir.children[3]->name, "alpha"));
	CHECK(!strcmp(dir.children[4]->name, "alphabet"));
	size = dir_tree_size(&dir, 512);
	CHECK(size == 7 * 12 + 5 + 1 + 2 + 5 + 8 + 1 + 4);
	CHECK(!dir_encode(&dir, 512, buf, size));
	CHECK(imgfs_get_le16(buf + 8) == 84); /* first nameoff = 12 * 7 */
	CHECK(imgfs_get_le64(buf) == 40 && buf[10] == IMGFS_FT_REG_FILE);
	CHECK(imgfs_get_le64(buf + 12) == 1 && buf[22] == IMGFS_FT_DIR);
	CHECK_BYTES(buf + 84, "-dash...alphaalphabetbzeta", 26);

	/* with 64 entries of 10 bytes, 512-byte blocks split after 23 */
	for (uint32_t i = 0; i < dir.nr_children; i++)
		free(dir.children[i]);
	dir.nr_children = 0;
	static char many[64][11];

	for (int i = 0; i < 64; i++) {
		snprintf(many[i], sizeof(many[i]), "entry%05d", i);
		dir.children[dir.nr_children++] = child(&file, many[i]);
	}
	dir_sort(&dir);
	size = dir_tree_size(&dir, 512);
	CHECK(size == 2 * 512 + 18 * 22);
	CHECK(!dir_encode(&dir, 512, buf, size));
	CHECK(imgfs_get_le16(buf + 8) == 23 * 12);
	CHECK(imgfs_get_le16(buf + 512 + 8) == 23 * 12);
	CHECK(imgfs_get_le16(buf + 1024 + 8) == 18 * 12);
	CHECK_BYTES(buf + 1024 + 18 * 12, "entry00046", 10);
	CHECK(buf[511] == 0);
	for (uint32_t i = 0; i < dir.nr_children; i++)
		free(dir.children[i]);
	free(dir.children);
}

static void test_acl(void)
{
	struct archive_entry *e = archive_entry_new();
	struct imgfs_error err = { 0 };
	uint8_t *buf = NULL;
	long len;

	archive_entry_set_mode(e, 0100640);
	CHECK(archive_entry_acl_from_text(e, "user::rw-,user:1234:rw-,group::r--,mask::rw-,other::---",
					  ARCHIVE_ENTRY_ACL_TYPE_ACCESS) ==
	      ARCHIVE_OK);
	len = acl_encode(e, ARCHIVE_ENTRY_ACL_TYPE_ACCESS, &buf, "f", &err);
	CHECK(len == 4 + 5 * 8);
	if (len == 44) {
		CHECK(imgfs_get_le32(buf) == 2);
		CHECK(imgfs_get_le16(buf + 4) == IMGFS_ACL_USER_OBJ);
		CHECK(imgfs_get_le16(buf + 6) == 6);
		CHECK(imgfs_get_le32(buf + 8) == IMGFS_ACL_UNDEFINED_ID);
		CHECK(imgfs_get_le16(buf + 12) == IMGFS_ACL_USER);
		CHECK(imgfs_get_le32(buf + 16) == 1234);
		CHECK(imgfs_get_le16(buf + 20) == IMGFS_ACL_GROUP_OBJ);
		CHECK(imgfs_get_le16(buf + 22) == 4);
		CHECK(imgfs_get_le16(buf + 28) == IMGFS_ACL_MASK);
		CHECK(imgfs_get_le16(buf + 36) == IMGFS_ACL_OTHER);
		CHECK(imgfs_get_le16(buf + 38) == 0);
	}
	free(buf);
	buf = NULL;
	CHECK(acl_encode(e, ARCHIVE_ENTRY_ACL_TYPE_DEFAULT, &buf, "f", &err) ==
	      0);
	archive_entry_free(e);
}

int main(void)
{
	test_dev();
	test_filter_bits();
	test_xattr_ibody();
	test_xattr_spill();
	test_acl_values();
	test_inode();
	test_dir();
	test_acl();
	return unit_done("encode");
}
