#!/bin/bash
# SPDX-License-Identifier: MIT
# ztailpacking (docs/format.md §9.10) on the kernel: every algorithm x block
# sizes 4096 and 512 x pcluster sizes of one block and 64 KiB, with the
# last pcluster of each file inline after its index. Each image is mounted
# (loop and file-backed) and compared with the layer; fsck.img must find
# the tar in it, fsck.erofs 1.5 must extract the LZ4 ones intact. The
# superblock announces ZTAILPACKING exactly when tails were inlined, small
# compressible files then take no data block (st_blocks 0), and the image
# is smaller than without the option.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/compress/common.sh"
setup

"$PYTHON" "$ZDIR/zdata.py" small "$WORK/small.tar" || die "zdata.py small"
ref=$WORK/ref
extract "$WORK/small.tar" "$ref" || die "bsdtar could not extract the layer"
# shellcheck disable=SC2207
topts=($(treecmp_opts_for "$WORK/small.tar"))

# blockless IMG: regular non-empty files of IMG with no data block
blockless() {
	local mnt=$WORK/mnt.count n
	mount_file "$1" "$mnt" || { echo -1; return; }
	n=$(find "$mnt" -type f -size +0 -printf '%b\n' | grep -cx 0)
	unmount "$mnt"
	echo "$n"
}

for alg in $(z_algorithms); do
	for bs in 4096 512; do
		for pcl in $bs 65536; do
			img=$WORK/$alg-$bs-$pcl.img
			plain=$WORK/plain.img
			z_mkfs "$img" "$WORK/small.tar" -b "$bs" -z "$alg" \
				-C "$pcl" --ztailpacking || continue
			compare_mounts "$img" "$ref" "loop file" "${topts[@]}"
			z_randread "$img" "$ref"
			z_fsck_img "$img" "$WORK/small.tar"
			if [ "$bs" = 4096 ]; then
				case $alg in
				lz4 | lz4hc) z_fsck_erofs "$img" "$ref" ;;
				esac
			fi
			incompat=$(z_sb_field "$img" 80 4)
			check "ZTAILPACKING set ($alg $bs $pcl)" \
				test $((incompat & 0x10)) -ne 0
			z_mkfs "$plain" "$WORK/small.tar" -b "$bs" -z "$alg" \
				-C "$pcl" || continue
			incompat=$(z_sb_field "$plain" 80 4)
			check "ZTAILPACKING clear without the option" \
				test $((incompat & 0x10)) -eq 0
			with=$(blockless "$img")
			without=$(blockless "$plain")
			check "$with files without a data block (0 without the option)" \
				test "$with" -gt 0 -a "$without" -eq 0
			check "smaller with tails inline: $(stat -c %s "$img") < $(stat -c %s "$plain")" \
				test "$(stat -c %s "$img")" -lt "$(stat -c %s "$plain")"
			rm -f "$img" "$plain"
		done
	done
done

finish
