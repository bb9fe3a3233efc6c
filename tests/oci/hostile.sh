#!/bin/bash
# SPDX-License-Identifier: MIT
# Layouts, caches and destinations as untrusted input (mkfs.img --oci,
# --flatten, --merge, fsck.img --oci): forged unit records and cache
# entries are not published, a lying blob sharing a diffID is caught,
# nothing is followed through a symlink, a FIFO never hangs, JSON has a
# size limit, a chain of indexes naming each other many times costs
# linear work, JSON fields of the wrong type are refused, messages quote
# hostile strings escaped. Nothing here is mounted.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
require_build
setup_tmp
HOSTILE="$PYTHON $top_srcdir/tests/oci/hostile.py"
TO=60 # seconds: a hang is a failure, not a stuck test

printf 'one\n' >"$WORK/f1" && printf 'two\n' >"$WORK/f2" &&
	printf 'three\n' >"$WORK/f3" || die "files"
for i in 1 2 3; do
	bsdtar -cf "$WORK/l$i.tar" -C "$WORK" "f$i" || die "bsdtar"
done
$MKLAYOUT "$WORK/src" "t=$WORK/l1.tar:gzip,$WORK/l2.tar" || die "mklayout"

# run NAME CMD...: CMD under a timeout, stdout/stderr in $WORK/NAME.*, rc
run() {
	name=$1
	shift
	# shellcheck disable=SC2086 # IMGFS_MKFS may carry options
	[ "$1" = mkfs_img ] && shift && set -- $MKFS "$@"
	rc=0
	timeout "$TO" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
}

# expect_error WHAT PATTERN: the last run failed (1 or 4, not a hang or a
# crash) with PATTERN in its messages
expect_error() {
	if { [ "$rc" -eq 1 ] || [ "$rc" -eq 4 ]; } &&
		grep -q -- "$2" "$WORK/$name.err" "$WORK/$name.out"; then
		ok "$1: exit $rc, $(grep -m1 -- "$2" "$WORK/$name.err" "$WORK/$name.out" | cut -c1-160)"
	else
		head -5 "$WORK/$name.err"
		fail "$1: exit $rc (124: hung), no '$2'"
	fi
}

# layers LAYOUT: "mediaType digest" of the first image's layers, then the
# config's diff_ids
layers() {
	"$PYTHON" - "$1" <<'PY'
import json, os, sys
root = sys.argv[1]
def load(d):
    with open(os.path.join(root, "blobs", "sha256", d.split(":")[1])) as f:
        return json.load(f)
with open(os.path.join(root, "index.json")) as f:
    m = load(json.load(f)["manifests"][0]["digest"])
for l in m["layers"]:
    print(l["mediaType"], l["digest"])
print(*load(m["config"]["digest"])["rootfs"]["diff_ids"])
PY
}

# ---- forged or poisoned state ----
mkfs_img --oci -q --cache-dir="$WORK/cache" "$WORK/src" "$WORK/d1" ||
	die "first conversion"
layers "$WORK/d1" >"$WORK/d1.layers"
# any EROFS image at all, with records that agree with it
$MKLAYOUT "$WORK/other" "o=$WORK/l3.tar" && mkfs_img --oci -q "$WORK/other" "$WORK/d0" ||
	die "other conversion"
other=$(ls "$WORK/d0/.imgfs/units/" | head -n1)
other_img=$WORK/d0/blobs/sha256/$(sed 's/.*"digest":"sha256:\([0-9a-f]*\)".*/\1/' "$WORK/d0/.imgfs/units/$other")
$HOSTILE cache-forge "$WORK/cache" "$other_img" || die "cache-forge"
run cache mkfs_img --oci --cache-dir="$WORK/cache" "$WORK/src" "$WORK/d2"
layers "$WORK/d2" >"$WORK/d2.layers" 2>/dev/null
if [ $rc -eq 0 ] && cmp -s "$WORK/d1.layers" "$WORK/d2.layers" &&
	grep -q "cache record of .* not used" "$WORK/cache.err"; then
	ok "forged cache entries: not reused ($(grep -m1 'not used' "$WORK/cache.err" | cut -c1-140))"
else
	cat "$WORK/cache.err"
	fail "forged cache entries: exit $rc, layers $(cat "$WORK/d2.layers")"
fi

