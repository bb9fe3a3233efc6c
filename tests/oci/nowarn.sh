#!/bin/bash
# SPDX-License-Identifier: MIT
# mkfs.img --oci warns only of what the user gave: the compression workers
# it picks for each layer (jobs x workers about the CPU count) are not the
# user's --workers, and without -z it picks none, so no layer warns that
# --workers has no effect without compression.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_tools "$PYTHON"
setup_tmp

"$PYTHON" - "$top_srcdir/tests/helpers" "$WORK/src" <<'PY' || die "layout"
import sys
sys.path.insert(0, sys.argv[1])
import layertar
layers = []
for i in range(3):
    l = layertar.Layer()
    l.file("f%d" % i, b"data %d\n" % i * 100)
    layers.append(l.bytes())
layertar.write_layout(sys.argv[2], layers, "t")
PY

# convert SRC DST ARGS...: stderr in $WORK/err; fails when a warning is there
convert() {
	local dst=$WORK/$1
	shift
	rm -rf "$dst"
	mkfs_img --oci "$@" "$WORK/src" "$dst" 2>"$WORK/err" || {
		cat "$WORK/err"
		return 1
	}
	! grep -i "warning" "$WORK/err"
}

check "mkfs.img --oci SRC DST: no warning" convert dst
check "mkfs.img --oci --jobs=1: no warning" convert dst1 --jobs=1
check "mkfs.img --oci -z lz4: no warning" convert dstz -z lz4
check "mkfs.img --oci -z lz4 --workers=2: no warning" convert dstw -z lz4 \
	--workers=2
# what the user gave and does nothing is still refused, by name
mkfs_img --oci --workers=2 "$WORK/src" "$WORK/bad" 2>"$WORK/err" &&
	fail "--oci --workers without -z was taken"
grep -q -- "--workers" "$WORK/err" && ok "--workers without -z: $(head -n 1 "$WORK/err")" ||
	{ cat "$WORK/err"; fail "--workers without -z"; }
finish
