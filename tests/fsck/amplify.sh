#!/bin/bash
# SPDX-License-Identifier: MIT
# Data amplification and the --extract limit. A valid image holds a 256 GiB
# sparse file with 1 MiB of data (1 MiB chunks) and a small file; byte
# surgery points every chunk of the sparse file at that one MiB (a "dedup
# bomb": 256 GiB of data from 1 MiB of image). fsck.img must report the
# logical/physical amplification, warn above the documented ratio (65536)
# naming the file, finish fast with and without --digest (no digest for
# that file), and --extract-limit must stop the extraction at the limit
# with an error naming the file. The patched image only goes to fsck.img.
. "$top_srcdir/tests/lib.sh"

require_tools "$PYTHON" du /usr/bin/time
[ -x "$FSCK_IMG" ] || die "fsck.img not built: $FSCK_IMG"
[ -x "${MKFS%% *}" ] || skip "mkfs.img not built"
[ -x "$DUMP_IMG" ] || die "dump.img not built: $DUMP_IMG"
setup_tmp

"$PYTHON" - "$WORK/layer.tar" <<'PY' || die "tar failed"
import io, random, sys, tarfile
rnd = random.Random(7)
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as tf:
    # pax sparse 1.0: the map, then the data
    size, data = 256 << 30, bytes(rnd.getrandbits(8) for _ in range(1 << 20))
    body = ("2\n0\n%d\n%d\n0\n" % (len(data), size)).encode()
    body += b"\0" * (-len(body) % 512) + data
    ti = tarfile.TarInfo("GNUSparseFile.0/bomb")
    ti.size, ti.mtime, ti.mode = len(body), 1500000000, 0o644
    ti.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                      "GNU.sparse.name": "bomb",
                      "GNU.sparse.realsize": str(size)}
    tf.addfile(ti, io.BytesIO(body))
    ti = tarfile.TarInfo("plain")
    ti.size, ti.mtime = 5, 1500000000
    tf.addfile(ti, io.BytesIO(b"hello"))
PY
good=$WORK/good.img
bomb=$WORK/bomb.img
mkfs_img -q "$WORK/layer.tar" "$good" || die "mkfs failed"

# every chunk index of /bomb set to its first (the block holding the data)
cp "$good" "$bomb"
"$PYTHON" - "$DUMP_IMG" "$bomb" <<'PY' || die "surgery failed"
import json, struct, subprocess, sys
dump, img = sys.argv[1], sys.argv[2]
ino = json.loads(subprocess.check_output(
    [dump, "--path=/bomb", "--json", img]))["inode"]