# destination records that lie about media type and uncompressed digest
$HOSTILE record "$WORK/d1" 'mediaType="text/plain\n\u001b[31mforged"' \
	'uncompressedDigest="sha256:1111111111111111111111111111111111111111111111111111111111111111"' ||
	die "record"
run record mkfs_img --oci "$WORK/src" "$WORK/d1"
layers "$WORK/d1" >"$WORK/d1b.layers" 2>/dev/null
if [ $rc -eq 0 ] && cmp -s "$WORK/d1.layers" "$WORK/d1b.layers" &&
	grep -q "destination record of .* not used" "$WORK/record.err"; then
	ok "forged destination records: not reused, the layers are right"
else
	cat "$WORK/record.err"
	fail "forged destination records: exit $rc, $(cat "$WORK/d1b.layers")"
fi
if grep -q 'forged' "$WORK/record.err" && ! grep -q $'\e' "$WORK/record.err" &&
	! grep -q '^forged' "$WORK/record.err"; then
	ok "a record's hostile media type is quoted escaped"
else
	fail "a record's media type printed raw"
fi
run fsck "$FSCK_IMG" --oci="$WORK/d1" --compare="$WORK/src"
[ $rc -eq 0 ] && ok "fsck.img --oci --compare passes the result" ||
	{ cat "$WORK/fsck.out"; fail "fsck.img --oci --compare: exit $rc"; }

# reuse is verified unless the records are trusted on purpose
run trusted mkfs_img --oci --json --trust-records "$WORK/src" "$WORK/d1"
if [ $rc -eq 0 ] && grep -q '"reused_not_verified":2' <(tr -d ' \n' <"$WORK/trusted.out"); then
	ok "--trust-records: --json counts 2 reused_not_verified"
else
	cat "$WORK/trusted.out" "$WORK/trusted.err"
	fail "--trust-records: exit $rc"
fi
run trusted2 mkfs_img --oci --trust-records "$WORK/src" "$WORK/d1"
grep -q "2 reused (not verified (--trust-records))" "$WORK/trusted2.err" &&
	ok "--trust-records: the summary says not verified" ||
	{ cat "$WORK/trusted2.err"; fail "--trust-records summary"; }
run verified mkfs_img --oci "$WORK/src" "$WORK/d1"
grep -q "2 reused (each checked and compared with its source)" "$WORK/verified.err" &&
	ok "reuse without --trust-records: checked and compared" ||
	{ cat "$WORK/verified.err"; fail "verified reuse summary"; }

# two blobs with one diffID, the second (by digest) lying
cp -r "$WORK/src" "$WORK/dup" && $HOSTILE lying-dup "$WORK/dup" b "$WORK/l3.tar" ||
	die "lying-dup"
run dup mkfs_img --oci "$WORK/dup" "$WORK/ddup"
expect_error "a lying blob sharing a diffID" "not the diffID"

# ---- nothing followed, nothing that hangs ----
cp -r "$WORK/src" "$WORK/sl" || die "cp"
blob=$(layers "$WORK/sl" | awk 'NR==1 {print $2}' | cut -d: -f2)
mkdir -p "$WORK/elsewhere" && mv "$WORK/sl/blobs/sha256/$blob" "$WORK/elsewhere/" &&
	ln -s "$WORK/elsewhere/$blob" "$WORK/sl/blobs/sha256/$blob" || die "ln"
run symlink mkfs_img --oci "$WORK/sl" "$WORK/dsl"
expect_error "a source blob that is a symlink" "symbolic link"

mkdir -p "$WORK/dp/blobs" "$WORK/outside" &&
	ln -s "$WORK/outside" "$WORK/dp/blobs/sha256" || die "ln"
run plant mkfs_img --oci "$WORK/src" "$WORK/dp"
expect_error "DST/blobs/sha256 a symlink" "symbolic link"
[ -z "$(ls -A "$WORK/outside")" ] && ok "nothing written through it" ||
	fail "written through DST/blobs/sha256: $(ls "$WORK/outside")"

mkdir -p "$WORK/dq" "$WORK/outside2" &&
	ln -s "$WORK/outside2" "$WORK/dq/.imgfs" || die "ln"
run plant2 mkfs_img --oci "$WORK/src" "$WORK/dq"
expect_error "DST/.imgfs a symlink" "symbolic link"
[ -z "$(ls -A "$WORK/outside2")" ] && ok "no record written through it" ||
	fail "written through DST/.imgfs: $(ls -R "$WORK/outside2")"

