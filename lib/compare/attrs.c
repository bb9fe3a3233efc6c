// SPDX-License-Identifier: MIT
/*
 * compare/attrs.c - one tar entry's attributes as mkfs.img documents it
 * stores them: the mode (group bits from an ACL mask), owners after
 * --all-root, --force-* and the offsets, the mtime as stat() shows it, the
 * xattrs and POSIX ACLs (the shared format encoder, format/acl.h), the
 * symlink target, the device number and the SHA-256 of the content.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>

#include "compare/internal.h"
#include "format/acl.h"

static bool map_id(int64_t id, bool all_root, int64_t force, int64_t off,
		   uint32_t *out)
{
	if (all_root)
		id = 0;
	if (force >= 0)
		id = force;
	id += off;
	if (id < 0 || id > (int64_t)UINT32_MAX)
		return false;
	*out = (uint32_t)id;
	return true;
}

/* Write a 512-byte ustar header named "t" into @blk. */
static void ustar_block(char *blk, int typeflag, unsigned int size)
{
	unsigned int sum = 0, i;

	memset(blk, 0, 512);
	snprintf(blk, 100, "t");
	snprintf(blk + 100, 8, "%07o", 0644u);
	snprintf(blk + 108, 8, "%07o", 0u);
	snprintf(blk + 116, 8, "%07o", 0u);
	snprintf(blk + 124, 12, "%011o", size);
	snprintf(blk + 136, 12, "%011o", 0u);
	blk[156] = (char)typeflag;
	memcpy(blk + 257, "ustar", 5);
	blk[263] = '0';
	blk[264] = '0';
	for (i = 0; i < 512; i++)
		sum += (i >= 148 && i < 156) ? ' ' : (unsigned char)blk[i];
	snprintf(blk + 148, 7, "%06o", sum);
	blk[155] = ' ';
}

/*
 * POSIX pax times are decimal numbers: "mtime=-1.5" is 1.5 s before the
 * epoch. libarchive hands such a time out as -1 s and +500000000 ns (the
 * sign applied to the whole seconds only). Ask the library in use, with a
 * pax archive holding exactly that record.
 */
bool cmp_pax_sign_lost(void)
{
	const char rec[] = "14 mtime=-1.5\n";
	struct archive_entry *ae;
	struct archive *a;
	char img[2560] = { 0 };
	bool lost = false;

	ustar_block(img, 'x', sizeof(rec) - 1);
	memcpy(img + 512, rec, sizeof(rec) - 1);
	ustar_block(img + 1024, '0', 0);
	a = archive_read_new();
	if (!a)
		return false;
	archive_read_support_format_tar(a);
	if (archive_read_open_memory(a, img, sizeof(img)) == ARCHIVE_OK &&
	    archive_read_next_header(a, &ae) == ARCHIVE_OK)
		lost = archive_entry_mtime(ae) == -1 &&
		       archive_entry_mtime_nsec(ae) == 500000000;
	archive_read_free(a);
	return lost;
}

/*
 * The mtime stat() must show: whole seconds rounded down, nanoseconds
 * counted up from there (-1.5 s is -2 s + 500000000 ns).
 */
static void tar_mtime(const struct imgfs_compare *c, struct archive_entry *ae,
		      int64_t *sec, uint32_t *nsec)
{
	int64_t s = archive_entry_mtime(ae);
	int64_t ns = archive_entry_mtime_nsec(ae);
	const int64_t giga = 1000000000;

	s += ns / giga - (ns % giga < 0);
	ns = (ns % giga + giga) % giga;
	if (c->pax_trunc && s < 0 && ns && s != INT64_MIN) {
		/* -S.F was read as -S + F: it is -(S + 1) + (1 - F) */
		s -= 1;
		ns = giga - ns;
	}
	*sec = s;
	*nsec = (uint32_t)ns;
}

