#!/bin/bash
# SPDX-License-Identifier: MIT
# Referrers of a converted image (an SBOM naming it as subject, with the
# standard empty config, and a signature under the referrers tag
# "sha256-<hex>.sig") pass through untouched, and what they attach to,
# the source manifest the conversion replaced, is copied (as --subject
# does): every subject and referrers tag of the output resolves to a blob
# of the output, also after --gc. A signature manifest (no tar layer, a
# config without rootfs) passes through when every entry is converted.
# fsck.img --oci accepts the empty config (application/vnd.oci.empty.v1+json)
# without a warning.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
require_build
[ -x "$FSCK_IMG" ] || die "fsck.img not built"
setup_tmp

mkdir -p "$WORK/t"
echo app >"$WORK/t/app"
bsdtar -cf "$WORK/l.tar" -C "$WORK/t" app
$MKLAYOUT "$WORK/src" "app=$WORK/l.tar:gzip" || die "mklayout failed"
"$PYTHON" - "$WORK/src" <<'PY' || die "could not add the referrers"
import hashlib, json, os, sys
root = sys.argv[1]
def blob(data):
    d = hashlib.sha256(data).hexdigest()
    open(os.path.join(root, "blobs", "sha256", d), "wb").write(data)
    return {"digest": "sha256:" + d, "size": len(data)}
ipath = os.path.join(root, "index.json")
ix = json.load(open(ipath))
app = ix["manifests"][0]
subj = {k: app[k] for k in ("mediaType", "digest", "size")}
MT = "application/vnd.oci.image.manifest.v1+json"
empty = dict(mediaType="application/vnd.oci.empty.v1+json", **blob(b"{}"))
sbom = {"schemaVersion": 2, "mediaType": MT, "artifactType": "application/spdx+json",
        "config": empty, "subject": subj,
        "layers": [dict(mediaType="application/spdx+json", **blob(b'{"spdxVersion":"SPDX-2.3"}'))]}
sig = {"schemaVersion": 2, "mediaType": MT,
       "config": dict(mediaType="application/vnd.oci.image.config.v1+json", **blob(b"{}")),
       "layers": [dict(mediaType="application/vnd.dev.cosign.simplesigning.v1+json",
                       **blob(b'{"critical":{}}'))]}
ix["manifests"].append(dict(mediaType=MT, **blob(json.dumps(sbom).encode())))
tag = "sha256-" + app["digest"][7:] + ".sig"
ix["manifests"].append(dict(mediaType=MT, annotations={"org.opencontainers.image.ref.name": tag},
                            **blob(json.dumps(sig).encode())))
json.dump(ix, open(ipath, "w"))
PY

# dangling DST: every subject and referrers tag of DST names a blob of DST
dangling() {
	"$PYTHON" - "$1" <<'PY'
import json, os, sys
root = sys.argv[1]
def have(d):
    return os.path.exists(os.path.join(root, "blobs", "sha256", d[7:]))
n = 0
for e in json.load(open(os.path.join(root, "index.json")))["manifests"]:
    ref = e.get("annotations", {}).get("org.opencontainers.image.ref.name", "")
    if ref.startswith("sha256-"):
        n += 1
        if not have("sha256:" + ref[7:71]):
            print("tag", ref)
    doc = json.load(open(os.path.join(root, "blobs", "sha256", e["digest"][7:])))
    if "subject" in doc:
        n += 1
        if not have(doc["subject"]["digest"]):
            print("subject", doc["subject"]["digest"])
print("checked", n)
PY
}
for sel in "" "--ref=app"; do
	d=$WORK/dst${sel:+-ref}
	# shellcheck disable=SC2086 # $sel: zero or one option
	check "convert ${sel:-everything}" mkfs_img --oci -q $sel "$WORK/src" "$d"
	out=$(dangling "$d")
	[ "$out" = "checked 2" ] &&
		ok "${sel:-everything}: the SBOM's subject and the signature's tag are in the output" ||
		fail "${sel:-everything}: $out"
	"$FSCK_IMG" --oci="$d" >"$WORK/fsck.out" 2>&1
	rc=$?
	# (the artifacts' own layer types are unknown to it: warnings)
	[ $rc -eq 0 ] && grep -q " 0 errors, " "$WORK/fsck.out" &&
		! grep -q "vnd.oci.empty" "$WORK/fsck.out" &&
		ok "${sel:-everything}: fsck.img --oci: no error, no word on the empty config" ||
		{ cat "$WORK/fsck.out"; fail "${sel:-everything}: fsck.img --oci exit $rc"; }
done
check "--gc" mkfs_img --oci -q --gc "$WORK/dst"
out=$(dangling "$WORK/dst")
[ "$out" = "checked 2" ] && ok "--gc keeps what the referrers attach to" ||
	fail "after --gc: $out"

finish
