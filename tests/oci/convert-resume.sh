#!/bin/bash
# SPDX-License-Identifier: MIT
# mkfs.img --oci is content-addressed and resumable: two runs give the
# same bytes; a corrupted source blob is an error naming it and nothing
# derived from it is published; a run killed with SIGKILL at any moment,
# then run again, gives the bytes of an uninterrupted run; units already
# in the destination or in --cache-dir are reused (not converted again),
# across images and runs; shards plus --assemble give the same layout.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
require_build
setup_tmp
require_tools zstd

# four layers, big enough for a run to be killed in the middle
"$PYTHON" - "$WORK" <<'PY' || die "could not write the layers"
import io, os, random, sys, tarfile
out = sys.argv[1]
rnd = random.Random(14)
for n in range(1, 5):
    with tarfile.open(os.path.join(out, "l%d.tar" % n), "w", format=tarfile.PAX_FORMAT) as t:
        for i in range(400):
            data = rnd.randbytes(rnd.randrange(0, 20000))
            ti = tarfile.TarInfo("d%d/f%03d" % (n, i))
            ti.size, ti.mtime = len(data), 1700000000 + i
            t.addfile(ti, io.BytesIO(data))
        data = rnd.randbytes(8 << 20)
        ti = tarfile.TarInfo("d%d/big" % n)
        ti.size, ti.mtime = len(data), 1700000000
        t.addfile(ti, io.BytesIO(data))
        if n > 1:
            ti = tarfile.TarInfo("d%d/.wh.f000" % (n - 1))
            t.addfile(ti)
PY
W=$WORK
$MKLAYOUT "$W/src" "a=$W/l1.tar:gzip,$W/l2.tar:zstd" \
	"b=$W/l1.tar:gzip,$W/l2.tar:zstd,$W/l3.tar:gzip,$W/l4.tar" ||
	die "mklayout failed"

# tree_same A B: byte-identical layouts, nothing else left in either
tree_same() {
	diff -r "$1" "$2" >"$WORK/diff.out" 2>&1
}

# 1. two runs, one with --jobs=1 and one with --jobs=3: the same bytes
check "first run" mkfs_img --oci -q --jobs=1 "$W/src" "$W/one"
check "second run" mkfs_img --oci -q --jobs=3 "$W/src" "$W/two"
if tree_same "$W/one" "$W/two"; then
	ok "two runs (1 and 3 jobs) give byte-identical layouts"
else
	cat "$WORK/diff.out"
	fail "two runs differ"
fi

# 2. shards, then --assemble: the same bytes
for i in 0 1 2; do
	check "shard $i/3" mkfs_img --oci -q --shard=$i/3 "$W/src" "$W/sh"
done
[ -e "$W/sh/index.json" ] && fail "a shard wrote index.json"
check "assemble" mkfs_img --oci -q --assemble "$W/src" "$W/sh"
tree_same "$W/one" "$W/sh" && ok "3 shards + --assemble = one run" ||
	{ cat "$WORK/diff.out"; fail "shards differ from one run"; }
mkfs_img --oci -q --assemble "$W/src" "$W/empty" 2>"$W/err" &&
	fail "--assemble without units succeeded"
n=0
for d in $(mkfs_img --oci --list-units "$W/src" | cut -d' ' -f1); do
	grep -q "$d" "$W/err" && n=$((n + 1))
done
grep -q "^mkfs.img: 4 units are not converted yet" "$W/err" && [ $n -eq 4 ] &&
	ok "--assemble names each of the 4 missing units" ||
	{ cat "$W/err"; fail "--assemble's missing units"; }

