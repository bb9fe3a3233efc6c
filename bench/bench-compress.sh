#!/bin/bash
# SPDX-License-Identifier: MIT
# Compression benchmark (issue 12): mkfs.img with 1 and 2 workers against
# erofs-utils' mkfs.erofs (its default layout, and -Enoinline_data, the
# block-aligned layout mkfs.img keeps by default) and sqfstar with the
# matching compressor in 128 KiB blocks, case by case, on the same layer.
#
# usage: bench/bench-compress.sh [-n RUNS] [-c CASE]... [-r] [TAR]
#
#   -n RUNS  runs per command; the medians are printed (default 1)
#   -c CASE  only this case (repeatable): lz4, lz4hc, lz4hc-ztail,
#            lzma, lzma-128k, lzma-128k-frag, zstd, lz4hc-128k, zstd-128k,
#            inline (sizes only, see below)
#   -r       the layer of real files (see below) instead of bench-convert's
#   TAR      any other layer
#
# The default layer is bench-convert.sh's ($BENCH_DIR/layer.tar, made by
# it when missing): 225 MB, 8,043 entries, half of it system files and
# half generated files whose content is one random MiB repeated (the
# repeats are too far apart to be found: incompressible). -r uses a layer
# of real files only ($BENCH_DIR/compress-layer.tar, made when missing):
# shared libraries, documentation, manual pages, icons, locales, scripts,
# about 300 MB. BENCH_QUICK=1 is a smoke run: up to 3,000 entries of at
# most 2 MiB from the layer, about 4 MB from each top-level directory,
# every case, one run.
#
# Every command reads the same tar file and writes an image nobody syncs
# (mkfs.img runs with --no-fsync, as neither peer syncs). For each row:
# median wall time, CPU time (user + system), peak RSS, image size; then
# mkfs.img's time and size against mkfs.erofs's default run and size
# against its -Enoinline_data image, and the speed-up of 2 workers over 1
# (the goal is 1.8x or more), with the most their CPU time allows on
# this machine (one worker's wall time over the 2-worker run's CPU time
# spread over 2 CPUs: with one worker the intake already runs beside it,
# so on 2 CPUs that is the cap). The two mkfs.img images of a case must be
# byte-identical ("same bytes"). Last, the "inline" case: image sizes only,
# mkfs.img --inline-data against mkfs.erofs's default (which inlines file
# tails too), uncompressed and with every algorithm at 4 KiB, 16 KiB and
# 128 KiB clusters (the goal: never bigger).
#
# Needs GNU time (/usr/bin/time), squashfs-tools (sqfstar), erofs-utils
# 1.9.3 ($EROFS_UTILS_MKFS, default /opt/erofs-utils-1.9.3/bin/mkfs.erofs;
# rows skipped without it). Run from a build directory (or set
# top_builddir, or IMGFS_MKFS).
set -euo pipefail

RUNS=1
CASES=()
REAL=
while getopts "n:c:rh" opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	c) CASES+=("$OPTARG") ;;
	r) REAL=1 ;;
	*) sed -n '3,44p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
if [ -z "${top_builddir:-}" ]; then
	top_builddir=$PWD
	[ -e "$top_builddir/mkfs/mkfs.img" ] || top_builddir=$top_srcdir
fi
BENCH_DIR=${BENCH_DIR:-/tmp/imgfs-bench}
TIME=/usr/bin/time
EROFS=${EROFS_UTILS_MKFS:-/opt/erofs-utils-1.9.3/bin/mkfs.erofs}
[ -x "$EROFS" ] || EROFS=
for t in "$TIME" sqfstar; do
	command -v "$t" >/dev/null || {
		echo "needs $t (Debian packages: time squashfs-tools)" >&2
		exit 1
	}
done

. "$top_srcdir/bench/mkfs-binary.sh"

mkdir -p "$BENCH_DIR"
OUT=$BENCH_DIR/zout
OUT1=$BENCH_DIR/zout.1w
QUICK_TAR=$BENCH_DIR/compress-quick.tar
trap 'rm -f "$OUT" "$OUT1" "$QUICK_TAR"' EXIT

