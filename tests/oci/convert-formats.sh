#!/bin/bash
# SPDX-License-Identifier: MIT
# mkfs.img --oci on every kind of source layer and layout: the same three
# tars stored plain, gzip and zstd (OCI), gzip and plain (Docker media
# types, compression sniffed), a multi-platform index copied with
# skopeo copy --all, and a non-distributable layer. Shared tars are one
# work unit each; every stack equals umoci unpack of the original; the
# +zstd and draft media types; --platform and --ref select.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
setup
require_tools umoci skopeo zstd
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	skip "the kernel has no overlayfs"

mkdir -p "$WORK/cs"
"$PYTHON" "$top_srcdir/tests/containerd/stack.py" "$WORK/cs" >/dev/null ||
	die "stack.py failed"
umoci unpack --image "$WORK/cs/oci:stack" "$WORK/ref" >/dev/null 2>&1 ||
	die "umoci unpack of the stack failed"
REF=$WORK/ref/rootfs
L1=$WORK/cs/layer1.tar L2=$WORK/cs/layer2.tar L3=$WORK/cs/layer3.tar
echo nd >"$WORK/nd.txt"
bsdtar -cf "$WORK/nd.tar" -C "$WORK" nd.txt
$MKLAYOUT "$WORK/src" "mixed=$L1:gzip,$L2:zstd,$L3" \
	"multi@linux/amd64=$L1:zstd,$L2,$L3:gzip" "multi@linux/arm64=$L1" \
	"nd=$L1:gzip,$WORK/nd.tar:nondist" \
	--docker "docker=$L1:gzip,$L2,$L3:gzip" || die "mklayout failed"
# the multi-platform image goes through a real tool first
check "skopeo copy --all of the index" \
	skopeo copy -q --all "oci:$WORK/src:multi" "oci:$WORK/src:multi-copy"

# three tars, whatever their storage: three units
UNITS=$(mkfs_img --oci --list-units "$WORK/src")
printf '%s\n' "$UNITS" >"$WORK/units"
if [ "$(wc -l <"$WORK/units")" -eq 3 ] &&
	[ "$(sort "$WORK/units")" = "$UNITS" ]; then
	ok "--list-units: 3 units, sorted by diffID"
else
	cat "$WORK/units"
	fail "--list-units"
fi

mkfs_img --oci --json "$WORK/src" "$WORK/dst" >"$WORK/sum.json" \
	2>"$WORK/warn" || { cat "$WORK/warn"; fail "convert"; }
if "$PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(not (s["units"] == 3 and s["converted"] == 3 and s["verified"] == 3))' "$WORK/sum.json"; then
	ok "each of the 3 units converted once and verified"
else
	cat "$WORK/sum.json"
	fail "summary counts"
fi
grep -q "non-distributable layer" "$WORK/warn" &&
	ok "the non-distributable layer is reported" ||
	fail "no warning for the non-distributable layer"

for img in mixed docker multi-copy; do
	mapfile -t BLOBS < <(layer_blobs "$WORK/dst" $img)
	stack_compare "$img" "$REF" "${BLOBS[@]}"
	# skopeo's oci: transport lists only OCI media types in index.json
	[ $img = docker ] || check "skopeo inspect $img" \
		skopeo inspect --raw "oci:$WORK/dst:$img"
done

"$PYTHON" - "$WORK/src" "$WORK/dst" >"$WORK/meta.out" 2>&1 <<'PY'
import json, os, sys
src, dst = sys.argv[1:]
def load(root, d):
    with open(os.path.join(root, "blobs", "sha256", d.split(":")[1])) as f:
        return json.load(f)
def ref(root, name):
    for m in json.load(open(os.path.join(root, "index.json")))["manifests"]:
        if m["annotations"]["org.opencontainers.image.ref.name"] == name:
            return m
