#!/bin/bash
# SPDX-License-Identifier: MIT
# The manual pages' date comes from one place: MAN_DATE in configure.ac.
# Every page's one .TH line must carry exactly it ("make man-date" writes
# it there after configure.ac changes).
. "$top_srcdir/tests/lib.sh"

date=$(sed -n 's/^MAN_DATE = //p' "$top_builddir/Makefile")
[ -n "$date" ] || die "no MAN_DATE in $top_builddir/Makefile"
pages=$(sed -n 's/^dist_man_MANS = //p' "$top_builddir/Makefile")
[ -n "$pages" ] || die "no dist_man_MANS in $top_builddir/Makefile"
for p in $pages; do
	f=$top_srcdir/$p
	name=$(basename "$p" .1 | tr a-z A-Z)
	check "$p: one .TH line" test "$(grep -c '^\.TH ' "$f")" -eq 1
	check "$p: .TH $name 1 \"$date\"" \
		test "$(head -n 1 "$f")" = ".TH $name 1 \"$date\" \"imgfs\" \"User Commands\""
done
finish
