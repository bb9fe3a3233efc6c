#!/bin/bash
# SPDX-License-Identifier: MIT
# Compression benchmark: mkfs.img with each algorithm against lz4 -9 and
# xz -6 on the raw tar and against sqfstar (squashfs-tools) with LZ4HC and
# xz in 128 KiB blocks, all on the same layer.
#
# usage: bench/bench-compress.sh [-n RUNS] [-o "MKFS OPTIONS"]... [TAR]
#
# TAR defaults to a layer of real files cached in $BENCH_DIR (default
# /tmp/imgfs-bench): shared libraries from /usr/lib/x86_64-linux-gnu and
# documentation, manual pages, icons, locales and scripts from /usr/share,
# about 300 MB and 30,000 entries. (bench-convert.sh's layer is not reused:
# half of it is one random MiB repeated, which says little about
# compression.) For each case the median wall time, CPU time (user +
# system) and peak RSS over RUNS runs (default 1) are printed with the
# output size. -o replaces the default mkfs.img cases.
#
# Needs GNU time (/usr/bin/time), lz4, xz-utils, squashfs-tools (sqfstar).
# Run from a build directory (or set top_builddir, or IMGFS_MKFS).
set -euo pipefail

RUNS=1
VARIANTS=()
while getopts "n:o:h" opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	o) VARIANTS+=("$OPTARG") ;;
	*) sed -n '3,20p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ ${#VARIANTS[@]} -gt 0 ] || VARIANTS=(
	"-z lz4"
	"-z lz4hc"
	"-z lz4hc --ztailpacking"
	"-z lz4hc --fragments"
	"-z lzma -C 131072"
	"-z lzma -C 131072 --ztailpacking"
	"-z lzma -C 131072 --fragments"
	"-z deflate -C 131072 --fragments"
	"-z zstd -C 131072 --fragments"
)

here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
if [ -z "${top_builddir:-}" ]; then
	top_builddir=$PWD
	[ -e "$top_builddir/mkfs/mkfs.img" ] || top_builddir=$top_srcdir
fi
BENCH_DIR=${BENCH_DIR:-/tmp/imgfs-bench}
TIME=/usr/bin/time
for t in "$TIME" lz4 xz sqfstar; do
	command -v "$t" >/dev/null || {
		echo "needs $t (Debian packages: time lz4 xz-utils squashfs-tools)" >&2
		exit 1
	}
done

# Run the real binary, not libtool's wrapper script, so that the peak RSS
# is mkfs.img's own.
if [ -n "${IMGFS_MKFS:-}" ]; then
	read -r -a MKFS <<<"$IMGFS_MKFS"
elif [ -x "$top_builddir/mkfs/.libs/mkfs.img" ]; then
	export LD_LIBRARY_PATH=$top_builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	MKFS=("$top_builddir/mkfs/.libs/mkfs.img")
else
	MKFS=("$top_builddir/mkfs/mkfs.img")
fi
[ -x "${MKFS[0]}" ] || { echo "mkfs.img not found: ${MKFS[0]}" >&2; exit 1; }

mkdir -p "$BENCH_DIR"
OUT=$BENCH_DIR/zout
trap 'rm -f "$OUT"' EXIT

# make_layer TAR: real files, each subtree up to its budget (MB), in
# sorted order so that the layer is the same from run to run on a machine.
make_layer() {
	local tar=$1 list=$BENCH_DIR/compress.list dir mb
	: >"$list"
	while read -r dir mb; do
		[ -d "/$dir" ] || continue
		(cd / && find "$dir" -xdev \( -type f -size -16M \
			-printf '%s\t%p\n' \) -o \( -type l -printf '0\t%p\n' \) |
			LC_ALL=C sort -t "$(printf '\t')" -k2 |
			awk -F'\t' -v lim=$((mb * 1000000)) \
				'{ s += $1; if (s > lim) exit; print $2 }') >>"$list"
	done <<-EOF
	usr/lib/x86_64-linux-gnu 150
	usr/share/doc 40
	usr/share/man 30
	usr/share/perl 20
	usr/share/vim 20
	usr/share/icons 20
	usr/share/i18n 17
	EOF
	tar -C / --no-recursion -cf "$tar.tmp" -T "$list"
	mv "$tar.tmp" "$tar"
}

