#!/bin/bash
# SPDX-License-Identifier: MIT
# Fragments (docs/format.md §9.11) on the kernel: with --fragments the ends of
# files and whole small files are packed into one compressed inode that no
# directory names. Every algorithm x block sizes 4096 and 512 x pcluster
# sizes of one block and 128 KiB: mounted (loop and file-backed) and
# compared with the layer, fsck.img finds the tar in it; the superblock
# has FRAGMENTS and a packed inode NID; the image is smaller than with the
# plain layout. (--ztailpacking or --inline-data with --fragments would
# do nothing: they are refused, see options.sh.)
# Identical files are stored once: forty copies of two files cost next to
# nothing over one copy, and read back intact.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/compress/common.sh"
setup

"$PYTHON" "$ZDIR/zdata.py" small "$WORK/small.tar" || die "zdata.py small"
ref=$WORK/ref
extract "$WORK/small.tar" "$ref" || die "bsdtar could not extract the layer"
# shellcheck disable=SC2207
topts=($(treecmp_opts_for "$WORK/small.tar"))

for alg in $(z_algorithms); do
	for bs in 4096 512; do
		for pcl in $bs 131072; do
			img=$WORK/$alg-$bs-$pcl.img
			plain=$WORK/plain.img
			z_mkfs "$img" "$WORK/small.tar" -b "$bs" -z "$alg" \
				-C "$pcl" --fragments || continue
			compare_mounts "$img" "$ref" "loop file" "${topts[@]}"
			z_randread "$img" "$ref"
			z_fsck_img "$img" "$WORK/small.tar"
			incompat=$(z_sb_field "$img" 80 4)
			check "FRAGMENTS set, packed inode $(z_sb_field "$img" 96 8)" \
				test $((incompat & 0x20)) -ne 0 -a \
				"$(z_sb_field "$img" 96 8)" -ne 0
			z_mkfs "$plain" "$WORK/small.tar" -b "$bs" -z "$alg" \
				-C "$pcl" || continue
			check "FRAGMENTS and packed_nid clear without the option" \
				test $(($(z_sb_field "$plain" 80 4) & 0x20)) -eq 0 -a \
				"$(z_sb_field "$plain" 96 8)" -eq 0
			check "smaller with fragments: $(stat -c %s "$img") < $(stat -c %s "$plain")" \
				test "$(stat -c %s "$img")" -lt "$(stat -c %s "$plain")"
			rm -f "$img" "$plain"
		done
	done
done

# duplicates: copies share the first one's pclusters and fragment
dup=$WORK/dup
mkdir -p "$dup/one" "$dup/many"
seq 1 40000 >"$dup/one/text"
head -c 3000 "$dup/one/text" >"$dup/one/small"
for i in $(seq 1 20); do
	cp "$dup/one/text" "$dup/many/text$i"
	cp "$dup/one/small" "$dup/many/small$i"
done
bsdtar -cf "$WORK/one.tar" --format=pax -C "$dup/one" . ||
	die "bsdtar one"
bsdtar -cf "$WORK/many.tar" --format=pax -C "$dup/many" . ||
	die "bsdtar many"
for alg in lz4hc lzma; do
	z_mkfs "$WORK/one.img" "$WORK/one.tar" -z "$alg" --fragments ||
		continue
	z_mkfs "$WORK/many.img" "$WORK/many.tar" -z "$alg" --fragments ||
		continue
	one=$(stat -c %s "$WORK/one.img")
	many=$(stat -c %s "$WORK/many.img")
	check "$alg: 40 files cost $((many - one)) bytes more than 2 (< 16 KiB)" \
		test $((many - one)) -lt 16384
	compare_mounts "$WORK/many.img" "$dup/many" "loop file" --skip-root
	z_fsck_img "$WORK/many.img" "$WORK/many.tar"
done

finish
