#!/bin/bash
# SPDX-License-Identifier: MIT
# libimgfs.so exports exactly the functions include/imgfs/ declares: a
# symbol exported without a public declaration fails, and so does a
# declared function the library does not export (IMGFS_API missing, or no
# definition). Declarations are taken from the compiler (gcc -aux-info on
# every public header), not from the spelling of the headers. Internal
# globals do not carry the public imgfs_ prefix.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_tools nm gcc sort comm
setup_tmp

so=$top_builddir/lib/.libs/libimgfs.so
[ -f "$so" ] || die "shared library not built: $so"

# Every public header, the generated version.h included.
{
	for h in "$top_srcdir"/include/imgfs/*.h \
		"$top_builddir"/include/imgfs/version.h; do
		echo "#include <imgfs/${h##*/}>"
	done
} | sort -u >"$WORK/all.c"
# shellcheck disable=SC2086
gcc -I"$top_builddir/include" -I"$top_srcdir/include" ${API_DEP_CFLAGS:-} \
	-fsyntax-only \
	-aux-info "$WORK/aux" -x c "$WORK/all.c" ||
	die "the public headers do not compile together"

# aux-info lines: /* FILE:LINE:NC */ extern TYPE NAME (ARGS); inline
# functions are static and are not the library's to export.
grep '^/\* [^ ]*include/imgfs/[^ ]*\.h:' "$WORK/aux" |
	grep -v '\*/ static ' |
	sed -E 's|^/\* ([^ ]*include/imgfs/[^ :]*):([0-9]+):[^*]*\*/ extern [^(]*[ *]([A-Za-z_][A-Za-z_0-9]*) \(.*|\3 \1:\2|' |
	sort >"$WORK/declared.where"
cut -d' ' -f1 "$WORK/declared.where" | sort -u >"$WORK/declared"
nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }' | sort -u \
	>"$WORK/exported"

check "the headers declare functions ($(wc -l <"$WORK/declared"))" \
	grep -qx imgfs_error_clear "$WORK/declared"
check "the library exports functions ($(wc -l <"$WORK/exported"))" \
	grep -qx imgfs_error_clear "$WORK/exported"

comm -13 "$WORK/declared" "$WORK/exported" >"$WORK/undeclared"
while read -r sym; do
	fail "libimgfs.so exports $sym, which no header in include/imgfs/ declares (hide it, or declare it there with IMGFS_API)"
done <"$WORK/undeclared"
check "every exported symbol is declared in include/imgfs/" \
	test ! -s "$WORK/undeclared"

comm -23 "$WORK/declared" "$WORK/exported" >"$WORK/unexported"
while read -r sym; do
	where=$(grep -m1 "^$sym " "$WORK/declared.where" | cut -d' ' -f2)
	fail "$sym (${where#"$top_srcdir"/}) is not exported by libimgfs.so (IMGFS_API missing, or not defined)"
done <"$WORK/unexported"
check "every function declared in include/imgfs/ is exported" \
	test ! -s "$WORK/unexported"

# The hiding is real: the library's objects define more global functions
# (in the uninstalled copy tests link) than the shared library exports.
internal=$top_builddir/lib/.libs/libimgfs_internal.a
if [ -f "$internal" ]; then
	nm --defined-only "$internal" 2>/dev/null | awk '$2 == "T" { print $3 }' |
		sort -u >"$WORK/internal"
	check "internal functions stay hidden ($(comm -23 "$WORK/internal" \
		"$WORK/exported" | wc -l) of them)" \
		test "$(comm -23 "$WORK/internal" "$WORK/exported" | wc -l)" -gt 0
	# the prefix marks the API: an internal global named imgfs_* reads
	# as public to whoever calls it (variables and functions alike)
	nm --defined-only "$internal" 2>/dev/null |
		awk '$2 ~ /^[TDBRC]$/ && $3 ~ /^imgfs_/ { print $3 }' |
		sort -u | comm -23 - "$WORK/exported" >"$WORK/lookalike"
	while read -r sym; do
		fail "$sym is internal (not exported) but named like the public API: drop the imgfs_ prefix"
	done <"$WORK/lookalike"
	check "no internal global is named imgfs_*" test ! -s "$WORK/lookalike"
fi

finish