# a wrong file already under a final blob name is replaced
mkfs_img --oci -q "$WORK/src" "$WORK/dw" && rm -rf "$WORK/dw/.imgfs" ||
	die "conversion"
blob=$(layers "$WORK/dw" | awk 'NR==1 {print $2}' | cut -d: -f2)
rm -f "$WORK/dw/blobs/sha256/$blob" && echo planted >"$WORK/dw/blobs/sha256/$blob"
run planted mkfs_img --oci "$WORK/src" "$WORK/dw"
got=$(sha256sum <"$WORK/dw/blobs/sha256/$blob" | cut -d' ' -f1)
[ $rc -eq 0 ] && [ "$got" = "$blob" ] &&
	ok "a planted file under a final blob name: replaced" ||
	fail "planted blob kept: exit $rc, content $got"

# FIFOs: index.json, oci-layout, a layer blob, a unit record
for what in index.json oci-layout "blobs/sha256/$blob"; do
	rm -rf "$WORK/fifo" && cp -r "$WORK/src" "$WORK/fifo" || die "cp"
	[ "$what" = "blobs/sha256/$blob" ] &&
		what=blobs/sha256/$(layers "$WORK/fifo" | awk 'NR==1 {print $2}' | cut -d: -f2)
	rm -f "$WORK/fifo/$what" && mkfifo "$WORK/fifo/$what" || die "mkfifo"
	run fifo mkfs_img --oci "$WORK/fifo" "$WORK/dfifo"
	expect_error "mkfs.img --oci, $what a FIFO" "not a regular file"
	# --flatten does not read oci-layout
	[ "$what" = oci-layout ] && continue
	run fifo mkfs_img --oci --flatten "$WORK/fifo" "$WORK/fifo.img"
	expect_error "--flatten, $what a FIFO" "not a regular file"
	rm -rf "$WORK/dfifo"
done
rm -rf "$WORK/fifo" && cp -r "$WORK/d1" "$WORK/fifo" || die "cp"
rm -f "$WORK/fifo/index.json" && mkfifo "$WORK/fifo/index.json" || die "mkfifo"
run fifo "$FSCK_IMG" --oci="$WORK/fifo"
expect_error "fsck.img --oci, index.json a FIFO" "not a regular file"
# the destination's own index.json a FIFO: refused as well
run fifoidx mkfs_img --oci "$WORK/src" "$WORK/fifo"
expect_error "mkfs.img --oci, destination index.json a FIFO" "not a regular file"
rm -f "$WORK/fifo/index.json"
rec=$(ls "$WORK/fifo/.imgfs/units" | head -n1)
rm -f "$WORK/fifo/.imgfs/units/$rec" && mkfifo "$WORK/fifo/.imgfs/units/$rec"
run fiforec mkfs_img --oci "$WORK/src" "$WORK/fifo"
[ $rc -eq 0 ] && [ -f "$WORK/fifo/.imgfs/units/$rec" ] &&
	ok "a unit record that is a FIFO: not used, written again" ||
	{ cat "$WORK/fiforec.err"; fail "FIFO record: exit $rc"; }
mkfs_img -q --dm-verity "$WORK/l1.tar" "$WORK/v.img" || die "dm-verity image"
rm -f "$WORK/v.img.dmverity" && mkfifo "$WORK/v.img.dmverity"
run vfifo "$FSCK_IMG" "$WORK/v.img"
[ $rc -ne 124 ] && grep -q "not a regular file" "$WORK/vfifo.err" "$WORK/vfifo.out" &&
	ok "fsck.img, IMAGE.dmverity a FIFO: exit $rc, no hang" ||
	fail "IMAGE.dmverity FIFO: exit $rc"

# JSON documents have a size limit
rm -rf "$WORK/big" && cp -r "$WORK/src" "$WORK/big" || die "cp"
"$PYTHON" -c 'import sys; d=open(sys.argv[1]).read(); open(sys.argv[1], "w").write(d + " " * (9 << 20))' \
	"$WORK/big/index.json" || die "big index"
run big mkfs_img --oci "$WORK/big" "$WORK/dbig"
expect_error "a 9 MiB index.json" "a JSON document may have"

# ---- exponential work: 8 x 8 levels of indexes ----
rm -rf "$WORK/nest" && cp -r "$WORK/src" "$WORK/nest" &&
	$HOSTILE nested "$WORK/nest" 8 8 || die "nested"
