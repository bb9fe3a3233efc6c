#!/bin/bash
# SPDX-License-Identifier: MIT
# The layer rule of lib/ (tests/helpers/layers.py): includes and calls only
# point down, no call cycle spans two folders, the programs include only
# public headers. First on a small planted tree, to show the checker sees
# every kind of violation it claims to, then on this tree and its build.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
require_tools "$PYTHON" nm "${CC:-cc}"
setup_tmp
LAYERS="$PYTHON $top_srcdir/tests/helpers/layers.py"

# put FILE TEXT: a source of the planted tree
put() {
	mkdir -p "$(dirname "$WORK/src/$1")"
	printf '%s\n' "$2" >"$WORK/src/$1"
}

# The planted tree, with its objects named as libtool names them.
plant() {
	put lib/util/u.h 'int u_fn(void); int u_low(void);'
	put lib/util/u.c '#include "writer/w.h"
int u_fn(void) { return w_fn(); }'
	put lib/util/u2.c 'int u_low(void) { return 1; }'
	put lib/util/v.c '#include "format/f.h"
int v_fn(void) { return 2; }'
	put lib/format/f.h 'int f_fn(void);'
	put lib/format/f.c '#include "util/u.h"
#include "f.h"
int f_fn(void) { return u_low(); }'
	put lib/writer/w.h 'int w_fn(void);'
	put lib/writer/w.c '#include "util/u.h"
#include "format/f.h"
int w_fn(void) { return u_low() + u_fn() + f_fn(); }'
	put lib/reader/r.c '#include "writer/w.h"
int r_fn(void) { return w_fn(); }'
	put lib/check/c1.c 'int c2(int n); int c1(int n) { return n ? c2(n - 1) : 0; }'
	put lib/check/c2.c 'int c1(int n); int c2(int n) { return c1(n); }'
	put lib/newf/n.c 'int n_fn(void) { return 3; }'
	put fsck/fsck.h ''
	put fsck/main.c '#include "imgfs/reader.h"
#include "fsck.h"
#include "reader/r.h"'
	put fsck/compare.c '#include "reader/internal.h"'
	# an object whose source was moved away: not part of the library
	put gone.c 'int w_fn(void); int gone(void) { return w_fn(); }'
	mkdir -p "$WORK/build/lib/util/.libs"
	"${CC:-cc}" -c -o "$WORK/build/lib/util/.libs/libimgfs_la-gone.o" \
		"$WORK/src/gone.c" || die "cannot compile"
	local c o
	for c in "$WORK"/src/lib/*/*.c; do
		o=${c#"$WORK/src/"}
		o=$WORK/build/$(dirname "$o")/.libs/libimgfs_la-$(basename "$o" .c).o
		mkdir -p "$(dirname "$o")"
		"${CC:-cc}" -I"$WORK/src/lib" -I"$WORK/src/include" -c -o "$o" \
			"$c" || die "cannot compile $c"
	done
}
mkdir -p "$WORK/src/include/imgfs"
: >"$WORK/src/include/imgfs/reader.h"
plant

out=$WORK/planted.out
$LAYERS "$WORK/src" "$WORK/build" >"$out"
check "the planted tree fails" test $? -eq 1
sed 's/^/  planted: /' "$out"

# expect LINE: the checker printed exactly this line
expect() {
	if grep -qxF -- "$1" "$out"; then
		ok "reported: $1"
	else
		fail "not reported: $1"
	fi
}
expect 'FAIL: lib/util/u.c includes "writer/w.h": util (rank 0) may not use writer (rank 2, calls up)'
expect 'FAIL: lib/util/v.c includes "format/f.h": util (rank 0) may not use format (rank 0, beside it)'
expect 'FAIL: lib/reader/r.c includes "writer/w.h": reader (rank 2) may not use writer (rank 2, beside it)'
expect 'FAIL: lib/newf/n.c: folder lib/newf has no rank in layers.py'
expect 'FAIL: fsck/main.c includes "reader/r.h": a program sees only "imgfs/...", "frontend/..." and its own folder'
expect 'FAIL: lib/util/u.c -> lib/writer/w.c (w_fn): util may not call writer (calls up)'
expect 'FAIL: lib/reader/r.c -> lib/writer/w.c (w_fn): reader may not call writer (beside it)'
expect 'FAIL: call cycle across folders util, writer: lib/util/u.c lib/writer/w.c'
expect 'WARNING: call cycle within lib/check: c1.c c2.c'
expect 'FAIL: fsck/compare.c includes "reader/internal.h": a program sees only "imgfs/...", "frontend/..." and its own folder'
expect 'layers: 9 violation(s)'
# allowed: format uses util, writer uses util and format, own headers
if grep -E 'lib/format/f\.c|lib/writer/w\.c (->|includes)|"fsck\.h"|"imgfs/reader\.h"|gone' \
	"$out"; then
	fail "an allowed include or call, or a stale object, was reported"
else
	ok "allowed includes and calls, and stale objects, not reported"
fi

# This tree.
[ -d "$top_builddir/lib" ] || die "not built: $top_builddir/lib"
$LAYERS "$top_srcdir" "$top_builddir"
rc=$?
[ $rc -eq 77 ] && die "no library objects: build the library first"
check "lib/ keeps its layers (see the lines above)" test $rc -eq 0
finish
