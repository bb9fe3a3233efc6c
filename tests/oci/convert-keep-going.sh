#!/bin/bash
# SPDX-License-Identifier: MIT
# mkfs.img --oci --keep-going: one damaged layer blob does not stop the
# run. Every other unit is converted, the failure is reported naming the
# blob and the image it belongs to, only the images whose units all
# converted are in index.json (and pass fsck.img --oci), and the exit
# status is 1. Without the option the run stops at the failure.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
require_build
[ -x "$FSCK_IMG" ] || die "fsck.img not built"
setup_tmp

for n in 1 2 3; do
	mkdir -p "$WORK/t$n"
	head -c 200000 /dev/urandom >"$WORK/t$n/f$n"
	bsdtar -cf "$WORK/l$n.tar" -C "$WORK/t$n" "f$n"
done
$MKLAYOUT "$WORK/src" "good=$WORK/l1.tar:gzip" \
	"bad=$WORK/l1.tar:gzip,$WORK/l2.tar:gzip" "other=$WORK/l3.tar:gzip" ||
	die "mklayout failed"
BAD=$(layer_blobs "$WORK/src" bad | sed -n 2p)
printf 'X' | dd of="$BAD" bs=1 seek=100000 conv=notrunc 2>/dev/null
BADDIG=sha256:$(basename "$BAD")

refs() {
	"$PYTHON" -c 'import json,sys
print(" ".join(m["annotations"]["org.opencontainers.image.ref.name"] for m in json.load(open(sys.argv[1]))["manifests"]))' "$1/index.json"
}
rc=0
mkfs_img --oci --keep-going --jobs=1 --json "$WORK/src" "$WORK/dst" \
	>"$WORK/out.json" 2>"$WORK/err" || rc=$?
cat "$WORK/err"
[ $rc -eq 1 ] && ok "--keep-going with a damaged blob: exit 1" || fail "exit $rc"
grep -q "unit sha256:[0-9a-f]* (blob $BADDIG) not converted: .*corrupted" "$WORK/err" &&
	ok "the failure names the blob and the cause" || fail "no message naming $BADDIG"
grep -q "image 'bad' (sha256:[0-9a-f]*) not published: its layer blob $BADDIG" "$WORK/err" &&
	ok "the image not published is named" || fail "no message naming image 'bad'"
tail -n 1 "$WORK/err" | grep -q "1 units failed, 1 images not published: $BADDIG" &&
	ok "the last line lists the failed blob" || fail "last line: $(tail -n 1 "$WORK/err")"
[ "$(refs "$WORK/dst")" = "good other" ] &&
	ok "index.json holds the complete images only: good other" ||
	fail "index.json: $(refs "$WORK/dst")"
"$PYTHON" -c 'import json,sys
j = json.load(open(sys.argv[1]))
sys.exit(not (j["failed"] == 1 and j["images_failed"] == 1 and j["converted"] == 2))' \
	"$WORK/out.json" && ok "--json counts: 2 converted, 1 failed, 1 image not published" ||
	{ cat "$WORK/out.json"; fail "--json counts"; }
check "fsck.img --oci on what was published" "$FSCK_IMG" -q --oci="$WORK/dst"

rc=0
mkfs_img --oci -q --jobs=1 "$WORK/src" "$WORK/dst2" 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] && grep -q "$BADDIG" "$WORK/err" && [ ! -e "$WORK/dst2/index.json" ] &&
	ok "without --keep-going: stops, no index.json" ||
	{ cat "$WORK/err"; fail "without --keep-going: exit $rc"; }

finish
