#!/bin/bash
# SPDX-License-Identifier: MIT
# Every public header compiles alone, as C and as C++, with the
# warnings of a careful user turned into errors; and a C++ program that
# takes the address of every function the library exports links against
# it (the names are C names: the extern "C" guards are right). No public
# header names a type of libarchive: sources hand the writer entries of
# the library's own (docs/architecture.md), and users need no libarchive.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
CC=${API_CC:-gcc}
CXX=${API_CXX:-g++}
require_tools "${CC%% *}" "${CXX%% *}" nm
setup_tmp

# The headers of the libraries ours include are not under test here.
dep=$(printf '%s\n' "${API_DEP_CFLAGS:-}" | sed 's/-I/-isystem /g')
inc="-I$top_builddir/include -I$top_srcdir/include $dep"
headers=$(cd "$top_srcdir/include/imgfs" && ls ./*.h | sed 's|^\./||')
headers=$(printf '%s\nversion.h\n' "$headers" | sort -u)

for h in $headers; do
	# the typedef keeps a macro-only header from being an empty unit
	printf '#include <imgfs/%s>\ntypedef int header_test_t;\n' "$h" \
		>"$WORK/one.h"
	# shellcheck disable=SC2086
	check "$h compiles alone as C99" $CC -std=c99 -Wall -Wextra \
		-Wpedantic -Werror $inc -fsyntax-only -x c "$WORK/one.h"
	# shellcheck disable=SC2086
	check "$h compiles alone as C++11" $CXX -std=c++11 -Wall -Wextra \
		-Wpedantic -Werror $inc -fsyntax-only -x c++ "$WORK/one.h"
done

# libarchive's types are "struct archive" and "struct archive_entry*"
if grep -En 'struct[[:space:]]+archive(_[a-z_]+)?\b|<archive(_entry)?\.h>' \
	"$top_srcdir"/include/imgfs/*.h "$top_builddir"/include/imgfs/*.h \
	>"$WORK/la" 2>/dev/null; then
	sed 's/^/  /' "$WORK/la"
	fail "a public header names a libarchive type"
else
	ok "no public header names a libarchive type"
fi

so=$top_builddir/lib/.libs/libimgfs.so
[ -f "$so" ] || die "shared library not built: $so"
{
	for h in $headers; do
		echo "#include <imgfs/$h>"
	done
	echo 'typedef void (*fn_t)();'
	echo 'extern const fn_t all_functions[];'
	echo 'const fn_t all_functions[] = {'
	nm -D --defined-only "$so" | awk 'NF == 3 && $2 == "T" {
		printf "\treinterpret_cast<fn_t>(&%s),\n", $3 }'
	echo '};'
	echo 'int main() { return all_functions[0] == 0; }'
} >"$WORK/all.cc"
# shellcheck disable=SC2086
check "a C++ program using every exported function links" \
	$CXX -std=c++11 -Wall -Wextra -Werror $inc -o "$WORK/all" \
	"$WORK/all.cc" -L"$top_builddir/lib/.libs" -limgfs

finish