bool cmp_set_owner_time(struct imgfs_compare *c, struct exp_inode *in,
			struct archive_entry *ae, const char *path)
{
	bool all_root = c->o.flags & IMGFS_COMPARE_F_ALL_ROOT;

	if (!map_id(archive_entry_uid(ae), all_root, c->o.force_uid,
		    c->o.uid_offset, &in->uid) ||
	    !map_id(archive_entry_gid(ae), all_root, c->o.force_gid,
		    c->o.gid_offset, &in->gid)) {
		cmp_unrepresentable(c, path,
				    "uid/gid out of range after mapping");
		return false;
	}
	in->at_build_time = !archive_entry_mtime_is_set(ae);
	if (!in->at_build_time) {
		tar_mtime(c, ae, &in->mtime, &in->nsec);
	} else {
		in->mtime = c->build_time;
		in->nsec = 0;
	}
	return true;
}

/* The ACL entry tags a system.posix_acl_* value can hold. */
static bool acl_tag_storable(int tag)
{
	switch (tag) {
	case ARCHIVE_ENTRY_ACL_USER_OBJ:
	case ARCHIVE_ENTRY_ACL_USER:
	case ARCHIVE_ENTRY_ACL_GROUP_OBJ:
	case ARCHIVE_ENTRY_ACL_GROUP:
	case ARCHIVE_ENTRY_ACL_MASK:
	case ARCHIVE_ENTRY_ACL_OTHER:
		return true;
	}
	return false;
}

/* The first tag of an ACL of @type that cannot be stored, or 0. */
static int acl_bad_tag(struct archive_entry *ae, int type)
{
	int n = archive_entry_acl_reset(ae, type);
	int etype, permset, tag, id;
	const char *name;

	while (n-- > 0 &&
	       archive_entry_acl_next(ae, type, &etype, &permset, &tag, &id,
				      &name) == ARCHIVE_OK)
		if (!acl_tag_storable(tag))
			return tag ? tag : -1;
	return 0;
}

/* POSIX ACL of @type as mkfs.img stores it (the shared format encoder). */
static int add_acl(struct imgfs_compare *c, struct exp_inode *in,
		   struct archive_entry *ae, int type, const char *xname,
		   const char *path)
{
	uint8_t *buf = NULL;
	int tag = acl_bad_tag(ae, type);
	long len;
	int ret;

	if (tag) {
		cmp_diff(c, path, IMGFS_COMPARE_UNREPRESENTABLE,
			 "unsupported ACL entry tag %d", tag);
		return 0;
	}
	len = acl_encode(ae, type, &buf, path, NULL);
	if (len == -ENOMEM)
		return -ENOMEM;
	if (len < 0) {
		cmp_unrepresentable(c, path, "ACL cannot be stored");
		return 0;
	}
	if (!len)
		return 0;
	ret = cmp_kv_set(in, xname, buf, (size_t)len);
	free(buf);
	return ret;
}

int cmp_set_xattrs(struct imgfs_compare *c, struct exp_inode *in,
		   struct archive_entry *ae, const char *path)
{
	const char *name;
	const void *value;
	size_t size;
	int ret;

	archive_entry_xattr_reset(ae);
	while (archive_entry_xattr_next(ae, &name, &value, &size) ==
	       ARCHIVE_OK) {
		ret = cmp_kv_set(in, name, value, size);
		if (ret)
			return ret;
	}
	if (archive_entry_acl_types(ae) & ARCHIVE_ENTRY_ACL_TYPE_NFS4) {
		cmp_unrepresentable(c, path, "NFSv4 ACL");
		return 0;
	}
	ret = add_acl(c, in, ae, ARCHIVE_ENTRY_ACL_TYPE_ACCESS,
		      "system.posix_acl_access", path);
	if (!ret)
		ret = add_acl(c, in, ae, ARCHIVE_ENTRY_ACL_TYPE_DEFAULT,
			      "system.posix_acl_default", path);
	return ret;
}

