// SPDX-License-Identifier: MIT
/*
 * A libarchive entry (tar stream, directory tree) as the writer takes it:
 * struct imgfs_entry with its xattrs, ACL records encoded as
 * system.posix_acl_* values, sparse map and times. What only an archive
 * has is settled here: ACL records, how libarchive reads negative pax
 * times, data blocks with offsets.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "format/acl.h"
#include "source/convert.h"
#include "util/error.h"

static void conv_warn(const struct entry_conv *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Hand a warning to the caller's callback, if there is one. */
static void conv_warn(const struct entry_conv *c, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int n;

	if (!c->warn)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(msg = malloc((size_t)n + 1)))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, (size_t)n + 1, fmt, ap);
	va_end(ap);
	c->warn(msg, c->warn_arg);
	free(msg);
}

/* One ustar header block of the probe archive below. */
static void probe_header(char *h, char type, size_t size)
{
	unsigned int sum = 0;

	memset(h, 0, 512);
	h[0] = 'p';
	memcpy(h + 100, "0000644", 7);
	snprintf(h + 124, 12, "%011zo", size);
	h[156] = type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum);
}

/*
 * libarchive (3.6 to at least 3.8) reads the pax time "-1.5" as -1 s plus
 * 0.5 s: integer part truncated toward zero, fraction added as if it were
 * positive. Whether the library in use does so is learnt once per source
 * from a two-header pax archive holding exactly that time.
 */
static bool pax_time_truncated(struct entry_conv *c)
{
	static const char rec[] = "14 mtime=-1.5\n";
	char tar[5 * 512];
	struct archive *a;
	struct archive_entry *e;

	if (c->pax_time_truncated)
		return c->pax_time_truncated > 0;
	c->pax_time_truncated = -1;
	probe_header(tar, 'x', sizeof(rec) - 1);
	memset(tar + 512, 0, 4 * 512);
	memcpy(tar + 512, rec, sizeof(rec) - 1);
	probe_header(tar + 1024, '0', 0);
	a = archive_read_new();
	if (!a)
		return false;
	archive_read_support_format_tar(a);
	if (archive_read_open_memory(a, tar, sizeof(tar)) == ARCHIVE_OK &&
	    archive_read_next_header(a, &e) == ARCHIVE_OK &&
	    archive_entry_mtime(e) == -1 &&
	    archive_entry_mtime_nsec(e) == 500000000)
		c->pax_time_truncated = 1;
	archive_read_free(a);
	return c->pax_time_truncated > 0;
}

/*
 * The entry's mtime as seconds and nanoseconds counted from the earlier
 * whole second (-1.5 s is -2 s + 500000000 ns), as stat() shows it.
 */
static void entry_mtime(struct entry_conv *c, struct archive *a,
			struct archive_entry *e, const char *path, int64_t *sec,
			uint32_t *nsec)
{
	int64_t s = archive_entry_mtime(e);
	long ns = archive_entry_mtime_nsec(e);

	if (ns < 0 || ns >= 1000000000L) {
		s += ns / 1000000000L;
		ns %= 1000000000L;
		if (ns < 0) {
			s--;
			ns += 1000000000L;
		}
	}
	/* only tar carries fractional times as text (pax) */
	if (s <= 0 && s > INT64_MIN && ns > 0 && a &&
	    (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) ==
		    ARCHIVE_FORMAT_TAR &&
	    pax_time_truncated(c)) {
		if (s < 0) {
			s--;
			ns = 1000000000L - ns;
		} else {
			/* "-0.5" arrived as 0 s + 0.5 s: its sign is lost */
			conv_warn(c, "%s: mtime 0.%09ld s may have been -0.%09ld s in the archive (libarchive reads pax times between -1 and 0 s without their sign)",
				  path, ns, ns);
		}
	}
	*sec = s;
	*nsec = (uint32_t)ns;
}

/*
 * The entry's xattrs, then its access and default ACLs as
 * system.posix_acl_* values. libarchive keeps the owning group's bits in
 * the mode; the kernel shows the ACL mask there.
 */