# Docker input: OCI manifest and config (schema 2 has no EROFS layers)
m = ref(dst, "docker")
assert m["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
man = load(dst, m["digest"])
assert man["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
assert man["config"]["mediaType"] == "application/vnd.oci.image.config.v1+json"
assert all(l["mediaType"] == "application/vnd.erofs.layer.v1" for l in man["layers"])
# the index: both platforms converted, os.features in each entry
for name in ("multi", "multi-copy"):
    ix = load(dst, ref(dst, name)["digest"])
    plats = [(e["platform"]["architecture"], e["platform"]["os.features"]) for e in ix["manifests"]]
    assert plats == [("amd64", ["erofs"]), ("arm64", ["erofs"])], plats
# the non-distributable layer is kept as it was, blob and diffID, and
# the image still says "erofs" (docs/oci.md: the EROFS differ applies it)
sm = load(src, ref(src, "nd")["digest"])
dm = load(dst, ref(dst, "nd")["digest"])
assert dm["layers"][1] == sm["layers"][1], dm["layers"][1]
assert dm["layers"][0]["mediaType"] == "application/vnd.erofs.layer.v1"
scfg, dcfg = load(src, sm["config"]["digest"]), load(dst, dm["config"]["digest"])
assert dcfg["rootfs"]["diff_ids"][1] == scfg["rootfs"]["diff_ids"][1]
assert os.path.exists(os.path.join(dst, "blobs", "sha256", sm["layers"][1]["digest"][7:]))
assert dcfg["os.features"] == ["erofs"], dcfg.get("os.features")
print("ok")
PY
grep -qx ok "$WORK/meta.out" && ok "Docker manifests, the index, the non-distributable layer" ||
	{ cat "$WORK/meta.out"; fail "converted metadata"; }

# --ref and --platform select
check "--ref=multi --platform=linux/arm64" mkfs_img --oci -q --ref=multi \
	--platform=linux/arm64 "$WORK/src" "$WORK/arm"
"$PYTHON" - "$WORK/arm" >"$WORK/arm.out" 2>&1 <<'PY'
import json, os, sys
root = sys.argv[1]
top = json.load(open(os.path.join(root, "index.json")))["manifests"]
assert [m["annotations"]["org.opencontainers.image.ref.name"] for m in top] == ["multi"]
ix = json.load(open(os.path.join(root, "blobs", "sha256", top[0]["digest"][7:])))
assert [e["platform"]["architecture"] for e in ix["manifests"]] == ["arm64"]
print("ok")
PY
grep -qx ok "$WORK/arm.out" && ok "only the arm64 manifest of multi" ||
	{ cat "$WORK/arm.out"; fail "selection"; }
mkfs_img --oci -q --ref=nosuch "$WORK/src" "$WORK/none" 2>"$WORK/err" &&
	fail "an unknown --ref was accepted"
grep -q "nosuch" "$WORK/err" && ok "an unknown --ref is an error naming it" ||
	{ cat "$WORK/err"; fail "unknown --ref message"; }

# a hard link to a file of a lower layer (crossing layers) is an error
# naming the entry and the layer, and nothing is assembled
"$PYTHON" - "$WORK" <<'PY' || die "could not write the hard-link layers"
import io, sys, tarfile
with tarfile.open(sys.argv[1] + "/hl1.tar", "w") as t:
    ti = tarfile.TarInfo("base"); ti.size = 1; t.addfile(ti, io.BytesIO(b"x"))
with tarfile.open(sys.argv[1] + "/hl2.tar", "w") as t:
    ti = tarfile.TarInfo("link"); ti.type = tarfile.LNKTYPE; ti.linkname = "base"
    t.addfile(ti)
PY
$MKLAYOUT "$WORK/hl" "t=$WORK/hl1.tar,$WORK/hl2.tar:gzip" || die "mklayout failed"
HL2=$(mkfs_img --oci --list-units "$WORK/hl" | awk '$3 ~ /gzip/ { print $2 }')
mkfs_img --oci -q "$WORK/hl" "$WORK/hlout" 2>"$WORK/err" &&
	fail "a hard link across layers was converted"
grep -q "layer $HL2" "$WORK/err" && grep -q "link" "$WORK/err" &&
	[ ! -e "$WORK/hlout/index.json" ] &&
	ok "a hard link across layers: $(cat "$WORK/err")" ||
	{ cat "$WORK/err"; fail "hard link across layers"; }

# ordinary mkfs options apply to every layer: lz4 compression, 64 KiB
# clusters; the same bytes with 1 job (all workers) and 3 jobs
check "-z lz4 -C 65536 --jobs=3" mkfs_img --oci -q --ref=mixed -z lz4 -C 65536 \
	--jobs=3 "$WORK/src" "$WORK/lz4"
check "-z lz4 -C 65536 --jobs=1" mkfs_img --oci -q --ref=mixed -z lz4 -C 65536 \
	--jobs=1 "$WORK/src" "$WORK/lz4b"
diff -r "$WORK/lz4" "$WORK/lz4b" >/dev/null &&
	ok "compressed layers: the same bytes with 1 and 3 jobs" ||
	fail "compressed layers differ between 1 and 3 jobs"
mapfile -t BLOBS < <(layer_blobs "$WORK/lz4" mixed)
"$DUMP_IMG" -s "${BLOBS[0]}" | grep -qi "lz4" &&
	ok "the layer images are lz4-compressed" || fail "not compressed"
stack_compare lz4 "$REF" "${BLOBS[@]}"

# zstd-framed layers: the annotation gives the image's digest, the image
# mounts once decompressed, diff_ids are the uncompressed images'
check "--layer-media-type=+zstd" mkfs_img --oci -q --ref=mixed \
	--layer-media-type=application/vnd.erofs.layer.v1+zstd "$WORK/src" "$WORK/z"
"$PYTHON" - "$WORK/z" "$WORK/zimg" >"$WORK/z.out" 2>&1 <<'PY'
import hashlib, json, os, subprocess, sys
root, out = sys.argv[1:]
os.makedirs(out)
def blob(d):
    return open(os.path.join(root, "blobs", "sha256", d[7:]), "rb").read()
top = json.load(open(os.path.join(root, "index.json")))["manifests"][0]
man = json.loads(blob(top["digest"]))
cfg = json.loads(blob(man["config"]["digest"]))
for i, l in enumerate(man["layers"]):
    assert l["mediaType"] == "application/vnd.erofs.layer.v1+zstd"
    img = subprocess.run(["zstd", "-dc"], input=blob(l["digest"]), stdout=subprocess.PIPE, check=True).stdout
    d = "sha256:" + hashlib.sha256(img).hexdigest()
    assert l["annotations"]["org.erofs.uncompressed-digest"] == d
    assert cfg["rootfs"]["diff_ids"][i] == d
    open(os.path.join(out, "%d.erofs" % i), "wb").write(img)
print("ok")
PY
if grep -qx ok "$WORK/z.out"; then
	ok "+zstd: org.erofs.uncompressed-digest and diff_ids match the images"
	stack_compare zstd "$REF" "$WORK/zimg/0.erofs" "$WORK/zimg/1.erofs" \
		"$WORK/zimg/2.erofs"
else
	cat "$WORK/z.out"
	fail "+zstd layers"
fi
# a referrer of "mixed" (an SBOM-like artifact, no ref name) passes
# through untouched; --subject points the converted manifest at the source
"$PYTHON" - "$WORK/src" <<'PY' || die "could not add a referrer"
import hashlib, json, os, sys
root = sys.argv[1]
def blob(data):
    d = hashlib.sha256(data).hexdigest()
    open(os.path.join(root, "blobs", "sha256", d), "wb").write(data)
    return {"digest": "sha256:" + d, "size": len(data)}
ipath = os.path.join(root, "index.json")
ix = json.load(open(ipath))
mixed = [m for m in ix["manifests"] if m["annotations"]["org.opencontainers.image.ref.name"] == "mixed"][0]
empty = dict(mediaType="application/vnd.oci.empty.v1+json", **blob(b"{}"))
sbom = dict(mediaType="application/spdx+json", **blob(b'{"spdxVersion":"SPDX-2.3"}'))
ref = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
       "artifactType": "application/spdx+json", "config": empty, "layers": [sbom],
       "subject": {"mediaType": mixed["mediaType"], "digest": mixed["digest"], "size": mixed["size"]}}
ix["manifests"].append(dict(mediaType="application/vnd.oci.image.manifest.v1+json",
                            **blob(json.dumps(ref).encode())))
json.dump(ix, open(ipath, "w"))
PY
check "--ref=mixed --subject" mkfs_img --oci -q --ref=mixed --subject \
	"$WORK/src" "$WORK/subj"
"$PYTHON" - "$WORK/src" "$WORK/subj" >"$WORK/subj.out" 2>&1 <<'PY'
import json, os, sys
src, dst = sys.argv[1:]
def path(root, d):
    return os.path.join(root, "blobs", "sha256", d.split(":")[1])
six = json.load(open(os.path.join(src, "index.json")))["manifests"]
dix = json.load(open(os.path.join(dst, "index.json")))["manifests"]
assert len(dix) == 2, dix
mixed = [m for m in six if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == "mixed"][0]
# the referrer: the same descriptor, every blob copied byte for byte
assert dix[1] == six[-1], dix[1]
ref = json.load(open(path(dst, dix[1]["digest"])))
for d in [dix[1], ref["config"]] + ref["layers"]:
    assert open(path(dst, d["digest"]), "rb").read() == open(path(src, d["digest"]), "rb").read()
# --subject: the converted manifest names the original, which is there
man = json.load(open(path(dst, dix[0]["digest"])))
assert man["subject"] == {"mediaType": mixed["mediaType"], "digest": mixed["digest"], "size": mixed["size"]}, man["subject"]
assert os.path.exists(path(dst, mixed["digest"]))
print("ok")
PY
grep -qx ok "$WORK/subj.out" &&
	ok "a referrer passes through untouched; --subject names the original" ||
	{ cat "$WORK/subj.out"; fail "referrer / --subject"; }

check "--layer-media-type=application/vnd.erofs" mkfs_img --oci -q \
	--ref=mixed --layer-media-type=application/vnd.erofs "$WORK/src" "$WORK/draft"
[ "$(layer_blobs "$WORK/draft" mixed | wc -l)" -eq 3 ] &&
	grep -q '"application/vnd.erofs"' "$WORK/draft"/blobs/sha256/* &&
	ok "draft media type application/vnd.erofs" || fail "draft media type"

finish
