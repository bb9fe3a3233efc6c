#!/bin/bash
# Sparse files from GNU tar (--sparse, gnu and pax formats): a 5 GiB file
# holding a few bytes must give a small image (< 10 MiB) and read back as
# zeros with the data at the right offsets, including across 4 GiB.
# Then pax sparse (GNU 1.0) tars written here byte by byte: each file's
# chunk size is chosen from its map, so block-aligned holes stay holes and
# one data byte does not allocate a huge chunk (image sizes, apparent and
# allocated, are bounded); sparse files larger than block size x 2^31 are
# refused naming the entry; fsck.img is fast on huge sparse files.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_tools tar truncate dd

s=$WORK/src
mkdir -p "$s"
f=$s/huge
truncate -s 5G "$f"
# put_at OFFSET STRING
put_at() { printf '%s' "$2" | dd of="$f" bs=1 seek="$1" conv=notrunc status=none; }
put_at 0 head
put_at $((1024 * 1024 * 1024 + 1)) one-gib-plus-one
put_at $((4 * 1024 * 1024 * 1024 - 3)) across-4g
put_at $((5 * 1024 * 1024 * 1024 - 4)) tail
head -c 100000 /dev/urandom | dd of="$f" bs=1M seek=3000 conv=notrunc status=none
truncate -s 1M "$s/all-hole"
truncate -s 10M "$s/hole-at-end"
printf x | dd of="$s/hole-at-end" conv=notrunc status=none
touch -d @1500000000 "$s"/*

tar -C "$s" -S --format=gnu -cf "$WORK/sparse-gnu.tar" .
tar -C "$s" -S --format=posix -cf "$WORK/sparse-pax.tar" .

for t in sparse-gnu sparse-pax; do
	rm -f "$WORK/$t.img"
	if ! mkfs_img "$WORK/$t.tar" "$WORK/$t.img"; then
		fail "mkfs $t"
		continue
	fi
	size=$(stat -c %s "$WORK/$t.img")
	if [ "$size" -lt $((10 * 1024 * 1024)) ]; then
		ok "$t: image is $size bytes"
	else
		fail "$t: image is $size bytes, expected < 10 MiB"
	fi
	verify_image "$WORK/$t.img" "$WORK/$t.tar"
done

# Spot reads at the data offsets, independent of the comparer.
mount_file "$WORK/sparse-gnu.img" "$WORK/m"
m=$WORK/m/huge
# read_at OFFSET LEN
read_at() { dd if="$m" bs=1 skip="$1" count="$2" status=none; }
check "size 5 GiB" test "$(stat -c %s "$m")" -eq $((5 * 1024 * 1024 * 1024))
check "data at 0" test "$(read_at 0 4)" = head
check "data at 1 GiB + 1" test "$(read_at $((1024 * 1024 * 1024 + 1)) 16)" = one-gib-plus-one
check "data across 4 GiB" test "$(read_at $((4 * 1024 * 1024 * 1024 - 3)) 9)" = across-4g
check "data at the end" test "$(read_at $((5 * 1024 * 1024 * 1024 - 4)) 4)" = tail
check "zeros before 1 GiB" test "$(read_at $((1024 * 1024 * 1024 - 8)) 9 | od -An -tx1 | tr -d ' ')" = 000000000000000000
unmount "$WORK/m"

# ---- sparse maps written directly (pax, GNU sparse 1.0) ----
cat >"$WORK/mksparse.py" <<'EOF2'
import io, sys, tarfile

def add(tf, name, size, exts):
    """exts: (offset, bytes) pairs in order; the map ends at size."""
    if not exts or exts[-1][0] + len(exts[-1][1]) < size:
        exts = exts + [(size, b"")]
    m = "%d\n" % len(exts) + "".join("%d\n%d\n" % (o, len(d))
                                       for o, d in exts)
    body = m.encode()
    body += b"\0" * (-len(body) % 512) + b"".join(d for _, d in exts)
    ti = tarfile.TarInfo("GNUSparseFile.0/" + name)
    ti.size, ti.mtime, ti.mode = len(body), 1500000000, 0o644
    ti.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                      "GNU.sparse.name": name,
                      "GNU.sparse.realsize": str(size)}
    tf.addfile(ti, io.BytesIO(body))

kind, out = sys.argv[1], sys.argv[2]
KiB, MiB, GiB, TiB = 1 << 10, 1 << 20, 1 << 30, 1 << 40
with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tf:
    if kind == "small":
        # a byte every 512 KiB of 2 GiB: 4 KiB chunks, every hole stays
        # one (a chunk size from the file size alone would allocate
        # 32 KiB or more per byte)
        add(tf, "tiny-holes", 2 * GiB,
            [(i * 512 * KiB + 3, bytes([i & 127 | 1])) for i in range(4096)])
        add(tf, "byte-holes", 100000,
            [(i * 10, b"ab") for i in range(10000)])
        # many small extents spread over 256 MiB
        add(tf, "extents", 256 * MiB,
            [(i * 268435 + 7, b"%06d" % i) for i in range(1000)])
        add(tf, "one-byte", 1 * GiB, [(700 * MiB + 5, b"Z")])
    elif kind == "huge":
        # one data byte in the largest sparse file allowed (4 KiB blocks)
        add(tf, "max", 8 * TiB, [(3 * TiB + 12345, b"Q")])
        add(tf, "hole", 8 * TiB, [])
    elif kind == "over":
        add(tf, "ok", 1 * MiB, [(0, b"x")])
        add(tf, "too-big", 8 * TiB + 4096, [(0, b"x")])
    elif kind == "2to63":
        add(tf, "huge63", 1 << 63, [(0, b"x")])
EOF2
mksparse() { "$PYTHON" "$WORK/mksparse.py" "$@"; }
# alloc FILE: bytes allocated on disk
alloc() { echo $(($(stat -c %b "$1") * $(stat -c %B "$1"))); }
# size_le WHAT BYTES MAX: a size check with both figures in the output
size_le() { check "$1: $2 <= $3 bytes" test "$2" -le "$3"; }

mksparse small "$WORK/small.tar" || die "cannot write small.tar"
if mkfs_img "$WORK/small.tar" "$WORK/small.img"; then
	i=$WORK/small.img
	# one block per data byte of tiny-holes and extents (4096 + 1000)
	# and 2 MiB + 256 KiB of chunk index; the rest is under 1 MiB
	size_le "small: apparent size" "$(stat -c %s "$i")" $((24 << 20))
	size_le "small: allocated" "$(alloc "$i")" $((24 << 20))
	VERIFY_MOUNTS="file" verify_image "$i" "$WORK/small.tar"
else
	fail "mkfs small.tar"
fi

mksparse huge "$WORK/huge.tar" || die "cannot write huge.tar"
if mkfs_img --verify "$WORK/huge.tar" "$WORK/huge.img"; then
	i=$WORK/huge.img
	# one byte: chunk index and zeros balanced (~12 MiB); all hole: 4 bytes
	size_le "huge: apparent size" "$(stat -c %s "$i")" $((16 << 20))
	size_le "huge: allocated" "$(alloc "$i")" $((16 << 20))
	# CPU time (user + system), which a loaded machine does not stretch
	check "fsck.img on two 8 TiB sparse files" /usr/bin/time -f '%U %S' \
		-o "$WORK/time.out" "$FSCK_IMG" -q "$i"
	ms=$(tail -n 1 "$WORK/time.out" | awk '{ printf "%d", ($1 + $2) * 1000 }')
	check "fsck.img took $ms ms of CPU (< 10 s)" test "$ms" -lt 10000
	if mount_file "$i" "$WORK/m"; then
		m=$WORK/m/max
		check "8 TiB size" test "$(stat -c %s "$m")" -eq $((8 << 40))
		check "8 TiB hole size" test "$(stat -c %s "$WORK/m/hole")" -eq $((8 << 40))
		check "the byte at 3 TiB + 12345" test "$(dd if="$m" bs=1 skip=$(((3 << 40) + 12345)) count=1 status=none)" = Q
		check "zeros after it" cmp -s -n 65536 /dev/zero <(dd if="$m" bs=4096 skip=$(((3 << 40) / 4096 + 4)) count=16 status=none)
		unmount "$WORK/m"
	else
		fail "mount huge.img"
	fi
else
	fail "mkfs --verify huge.tar"
fi

# beyond the limit: an error naming the entry, no image left
for t in over 2to63; do
	mksparse $t "$WORK/$t.tar" || die "cannot write $t.tar"
	rm -f "$WORK/$t.img"
	if mkfs_img "$WORK/$t.tar" "$WORK/$t.img" 2>"$WORK/$t.err"; then
		fail "$t: mkfs accepted a sparse file beyond the limit"
	else
		check "$t: error names the entry and the limit" \
			grep -qE "(too-big|huge63): sparse file of [0-9]+ bytes is larger than the limit of 8796093022208 bytes" "$WORK/$t.err"
		check "$t: no image left" test ! -e "$WORK/$t.img"
		ls "$WORK" | grep -q "^$t.img." && fail "$t: temporary file left"
	fi
done

finish
