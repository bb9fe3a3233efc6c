#!/bin/bash
# SPDX-License-Identifier: MIT
# fsck.img --oci=DIR on layouts mkfs.img --oci converted from the corpus
# (tests/oci/corpus.sh: umoci, skopeo copy --all, gzip/zstd/plain/Docker
# layers; EROFS layers stored as they are and as zstd): each passes, also
# with --compare=SOURCE, and --json lists every blob once (per role and
# media type), verified. Then
# copies of a converted layout are damaged one way each, the documents
# above the damage rewritten so that only it is wrong (tests/oci/corpus.py
# edit), and fsck.img must exit 4 with an error naming the blob: a
# flipped byte in a layer, a truncated layer, a wrong size in a manifest,
# a wrong diff_id in a config, a missing blob, "erofs" missing from
# os.features of a config or an index platform, a flipped byte in a
# dm-verity tree, a wrong org.erofs.uncompressed-digest, no source
# annotation (for --compare), and a layer converted from another tar
# (only --compare sees it). The sources pass too, their diff_ids computed
# through each compression. Nothing here is mounted, damaged images least
# of all.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/corpus.sh"
[ "$(id -u)" -eq 0 ] || skip "the corpus needs root (umoci unpack keeps owners and devices)"
require_tools umoci skopeo zstd gzip tar setfattr "$PYTHON"
[ -x "$FSCK_IMG" ] || die "fsck.img not built"
setup_tmp

C=$WORK/corpus
mkdir -p "$C"
corpus_umoci_layout "$C/u" || die "corpus_umoci_layout failed"
corpus_multiplatform "$C/m" || die "corpus_multiplatform failed"
corpus_compressed "$C/z" || die "corpus_compressed failed"
ZSTD_TYPE=application/vnd.erofs.layer.v1+zstd
for pair in "u cu" "m cm" "z cz" "z czz:--layer-media-type=$ZSTD_TYPE" \
	"u cuv:--dm-verity"; do
	src=${pair% *} dst=${pair#* }
	opt=
	case $dst in *:*) opt=${dst#*:} dst=${dst%%:*} ;; esac
	# shellcheck disable=SC2086 # $opt: zero or one option
	mkfs_img --oci -q $opt "$C/$src" "$C/$dst" >"$WORK/mkfs.log" 2>&1 ||
		{ cat "$WORK/mkfs.log"; die "mkfs.img --oci $opt $src $dst"; }
done

# json_ok JSON [compared]: no problem, every blob verified once, every
# EROFS layer checked (and compared) without a finding.
# shellcheck disable=SC2317 # called through check
json_ok() {
	"$PYTHON" - "$@" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
compared = len(sys.argv) > 2
digests = [b["digest"] for b in doc["blobs"]]
# once per role and media type (a config shared by an OCI and a Docker
# manifest is named with two media types)
keys = [(b["digest"], b["role"], b["media_type"]) for b in doc["blobs"]]
# (the Docker manifest's EROFS layers give a warning, see stack.sh)
bad = [p["message"] for p in doc["problems"] if p["severity"] == "error"]
bad += ["%s listed twice" % (k,) for k in set(keys) if keys.count(k) > 1]
for b in doc["blobs"]:
    if not (b["present"] and b["verified"]) or b["errors"]:
        bad.append("%s not verified" % b["digest"])
    if b["role"] == "layer" and not b["check"]:
        bad.append("layer %s not checked as EROFS" % b["digest"])
    if b["check"] and b["check"]["errors"]:
        bad.append("layer %s: image errors" % b["digest"])
    if b["role"] == "layer" and compared and (
            not b["compare"] or b["compare"]["differences"]):
        bad.append("layer %s not compared, or differs" % b["digest"])
    if b["role"] == "layer" and b["diff_id"] is None:
        bad.append("layer %s: no diff_id" % b["digest"])
st = doc["stats"]
if st["blobs"] != len(digests) or doc["exit_code"] or doc["errors"]:
    bad.append("stats or exit code wrong: %s" % st)
if compared and st["compared_layers"] != st["erofs_layers"]:
    bad.append("not every layer compared: %s" % st)
for b in bad:
    print("json:", b)
sys.exit(1 if bad else 0)
EOF
}

# 1. Converted layouts pass, with and without --compare.
for pair in "u cu" "m cm" "z cz" "z czz" "u cuv"; do
	src=${pair% *} dst=${pair#* }
	check "$dst: fsck.img --oci" "$FSCK_IMG" -q --oci="$C/$dst"
	check "$dst: fsck.img --oci --compare=$src" "$FSCK_IMG" -q \
		--oci="$C/$dst" --compare="$C/$src"
	"$FSCK_IMG" --oci="$C/$dst" --compare="$C/$src" --json \
		>"$WORK/$dst.json" 2>/dev/null
	check "$dst: --json: every blob verified once, layers checked and compared" \
		json_ok "$WORK/$dst.json" compared
done
# The sources too: their tar layers' diff_ids come from decompressing
# (gzip, zstd, none; the Docker manifest's compression sniffed).
for src in u m z; do
	"$FSCK_IMG" --oci="$C/$src" --json >"$WORK/$src.json" 2>/dev/null
	check "$src (source): fsck.img --oci, every layer's diff_id" \
		"$PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(d["exit_code"] or d["warnings"] or any(
    b["role"] == "layer" and not b["diff_id"] for b in d["blobs"]))' \
		"$WORK/$src.json"
