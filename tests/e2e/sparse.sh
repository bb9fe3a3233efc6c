#!/bin/bash
# Sparse files from GNU tar (--sparse, gnu and pax formats): a 5 GiB file
# holding a few bytes must give a small image (< 10 MiB) and read back as
# zeros with the data at the right offsets, including across 4 GiB.
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

finish