TAR=${1:-}
if [ -z "$TAR" ]; then
	TAR=$BENCH_DIR/compress-layer.tar
	if [ ! -s "$TAR" ]; then
		echo "generating $TAR (cached for later runs)..."
		make_layer "$TAR"
	fi
fi
entries=$(tar -tf "$TAR" | wc -l)
size=$(stat -c %s "$TAR")
awk -v t="$TAR" -v e="$entries" -v s="$size" -v r="$RUNS" \
	-v n="$(nproc)" 'BEGIN {
	printf "layer: %s, %d entries, %.1f MB; %d run(s) each, %d CPUs\n",
		t, e, s / 1e6, r, n }'

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure NAME CMD...: run CMD $RUNS times with the layer on standard
# input and $OUT removed first; print a row, set LAST_SECS and LAST_SIZE.
measure() {
	local name=$1 i t=$BENCH_DIR/time.out secs=() rss=() cpus=() s r u y c
	shift
	for ((i = 0; i < RUNS; i++)); do
		rm -f "$OUT"
		sync
		"$TIME" -f '%e %M %U %S' -o "$t" "$@" <"$TAR" >/dev/null \
			2>"$BENCH_DIR/err" || {
			echo "$name failed:" >&2
			cat "$BENCH_DIR/err" >&2
			exit 1
		}
		read -r s r u y <"$t"
		secs+=("$s")
		rss+=("$r")
		cpus+=("$(awk -v u="$u" -v y="$y" 'BEGIN { print u + y }')")
	done
	s=$(printf '%s\n' "${secs[@]}" | median)
	r=$(printf '%s\n' "${rss[@]}" | median)
	c=$(printf '%s\n' "${cpus[@]}" | median)
	LAST_SECS=$s
	LAST_SIZE=$(stat -c %s "$OUT")
	awk -v n="$name" -v s="$s" -v c="$c" -v r="$r" -v o="$LAST_SIZE" \
		-v z="$size" 'BEGIN {
		printf "%-38s %8.2f %8.2f %9.1f %10.1f %6.3f\n",
			n, s, c, r / 1024, o / 1e6, o / z }'
}

declare -A SECS BYTES
row() {
	measure "$@"
	SECS[$1]=$LAST_SECS
	BYTES[$1]=$LAST_SIZE
}

printf '\n%-38s %8s %8s %9s %10s %6s\n' case "wall (s)" "CPU (s)" \
	"RSS (MiB)" "size (MB)" ratio
for v in "${VARIANTS[@]}"; do
	# shellcheck disable=SC2086 # options are words
	row "mkfs.img $v" "${MKFS[@]}" -q $v "$TAR" "$OUT"
done
# shellcheck disable=SC2016 # $1 is the inner shell's
row "lz4 -9 (tar, 1 thread)" sh -c 'lz4 -9 -q -c >"$1"' sh "$OUT"
# shellcheck disable=SC2016
row "xz -6 (tar, 1 thread)" sh -c 'xz -6 -T1 -c >"$1"' sh "$OUT"
row "sqfstar -comp lz4 -Xhc -b 128K" \
	sqfstar -quiet -no-progress -comp lz4 -Xhc -b 131072 "$OUT"
row "sqfstar -comp xz -b 128K" \
	sqfstar -quiet -no-progress -comp xz -b 131072 "$OUT"

# compare A B: A's wall time and size against B's
compare() {
	[ -n "${SECS[$1]:-}" ] && [ -n "${SECS[$2]:-}" ] || return 0
	awk -v a="$1" -v b="$2" -v sa="${SECS[$1]}" -v sb="${SECS[$2]}" \
		-v za="${BYTES[$1]}" -v zb="${BYTES[$2]}" 'BEGIN {
		printf "%s vs %s: %.2fx the speed, %.3fx the size\n",
			a, b, sb / (sa + 0.001), za / zb }'
}
echo
compare "mkfs.img -z lz4hc" "sqfstar -comp lz4 -Xhc -b 128K"
compare "mkfs.img -z lz4hc" "lz4 -9 (tar, 1 thread)"
compare "mkfs.img -z lz4hc --fragments" "sqfstar -comp lz4 -Xhc -b 128K"
compare "mkfs.img -z lzma -C 131072" "sqfstar -comp xz -b 128K"
compare "mkfs.img -z lzma -C 131072 --fragments" "sqfstar -comp xz -b 128K"
