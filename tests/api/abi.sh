#!/bin/bash
# SPDX-License-Identifier: MIT
# The layout of every public struct (size, alignment, each member's offset
# and size) equals tests/api/abi/ARCH.expected: a change to a public
# struct is seen, and made on purpose (docs/abi.md). After an intended
# change, "make abi-layout-update" rewrites the expectations (ABI_UPDATE=1
# here); commit them with the change.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
CC=${API_CC:-gcc}
require_tools "${CC%% *}" "$PYTHON"
setup_tmp

dep=$(printf '%s\n' "${API_DEP_CFLAGS:-}" | sed 's/-I/-isystem /g')
inc="-I$top_builddir/include -I$top_srcdir/include $dep"
headers=$(cd "$top_srcdir/include/imgfs" && ls ./*.h | sed 's|^\./||')
headers=$(printf '%s\nversion.h\n' "$headers" | sort -u)
arch=$($CC -dumpmachine | cut -d- -f1)
expected=$top_srcdir/tests/api/abi/$arch.expected

for h in $headers; do
	echo "#include <imgfs/$h>"
done >"$WORK/all.c"
# shellcheck disable=SC2086
$CC -std=c11 $inc -E "$WORK/all.c" >"$WORK/all.i" ||
	die "the public headers do not preprocess"
# shellcheck disable=SC2086
$PYTHON "$top_srcdir/tests/api/abi_layout.py" $headers <"$WORK/all.i" \
	>"$WORK/layout.c" || die "cannot read the public structs"
# shellcheck disable=SC2086
$CC -std=c11 -Wall -Werror $inc -o "$WORK/layout" "$WORK/layout.c" ||
	die "the layout program does not compile"
"$WORK/layout" >"$WORK/layout.out" || die "the layout program failed"
n=$(grep -c ' size .* align ' "$WORK/layout.out")

if [ -n "${ABI_UPDATE:-}" ]; then
	mkdir -p "$(dirname "$expected")"
	cp "$WORK/layout.out" "$expected" || die "cannot write $expected"
	log "wrote $expected: $n structs"
	exit 0
fi
[ -f "$expected" ] ||
	skip "no layout expectations for $arch ($expected): make abi-layout-update writes them"
if diff -u "$expected" "$WORK/layout.out"; then
	ok "$n public structs keep their layout ($arch)"
else
	fail "public struct layouts differ from $expected (above: - expected, + now); if intended, see docs/abi.md and run make abi-layout-update"
fi
finish
