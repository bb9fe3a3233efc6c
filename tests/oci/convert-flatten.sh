#!/bin/bash
# SPDX-License-Identifier: MIT
# mkfs.img --oci --flatten: the one image chosen by --ref (and
# --platform) flattened into one EROFS image (imgfs_flatten, lib/stack),
# its layers streamed from their blobs and verified. The image mounts to
# exactly the tree umoci unpack gives; a corrupted blob is named and no
# image is left; a selection of several images is refused.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
setup
require_tools umoci setfattr zstd

umoci_layout "$WORK/src" >"$WORK/umoci.log" 2>&1 ||
	{ cat "$WORK/umoci.log"; die "umoci could not build the layout"; }
umoci unpack --image "$WORK/src:t" "$WORK/ref1" >/dev/null 2>&1 ||
	die "umoci unpack failed"
check "--flatten the umoci image" mkfs_img --oci -q --flatten "$WORK/src" \
	"$WORK/flat.img"
check "fsck.img the flattened image" "$FSCK_IMG" -q "$WORK/flat.img"
compare_mounts "$WORK/flat.img" "$WORK/ref1/rootfs" "loop" --skip-root

mkdir -p "$WORK/cs"
"$PYTHON" "$top_srcdir/tests/containerd/stack.py" "$WORK/cs" >/dev/null ||
	die "stack.py failed"
umoci unpack --image "$WORK/cs/oci:stack" "$WORK/ref2" >/dev/null 2>&1 ||
	die "umoci unpack of the stack failed"
C=$WORK/cs
$MKLAYOUT "$WORK/mix" "one=$C/layer1.tar:gzip,$C/layer2.tar:zstd,$C/layer3.tar" \
	"multi@linux/amd64=$C/layer1.tar,$C/layer2.tar,$C/layer3.tar:gzip" \
	"multi@linux/arm64=$C/layer1.tar" || die "mklayout failed"
U=6e0f1a52-8f4e-4c8e-9a43-0b8a3b5e2d11
check "--flatten --ref=one (gzip, zstd, plain layers)" mkfs_img --oci -q \
	--flatten -U $U --ref=one "$WORK/mix" "$WORK/one.img"
compare_mounts "$WORK/one.img" "$WORK/ref2/rootfs" "loop" --skip-root
check "--flatten --ref=multi --platform=linux/amd64" mkfs_img --oci -q \
	--flatten -U $U --ref=multi --platform=linux/amd64 "$WORK/mix" "$WORK/multi.img"
cmp -s "$WORK/one.img" "$WORK/multi.img" &&
	ok "the same layers (stored otherwise, same -U) give the same image bytes" ||
	fail "the same layers gave different images"

mkfs_img --oci -q --flatten "$WORK/mix" "$WORK/two.img" 2>"$WORK/err" &&
	fail "--flatten of 3 images succeeded"
grep -q "3 images match" "$WORK/err" && [ ! -e "$WORK/two.img" ] &&
	ok "several images: refused ($(cat "$WORK/err"))" ||
	{ cat "$WORK/err"; fail "several images"; }

# a byte flipped in a copy of the layout: named, no image left
cp -a "$WORK/mix" "$WORK/bad"
L2=$("$PYTHON" -c 'import json,sys
ix = json.load(open(sys.argv[1] + "/index.json"))["manifests"]
m = json.load(open(sys.argv[1] + "/blobs/sha256/" + ix[0]["digest"][7:]))
print(m["layers"][1]["digest"])' "$WORK/bad")
"$PYTHON" -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0x40; open(p, "wb").write(b)' "$WORK/bad/blobs/sha256/${L2#sha256:}"
mkfs_img --oci -q --flatten --ref=one "$WORK/bad" "$WORK/bad.img" 2>"$WORK/err" &&
	fail "a corrupted layer was flattened"
grep -q "blob $L2" "$WORK/err" && [ ! -e "$WORK/bad.img" ] &&
	ok "the corrupted blob is named, no image left: $(cat "$WORK/err")" ||
	{ cat "$WORK/err"; fail "corrupted blob"; }

finish
