#!/bin/bash
# gzip layers, whatever the decoder the build chose (ISA-L or zlib): one
# member, several members, a header with FEXTRA, FNAME, FCOMMENT and FHCRC,
# from a file and from standard input, through mkfs.img, the mkfs.erofs
# drop-in and fsck --compare, give the image of the plain tar byte for
# byte; a damaged CRC-32, a damaged ISIZE and a cut stream are refused,
# naming the cause, with no image left.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/containerd/common.sh"
setup
dropin_setup
require_tools gzip
EXT=gz
. "$top_srcdir/tests/helpers/decoded.sh"
decoded_layer 23

gzip -n -c "$WORK/layer.tar" >"$WORK/one.gz"
same one "$WORK/one.gz"
same one -

# members cut at odd offsets, one of them empty
size=$(stat -c %s "$WORK/layer.tar")
{
	head -c 1000001 "$WORK/layer.tar" | gzip -1 -n
	printf '' | gzip -n
	tail -c +1000002 "$WORK/layer.tar" | head -c 777777 | gzip -9 -n
	tail -c +1777779 "$WORK/layer.tar" | gzip -n
} >"$WORK/multi.gz"
check "multi: the members hold the whole tar" \
	test "$(gzip -dc "$WORK/multi.gz" | wc -c)" -eq "$size"
same multi "$WORK/multi.gz"
same multi -

# every optional header field, header CRC included
"$PYTHON" - "$WORK/layer.tar" "$WORK/hdr.gz" <<'PY' || die "make hdr.gz"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
hdr = bytes([0x1f, 0x8b, 8, 0x02 | 0x04 | 0x08 | 0x10]) + struct.pack("<I", 1600000000) + b"\x00\x03"
extra = b"AB" + struct.pack("<H", 5) + b"hello"
hdr += struct.pack("<H", len(extra)) + extra + b"layer.tar\x00" + b"a comment\x00"
hdr += struct.pack("<H", zlib.crc32(hdr) & 0xffff)
c = zlib.compressobj(6, zlib.DEFLATED, -15)
body = c.compress(data) + c.flush()
with open(sys.argv[2], "wb") as f:
    f.write(hdr + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xffffffff))
PY
check "hdr: gzip -t accepts the stream" gzip -t "$WORK/hdr.gz"
same hdr "$WORK/hdr.gz"

# the drop-in: gzip on stdin and --ungzip
rm -f "$WORK/dropin.img"
if dropin --tar=f --ungzip -T 1600000000 -U 0b5e4a6c-52a3-4c61-8d4b-0c1f6a9e3d21 \
	"$WORK/dropin.img" "$WORK/multi.gz" &&
	dropin --tar=f -T 1600000000 -U 0b5e4a6c-52a3-4c61-8d4b-0c1f6a9e3d21 \
		"$WORK/dropin-plain.img" "$WORK/layer.tar"; then
	check "drop-in --ungzip: same image as from the plain tar" \
		cmp "$WORK/dropin.img" "$WORK/dropin-plain.img"
else
	fail "drop-in --ungzip failed"
fi
check "fsck --compare reads the multi-member layer" \
	"$FSCK_IMG" -q --compare="$WORK/multi.gz" "$WORK/plain.img"

# damage: refused naming the cause, nothing left behind
gz=$(stat -c %s "$WORK/one.gz")
cp "$WORK/one.gz" "$WORK/badcrc.gz" && flip "$WORK/badcrc.gz" $((gz - 7))
refused badcrc 'incorrect data check'
cp "$WORK/one.gz" "$WORK/badsize.gz" && flip "$WORK/badsize.gz" $((gz - 2))
refused badsize 'incorrect length check'
# the middle member's trailer
cp "$WORK/multi.gz" "$WORK/midcrc.gz"
m=$(($(head -c 1000001 "$WORK/layer.tar" | gzip -1 -n | wc -c)))
flip "$WORK/midcrc.gz" $((m - 8))
refused midcrc 'incorrect data check'
head -c $((gz - 3)) "$WORK/one.gz" >"$WORK/cut.gz"
refused cut 'truncated gzip input'
head -c $((gz / 2)) "$WORK/one.gz" >"$WORK/half.gz"
refused half 'truncated gzip input'

finish
