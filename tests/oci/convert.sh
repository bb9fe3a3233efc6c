#!/bin/bash
# SPDX-License-Identifier: MIT
# mkfs.img --oci on layouts made by real tools: an image umoci built in
# three layers (deleted files and directories, an opaque directory, hard
# links, xattrs, a path re-created as another type) and the containerd
# stack layers (tests/containerd/stack.py). Every converted layer mounts,
# the layers stacked with overlayfs give the tree umoci unpack gives for
# the source image, umoci and skopeo read the converted layout, and the
# config, manifest and index say what containerd expects.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
setup
require_tools umoci skopeo setfattr
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	skip "the kernel has no overlayfs"

# 1. umoci's image
umoci_layout "$WORK/src" >"$WORK/umoci.log" 2>&1 ||
	{ cat "$WORK/umoci.log"; die "umoci could not build the layout"; }
umoci unpack --image "$WORK/src:t" "$WORK/ref1" >/dev/null 2>&1 ||
	die "umoci unpack of the source failed"
check "convert the umoci layout" mkfs_img --oci -q "$WORK/src" "$WORK/dst"
mapfile -t BLOBS < <(layer_blobs "$WORK/dst" t)
[ "${#BLOBS[@]}" -eq 3 ] || fail "3 converted layers expected, got ${#BLOBS[@]}"
for b in "${BLOBS[@]}"; do
	check "fsck.img $(basename "$b")" "$FSCK_IMG" -q "$b"
done
IMPLIED=$(implied_dirs "$WORK/src" t)
stack_compare umoci "$WORK/ref1/rootfs" "${BLOBS[@]}"
IMPLIED=

# the real tools read the result
check "umoci stat reads the converted image" \
	umoci stat --image "$WORK/dst:t"
check "skopeo inspect reads the converted image" \
	skopeo inspect "oci:$WORK/dst:t"
umoci unpack --image "$WORK/dst:t" "$WORK/unpacked" >/dev/null 2>&1 &&
	fail "umoci unpacked EROFS layers as if they were tars"

# what containerd needs: media types, diff_ids = sha256 of each blob,
# "erofs" in os.features, the source digest recorded
"$PYTHON" - "$WORK/src" "$WORK/dst" >"$WORK/meta.out" 2>&1 <<'PY'
import hashlib, json, os, sys
src, dst = sys.argv[1:]
def load(root, d):
    with open(os.path.join(root, "blobs", "sha256", d.split(":")[1]), "rb") as f:
        return f.read()
six = json.load(open(os.path.join(src, "index.json")))
dix = json.load(open(os.path.join(dst, "index.json")))
sm = json.loads(load(src, six["manifests"][0]["digest"]))
dm = json.loads(load(dst, dix["manifests"][0]["digest"]))
cfg = json.loads(load(dst, dm["config"]["digest"]))
assert dix["manifests"][0]["annotations"] == six["manifests"][0]["annotations"]
assert cfg["os.features"] == ["erofs"], cfg.get("os.features")
for i, l in enumerate(dm["layers"]):
    data = load(dst, l["digest"])
    assert l["mediaType"] == "application/vnd.erofs.layer.v1", l
    assert l["size"] == len(data)
    assert "sha256:" + hashlib.sha256(data).hexdigest() == l["digest"]
    assert cfg["rootfs"]["diff_ids"][i] == l["digest"]
    assert l["annotations"]["org.imgfs.source.digest"] == sm["layers"][i]["digest"]
    # superblock magic at 1024, 4096-byte blocks
    assert data[1024:1028] == bytes.fromhex("e2e1f5e0"), "not EROFS"
    assert data[1024 + 12] == 12, "block size"
print("ok")
PY
if grep -qx ok "$WORK/meta.out"; then
	ok "configs, manifests and index as containerd expects them"
else
	cat "$WORK/meta.out"
	fail "converted metadata"
fi

# the UUID is UUIDv5(URL, "erofs:blobs/" + diffID)
DIFF=$(mkfs_img --oci --list-units "$WORK/src" | head -n 1 | cut -d' ' -f1)
WANT=$("$PYTHON" -c 'import sys, uuid; print(uuid.uuid5(uuid.NAMESPACE_URL, "erofs:blobs/" + sys.argv[1]))' "$DIFF")
REC=$(ls "$WORK/dst/.imgfs/units/${DIFF#sha256:}".*.json)
IMG=$WORK/dst/blobs/sha256/$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["digest"][7:])' "$REC")
GOT=$("$DUMP_IMG" -s "$IMG" | awk -F': *' 'tolower($1) ~ /uuid/ { print $2; exit }')
if [ "$GOT" = "$WANT" ]; then
	ok "layer UUID = uuid5(URL, erofs:blobs/$DIFF) = $WANT"
else
	fail "layer UUID $GOT, expected $WANT"
fi

# 2. the containerd stack (explicit whiteouts, opaque directory, hard
# links within a layer, a directory turned into a file)
mkdir -p "$WORK/cs"
"$PYTHON" "$top_srcdir/tests/containerd/stack.py" "$WORK/cs" >/dev/null ||
	die "stack.py failed"
umoci unpack --image "$WORK/cs/oci:stack" "$WORK/ref2" >/dev/null 2>&1 ||
	die "umoci unpack of the stack failed"
check "convert the stack layout (--jobs=2)" \
	mkfs_img --oci -q --jobs=2 "$WORK/cs/oci" "$WORK/cs/dst"
mapfile -t BLOBS < <(layer_blobs "$WORK/cs/dst" stack)
stack_compare stack "$WORK/ref2/rootfs" "${BLOBS[@]}"

finish