run nest mkfs_img --oci -q "$WORK/nest" "$WORK/dnest"
[ $rc -eq 0 ] && ok "--oci of an index naming the next 8 times, 8 deep" ||
	{ head -3 "$WORK/nest.err"; fail "nested indexes, --oci: exit $rc"; }
run nestf mkfs_img --oci -q --flatten "$WORK/nest" "$WORK/nest.img"
[ $rc -eq 0 ] && ok "--flatten of the same" ||
	{ head -3 "$WORK/nestf.err"; fail "nested indexes, --flatten: exit $rc"; }

# ---- JSON fields of the wrong type ----
for change in 'manifest layers={}' 'config rootfs.diff_ids="x"' 'config rootfs=[]'; do
	rm -rf "$WORK/ty" "$WORK/dty" && cp -r "$WORK/src" "$WORK/ty" &&
		$HOSTILE "${change%% *}" "$WORK/ty" "${change#* }" || die "$change"
	for mode in --flatten --oci; do
		out=$WORK/ty.img
		[ $mode = --oci ] && out=$WORK/dty
		run ty mkfs_img --oci $mode "$WORK/ty" "$out"
		expect_error "$mode, $change" "manifest sha256:"
	done
done
# --merge of a converted layout whose manifest has layers of a wrong type
rm -rf "$WORK/tym" && cp -r "$WORK/d1" "$WORK/tym" &&
	$HOSTILE manifest "$WORK/tym" 'layers={}' || die "tym"
run tym mkfs_img --oci --merge "$WORK/tym" "$WORK/tym.img"
expect_error "--merge, manifest layers={}" "manifest sha256:"

# ---- numbers out of range ----
run shard mkfs_img --oci --shard=0/18446744073709551616 "$WORK/src" "$WORK/dsh"
[ $rc -eq 2 ] && grep -q "invalid value for --shard" "$WORK/shard.err" &&
	ok "--shard=0/2^64: refused" || fail "--shard=0/2^64: exit $rc"
run shard2 mkfs_img --oci --shard=18446744073709551616/3 "$WORK/src" "$WORK/dsh"
[ $rc -eq 2 ] && ok "--shard=2^64/3: refused" || fail "--shard=2^64/3: exit $rc"
run maxd "$FSCK_IMG" --oci="$WORK/d1" --max-differences=4294967296
[ $rc -eq 16 ] && ok "fsck.img --oci --max-differences=2^32: refused (usage error)" ||
	fail "--max-differences=2^32: exit $rc"

# ---- hostile strings in messages: escaped ----
rm -rf "$WORK/esc" && cp -r "$WORK/src" "$WORK/esc" &&
	$HOSTILE layer-mt "$WORK/esc" $'x\n\e]0;owned\a' || die "layer-mt"
run esc mkfs_img --oci --flatten "$WORK/esc" "$WORK/esc.img"
if [ $rc -eq 1 ] && [ "$(wc -l <"$WORK/esc.err")" -eq 1 ] &&
	! grep -q $'\e' "$WORK/esc.err" && grep -q 'x\\x0a\\x1b' "$WORK/esc.err"; then
	ok "--flatten quotes a hostile media type escaped: $(cat "$WORK/esc.err" | cut -c1-150)"
else
	cat -v "$WORK/esc.err"
	fail "--flatten printed a hostile media type raw"
fi
rm -rf "$WORK/esc" && cp -r "$WORK/src" "$WORK/esc" &&
	$HOSTILE manifest "$WORK/esc" 'config.digest="sha256:\n\u001b[2J"' || die "esc"
run esc mkfs_img --oci "$WORK/esc" "$WORK/desc"
if [ $rc -eq 1 ] && [ "$(wc -l <"$WORK/esc.err")" -eq 1 ] && ! grep -q $'\e' "$WORK/esc.err"; then
	ok "--oci quotes a hostile digest escaped: $(cut -c1-150 "$WORK/esc.err")"
else
	cat -v "$WORK/esc.err"
	fail "--oci printed a hostile digest raw"
fi

# ---- --flatten of a huge sparse file hidden by the layer above ----
"$PYTHON" - "$WORK/sparse.tar" "$WORK/wh.tar" <<'PY' || die "sparse tars"
import io, sys, tarfile
size, data = 1 << 62, b"x" * 4096
body = ("1\n0\n%d\n" % len(data)).encode()
body += b"\0" * (-len(body) % 512) + data
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as tf:
    ti = tarfile.TarInfo("GNUSparseFile.0/s")
    ti.size, ti.mode = len(body), 0o644
    ti.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                      "GNU.sparse.name": "s", "GNU.sparse.realsize": str(size)}
    tf.addfile(ti, io.BytesIO(body))
    ti = tarfile.TarInfo("keep")
    ti.size = 3
    tf.addfile(ti, io.BytesIO(b"hi\n"))