# make_real_layer TAR: real files, each subtree up to its budget (MB), in
# sorted order so that the layer is the same from run to run on a machine.
make_real_layer() {
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
if [ -z "$TAR" ] && [ -n "$REAL" ]; then
	TAR=$BENCH_DIR/compress-layer.tar
	if [ ! -s "$TAR" ]; then
		echo "generating $TAR (cached for later runs)..."
		make_real_layer "$TAR"
	fi
elif [ -z "$TAR" ]; then
	TAR=$BENCH_DIR/layer.tar
	[ -s "$TAR" ] || BENCH_LAYER_ONLY=1 BENCH_DIR=$BENCH_DIR \
		"$here/bench-convert.sh"
fi
if [ -n "${BENCH_QUICK:-}" ]; then
	python3 - "$TAR" "$QUICK_TAR" <<-'EOF'
	import sys, tarfile
	with tarfile.open(sys.argv[1]) as src, \
	     tarfile.open(sys.argv[2], "w", format=tarfile.PAX_FORMAT) as dst:
	    n, per_top = 0, {}
	    for m in src:
	        top = m.name.split("/")[0]
	        t = per_top.get(top, 0)
	        if m.size > (2 << 20) or n == 3000 or t > (4 << 20):
	            continue
	        n += 1
	        per_top[top] = t + m.size
	        dst.addfile(m, src.extractfile(m) if m.isfile() else None)
	EOF
	TAR=$QUICK_TAR
	RUNS=1
fi
entries=$(tar -tf "$TAR" | wc -l)
size=$(stat -c %s "$TAR")
awk -v t="$TAR" -v e="$entries" -v s="$size" -v r="$RUNS" \
	-v n="$(nproc)" 'BEGIN {
	printf "layer: %s, %d entries, %.1f MB; median of %d run(s); %d CPUs\n",
		t, e, s / 1e6, r, n }'

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure CMD...: run CMD $RUNS times ($OUT removed first); set SECS, CPU,
# RSS (MiB) and BYTES (size of $OUT).
measure() {
	local i t=$BENCH_DIR/time.out secs=() rss=() cpus=() s r u y
	for ((i = 0; i < RUNS; i++)); do
		rm -f "$OUT"
		"$TIME" -f '%e %M %U %S' -o "$t" "$@" >/dev/null \
			2>"$BENCH_DIR/err" || {
			echo "failed: $*" >&2
			cat "$BENCH_DIR/err" >&2
			exit 1
		}
		read -r s r u y <"$t"
		secs+=("$s")
		rss+=("$r")
		cpus+=("$(awk -v u="$u" -v y="$y" 'BEGIN { print u + y }')")
	done
	SECS=$(printf '%s\n' "${secs[@]}" | median)
	RSS=$(printf '%s\n' "${rss[@]}" | median | awk '{ print $1 / 1024 }')
	CPU=$(printf '%s\n' "${cpus[@]}" | median)
	BYTES=$(stat -c %s "$OUT")
}

# row TOOL NOTE: print the last measure
row() {
	awk -v t="$1" -v n="$2" -v s="$SECS" -v c="$CPU" -v r="$RSS" \
		-v b="$BYTES" 'BEGIN {
		printf "  %-34s %8.2f %8.2f %8.1f %9.2f  %s\n",
			t, s, c, r, b / 1e6, n }'
}

