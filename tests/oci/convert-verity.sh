#!/bin/bash
# SPDX-License-Identifier: MIT
# mkfs.img --oci --dm-verity records each layer's dm-verity root hash and
# hash offset where a runtime reads them: the layer descriptor's
# annotations org.erofs.dmverity.roothash and .hashoffset (containerd's
# sidecar fields), the unit record, the per-unit line and the --json
# summary; a reused unit (record, --cache-dir) keeps them. veritysetup
# verifies each blob with the recorded values; fsck.img --oci recomputes
# the root from the blob and refuses an annotation that differs.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
require_build
require_tools veritysetup
[ -x "$FSCK_IMG" ] || die "fsck.img not built"
setup_tmp

for n in 1 2; do
	mkdir -p "$WORK/t$n"
	head -c 300000 /dev/urandom >"$WORK/t$n/f$n"
	bsdtar -cf "$WORK/l$n.tar" -C "$WORK/t$n" "f$n"
done
$MKLAYOUT "$WORK/src" "v=$WORK/l1.tar:gzip,$WORK/l2.tar:zstd" ||
	die "mklayout failed"
mkfs_img --oci --dm-verity --json --cache-dir="$WORK/cache" "$WORK/src" "$WORK/dst" \
	>"$WORK/out.json" 2>"$WORK/err" || { cat "$WORK/err"; die "convert"; }
mkfs_img --oci --dm-verity "$WORK/src" "$WORK/dst" 2>"$WORK/rerun.err" ||
	{ cat "$WORK/rerun.err"; die "rerun"; }
mkfs_img --oci --dm-verity -q --cache-dir="$WORK/cache" "$WORK/src" "$WORK/dst3" ||
	die "from the cache"

# layer digest, root hash, offset: from the manifest, records, --json, lines
"$PYTHON" - "$WORK" >"$WORK/where" <<'PY'
import glob, json, os, re, sys
w = sys.argv[1]
def layers(root):
    ix = json.load(open(os.path.join(root, "index.json")))
    m = json.load(open(os.path.join(root, "blobs/sha256", ix["manifests"][0]["digest"][7:])))
    for l in m["layers"]:
        a = l.get("annotations", {})
        print("manifest", os.path.basename(root), l["digest"],
              a.get("org.erofs.dmverity.roothash"), a.get("org.erofs.dmverity.hashoffset"))
layers(os.path.join(w, "dst"))
layers(os.path.join(w, "dst3"))
for p in sorted(glob.glob(os.path.join(w, "dst/.imgfs/units/*.json"))):
    r = json.load(open(p))
    print("record", r["digest"], r.get("dmVerityRootHash"), r.get("dmVerityHashOffset"))
for l in json.load(open(os.path.join(w, "out.json")))["layers"]:
    print("json", l["digest"], l.get("dm_verity_root_hash"), l.get("dm_verity_hash_offset"))
for f in ("err", "rerun.err"):
    for line in open(os.path.join(w, f)):
        m = re.match(r"mkfs.img: (converted|reused) \S+ -> (\S+).* dm-verity root hash (\S+)$", line)
        if m:
            print("line", m.group(2), m.group(3))
PY
ok_count=0
while read -r src digest root off; do
	blob=$WORK/dst/blobs/sha256/${digest#sha256:}
	[ "$src" = manifest ] || continue
	case $root in [0-9a-f]*) ;; *) fail "layer $digest: no root hash annotation"; continue ;; esac
	if veritysetup verify "$blob" "$blob" "$root" --hash-offset="$off" >/dev/null 2>&1; then
		ok_count=$((ok_count + 1))
	else
		fail "veritysetup verify $digest with root $root offset $off"
	fi
done < <(grep '^manifest dst ' "$WORK/where" | sed 's/^manifest dst /manifest /')
[ $ok_count -eq 2 ] && ok "veritysetup verifies both layer blobs with the annotated root hash and offset"
for kind in record json line; do
	n=$(grep -c "^$kind " "$WORK/where")
	bad=0
	while read -r _ digest root rest; do
		grep -q "^manifest dst $digest $root" "$WORK/where" || bad=1
	done < <(grep "^$kind " "$WORK/where")
	[ "$n" -ge 2 ] && [ $bad -eq 0 ] && ok "$kind: the same root hashes ($n)" ||
		{ cat "$WORK/where"; fail "$kind: $n entries, mismatch $bad"; }
done
[ "$(grep '^manifest dst3 ' "$WORK/where" | cut -d' ' -f3-)" = \
	"$(grep '^manifest dst ' "$WORK/where" | cut -d' ' -f3-)" ] &&
	ok "units taken from --cache-dir carry the same annotations" ||
	fail "--cache-dir: annotations differ"

check "fsck.img --oci checks the annotations" "$FSCK_IMG" -q --oci="$WORK/dst"
cp -a "$WORK/dst" "$WORK/bad"
"$PYTHON" "$top_srcdir/tests/oci/corpus.py" edit "$WORK/bad" v annotation 0 \
	org.erofs.dmverity.roothash "$(printf '%064d' 0)" || die "corpus.py edit"
rc=0
"$FSCK_IMG" -q --oci="$WORK/bad" >"$WORK/fsck.out" 2>&1 || rc=$?
[ $rc -ne 0 ] && grep -q "org.erofs.dmverity.roothash is 0000.*recomputed from the blob is" "$WORK/fsck.out" &&
	ok "a wrong root hash annotation: fsck.img exit $rc" ||
	{ cat "$WORK/fsck.out"; fail "wrong root hash: exit $rc"; }

finish