with tarfile.open(sys.argv[2], "w", format=tarfile.PAX_FORMAT) as tf:
    tf.addfile(tarfile.TarInfo(".wh.s"))
PY
$MKLAYOUT "$WORK/srcsp" "sp=$WORK/sparse.tar:gzip,$WORK/wh.tar" || die "sparse layout"
run sparse mkfs_img --oci --flatten "$WORK/srcsp" "$WORK/sp.img"
if [ $rc -eq 0 ] && "$DUMP_IMG" --path=/keep "$WORK/sp.img" >/dev/null 2>&1 &&
	! "$DUMP_IMG" --path=/s "$WORK/sp.img" >/dev/null 2>&1; then
	ok "--flatten over a hidden 2^62-byte sparse file: done, /s hidden"
else
	cat "$WORK/sparse.err"
	fail "--flatten over a hidden sparse file: exit $rc (124: ran for ever)"
fi

# ---- without O_TMPFILE: leftovers tell a dead writer from a live one ----
SHIM=$top_builddir/tests/helpers/.libs/no_tmpfile.so
[ -f "$SHIM" ] || die "helper not built: $SHIM (run make check)"
head -c $((48 << 20)) /dev/urandom >"$WORK/big.bin" &&
	bsdtar -cf "$WORK/lbig.tar" -C "$WORK" big.bin &&
	$MKLAYOUT "$WORK/srcbig" "big=$WORK/lbig.tar" || die "big layout"
# shellcheck disable=SC2086 # IMGFS_MKFS may carry options
env LD_PRELOAD="$SHIM" $MKFS --oci -q --jobs=1 "$WORK/srcbig" "$WORK/dk" &
pid=$!
left=
for _ in $(seq 2000); do
	left=$(find "$WORK/dk/blobs/sha256" -name '.imgfs-*' 2>/dev/null | head -n1)
	[ -n "$left" ] && break
	sleep 0.01
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
host=$(hostname | tr -c 'A-Za-z0-9.\n-' '_')
if [ -n "$left" ] && [ -e "$left" ] &&
	basename "$left" | grep -qx "\.imgfs-[a-z0-9]\{6\}-$pid@$host"; then
	ok "a killed writer's temporary file names it: $(basename "$left")"
else
	fail "killed writer: leftover '$left' (pid $pid, host $host)"
fi
sleep 1000 &
live=$!
touch "$WORK/dk/blobs/sha256/.imgfs-abcdef-$live@$host" \
	"$WORK/dk/blobs/sha256/.imgfs-Xy12Ab"
run leftfsck "$FSCK_IMG" --oci="$WORK/dk"
n=$(grep -c 'temporary file of' "$WORK/leftfsck.out" "$WORK/leftfsck.err" | awk -F: '{s += $2} END {print s}')
if [ "$n" -eq 3 ] && grep -q "a writer that died (pid $pid on $host)" "$WORK/leftfsck.out" &&
	grep -q "a running writer (pid $live on $host)" "$WORK/leftfsck.out"; then
	ok "fsck.img --oci reports the 3 temporary files, dead and live"
else
	cat "$WORK/leftfsck.out" "$WORK/leftfsck.err"
	fail "fsck.img --oci: $n temporary files reported"
fi
# shellcheck disable=SC2086
run rerun env LD_PRELOAD="$SHIM" $MKFS --oci --jobs=1 "$WORK/srcbig" "$WORK/dk"
if [ $rc -eq 0 ] && [ ! -e "$left" ] &&
	grep -q "removed the temporary file of a writer that died" "$WORK/rerun.err" &&
	[ -e "$WORK/dk/blobs/sha256/.imgfs-abcdef-$live@$host" ] &&
	[ -e "$WORK/dk/blobs/sha256/.imgfs-Xy12Ab" ]; then
	ok "the next run removes the dead writer's file, keeps the others"
else
	cat "$WORK/rerun.err"
	fail "rerun: exit $rc, leftovers $(find "$WORK/dk/blobs/sha256" -name ".imgfs-*")"
fi
kill $live
wait $live 2>/dev/null

finish