done
expect_count() {
	local what=$1 expr=$2 want=$3 got
	got=$("$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$WORK/$4.json" "$expr")
	if [ "$got" = "$want" ]; then
		ok "$what: $got"
	else
		fail "$what: $got, expected $want"
	fi
}
# app and app2 share two layers: 5 + 4 - 2 distinct layers
expect_count "cu: distinct layers" 'd["stats"]["layers"]' 7 cu
expect_count "cm: a nested index, two platforms" \
	'(d["stats"]["indexes"], d["stats"]["manifests"])' "(1, 2)" cm
expect_count "czz: zstd EROFS layers checked" \
	'sorted(set(b["media_type"] for b in d["blobs"] if b["role"] == "layer"))' \
	"['$ZSTD_TYPE']" czz

# the Docker image of the corpus is converted to OCI documents: no
# Docker schema 2 manifest holding EROFS layers, nothing to warn about
expect_count "cz: the Docker image converted to OCI documents, no problem" \
	'[p["severity"] + ": " + p["message"] for p in d["problems"]]' \
	"[]" cz

expect_count "cuv: dm-verity trees verified" \
	'sorted(set(b["dm_verity_verified"] for b in d["blobs"] if b["role"] == "layer"))' \
	"[True]" cuv

# 2. Damage, one kind per copy.
# fresh NAME: a real copy (no shared inodes) of the converted umoci layout.
fresh() {
	rm -rf "${WORK:?}/${1:?}"
	cp -r "$C/cu" "$WORK/$1"
	D=$WORK/$1
}
layer_of() { corpus_layers "$1" app | sed -n "$(($2 + 1))p" | cut -d' ' -f2; }

# reported NAME BLOB REGEX [FSCK OPTIONS...]: fsck.img exits 4, its JSON
# has an error about BLOB matching REGEX, and the text output names BLOB.
reported() {
	local name=$1 blob=$2 re=$3 rc
	shift 3
	"$FSCK_IMG" --oci="$D" "$@" >"$WORK/$name.txt" 2>&1
	rc=$?
	"$FSCK_IMG" --oci="$D" --json "$@" >"$WORK/$name.json" 2>/dev/null
	if [ $rc -eq 4 ] && grep -qF "$blob" "$WORK/$name.txt" &&
		"$PYTHON" - "$WORK/$name.json" "$blob" "$re" <<'EOF'
import json, re, sys
doc = json.load(open(sys.argv[1]))
sys.exit(0 if doc["exit_code"] == 4 and any(
    p["severity"] == "error" and p["blob"] == sys.argv[2] and
    re.search(sys.argv[3], p["message"]) for p in doc["problems"]) else 1)
EOF
	then
		ok "$name: exit 4, $(grep -F "$blob" "$WORK/$name.txt" | head -n 1)"
	else
		cat "$WORK/$name.txt"
		fail "$name: exit $rc, expected 4 and an error naming $blob"
	fi
}

