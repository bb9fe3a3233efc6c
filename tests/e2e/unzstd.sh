#!/bin/bash
# zstd layers, decoded by the library itself (lib/util/unzstd.c): one
# frame, several frames with an empty one and a skippable one between them,
# frames with and without checksums, from a file and from standard input,
# through mkfs.img, the mkfs.erofs drop-in and fsck --compare, give the
# image of the plain tar byte for byte; a damaged checksum, a cut stream
# and bytes after the last frame are refused, naming the cause, with no
# image left.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/containerd/common.sh"
setup
dropin_setup
require_tools zstd
FIXED=(-T 1600000000 -U 0b5e4a6c-52a3-4c61-8d4b-0c1f6a9e3d21)

# Files of text and of random bytes, over several decoder buffers.
"$PYTHON" - "$WORK/layer.tar" <<'PY' || die "make layer.tar"
import io, random, sys, tarfile
rng = random.Random(29)
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for i in range(40):
        if i % 3:
            data = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 90000)))
        else:
            data = (b"line %d of a text file\n" % i) * rng.randrange(1, 40000)
        ti = tarfile.TarInfo("d%d/f%d" % (i % 4, i))
        ti.size, ti.mtime, ti.mode = len(data), 1600000000 + i, 0o644
        t.addfile(ti, io.BytesIO(data))
PY
mkfs_img -q "${FIXED[@]}" "$WORK/layer.tar" "$WORK/plain.img" ||
	die "mkfs of the plain tar"

same() {
	local name=$1 src=$2
	rm -f "$WORK/$name.img"
	if [ "$src" = - ]; then
		mkfs_img -q "${FIXED[@]}" - "$WORK/$name.img" <"$WORK/$name.zst"
	else
		mkfs_img -q "${FIXED[@]}" "$src" "$WORK/$name.img"
	fi || { fail "$name: mkfs failed"; return; }
	check "$name: same image as from the plain tar" \
		cmp "$WORK/$name.img" "$WORK/plain.img"
}

zstd -q -c "$WORK/layer.tar" >"$WORK/one.zst"
same one "$WORK/one.zst"
same one -
zstd -q --no-check -c "$WORK/layer.tar" >"$WORK/nocheck.zst"
same nocheck "$WORK/nocheck.zst"

# frames cut at odd offsets, one of them empty, a skippable frame (magic
# 0x184D2A50, 4 bytes of content) between two
size=$(stat -c %s "$WORK/layer.tar")
{
	head -c 1000001 "$WORK/layer.tar" | zstd -q -1 -c
	printf '' | zstd -q -c
	printf '\x50\x2a\x4d\x18\x04\x00\x00\x00skip'
	tail -c +1000002 "$WORK/layer.tar" | head -c 777777 | zstd -q -19 -c
	tail -c +1777779 "$WORK/layer.tar" | zstd -q --no-check -c
} >"$WORK/multi.zst"
check "multi: the frames hold the whole tar" \
	test "$(zstd -dc "$WORK/multi.zst" | wc -c)" -eq "$size"
same multi "$WORK/multi.zst"
same multi -

# the drop-in reads zstd too
rm -f "$WORK/dropin.img"
if dropin --tar=f -T 1600000000 -U 0b5e4a6c-52a3-4c61-8d4b-0c1f6a9e3d21 \
	"$WORK/dropin.img" "$WORK/multi.zst" &&
	dropin --tar=f -T 1600000000 -U 0b5e4a6c-52a3-4c61-8d4b-0c1f6a9e3d21 \
		"$WORK/dropin-plain.img" "$WORK/layer.tar"; then
	check "drop-in: same image from zstd as from the plain tar" \
		cmp "$WORK/dropin.img" "$WORK/dropin-plain.img"
else
	fail "drop-in on zstd failed"
fi
check "fsck --compare reads the multi-frame layer" \
	"$FSCK_IMG" -q --compare="$WORK/multi.zst" "$WORK/plain.img"

# damage: refused naming the cause, nothing left behind
flip() { # FILE OFFSET
	printf "\\x$(printf %02x $((0x$(od -An -tx1 -j "$2" -N1 "$1" | tr -d ' ') ^ 0xff)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
refused() {
	local name=$1 pattern=$2 rc=0
	mkdir -p "$WORK/o.$name"
	mkfs_img "$WORK/$name.zst" "$WORK/o.$name/x.img" >"$WORK/$name.out" 2>&1 || rc=$?
	sed "s/^/    | /" "$WORK/$name.out" | head -n 3
	check "$name: refused (not a signal)" test "$rc" -gt 0 -a "$rc" -lt 128
	check "$name: message names the cause" grep -qE -- "$pattern" "$WORK/$name.out"
	check "$name: no image left" test -z "$(ls -A "$WORK/o.$name")"
	rc=0
	"$FSCK_IMG" -q --compare="$WORK/$name.zst" "$WORK/plain.img" \
		>"$WORK/$name.fsck" 2>&1 || rc=$?
	check "$name: fsck --compare fails" test "$rc" -ne 0
	check "$name: fsck --compare names the cause" grep -qE -- "$pattern" "$WORK/$name.fsck"
}
z=$(stat -c %s "$WORK/one.zst")
# the frame's content checksum is its last 4 bytes
cp "$WORK/one.zst" "$WORK/badsum.zst" && flip "$WORK/badsum.zst" $((z - 2))
refused badsum "corrupt zstd data: .*checksum"
head -c $((z - 3)) "$WORK/one.zst" >"$WORK/cut.zst"
refused cut 'truncated zstd input'
head -c $((z / 2)) "$WORK/one.zst" >"$WORK/half.zst"
refused half 'truncated zstd input'
{ cat "$WORK/one.zst"; printf 'trailing junk'; } >"$WORK/junk.zst"
refused junk "trailing garbage after the zstd data at byte $z of the input: 74 72 61"

finish
