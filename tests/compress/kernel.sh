#!/bin/bash
# SPDX-License-Identifier: MIT
# Compressed images on the kernel: every algorithm x block sizes 4096 and
# 512 x pcluster sizes 4 KiB, 64 KiB and 1 MiB, on a layer of
# incompressible, highly compressible and mixed files (tests/compress/
# zdata.py). Each image is mounted through a loop device and file-backed
# and compared with a bsdtar extraction (content, sizes, modes, owners,
# times, xattrs, hard links), and read again in random slices (every map
# looked up from arbitrary offsets); fsck.img must find the tar in it;
# Debian's fsck.erofs (4 KiB blocks, LZ4 only in version 1.5) must accept
# and extract the LZ4 ones intact.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/compress/common.sh"
setup

"$PYTHON" "$ZDIR/zdata.py" mix "$WORK/mix.tar" || die "zdata.py mix"
ref=$WORK/ref
extract "$WORK/mix.tar" "$ref" || die "bsdtar could not extract the layer"
# shellcheck disable=SC2207
topts=($(treecmp_opts_for "$WORK/mix.tar"))

for alg in $(z_algorithms); do
	for bs in 4096 512; do
		for pcl in 4096 65536 1048576; do
			img=$WORK/$alg-$bs-$pcl.img
			z_mkfs "$img" "$WORK/mix.tar" -b "$bs" -z "$alg" \
				-C "$pcl" || continue
			compare_mounts "$img" "$ref" "loop file" "${topts[@]}"
			z_randread "$img" "$ref"
			z_fsck_img "$img" "$WORK/mix.tar"
			if [ "$bs" = 4096 ]; then
				case $alg in
				lz4 | lz4hc) z_fsck_erofs "$img" "$ref" ;;
				esac
			fi
			rm -f "$img"
		done
	done
done

finish
