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
EXT=zst
. "$top_srcdir/tests/helpers/decoded.sh"
decoded_layer 29

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
