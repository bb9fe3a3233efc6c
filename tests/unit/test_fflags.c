// SPDX-License-Identifier: MIT
/*
 * test_fflags.c - which file flags count as a user's (lib/source/fflags.c),
 * checked against libarchive's own reading of the names, and the one
 * warning the tally gives.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <archive_entry.h>

#include "source/fflags.h"
#include "unit.h"

static void test_user(void)
{
	char buf[256];

	CHECK(fflags_user("extent,huge_file", buf, sizeof(buf)) == 0);
	CHECK(!strcmp(buf, ""));
	CHECK(fflags_user("index inline_data,encrypt,verity", buf,
			  sizeof(buf)) == 0);
	CHECK(fflags_user("extent,nodump", buf, sizeof(buf)) == 1);
	CHECK(!strcmp(buf, "nodump"));
	CHECK(fflags_user(" schg, sappnd\tnoatime,", buf, sizeof(buf)) == 3);
	CHECK(!strcmp(buf, "schg,sappnd,noatime"));
	/* clear names ask for nothing */
	CHECK(fflags_user("noschg,dump,nouappnd,atime,cow", buf, sizeof(buf)) ==
	      0);
	/* an unknown name is counted, as it stands */
	CHECK(fflags_user("frobnicate,extent", buf, sizeof(buf)) == 1);
	CHECK(!strcmp(buf, "frobnicate"));
	CHECK(fflags_user("", buf, sizeof(buf)) == 0);
	/* cut short, and said so */
	CHECK(fflags_user("schg,sappnd,noatime", buf, 8) == 3);
	CHECK(strlen(buf) == 7 && !strcmp(buf + 4, "..."));
}

/*
 * Every name libarchive knows: it reads the name as setting a flag
 * exactly when we do not take it for a clear name.
 */
static void test_against_libarchive(void)
{
	static const char *const names[] = {
		"schg",	      "noschg",	      "sappnd",
		"nosappnd",   "uchg",	      "nouchg",
		"uappnd",     "nouappnd",     "nodump",
		"dump",	      "noatime",      "atime",
		"nocow",      "cow",	      "notail",
		"tail",	      "sync",	      "nosync",
		"dirsync",    "nodirsync",    "compress",
		"nocompress", "journal-data", "nojournal-data",
		"undel",      "noundel",      "topdir",
		"notopdir",   "projinherit",  "noprojinherit",
		"secdel",     "nosecdel",     "opaque",
		"noopaque",   "hidden",	      "nohidden",
		"arch",	      "noarch",	      "sunlnk",
		"nosunlnk",   "extent",	      "noextent",
		"encrypt",    "noencrypt",
	};
	struct archive_entry *e = archive_entry_new();
	unsigned int known = 0;
	char buf[64];

	CHECK(e != NULL);
	for (size_t i = 0; e && i < sizeof(names) / sizeof(names[0]); i++) {
		unsigned long set = 0, clear = 0;
		bool user_or_internal;

		if (archive_entry_copy_fflags_text(e, names[i]))
			continue; /* not known to this libarchive */
		archive_entry_fflags(e, &set, &clear);
		if (!set && !clear)
			continue; /* known name of a flag this system lacks */
		known++;
		/* a set flag is either a user's (kept) or internal (of
		 * the names above, only these two); a clear one neither */
		user_or_internal = fflags_user(names[i], buf, sizeof(buf)) ||
				   !strcmp(names[i], "extent") ||
				   !strcmp(names[i], "encrypt");
		if (user_or_internal != (set != 0))
			fprintf(stderr, "%s: libarchive set %#lx clear %#lx\n",
				names[i], set, clear);
		CHECK(user_or_internal == (set != 0));
	}
	/* Linux knows at least immutable, append-only, nodump, noatime */
	CHECK(known >= 8);
	archive_entry_free(e);
}

struct seen {
	unsigned int calls;
	char msg[512];
};

static void warned(const char *msg, void *arg)
{
	struct seen *s = arg;

	s->calls++;
	snprintf(s->msg, sizeof(s->msg), "%s", msg);
}

static void test_tally(void)
{
	struct imgfs_fflags_tally t = { 0 };
	struct seen s = { 0 };

	fflags_tally_warn(&t, "dropped from", warned, &s);
	CHECK(s.calls == 0);
	fflags_tally_add(&t, "a", "nodump");
	fflags_tally_warn(&t, "dropped from", warned, &s);
	CHECK(s.calls == 1);
	CHECK(!strcmp(s.msg, "dropped from 1 entry: a (nodump)"));
	fflags_tally_add(&t, "b", "schg");
	fflags_tally_add(&t, "c", "sappnd,noatime");
	fflags_tally_add(&t, "d", "nocow");
	fflags_tally_add(&t, "e", "sync");
	fflags_tally_warn(&t, "dropped from", warned, &s);
	CHECK(s.calls == 2);
	CHECK(!strcmp(
		s.msg,
		"dropped from 5 entries: a (nodump), b (schg), c (sappnd,noatime), ..."));
	fflags_tally_free(&t);
}

int main(void)
{
	test_user();
	test_against_libarchive();
	test_tally();
	return unit_done("test_fflags");
}
