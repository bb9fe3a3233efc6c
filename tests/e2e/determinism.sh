#!/bin/bash
# With -T and -U the image is a function of the tar's content only: two
# runs give identical bytes, and so do the same layer compressed with
# gzip/zstd or fed through a pipe. A different -U changes the image.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_tools gzip zstd

pymk mktar.py basic "$WORK/basic.tar" || die "mktar basic"
pymk mktar.py xattrs "$WORK/xattrs.tar" || die "mktar xattrs"
gzip -c "$WORK/basic.tar" >"$WORK/basic.tar.gz"
zstd -q -c "$WORK/basic.tar" >"$WORK/basic.tar.zst"
U=01234567-89ab-cdef-0123-456789abcdef
T=1700000000

# same_image A B WHAT
same_image() {
	if cmp -s "$1" "$2"; then
		ok "$3: identical ($(stat -c %s "$1") bytes)"
	else
		fail "$3: images differ: $(cmp "$1" "$2" 2>&1 | head -n 1)"
	fi
}

for bs in 4096 512; do
	for t in basic xattrs; do
		mkfs_img -b $bs -T $T -U $U "$WORK/$t.tar" "$WORK/$t-$bs-1.img" &&
		mkfs_img -b $bs -T $T -U $U "$WORK/$t.tar" "$WORK/$t-$bs-2.img" ||
			fail "mkfs $t -b $bs"
		same_image "$WORK/$t-$bs-1.img" "$WORK/$t-$bs-2.img" "$t -b $bs, two runs"
	done
done

mkfs_img -T $T -U $U --inline-data "$WORK/basic.tar" "$WORK/inl-1.img" &&
	mkfs_img -T $T -U $U --inline-data "$WORK/basic.tar" "$WORK/inl-2.img" ||
	fail "mkfs --inline-data"
same_image "$WORK/inl-1.img" "$WORK/inl-2.img" "--inline-data, two runs"

ref=$WORK/basic-4096-1.img
for c in gz zst; do
	mkfs_img -T $T -U $U "$WORK/basic.tar.$c" "$WORK/basic-$c.img" ||
		fail "mkfs basic.tar.$c"
	same_image "$ref" "$WORK/basic-$c.img" "basic.tar vs basic.tar.$c"
done
cat "$WORK/basic.tar.zst" | mkfs_img -T $T -U $U - "$WORK/basic-pipe.img" ||
	fail "mkfs from a pipe"
same_image "$ref" "$WORK/basic-pipe.img" "basic.tar vs zstd through a pipe"

mkfs_img -T $T -U 11111111-2222-3333-4444-555555555555 "$WORK/basic.tar" \
	"$WORK/other-uuid.img" || fail "mkfs other uuid"
check "another -U gives another image" \
	sh -c "! cmp -s '$ref' '$WORK/other-uuid.img'"

# Same bytes mount to the same tree, of course; check one of them.
verify_image "$ref" "$WORK/basic.tar" -T $T -U $U

finish