assert ino["layout_name"] == "chunk_based", ino["layout_name"]
at = (ino["pos"] + ino["inode_size"] + ino["xattr_size"] + 3) & ~3
n = -(-ino["size"] // ino["chunk_size"])
assert n >= 65536 * 4, n
with open(img, "r+b") as f:
    f.seek(at)
    first = f.read(4)
    assert struct.unpack("<I", first)[0] == ino["extents"][0]["block"]
    f.seek(at)
    f.write(first * n)
PY

# stat_of JSON KEY: a number from fsck.img --json's stats
stat_of() {
	"$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["stats"][sys.argv[2]])' "$1" "$2"
}
# run_timed LOG CMD...: run CMD, output to LOG, the CPU time it used in
# ms in $MS (user + system: what reading 256 GiB would cost, and not the
# wall-clock time a loaded machine stretches)
run_timed() {
	local log=$1 rc
	shift
	/usr/bin/time -f '%U %S' -o "$WORK/time.out" "$@" >"$log" 2>&1
	rc=$?
	# the last line: a failed command's status comes first
	MS=$(tail -n 1 "$WORK/time.out" | awk '{ printf "%d", ($1 + $2) * 1000 }')
	return $rc
}

# the valid image: amplification about 1, no warning
"$FSCK_IMG" --json "$good" >"$WORK/good.json"
check "valid image: fsck.img accepts it" test $? -eq 0
check "valid image: no warning" test "$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["warnings"])' "$WORK/good.json")" = 0
check "valid image: logical bytes = data" test "$(stat_of "$WORK/good.json" logical_bytes)" -eq $(((1 << 20) + 5))
check "valid image: physical bytes (1 MiB + one block)" test "$(stat_of "$WORK/good.json" physical_bytes)" -eq $(((1 << 20) + 4096))
"$FSCK_IMG" "$good" >"$WORK/good.txt" 2>&1
check "valid image: amplification reported" grep -q 'amplification 1.0 (warning above 65536)' "$WORK/good.txt"

# the bomb: warnings, fast
run_timed "$WORK/bomb.txt" "$FSCK_IMG" "$bomb"
check "bomb: fsck.img exit 0 (warnings only)" test $? -eq 0
check "bomb: fsck.img took $MS ms of CPU (< 10 s)" test "$MS" -lt 10000
check "bomb: warning names /bomb" grep -q '^warning: data: /bomb (nid [0-9]*): data amplified: 274877906944 bytes of data come from 1048576 bytes' "$WORK/bomb.txt"
check "bomb: image-wide warning" grep -q '^warning: data: file data amplified: 274877906949 bytes of file data come from 1052672 bytes' "$WORK/bomb.txt"
check "bomb: amplification figure" grep -q 'amplification 261124.0' "$WORK/bomb.txt"
"$FSCK_IMG" --json "$bomb" >"$WORK/bomb.json"
check "bomb: json logical bytes" test "$(stat_of "$WORK/bomb.json" logical_bytes)" -eq $(((256 << 30) + 5))

run_timed "$WORK/digest.txt" "$FSCK_IMG" --digest "$bomb"
check "bomb --digest: exit 0" test $? -eq 0
check "bomb --digest: took $MS ms of CPU (< 10 s)" test "$MS" -lt 10000
check "bomb --digest: no digest for /bomb, said so" \
	grep -q '^warning: data: /bomb .*its digest is not computed' "$WORK/digest.txt"
check "bomb --digest: /plain still hashed" \
	grep -qx "$(printf hello | sha256sum | cut -d' ' -f1)  ./plain" "$WORK/digest.txt"
check "bomb --digest: no digest line for /bomb" \
	test "$(grep -c '  \./bomb$' "$WORK/digest.txt")" = 0

# --extract-limit: the error names the file, nothing beyond the limit
x=$WORK/x
run_timed "$WORK/extract.txt" "$FSCK_IMG" -q --extract="$x" --extract-limit=10M "$bomb"
check "bomb --extract-limit=10M: exit 8" test $? -eq 8
check "bomb --extract-limit=10M: took $MS ms of CPU (< 10 s)" test "$MS" -lt 10000
check "bomb --extract-limit=10M: error names /bomb" \
	grep -q '^fsck.img: extract /bomb: file data beyond --extract-limit=10485760 bytes' "$WORK/extract.txt"
check "bomb --extract-limit=10M: at most 10 MiB written ($(du -sb "$x" | cut -f1) bytes)" \
	test "$(du -sb "$x" | cut -f1)" -le $(((10 << 20) + 65536))
check "bomb --extract-limit=10M: /bomb not grown past it" \
	test "$(stat -c %s "$x/bomb")" -le $((10 << 20))

# the limit counts file data of all files; holes are free
rm -rf "$x"
"$FSCK_IMG" -q --extract="$x" --extract-limit=1M "$good" 2>"$WORK/err1"
check "valid --extract-limit=1M: exit 8 (1 MiB + 5 bytes of data)" test $? -eq 8
check "valid --extract-limit=1M: error names /plain" \
	grep -q '^fsck.img: extract /plain: file data beyond --extract-limit=1048576 bytes (1048576 written)' "$WORK/err1"
for lim in 2M 1G 1T 1048581; do
	rm -rf "$x"
	if "$FSCK_IMG" -q --extract="$x" --extract-limit=$lim "$good"; then
		check "valid --extract-limit=$lim: content" \
			test "$(cat "$x/plain")" = hello -a \
			"$(stat -c %s "$x/bomb")" = $((256 << 30)) -a \
			"$(head -c 1048576 "$x/bomb" | sha256sum)" = \
			"$("$DUMP_IMG" --cat=/bomb "$good" | head -c 1048576 | sha256sum)"
	else
		fail "valid --extract-limit=$lim refused"
	fi
done

# usage errors
for bad in 0 -1 1X 1KB 10.5M ''; do
	"$FSCK_IMG" --extract="$WORK/y" --extract-limit="$bad" "$good" 2>"$WORK/err" >/dev/null
	rc=$?
	check "--extract-limit='$bad': usage error (16) with the accepted form" \
		test $rc -eq 16 -a -n "$(grep "invalid value for --extract-limit: '$bad' (bytes above 0, with an optional K, M, G or T suffix)" "$WORK/err")"
done
"$FSCK_IMG" --extract-limit=1M "$good" 2>"$WORK/err" >/dev/null
check "--extract-limit without --extract: usage error" test $? -eq 16

finish
