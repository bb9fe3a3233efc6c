#!/bin/bash
# The same trees archived in every tar dialect libarchive reads: V7, ustar,
# GNU (long names and link targets, sparse), old GNU, pax (written by GNU
# tar, bsdtar and Python), restricted pax; then one layer compressed with
# gzip, zstd, xz, bzip2 and lz4, and read from standard input.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_tools tar gzip zstd xz bzip2 lz4

make_tree "$WORK/plain"
make_tree "$WORK/full" full

t=$WORK/tars
mkdir -p "$t"
# V7 and ustar cannot hold everything: they get the plain tree.
tar -C "$WORK/plain" --format=v7 -cf "$t/gnu-v7.tar" .
tar -C "$WORK/plain" --format=ustar -cf "$t/gnu-ustar.tar" .
bsdtar -C "$WORK/plain" --format=v7 -cf "$t/bsd-v7.tar" .
bsdtar -C "$WORK/plain" --format=ustar -cf "$t/bsd-ustar.tar" .
tar -C "$WORK/full" --format=gnu -S -cf "$t/gnu-gnu.tar" .
tar -C "$WORK/full" --format=oldgnu -S -cf "$t/gnu-oldgnu.tar" .
tar -C "$WORK/full" --format=posix -S -cf "$t/gnu-posix.tar" .
tar -C "$WORK/full" --format=posix -S --sparse-version=0.1 \
	-cf "$t/gnu-posix-sparse01.tar" .
tar -C "$WORK/full" --format=posix -S --sparse-version=0.0 \
	-cf "$t/gnu-posix-sparse00.tar" .
bsdtar -C "$WORK/full" --format=pax -cf "$t/bsd-pax.tar" .
bsdtar -C "$WORK/full" --format=gnutar -cf "$t/bsd-gnutar.tar" .
bsdtar -C "$WORK/full" --format=paxr -cf "$t/bsd-paxr.tar" .

for f in "$t"/*.tar; do
	convert_and_compare "$f"
done

# Compressed layers: same content, so the same reference.
base=$t/bsd-pax.tar
gzip -c "$base" >"$t/layer.tar.gz"
zstd -q -c "$base" >"$t/layer.tar.zst"
xz -c "$base" >"$t/layer.tar.xz"
bzip2 -c "$base" >"$t/layer.tar.bz2"
lz4 -q -c "$base" >"$t/layer.tar.lz4"
for f in "$t"/layer.tar.*; do
	REF_TAR=$base convert_and_compare "$f"
done

# Standard input, plain and compressed.
for f in "$base" "$t/layer.tar.zst"; do
	img=$WORK/stdin.img
	rm -f "$img"
	if mkfs_img - "$img" <"$f"; then
		ok "mkfs - (stdin: $(basename "$f"))"
		verify_image "$img" "$base"
	else
		fail "mkfs - (stdin: $(basename "$f"))"
	fi
	# a pipe cannot be rewound: the reader must stream
	rm -f "$img"
	if cat "$f" | mkfs_img - "$img"; then
		ok "mkfs - (pipe: $(basename "$f"))"
		verify_image "$img" "$base"
	else
		fail "mkfs - (pipe: $(basename "$f"))"
	fi
done

finish
