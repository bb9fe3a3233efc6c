#!/bin/bash
# SPDX-License-Identifier: MIT
# Whiteouts that act on the layers below while the same layer writes the
# path again: ".wh.d" then "d/b" (the parent only implied) and ".wh.e"
# then "e/" make opaque directories in the layer image, so the converted
# layers stacked with overlayfs give the tree umoci unpack gives; the
# conversion is checked by fsck.img --oci --compare. An opaque marker at a
# layer's root is warned about (overlayfs ignores it on a layer's root).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
setup
require_tools umoci
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	skip "the kernel has no overlayfs"

"$PYTHON" - "$WORK" <<'PY' || die "tars"
import io, sys, tarfile
w = sys.argv[1]
def tar(path, entries):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for name, data in entries:
            i = tarfile.TarInfo(name)
            i.mtime = 1500000000
            if data is None:
                i.type, i.mode = tarfile.DIRTYPE, 0o755
                t.addfile(i)
            else:
                i.size, i.mode = len(data), 0o644
                t.addfile(i, io.BytesIO(data))
tar(w + "/l1.tar", [("d", None), ("d/a", b"a\n"), ("e", None),
                    ("e/x", b"x\n"), ("keep", b"k\n")])
tar(w + "/l2.tar", [(".wh.d", b""), ("d/b", b"b\n"), (".wh.e", b""),
                    ("e", None), ("e/y", b"y\n")])
tar(w + "/l3.tar", [(".wh..wh..opq", b""), ("z", b"z\n")])
PY
$MKLAYOUT "$WORK/src" "t=$WORK/l1.tar:gzip,$WORK/l2.tar" \
	"r=$WORK/l1.tar:gzip,$WORK/l3.tar" || die "mklayout failed"
umoci unpack --image "$WORK/src:t" "$WORK/ref" >/dev/null 2>&1 ||
	die "umoci unpack failed"

mkfs_img --oci --ref=t "$WORK/src" "$WORK/dst" 2>"$WORK/err" &&
	ok "--oci: .wh.d then d/b in one layer converted" ||
	{ cat "$WORK/err"; fail "--oci refused .wh.d then d/b"; }
check "fsck.img --oci --compare" "$FSCK_IMG" --oci="$WORK/dst" \
	--compare="$WORK/src" -q
# d is only implied by d/b: its metadata is the layer image's (docs/oci.md)
# shellcheck disable=SC2046 # one blob path per line
IMPLIED=d stack_compare t "$WORK/ref/rootfs" $(layer_blobs "$WORK/dst" t)

mkfs_img --oci --ref=r "$WORK/src" "$WORK/dr" 2>"$WORK/err" &&
	grep -q "opaque marker (.wh..wh..opq) at the layer's root" "$WORK/err" &&
	ok "an opaque marker at a layer's root: warned" ||
	{ cat "$WORK/err"; fail "no warning for a root opaque marker"; }

finish
