#!/bin/bash
# SPDX-License-Identifier: MIT
# mkfs.img's three command lines (native, --oci, the mkfs.erofs drop-in)
# share one option model: one SOURCE_DATE_EPOCH rule (digits only, for all
# three), --oci found by parsing (an option's value is not the mode), one
# way to write paths in JSON (bytes that are not UTF-8 escaped, as the
# native --json does), and the conversion rules recorded with each OCI
# layer so that fsck.img --oci --compare replays them (--all-root).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
. "$top_srcdir/tests/containerd/common.sh"
require_build
[ -x "$FSCK_IMG" ] || die "fsck.img not built"
setup_tmp
dropin_setup

mkdir "$WORK/t"
echo hi >"$WORK/t/f"
bsdtar --uid 1000 --gid 1000 -cf "$WORK/l.tar" -C "$WORK/t" f
$MKLAYOUT "$WORK/src" "t=$WORK/l.tar:gzip" || die "mklayout failed"

# SOURCE_DATE_EPOCH with a sign or a blank: refused by all three, exit 2
for v in +5 " 5" 5x; do
	rc=0
	SOURCE_DATE_EPOCH=$v mkfs_img -q "$WORK/l.tar" "$WORK/n.img" \
		2>"$WORK/err" || rc=$?
	[ $rc -eq 2 ] && grep -q SOURCE_DATE_EPOCH "$WORK/err" &&
		ok "native: SOURCE_DATE_EPOCH='$v' refused" ||
		fail "native: SOURCE_DATE_EPOCH='$v': exit $rc"
	rc=0
	SOURCE_DATE_EPOCH=$v mkfs_img --oci -q "$WORK/src" "$WORK/o" \
		2>"$WORK/err" || rc=$?
	[ $rc -eq 2 ] && grep -q SOURCE_DATE_EPOCH "$WORK/err" &&
		[ ! -e "$WORK/o" ] &&
		ok "--oci: SOURCE_DATE_EPOCH='$v' refused" ||
		fail "--oci: SOURCE_DATE_EPOCH='$v': exit $rc"
	rc=0
	SOURCE_DATE_EPOCH=$v dropin --tar=f --quiet "$WORK/d.img" \
		"$WORK/l.tar" 2>"$WORK/err" || rc=$?
	[ $rc -ne 0 ] && grep -q SOURCE_DATE_EPOCH "$WORK/err" &&
		[ ! -e "$WORK/d.img" ] &&
		ok "drop-in: SOURCE_DATE_EPOCH='$v' refused (exit $rc)" ||
		fail "drop-in: SOURCE_DATE_EPOCH='$v': exit $rc"
	rm -rf "$WORK/n.img" "$WORK/o" "$WORK/d.img"
done
SOURCE_DATE_EPOCH=7 mkfs_img -q -U 6e0f1a52-8f4e-4c8e-9a43-0b8a3b5e2d11 \
	"$WORK/l.tar" "$WORK/a.img" &&
	mkfs_img -q -T 7 -U 6e0f1a52-8f4e-4c8e-9a43-0b8a3b5e2d11 \
		"$WORK/l.tar" "$WORK/b.img" && cmp -s "$WORK/a.img" "$WORK/b.img" &&
	ok "SOURCE_DATE_EPOCH=7 is -T 7" || fail "SOURCE_DATE_EPOCH=7"

# "--oci" as the value of -L is a label, not the OCI mode
rc=0
mkfs_img -q -L --oci "$WORK/l.tar" "$WORK/lbl.img" 2>"$WORK/err" || rc=$?
if [ $rc -eq 0 ] && "$DUMP_IMG" --json "$WORK/lbl.img" 2>/dev/null |
	grep -q '"--oci"'; then
	ok "-L --oci: a native image labelled --oci"
else
	cat "$WORK/err"
	fail "-L --oci: exit $rc"
fi
rc=0
mkfs_img -q --flatten "$WORK/src" "$WORK/x.img" 2>"$WORK/err" || rc=$?
[ $rc -eq 2 ] && grep -q -- "--flatten.*--oci" "$WORK/err" &&
	ok "--flatten without --oci: a usage error" ||
	{ cat "$WORK/err"; fail "--flatten without --oci: exit $rc"; }

# a path that is not UTF-8 in the --oci --json documents: still JSON
bad=$WORK/$(printf 'out\377')
rc=0
mkfs_img --oci --flatten --json -q "$WORK/src" "$bad.img" \
	>"$WORK/flat.json" 2>"$WORK/err" || rc=$?
[ $rc -eq 0 ] && "$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' \
	"$WORK/flat.json" 2>"$WORK/err2" &&
	ok "--oci --flatten --json: a non-UTF-8 path gives valid JSON" ||
	{ cat "$WORK/err" "$WORK/err2"; fail "--oci --flatten --json: exit $rc, JSON not valid"; }
rc=0
mkfs_img --oci --json -q "$WORK/src" "$bad" >"$WORK/conv.json" \
	2>"$WORK/err" || rc=$?
[ $rc -eq 0 ] && "$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' \
	"$WORK/conv.json" 2>"$WORK/err2" &&
	ok "--oci --json: a non-UTF-8 destination gives valid JSON" ||
	{ cat "$WORK/err" "$WORK/err2"; fail "--oci --json: exit $rc, JSON not valid"; }

# the rules a layer was converted with are replayed by the layout check
for opt in --all-root --force-uid=5 --gid-offset=3; do
	rm -rf "$WORK/dst"
	rc=0
	mkfs_img --oci -q "$opt" "$WORK/src" "$WORK/dst" || rc=$?
	[ $rc -eq 0 ] || fail "--oci $opt: exit $rc"
	rc=0
	"$FSCK_IMG" -q --oci="$WORK/dst" --compare="$WORK/src" \
		>"$WORK/out" 2>&1 || rc=$?
	[ $rc -eq 0 ] && ok "--oci $opt: fsck.img --oci --compare passes" ||
		{ head -5 "$WORK/out"; fail "--oci $opt: fsck.img --compare exit $rc"; }
done
# ... and the check still sees a layer that differs from its source
rm -rf "$WORK/dst"
mkfs_img --oci -q "$WORK/src" "$WORK/dst" || fail "--oci: plain conversion"
"$PYTHON" - "$WORK/dst" <<'PY' || fail "rewriting the recorded rules"
import json, os, sys
root = sys.argv[1]
def path(d): return os.path.join(root, "blobs", "sha256", d.split(":")[1])
ix = json.load(open(os.path.join(root, "index.json")))
m = ix["manifests"][0]
doc = json.load(open(path(m["digest"])))
ann = doc["layers"][0]["annotations"]
key = "org.imgfs.conversion-rules"
assert key in ann, ann
ann[key] = ann[key].replace("all-root=0", "all-root=1")
data = json.dumps(doc).encode()
import hashlib
d = "sha256:" + hashlib.sha256(data).hexdigest()
open(path(d), "wb").write(data)
m["digest"], m["size"] = d, len(data)
json.dump(ix, open(os.path.join(root, "index.json"), "w"))
PY
rc=0
"$FSCK_IMG" -q --oci="$WORK/dst" --compare="$WORK/src" >"$WORK/out" 2>&1 ||
	rc=$?
[ $rc -eq 4 ] && grep -q owner "$WORK/out" &&
	ok "rules recorded as all-root, layer not: owner differences (exit 4)" ||
	{ head -5 "$WORK/out"; fail "a wrong recorded rule: exit $rc"; }
finish
