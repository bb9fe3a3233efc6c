#!/bin/bash
# SPDX-License-Identifier: MIT
# "make dist" ships what users and the test suite read: every document
# (README, docs/, man pages), every test script and helper, the benchmark
# and example scripts, every source and header of the source tree are in
# the distribution (make distdir), so that "make distcheck" and a build from the tarball have them.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
MAKE=${API_MAKE:-make}
setup_tmp

env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $MAKE -s -C "$top_builddir" distdir \
	distdir="$WORK/dist" >"$WORK/distdir.log" 2>&1 ||
	{ cat "$WORK/distdir.log"; die "make distdir failed"; }
(
	cd "$top_srcdir" || exit 1
	ls README.md docs/*.md man/*.1 examples/*.c examples/*.sh 2>/dev/null
	find tests bench -type f \( -name '*.sh' -o -name '*.py' -o \
		-name '*.inc' \) ! -path '*/.*'
	# every source and header of the library, the programs and the tests
	find include lib frontend mkfs fsck dump tests examples -type f \
		\( -name '*.c' -o -name '*.h' -o -name '*.h.in' \) ! -path '*/.*' |
		grep -vx 'include/imgfs/version.h' # made by configure
) | sort -u >"$WORK/want"
missing=
while read -r f; do
	[ -e "$WORK/dist/$f" ] || missing="$missing $f"
done <"$WORK/want"
check "make distdir holds the $(wc -l <"$WORK/want") documents and scripts${missing:+; missing:$missing}" \
	test -z "$missing"
finish
