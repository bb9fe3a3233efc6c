#!/bin/bash
# SPDX-License-Identifier: MIT
# Compression inside complete layers: a tree with every entry type, xattrs,
# hard links, owners and a sparse file (stored chunk-based between
# compressed files, which must therefore be written in order), converted
# from a tar and straight from the directory, with LZ4HC in big pclusters
# and tails inline and with MicroLZMA. Mounted three ways, compared with
# the source, checked by fsck.img.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/compress/common.sh"
setup

tree=$WORK/tree
make_tree "$tree" full
# compressible files around the sparse one
for i in 1 2 3; do
	seq 1 $((i * 20000)) >"$tree/dir/seq$i"
	cp "$tree/dir/seq$i" "$tree/special/seq$i"
done
bsdtar -cf "$WORK/tree.tar" --format=pax --read-sparse -C "$tree" . ||
	die "bsdtar could not archive the tree"

for opts in "-z lz4hc -C 65536 --ztailpacking" "-z lzma -C 16384" \
	"-z lz4 -b 512"; do
	# shellcheck disable=SC2086 # options are words
	convert_and_compare "$WORK/tree.tar" -T "$ZTIME" $opts
done

# a directory as the source: the disk reader feeds the same engine
img=$WORK/dir.img
if mkfs_img -q -z lz4hc --ztailpacking "$tree" "$img"; then
	ok "mkfs from a directory"
	compare_mounts "$img" "$tree" "loop file" --skip-root
	"$FSCK_IMG" -q "$img" >/dev/null 2>&1
	check "fsck.img $(basename "$img")" test $? -eq 0
else
	fail "mkfs from a directory"
fi

finish
