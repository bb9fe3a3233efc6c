#!/bin/bash
# One directory with 100,000 empty files: directory blocks, lookups,
# readdir across many blocks, and inode numbering beyond 16 bits.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup

pymk mktar.py bigdir "$WORK/bigdir.tar" 100000 || die "mktar bigdir"
# empty files: direct I/O has nothing to add here
VERIFY_MOUNTS="loop file" convert_and_compare "$WORK/bigdir.tar" -T 1600000000

# Spot lookups by name (dcache cold after a fresh mount).
mount_file "$IMG" "$WORK/m"
missing=0
for i in 0 1 4095 50000 99998 99999; do
	f=$WORK/m/big/f$(printf %07d $i)
	[ -f "$f" ] || missing=$((missing + 1))
done
check "lookups by name" test $missing -eq 0
check "no entry past the last" test ! -e "$WORK/m/big/f0100000"
check "readdir count" test "$(ls -f "$WORK/m/big" | wc -l)" -eq 100002
unmount "$WORK/m"

finish