fresh flip
L=$(layer_of "$D" 1)
"$PYTHON" - "$(corpus_blob "$D" "$L")" <<'EOF' || die "flipping a byte"
import os, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(os.path.getsize(sys.argv[1]) // 2)
    b = f.read(1)
    f.seek(-1, 1)
    f.write(bytes([b[0] ^ 0x20]))
EOF
reported flipped-byte "$L" "corrupted"

# a source layout: a zstd tar layer whose config gives another diff_id
rm -rf "$WORK/srcdiff"
cp -r "$C/z" "$WORK/srcdiff"
D=$WORK/srcdiff
"$PYTHON" "$CORPUS_PY" edit "$D" zstd diff-id 1 || die "edit diff-id (source)"
CFG=$(skopeo inspect --raw "oci:$D:zstd" | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["config"]["digest"])')
reported source-diff-id "$CFG" "diff_ids\[1\] is sha256:[0-9a-f]*, but layer 1 \(sha256:[0-9a-f]*\) uncompressed has $(skopeo inspect --config "oci:$C/z:gz" | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["rootfs"]["diff_ids"][1])')"

fresh trunc
L=$(layer_of "$D" 2)
truncate -s -100 "$(corpus_blob "$D" "$L")"
reported truncated "$L" "bytes, its descriptor .* gives"

fresh size
L=$(layer_of "$D" 1)
"$PYTHON" "$CORPUS_PY" edit "$D" app layer-size 1 1 || die "edit layer-size"
M=$(corpus_manifest "$D" app)
reported manifest-size "$L" "descriptor in manifest $M, layer 1 gives"

fresh diffid
"$PYTHON" "$CORPUS_PY" edit "$D" app diff-id 2 || die "edit diff-id"
CFG=$(skopeo inspect --raw "oci:$D:app" | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["config"]["digest"])')
reported config-diff-id "$CFG" "diff_ids\[2\] is sha256:[0-9a-f]*, but layer 2 \($(layer_of "$D" 2)\)"

fresh missing
L=$(layer_of "$D" 3)
rm "$(corpus_blob "$D" "$L")"
reported missing-blob "$L" "is missing"

fresh feature
"$PYTHON" "$CORPUS_PY" edit "$D" app no-erofs-feature || die "edit os.features"
CFG=$(skopeo inspect --raw "oci:$D:app" | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["config"]["digest"])')
reported no-erofs-feature "$CFG" 'lacks "erofs" in os.features'

rm -rf "$WORK/platform"
cp -r "$C/cm" "$WORK/platform"
D=$WORK/platform
"$PYTHON" "$CORPUS_PY" edit "$D" multi no-platform-feature ||
	die "edit platform os.features"
reported no-platform-feature "$(corpus_manifest "$D" multi linux/arm64/v8)" \
	'the platform of sha256:[0-9a-f]* in index sha256:[0-9a-f]*, entry 1 lacks "erofs" in os.features'

# A byte of a dm-verity tree flipped (the layer's digest, size and diff_id
# rewritten to match): the image is fine, its tree is not.
rm -rf "$WORK/verity"
cp -r "$C/cuv" "$WORK/verity"
D=$WORK/verity
S=$(corpus_layers "$C/cu" app | sed -n 1p | cut -d' ' -f3)
cp "$(corpus_blob "$D" "$(corpus_layers "$D" app | sed -n 1p | cut -d' ' -f2)")" \
	"$WORK/verity.erofs"
"$PYTHON" - "$WORK/verity.erofs" $(((S + 4095) / 4096 * 4096 + 4096 + 7)) <<'EOF' ||
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    b = f.read(1)
    f.seek(-1, 1)
    f.write(bytes([b[0] ^ 0x01]))
EOF
	die "flipping a tree byte"
"$PYTHON" "$CORPUS_PY" edit "$D" app replace-layer 0 "$WORK/verity.erofs" ||
	die "edit replace-layer (verity)"
reported dm-verity-tree "$(corpus_layers "$D" app | sed -n 1p | cut -d' ' -f2)" \
	"its dm-verity tree: "

# Annotations: a wrong org.erofs.uncompressed-digest on a zstd layer; no
# org.imgfs.source.digest, so no source to compare with.
rm -rf "$WORK/ann"
cp -r "$C/czz" "$WORK/ann"
D=$WORK/ann
"$PYTHON" "$CORPUS_PY" edit "$D" gz annotation 1 \
	org.erofs.uncompressed-digest "sha256:$(printf '0%.0s' $(seq 64))" ||
	die "edit annotation"
reported zstd-uncompressed-digest "$(corpus_layers "$D" gz | sed -n 2p | cut -d' ' -f2)" \
	"org.erofs.uncompressed-digest is sha256:0{64}, the image has sha256:"
rm -rf "$WORK/ann"
cp -r "$C/cu" "$WORK/ann"
"$PYTHON" "$CORPUS_PY" edit "$D" app annotation 2 org.imgfs.source.digest - ||
	die "edit annotation"
check "no source annotation: consistent without --compare" "$FSCK_IMG" -q \
	--oci="$D"
reported no-source-annotation "$(corpus_layers "$D" app | sed -n 3p | cut -d' ' -f2)" \
	"has no org.imgfs.source.digest annotation" --compare="$C/u"

# A layer converted from another tar, under the same manifest (its source
# annotation unchanged): consistent as a layout, so only --compare sees it.
fresh other
SRC_L=$(corpus_layers "$C/u" app | sed -n 4p | cut -d' ' -f2)
zcat "$(corpus_blob "$C/u" "$SRC_L")" >"$WORK/l3.tar" || die "zcat"
"$PYTHON" - "$WORK/l3.tar" "$WORK/l3-other.tar" <<'EOF' || die "other tar"
import io, sys, tarfile
with tarfile.open(sys.argv[1]) as src, \
        tarfile.open(sys.argv[2], "w", format=tarfile.PAX_FORMAT) as dst:
    for ti in src.getmembers():
        data = src.extractfile(ti).read() if ti.isfile() else None
        if ti.name.endswith("etc/passwd"):
            data = b"root:x:0:0::/root:/bin/dash\n"
            ti.size = len(data)
        dst.addfile(ti, io.BytesIO(data) if data is not None else None)
EOF
mkfs_img -q -T 0 "$WORK/l3-other.tar" "$WORK/l3-other.erofs" ||
	die "mkfs.img of the other tar"
"$PYTHON" "$CORPUS_PY" edit "$D" app replace-layer 3 "$WORK/l3-other.erofs" ||
	die "edit replace-layer"
L=$(layer_of "$D" 3)
check "other layer: consistent without --compare" "$FSCK_IMG" -q --oci="$D"
reported other-source "$L" "differs from its source $SRC_L: /etc/passwd: content" \
	--compare="$C/u"

# 3. The command line.
expect_rc() {
	if [ "$2" = "$3" ]; then ok "$1: exit $2"; else fail "$1: exit $2, expected $3"; fi
}
"$FSCK_IMG" --oci="$WORK/nonexistent" >/dev/null 2>"$WORK/err"
expect_rc "--oci on a missing directory" $? 8
"$FSCK_IMG" --oci="$C/cu" extra >/dev/null 2>"$WORK/err"
expect_rc "--oci with an IMAGE" $? 16
if grep -q "^usage: fsck.img --oci=DIR" "$WORK/err"; then
	ok "usage error prints the --oci usage line"
else
	fail "usage error: $(cat "$WORK/err")"
fi
"$FSCK_IMG" --oci="$C/cu" --digest >/dev/null 2>&1
expect_rc "--oci with --digest" $? 16

finish
