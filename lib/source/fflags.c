// SPDX-License-Identifier: MIT
/*
 * File flags in a layer. EROFS has no place for them and no runtime
 * applies them from a layer, so none is stored; what matters is whether
 * dropping one loses something its owner asked for.
 *
 * Internal flags are the source filesystem's own bookkeeping, set by it
 * rather than by a user, and say nothing about the file once it is
 * extracted: ext4's extent mapping (e), huge_file (h), hashed directory
 * index (I), inline_data (N), ea_inode; fscrypt's encrypt (E: the
 * archived data is the clear text) and fs-verity's verity (V); the
 * compression state bits of old ext2 patches and btrfs (dirty, ecompr,
 * compressed_raw, btree); FreeBSD's snapshot; macOS's compressed
 * (decmpfs) and tracked; Windows' sparse and reparse attributes (holes
 * and links travel in the tar itself). These are dropped without a word.
 *
 * Every other flag is one a user sets (chattr, chflags): immutable and
 * append-only (schg, uchg, sappnd, uappnd), nodump, noatime, sync,
 * dirsync, journal-data, compress, nocow, notail, topdir, projinherit,
 * casefold, dax, secdel, undel, nounlink (sunlnk, uunlnk), and the
 * BSD/Windows attributes (arch, opaque, hidden, offline, rdonly, system,
 * restricted). Names libarchive does not know are counted as a user's
 * too: the rule errs toward saying something.
 *
 * libarchive writes a flag that is set by its name, and one that is
 * explicitly clear by the opposite name: "noschg" or "dump". Those clear
 * names ask for nothing and are dropped as well.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/fflags.h"

/* Names, as libarchive spells them, that mean the flag is set. */
static const struct {
	const char *name;
	bool internal;
} names[] = {
	/* filesystem bookkeeping */
	{ "extent", true },
	{ "extents", true },
	{ "huge_file", true },
	{ "hugefile", true },
	{ "index", true },
	{ "htree", true },
	{ "inline_data", true },
	{ "inlinedata", true },
	{ "ea_inode", true },
	{ "encrypt", true },
	{ "encrypted", true },
	{ "verity", true },
	{ "dirty", true },
	{ "compr_dirty", true },
	{ "ecompr", true },
	{ "compressed_raw", true },
	{ "btree", true },
	{ "snapshot", true },
	{ "compressed", true },
	{ "tracked", true },
	{ "sparse", true },
	{ "usparse", true },
	{ "reparse", true },
	{ "ureparse", true },
	/* set by a user */
	{ "schg", false },
	{ "schange", false },
	{ "simmutable", false },
	{ "uchg", false },
	{ "uchange", false },
	{ "uimmutable", false },
	{ "immutable", false },
	{ "sappnd", false },
	{ "sappend", false },
	{ "uappnd", false },
	{ "uappend", false },
	{ "append", false },
	{ "sunlnk", false },
	{ "sunlink", false },
	{ "uunlnk", false },
	{ "uunlink", false },
	{ "nodump", false },
	{ "noatime", false },
	{ "nocow", false },
	{ "notail", false },
	{ "sync", false },
	{ "dirsync", false },
	{ "journal-data", false },
	{ "journal", false },
	{ "compress", false },
	{ "topdir", false },
	{ "projinherit", false },
	{ "casefold", false },
	{ "dax", false },
	{ "secdel", false },
	{ "securedeletion", false },
	{ "undel", false },
	{ "arch", false },
	{ "archived", false },
	{ "opaque", false },
	{ "hidden", false },
	{ "uhidden", false },
	{ "offline", false },
	{ "uoffline", false },
	{ "rdonly", false },
	{ "urdonly", false },
	{ "readonly", false },
	{ "system", false },
	{ "usystem", false },
	{ "restricted", false },
};

static int lookup(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == len &&
		    !strncasecmp(names[i].name, s, len))
			return (int)i;
	return -1;
}

/* Whether the token @s of @len bytes is a user's flag set on purpose. */
static bool user_flag(const char *s, size_t len)
{
	int i = lookup(s, len);

	if (i >= 0)
		return !names[i].internal;
	/* "noX" clears X; for the flags named "noX" themselves, "X" does */
	if (len > 2 && !strncasecmp(s, "no", 2) && lookup(s + 2, len - 2) >= 0)
		return false;
	if (len + 2 < 32) {
		char no[32] = "no";

		memcpy(no + 2, s, len);
		if (lookup(no, len + 2) >= 0)
			return false;
	}
	return true;
}

size_t fflags_user(const char *text, char *buf, size_t size)
{
	static const char sep[] = ", \t";
	size_t n = 0, used = 0;
	const char *s = text;

	if (size)
		buf[0] = '\0';
	while (s && *s) {
		size_t len;

		s += strspn(s, sep);
		len = strcspn(s, sep);
		if (!len)
			break;
		if (user_flag(s, len)) {
			int w = 0;

			if (used < size)
				w = snprintf(buf + used, size - used, "%s%.*s",
					     n ? "," : "", (int)len, s);
			used += w > 0 ? (size_t)w : 0;
			n++;
		}
		s += len;
	}
	/* cut short: say so */
	if (size > 4 && used >= size)
		memcpy(buf + size - 4, "...", 4);
	return n;
}

void fflags_tally_add(struct imgfs_fflags_tally *t, const char *path,
		      const char *flags)
{
	size_t need;
	char *p;

	if (t->entries++ >= IMGFS_FFLAGS_SHOWN)
		return;
	need = t->len + strlen(path) + strlen(flags) + 6;
	p = realloc(t->first, need);
	/* without memory the warning names fewer entries, the count stays */
	if (!p)
		return;
	t->first = p;
	t->len += (size_t)snprintf(p + t->len, need - t->len, "%s%s (%s)",
				   t->len ? ", " : "", path, flags);
}

void fflags_tally_warn(const struct imgfs_fflags_tally *t, const char *what,
		       imgfs_warn_fn warn, void *arg)
{
	const char *more = t->entries > IMGFS_FFLAGS_SHOWN ? ", ..." : "";
	const char *first = t->first ? t->first : "";
	const char *noun = t->entries == 1 ? "entry" : "entries";
	unsigned long long nr = (unsigned long long)t->entries;
	char *msg;
	int n;

	if (!t->entries || !warn)
		return;
	n = snprintf(NULL, 0, "%s %llu %s: %s%s", what, nr, noun, first, more);
	if (n < 0 || !(msg = malloc((size_t)n + 1)))
		return;
	snprintf(msg, (size_t)n + 1, "%s %llu %s: %s%s", what, nr, noun, first,
		 more);
	warn(msg, arg);
	free(msg);
}

void fflags_tally_free(struct imgfs_fflags_tally *t)
{
	free(t->first);
	t->first = NULL;
	t->len = 0;
}
