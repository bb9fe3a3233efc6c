#!/bin/bash
# SPDX-License-Identifier: MIT
# The example program of docs/architecture.md (examples/convert.c):
# it converts a generated layer, checks the image and prints a file of it
# through the reader; what it prints must be the file's bytes in the tar,
# the image must be what mkfs.img makes with the same time and UUID, and a
# layer it cannot read leaves no image behind.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/api/common.sh"
EXAMPLE=${IMGFS_EXAMPLE:-$top_builddir/examples/convert}
require_tools "$PYTHON" cmp
[ -x "$EXAMPLE" ] || die "example not built: $EXAMPLE (run make check)"
setup_tmp

make_layer "$WORK/layer.tar" || die "could not generate the layer"
layer_files "$WORK/layer.tar" "$WORK" || die "could not read the layer back"

for f in usr/share/data.bin etc/hostname empty hard; do
	want=$WORK/${f//\//_}
	[ "$f" = hard ] && want=$WORK/etc_hostname
	"$EXAMPLE" "$WORK/layer.tar" "$WORK/image" "$f" >"$WORK/out" \
		2>"$WORK/err"
	check "convert prints $f" test $? -eq 0
	check "$f as the reader gives it equals the tar's" \
		cmp "$WORK/out" "$want"
done
check "the image was checked clean" grep -q ' 0 errors, 0 warnings' "$WORK/err"

if [ -x "$MKFS" ]; then
	"$MKFS" -q -T 1600000000 -U 5a5a5a5a-5a5a-5a5a-5a5a-5a5a5a5a5a5a \
		"$WORK/layer.tar" "$WORK/mkfs.image"
	check "the image equals mkfs.img's with the same time and UUID" \
		cmp "$WORK/image" "$WORK/mkfs.image"
fi

"$EXAMPLE" "$WORK/layer.tar" "$WORK/image" no/such/file >/dev/null \
	2>"$WORK/err"
check "a missing path fails" test $? -eq 1
check "... naming the error" grep -q '^convert: ' "$WORK/err"

head -c 5000 "$WORK/layer.tar" >"$WORK/cut.tar"
"$EXAMPLE" "$WORK/cut.tar" "$WORK/cut.image" etc/hostname >/dev/null \
	2>"$WORK/err"
check "a cut layer fails" test $? -eq 1
check "... and leaves no image" test ! -e "$WORK/cut.image"
check "... and no temporary file" \
	test -z "$(find "$WORK" -maxdepth 1 -name '.imgfs-*')"

finish
