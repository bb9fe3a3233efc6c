#!/bin/bash
# SPDX-License-Identifier: MIT
# A destination filled one image at a time: mkfs.img --oci --ref=A then
# --ref=B keeps both in DST/index.json (an entry of the same ref name is
# replaced where it stands, so a rerun gives the same bytes), and the
# layout passes fsck.img --oci and skopeo. An earlier index.json that is
# not what a run writes (not JSON, an entry naming a missing blob, a
# link) is refused, naming it, and left as it is. --gc removes exactly
# the blobs and unit records index.json no longer reaches (and refuses
# to run, removing nothing, while another run holds the layout's lock).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
require_build
require_tools skopeo flock
[ -x "$FSCK_IMG" ] || die "fsck.img not built"
setup_tmp

mkdir -p "$WORK/t1" "$WORK/t2"
echo base >"$WORK/t1/base"
echo tools >"$WORK/t2/tools"
bsdtar -cf "$WORK/base.tar" -C "$WORK/t1" base
bsdtar -cf "$WORK/tools.tar" -C "$WORK/t2" tools
$MKLAYOUT "$WORK/src" "base=$WORK/base.tar:gzip" \
	"tools=$WORK/base.tar:gzip,$WORK/tools.tar:gzip" || die "mklayout failed"
S=$WORK/src D=$WORK/dst

refs() {
	"$PYTHON" -c 'import json,sys
print(" ".join(m["annotations"]["org.opencontainers.image.ref.name"] for m in json.load(open(sys.argv[1]))["manifests"]))' "$1/index.json"
}
check "convert base" mkfs_img --oci -q --ref=base "$S" "$D"
check "then tools" mkfs_img --oci -q --ref=tools "$S" "$D"
[ "$(refs "$D")" = "base tools" ] && ok "index.json keeps base and adds tools" ||
	fail "index.json refs: $(refs "$D")"
check "fsck.img --oci on the accumulated layout" "$FSCK_IMG" -q --oci="$D"
for r in base tools; do
	skopeo inspect "oci:$D:$r" >/dev/null && ok "skopeo reads $r" ||
		fail "skopeo inspect oci:$D:$r"
done
cp "$D/index.json" "$WORK/index.1"
check "base again" mkfs_img --oci -q --ref=base "$S" "$D"
cmp -s "$D/index.json" "$WORK/index.1" &&
	ok "a rerun of base replaces it in place: same index.json bytes" ||
	fail "a rerun changed index.json: $(refs "$D")"

# an earlier index.json is untrusted input
bad_index() {
	local what=$1 pat=$2 rc=0
	mkfs_img --oci -q --ref=tools "$S" "$D" 2>"$WORK/err" || rc=$?
	if [ $rc -eq 1 ] && grep -q -- "$pat" "$WORK/err" &&
		cmp -s "$D/index.json" "$WORK/index.bad"; then
		ok "$what: refused ($(cut -c1-110 "$WORK/err")), left as it is"
	else
		cat "$WORK/err"
		fail "$what: exit $rc"
	fi
}
printf '{"manifests": [' >"$D/index.json"
cp "$D/index.json" "$WORK/index.bad"
bad_index "index.json not JSON" "not a JSON object with a manifests array"
"$PYTHON" -c 'import json,sys
ix = json.load(open(sys.argv[1]))
ix["manifests"][0]["digest"] = "sha256:" + "0" * 64
json.dump(ix, open(sys.argv[2], "w"))' "$WORK/index.1" "$D/index.json"
cp "$D/index.json" "$WORK/index.bad"
bad_index "an entry naming a missing blob" "index.json entry 0: blob sha256:0000"
rm "$D/index.json"
ln -s "$WORK/index.1" "$D/index.json"
cp "$WORK/index.1" "$WORK/index.bad"
bad_index "index.json a symbolic link" "index.json"
rm "$D/index.json"
cp "$WORK/index.1" "$D/index.json"

# garbage collection: base converted with -z lz4, then again without,
# orphans the lz4 layer blob, its record, its config and manifest
nblobs() { find "$D/blobs/sha256" -type f | wc -l; }
check "base with -z lz4" mkfs_img --oci -q -z lz4 --ref=base "$S" "$D"
check "base without" mkfs_img --oci -q --ref=base "$S" "$D"
before=$(nblobs)
# the holder says when it has the lock: a busy machine may take a while
(exec 9>>"$D/.imgfs/lock" && flock -s 9 && : >"$WORK/locked" &&
	exec sleep 300) &
LOCKER=$!
while [ ! -e "$WORK/locked" ] && kill -0 "$LOCKER" 2>/dev/null; do
	sleep 0.05
done
rc=0
mkfs_img --oci --gc "$D" 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] && grep -q "another run is writing" "$WORK/err" &&
	[ "$(nblobs)" -eq "$before" ] &&
	ok "--gc while a run holds the lock: refused, nothing removed" ||
	{ cat "$WORK/err"; fail "--gc under a lock: exit $rc"; }
kill "$LOCKER" 2>/dev/null
wait "$LOCKER" 2>/dev/null
reached=$("$PYTHON" - "$D" <<'PY'
import json, os, sys
root = sys.argv[1]
seen = set()
def walk(d):
    if d["digest"] in seen:
        return
    seen.add(d["digest"])
    if "manifest" in d["mediaType"] or "index" in d["mediaType"]:
        doc = json.load(open(os.path.join(root, "blobs", "sha256", d["digest"][7:])))
        for k in ("manifests", "layers"):
            for c in doc.get(k, []):
                walk(c)
        if "config" in doc:
            walk(doc["config"])
for m in json.load(open(os.path.join(root, "index.json")))["manifests"]:
    walk(m)
print(len(seen))
PY
)
touch "$D/blobs/sha256/.imgfs-leftover"
mkfs_img --oci --gc --json "$D" >"$WORK/gc.json" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "--gc"; }
removed=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["gc"]["blobs_removed"])' "$WORK/gc.json")
[ "$(nblobs)" -eq "$reached" ] && [ "$removed" -eq $((before + 1 - reached)) ] &&
	[ ! -e "$D/blobs/sha256/.imgfs-leftover" ] &&
	ok "--gc: $removed blobs removed, the $reached reached kept" ||
	{ cat "$WORK/gc.json"; fail "--gc left $(nblobs) blobs, $reached reached"; }
nrec=$(find "$D/.imgfs/units" -type f | wc -l)
[ "$nrec" -eq 2 ] && ok "--gc: only the 2 records of reached layers left" ||
	fail "--gc left $nrec unit records"
check "fsck.img --oci after --gc" "$FSCK_IMG" -q --oci="$D"
for r in base tools; do
	skopeo inspect "oci:$D:$r" >/dev/null && ok "skopeo reads $r after --gc" ||
		fail "skopeo inspect oci:$D:$r after --gc"
done
# a run with --gc at its end, and --gc refused with a shard
check "a run with --gc" mkfs_img --oci -q --gc --ref=tools "$S" "$D"
rc=0
mkfs_img --oci --gc --shard=0/2 "$S" "$D" 2>"$WORK/err" || rc=$?
[ $rc -eq 2 ] && grep -q "goes with a whole run" "$WORK/err" &&
	ok "--gc with --shard: usage error" || { cat "$WORK/err"; fail "--gc --shard: exit $rc"; }

finish