static int convert_xattrs(struct entry_conv *c, struct archive_entry *e,
			  const char *path, struct imgfs_error *err)
{
	static const int acl_types[] = { ARCHIVE_ENTRY_ACL_TYPE_ACCESS,
					 ARCHIVE_ENTRY_ACL_TYPE_DEFAULT };
	static const char *const acl_names[] = { "system.posix_acl_access",
						 "system.posix_acl_default" };
	struct imgfs_entry *ie = &c->out.e;
	int count = archive_entry_xattr_reset(e);
	size_t n = 0;
	int mask;

	c->xattrs = calloc((size_t)(count > 0 ? count : 0) + 2,
			   sizeof(*c->xattrs));
	if (!c->xattrs)
		return error_set(err, -ENOMEM, "out of memory");
	while (n < (size_t)count &&
	       archive_entry_xattr_next(e, &c->xattrs[n].name,
					&c->xattrs[n].value,
					&c->xattrs[n].size) == ARCHIVE_OK)
		n++;
	for (int i = 0; i < 2; i++) {
		long len = acl_encode(e, acl_types[i], &c->acl[i], path, err);

		if (len < 0)
			return (int)len;
		if (!len)
			continue;
		c->xattrs[n].name = acl_names[i];
		c->xattrs[n].value = c->acl[i];
		c->xattrs[n++].size = (size_t)len;
	}
	ie->xattrs = c->xattrs;
	ie->nr_xattrs = n;
	mask = acl_mask_perm(e);
	if (mask >= 0)
		ie->mode = (ie->mode & ~070u) | ((unsigned int)mask << 3);
	return 0;
}

static int convert_sparse(struct entry_conv *c, struct archive_entry *e,
			  struct imgfs_error *err)
{
	int count = archive_entry_sparse_reset(e);
	la_int64_t off, len;
	size_t n = 0;

	if (count <= 0)
		return 0;
	c->sparse = calloc((size_t)count, sizeof(*c->sparse));
	if (!c->sparse)
		return error_set(err, -ENOMEM, "out of memory");
	/* negative values stay out of range as huge ones, and are refused */
	while (n < (size_t)count &&
	       archive_entry_sparse_next(e, &off, &len) == ARCHIVE_OK) {
		c->sparse[n].offset = (uint64_t)off;
		c->sparse[n++].length = (uint64_t)len;
	}
	c->out.e.sparse = c->sparse;
	/* a map, even one without data, makes the file chunk-based */
	c->out.e.nr_sparse = n ? n : 1;
	return 0;
}

static int convert(struct entry_conv *c, struct archive *a,
		   struct archive_entry *e, const char *path,
		   struct imgfs_error *err)
{
	struct imgfs_entry *ie = &c->out.e;
	int ret;

	ie->hardlink = archive_entry_hardlink(e);
	if (ie->hardlink) {
		/* a hard link takes nothing else from its entry */
		if (archive_entry_size_is_set(e))
			ie->size = (uint64_t)archive_entry_size(e);
		ie->mode = archive_entry_mode(e);
		return 0;
	}
	ie->mode = archive_entry_mode(e);
	ie->uid = archive_entry_uid(e);
	ie->gid = archive_entry_gid(e);
	ie->have_mtime = archive_entry_mtime_is_set(e);
	if (ie->have_mtime)
		entry_mtime(c, a, e, path, &ie->mtime, &ie->mtime_nsec);
	ie->symlink = archive_entry_symlink(e);
	ie->rdev_major = archive_entry_rdevmajor(e);
	ie->rdev_minor = archive_entry_rdevminor(e);
	ret = convert_xattrs(c, e, path, err);
	if (ret || archive_entry_filetype(e) != AE_IFREG)
		return ret;
	if (archive_entry_size(e) < 0)
		return error_set(err, -EINVAL, "%s: negative size", path);
	ie->size = (uint64_t)archive_entry_size(e);
	return convert_sparse(c, e, err);
}

void entry_conv_release(struct entry_conv *c)
{
	free(c->xattrs);
	free(c->acl[0]);
	free(c->acl[1]);
	free(c->sparse);
	c->xattrs = NULL;
	c->acl[0] = c->acl[1] = NULL;
	c->sparse = NULL;
	memset(&c->out, 0, sizeof(c->out));
	c->out.e.struct_size = sizeof(c->out.e);
}

void entry_conv_set(struct entry_conv *c, struct archive *a,
		    struct archive_entry *ae, const char *path,
		    struct imgfs_error *err)
{
	entry_conv_release(c);
	c->out.e.path = path;
	if (!path)
		return;
	c->out.fflags = archive_entry_fflags_text(ae);
	c->out.bad = convert(c, a, ae, path, err);
}