# Cases: name, mkfs.img options, mkfs.erofs options, sqfstar compressor.
CASE_LIST="
lz4|-z lz4|-zlz4|-comp lz4
lz4hc|-z lz4hc|-zlz4hc|-comp lz4 -Xhc
lz4hc-ztail|-z lz4hc --ztailpacking|-zlz4hc -Eztailpacking|-comp lz4 -Xhc
lzma|-z lzma|-zlzma|-comp xz
lzma-128k|-z lzma -C 131072|-zlzma -C131072|-comp xz
lzma-128k-frag|-z lzma -C 131072 --fragments|-zlzma -C131072 -Efragments|-comp xz
zstd|-z zstd|-zzstd|-comp zstd
lz4hc-128k|-z lz4hc -C 131072|-zlz4hc -C131072|-comp lz4 -Xhc
zstd-128k|-z zstd -C 131072|-zzstd -C131072|-comp zstd
"
wanted() {
	local c
	[ ${#CASES[@]} -eq 0 ] && return 0
	for c in "${CASES[@]}"; do [ "$c" = "$1" ] && return 0; done
	return 1
}

declare -A SQFS_DONE
FIXED=(-T 1600000000 -U 2c9b3f6e-8a1d-4d55-9f0e-3b7a2f4c1d20)
printf '\n  %-34s %8s %8s %8s %9s\n' "" "wall (s)" "CPU (s)" "RSS MiB" "size (MB)"
while IFS='|' read -r name ours theirs sq; do
	[ -n "$name" ] && wanted "$name" || continue
	echo "$name"
	# shellcheck disable=SC2086 # options are words
	measure "${MKFS[@]}" -q --no-fsync "${FIXED[@]}" $ours --workers=1 \
		"$TAR" "$OUT"
	s1=$SECS b1=$BYTES
	row "mkfs.img $ours, 1 worker" ""
	mv "$OUT" "$OUT1"
	# shellcheck disable=SC2086
	measure "${MKFS[@]}" -q --no-fsync "${FIXED[@]}" $ours --workers=2 \
		"$TAR" "$OUT"
	s2=$SECS b2=$BYTES r2=$RSS
	same=no
	cmp -s "$OUT" "$OUT1" && same=yes
	# 2 workers cannot take less than their CPU time spread over the
	# CPUs there are: on 2, the serial part's own CPU caps the speed-up
	row "mkfs.img $ours, 2 workers" "$(awk -v a="$s1" -v b="$s2" \
		-v c="$CPU" -v n="$(nproc)" 'BEGIN {
		printf "%.2fx over 1 worker (its CPU time allows %.2fx)",
			a / (b + 0.001), a / (c / (n < 2 ? n : 2) + 0.001) }'), same bytes: $same"
	rm -f "$OUT1"
	if [ -n "$EROFS" ]; then
		# shellcheck disable=SC2086
		measure "$EROFS" --quiet $theirs --tar=f "$OUT" "$TAR"
		se=$SECS be=$BYTES
		row "mkfs.erofs $theirs" ""
		# shellcheck disable=SC2086
		measure "$EROFS" --quiet $theirs -Enoinline_data --tar=f \
			"$OUT" "$TAR"
		bn=$BYTES
		row "mkfs.erofs $theirs -Enoinline_data" ""
		awk -v n="$name" -v s2="$s2" -v se="$se" -v b2="$b2" \
			-v be="$be" -v bn="$bn" -v r2="$r2" 'BEGIN {
			printf "  => mkfs.img (2 workers) vs mkfs.erofs: %.2fx its time, %.3fx its -Enoinline_data size, %.3fx its default size; %.0f MiB peak\n",
				s2 / (se + 0.001), b2 / bn, b2 / be, r2 }'
	fi
	if [ -z "${SQFS_DONE[$sq]:-}" ]; then
		# shellcheck disable=SC2086
		measure sh -c 'exec sqfstar -quiet -no-progress "$@" <"$0"' \
			"$TAR" $sq -b 131072 "$OUT"
		SQFS_DONE[$sq]="$SECS $BYTES"
		row "sqfstar $sq -b 128K" ""
	fi
	read -r sqs sqb <<<"${SQFS_DONE[$sq]}"
	awk -v s2="$s2" -v b2="$b2" -v ss="$sqs" -v sb="$sqb" -v c="$sq" 'BEGIN {
		printf "  => mkfs.img (2 workers) vs sqfstar %s: %.2fx its time, %.3fx its size\n",
			c, s2 / (ss + 0.001), b2 / sb }'
done <<<"$CASE_LIST"

# Sizes only: --inline-data against mkfs.erofs's default layout.
if wanted inline && [ -n "$EROFS" ]; then
	echo
	echo "inline: mkfs.img --inline-data vs mkfs.erofs default, image sizes"
	printf '  %-24s %14s %14s %10s
' "" "mkfs.img (B)" "mkfs.erofs (B)" "ratio"
	for c in none lz4 lz4hc lzma deflate zstd; do
		for cs in 4096 16384 131072; do
			ours=() theirs=()
			if [ "$c" != none ]; then
				ours=(-z "$c" -C "$cs")
				theirs=(-z"$c" -C"$cs")
			elif [ "$cs" != 4096 ]; then
				continue
			fi
			rm -f "$OUT" "$OUT1"
			"${MKFS[@]}" -q --no-fsync "${FIXED[@]}" --inline-data \
				"${ours[@]}" "$TAR" "$OUT"
			"$EROFS" --quiet "${theirs[@]}" --tar=f "$OUT1" "$TAR"
			awk -v n="$c${ours[*]:+ $cs}" -v a="$(stat -c %s "$OUT")" \
				-v b="$(stat -c %s "$OUT1")" 'BEGIN {
				printf "  %-24s %14d %14d %9.4fx%s\n", n, a, b,
					a / b, (a > b ? "  BIGGER" : "") }'
		done
	done
fi