static void hash_zeros(struct cmp_digest *md, uint64_t n)
{
	static const uint8_t zeros[4096];

	while (n) {
		size_t z = n < sizeof(zeros) ? (size_t)n : sizeof(zeros);

		cmp_digest_update(md, zeros, z);
		n -= z;
	}
}

/*
 * The digest of the entry's content. Sparse entries come as blocks at
 * offsets: the gaps are hashed as zeros. mkfs.img refuses blocks out of
 * order, overlapping or past the size (a sparse map it cannot store as
 * read). Returns 0, 1 when reported as unrepresentable, or -EIO (the
 * archive's error says why) / -ENOMEM.
 */
static int read_content(struct imgfs_compare *c, struct archive *a,
			struct exp_inode *in, const char *path)
{
	struct cmp_digest md;
	const void *buf;
	size_t len;
	int64_t off;
	uint64_t pos = 0;
	int r;

	if (cmp_digest_begin(c, &md))
		return -ENOMEM;
	while ((r = archive_read_data_block(a, &buf, &len, &off)) ==
	       ARCHIVE_OK) {
		if (off < 0 || (uint64_t)off < pos || len > in->size ||
		    (uint64_t)off > in->size - len) {
			cmp_digest_abort(&md);
			cmp_unrepresentable(
				c, path,
				"sparse map out of order, overlapping or beyond the file size");
			return 1;
		}
		hash_zeros(&md, (uint64_t)off - pos);
		cmp_digest_update(&md, buf, len);
		pos = (uint64_t)off + len;
	}
	if (r != ARCHIVE_EOF) {
		cmp_digest_abort(&md);
		return -EIO;
	}
	hash_zeros(&md, in->size - pos);
	cmp_digest_final(&md, in->sum);
	return 0;
}

/* The mode mkfs.img stores: with an ACL mask, the group bits are the mask. */
unsigned int cmp_tar_mode(struct archive_entry *ae)
{
	unsigned int mode = archive_entry_mode(ae);
	int mask = acl_mask_perm(ae);

	return mask < 0 ? mode : (mode & ~070u) | ((unsigned int)mask << 3);
}

/* Fill what is particular to the entry's type. */
static int fill_type(struct imgfs_compare *c, struct archive *a,
		     struct archive_entry *ae, struct exp_inode *in,
		     const char *path)
{
	const char *target;

	switch (in->mode & 0170000) {
	case 0120000:
		target = archive_entry_symlink(ae);
		if (!target || !*target || strlen(target) > IMGFS_SYMLINK_MAX) {
			cmp_unrepresentable(
				c, path,
				"symlink target length not in 1..4095");
			return 1;
		}
		in->symlink = strdup(target);
		in->size = strlen(target);
		return in->symlink ? 0 : -ENOMEM;
	case 0020000:
	case 0060000:
		in->major = archive_entry_rdevmajor(ae);
		in->minor = archive_entry_rdevminor(ae);
		if (in->major > 0xFFF || in->minor > 0xFFFFF) {
			cmp_unrepresentable(c, path,
					    "device number cannot be encoded");
			return 1;
		}
		return 0;
	case 0100000:
		if (archive_entry_size(ae) < 0) {
			cmp_unrepresentable(c, path, "negative size");
			return 1;
		}
		in->size = (uint64_t)archive_entry_size(ae);
		return read_content(c, a, in, path);
	case 0040000:
	case 0010000:
	case 0140000:
		return 0;
	}
	cmp_unrepresentable(c, path, "unsupported file type");
	return 1;
}

/* Returns 0, 1 when the entry was reported as unrepresentable, or -errno. */
int cmp_fill_inode(struct imgfs_compare *c, struct archive *a,
		   struct archive_entry *ae, struct exp_inode *in,
		   const char *path)
{
	in->mode = cmp_tar_mode(ae);
	if (!cmp_set_owner_time(c, in, ae, path))
		return 1;
	if (cmp_set_xattrs(c, in, ae, path))
		return -ENOMEM;
	return fill_type(c, a, ae, in, path);
}