# 3. a corrupted source blob (one byte flipped in a copy of the layout)
cp -a "$W/src" "$W/bad"
L3=$("$PYTHON" -c 'import json,sys
ix = json.load(open(sys.argv[1] + "/index.json"))["manifests"]
m = json.load(open(sys.argv[1] + "/blobs/sha256/" + ix[1]["digest"][7:]))
print(m["layers"][2]["digest"])' "$W/bad")
"$PYTHON" -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0x40; open(p, "wb").write(b)' "$W/bad/blobs/sha256/${L3#sha256:}"
mkfs_img --oci -q "$W/bad" "$W/badout" 2>"$W/err" &&
	fail "a corrupted blob was converted"
if grep -q "blob $L3" "$W/err" && grep -q corrupted "$W/err"; then
	ok "the corrupted blob is named: $(cat "$W/err")"
else
	cat "$W/err"
	fail "the error does not name the corrupted blob"
fi
[ -e "$W/badout/index.json" ] && fail "index.json written after a failure"
L3DIFF=$(mkfs_img --oci --list-units "$W/src" | awk -v b="$L3" '$2 == b { print $1 }')
ls "$W/badout/.imgfs/units/" 2>/dev/null | grep -q "^${L3DIFF#sha256:}" &&
	fail "a unit record was written for the corrupted layer"
# everything published is what its name says
bad=0
for f in "$W/badout"/blobs/sha256/*; do
	[ -e "$f" ] || continue
	[ "$(sha256sum <"$f" | cut -d' ' -f1)" = "$(basename "$f")" ] ||
		{ bad=1; log "wrong content: $f"; }
done
[ $bad = 0 ] && ok "every blob published holds its digest's content" ||
	fail "a blob under a wrong name"

# 4. killed with SIGKILL at several moments, then run to the end
for t in 0.1 0.3 0.6 1.0 1.5; do
	mkfs_img --oci -q --jobs=2 "$W/src" "$W/killed" &
	pid=$!
	sleep $t
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
done
check "the run after the kills" mkfs_img --oci -q "$W/src" "$W/killed"
tree_same "$W/one" "$W/killed" &&
	ok "killed runs + one more = an uninterrupted run, byte for byte" ||
	{ cat "$WORK/diff.out"; fail "the resumed layout differs"; }

# 5. reuse: image a first, then both: only b's own layers are converted
summary() {
	"$PYTHON" -c 'import json,sys; s = json.load(open(sys.argv[1])); print(s["units"], s["converted"], s["reused"])' "$1"
}
mkfs_img --oci --json --ref=a --cache-dir="$W/cache" "$W/src" "$W/re" >"$W/s1.json" ||
	fail "convert a"
mkfs_img --oci --json --cache-dir="$W/cache" "$W/src" "$W/re" >"$W/s2.json" ||
	fail "convert a and b"
[ "$(summary "$W/s1.json")" = "2 2 0" ] && [ "$(summary "$W/s2.json")" = "4 2 2" ] &&
	ok "the base layers shared with a are reused for b (units converted reused: $(summary "$W/s2.json"))" ||
	fail "reuse: $(summary "$W/s1.json") then $(summary "$W/s2.json")"
tree_same "$W/one" "$W/re" && ok "reusing units gives the same layout" ||
	{ cat "$WORK/diff.out"; fail "layout with reuse differs"; }
# a fresh destination takes everything from the cache
mkfs_img --oci --json --cache-dir="$W/cache" "$W/src" "$W/fromcache" >"$W/s3.json" ||
	fail "convert from the cache"
[ "$(summary "$W/s3.json")" = "4 0 4" ] &&
	ok "a new destination takes every unit from --cache-dir" ||
	fail "from the cache: $(summary "$W/s3.json")"
tree_same "$W/one" "$W/fromcache" && ok "the same layout from the cache" ||
	{ cat "$WORK/diff.out"; fail "layout from the cache differs"; }
n=0
for d in $(mkfs_img --oci --list-units "$W/src" | cut -d' ' -f1); do
	h=${d#sha256:}
	f=$W/cache/sha256/${h:0:2}/$h.erofs
	[ -f "$f" ] && "$FSCK_IMG" -q "$f" && n=$((n + 1))
done
[ $n -eq 4 ] && ok "--cache-dir holds DIR/sha256/XX/DIFFID.erofs for each unit, each checks" ||
	fail "cache images: $n of 4"
# other options: a new options digest, nothing reused; with --dm-verity
# the cache gets containerd's sidecar
mkfs_img --oci --json --dm-verity --ref=a --cache-dir="$W/cache" "$W/src" "$W/re" >"$W/s4.json" ||
	fail "convert with --dm-verity"
[ "$(summary "$W/s4.json")" = "2 2 0" ] &&
	ok "--dm-verity changes the options digest: converted again" ||
	fail "--dm-verity reuse: $(summary "$W/s4.json")"
h=$(mkfs_img --oci --list-units --ref=a "$W/src" | head -n 1 | cut -d' ' -f1)
h=${h#sha256:}
"$PYTHON" -c 'import json,sys; j = json.load(open(sys.argv[1])); assert len(j["roothash"]) == 64 and j["hashoffset"] > 0' \
	"$W/cache/sha256/${h:0:2}/$h.erofs.dmverity" &&
	ok "the .dmverity sidecar beside the cache image" ||
	fail "no valid .dmverity sidecar in the cache"

finish
