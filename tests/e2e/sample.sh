#!/bin/bash
# The README's walk-through: the sample layer from examples/ converts,
# checks clean with fsck.img, lists with dump.img, and mounts to the same
# tree bsdtar extracts (whiteouts converted).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup

layer=$WORK/sample-layer.tar.gz
bash "$top_srcdir/examples/make-sample-layer.sh" "$layer" >/dev/null ||
	die "examples/make-sample-layer.sh failed"
convert_and_compare "$layer"

if [ -x "$DUMP_IMG" ]; then
	"$DUMP_IMG" --ls -R "$IMG" >"$WORK/ls.out" 2>&1
	check "dump.img --ls -R" test $? -eq 0
	check "dump.img lists the converted whiteout" \
		grep -qE '^c.* 0, 0 .*old\.conf$' "$WORK/ls.out"
	check "dump.img lists the hard link twice" \
		test "$(grep -cE ' 2 +0 +0 +36 ' "$WORK/ls.out")" -eq 2
fi

finish
