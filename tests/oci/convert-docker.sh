#!/bin/bash
# SPDX-License-Identifier: MIT
# Docker schema-2 input (manifest v2, manifest list, container config,
# rootfs.diff.tar.gzip layers): schema 2 has no EROFS layers, so the
# converted images are written as OCI manifests, configs and indexes.
# fsck.img --oci finds no error and no warning, and skopeo copies the
# converted images (it refuses a Docker manifest holding EROFS layers).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
require_build
require_tools skopeo
[ -x "$FSCK_IMG" ] || die "fsck.img not built"
setup_tmp

mkdir -p "$WORK/t"
echo docker >"$WORK/t/f"
bsdtar -cf "$WORK/l.tar" -C "$WORK/t" f
$MKLAYOUT "$WORK/src" --docker "one=$WORK/l.tar:gzip" \
	"list@linux/amd64=$WORK/l.tar:gzip" "list@linux/arm64=$WORK/l.tar" ||
	die "mklayout failed"
# the index of "list" becomes a Docker manifest list
"$PYTHON" - "$WORK/src" <<'PY' || die "could not make the manifest list"
import hashlib, json, os, sys
root = sys.argv[1]
ipath = os.path.join(root, "index.json")
ix = json.load(open(ipath))
lt = "application/vnd.docker.distribution.manifest.list.v2+json"
for e in ix["manifests"]:
    if e["annotations"]["org.opencontainers.image.ref.name"] == "list":
        doc = json.load(open(os.path.join(root, "blobs/sha256", e["digest"][7:])))
        doc["mediaType"] = lt
        data = json.dumps(doc).encode()
        d = hashlib.sha256(data).hexdigest()
        open(os.path.join(root, "blobs/sha256", d), "wb").write(data)
        e.update(mediaType=lt, digest="sha256:" + d, size=len(data))
json.dump(ix, open(ipath, "w"))
PY
check "convert the Docker layout" mkfs_img --oci -q "$WORK/src" "$WORK/dst"

# every document reached from index.json: OCI media types only
"$PYTHON" - "$WORK/dst" >"$WORK/types" <<'PY'
import json, os, sys
root = sys.argv[1]
def load(d):
    return json.load(open(os.path.join(root, "blobs/sha256", d[7:])))
def walk(desc):
    print("descriptor", desc["mediaType"])
    doc = load(desc["digest"])
    print("document", doc.get("mediaType"))
    for c in doc.get("manifests", []):
        walk(c)
    if "config" in doc:
        print("config", doc["config"]["mediaType"])
for e in json.load(open(os.path.join(root, "index.json")))["manifests"]:
    walk(e)
PY
if grep -q docker "$WORK/types" || [ "$(grep -c oci "$WORK/types")" -ne 11 ]; then
	cat "$WORK/types"
	fail "Docker media types left in the converted layout"
else
	ok "manifests, configs and indexes of the converted images are OCI ($(wc -l <"$WORK/types") media types)"
fi
"$FSCK_IMG" --oci="$WORK/dst" >"$WORK/fsck.out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q " 0 errors, 0 warnings$" "$WORK/fsck.out" &&
	ok "fsck.img --oci: no error, no warning" ||
	{ cat "$WORK/fsck.out"; fail "fsck.img --oci: exit $rc"; }
for r in one list; do
	skopeo copy --all "oci:$WORK/dst:$r" "oci:$WORK/copy:$r" >"$WORK/skopeo.log" 2>&1 &&
		ok "skopeo copies $r" || { cat "$WORK/skopeo.log"; fail "skopeo copy $r"; }
done

finish
