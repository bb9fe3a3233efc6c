#!/bin/bash
# SPDX-License-Identifier: MIT
# Conversion benchmark: mkfs.img against copying the same bytes.
#
# usage: bench/bench-convert.sh [-n RUNS] [-o "MKFS OPTIONS"]... [TAR]
#
# TAR defaults to a generated layer cached in $BENCH_DIR (default
# /tmp/imgfs-bench): files from this system's /usr plus generated files,
# at least 200 MB and 7000 entries. For each case the median wall time and
# the median CPU time and peak RSS of RUNS runs (default 5) are printed: mkfs.img (once
# per -o, default no options), mkfs.img in drop-in mode with containerd's
# argv and erofs-utils' mkfs.erofs with the same argv (neither syncs), cp
# of the tar, and cp followed by fsync (mkfs.img syncs its image). A second layer with one directory of 100,000
# empty files must convert in under a second.
#
# Needs GNU time (/usr/bin/time, Debian package "time"), python3, GNU tar.
# Run from a build directory (or set top_builddir, or IMGFS_MKFS).
set -euo pipefail

RUNS=5
VARIANTS=()
while getopts "n:o:h" opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	o) VARIANTS+=("$OPTARG") ;;
	*) sed -n '3,17p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ ${#VARIANTS[@]} -gt 0 ] || VARIANTS=("")

here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
if [ -z "${top_builddir:-}" ]; then
	top_builddir=$PWD
	[ -e "$top_builddir/mkfs/mkfs.img" ] || top_builddir=$top_srcdir
fi
BENCH_DIR=${BENCH_DIR:-/tmp/imgfs-bench}
PYTHON=python3
[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "needs GNU time: apt-get install time" >&2; exit 1; }

. "$top_srcdir/bench/mkfs-binary.sh"

mkdir -p "$BENCH_DIR"
OUT=$BENCH_DIR/out
trap 'rm -f "$OUT"' EXIT

# make_layer TAR: /usr files and generated ones, >= 200 MB, >= 7000 entries
make_layer() {
	local tar=$1 list=$BENCH_DIR/usr.list n bytes need_files need_bytes
	(cd / && find usr/include usr/share/zoneinfo usr/share/doc \
		usr/lib/python3* -xdev 2>/dev/null | LC_ALL=C sort |
		awk "NR <= 6000") >"$list.tail"
	printf '%s\n' usr usr/share usr/lib >"$list"
	cat "$list.tail" >>"$list"
	n=$(wc -l <"$list")
	bytes=$(cd / && tr '\n' '\0' <"$list" |
		xargs -0 stat -c '%s %F' 2>/dev/null |
		awk '$2 == "regular" { s += $1 } END { print s + 0 }')
	need_files=$((7200 - n))
	[ $need_files -ge 2000 ] || need_files=2000
	need_bytes=$((220 * 1000 * 1000 - bytes))
	[ $need_bytes -ge $((100 * 1000 * 1000)) ] || need_bytes=$((100 * 1000 * 1000))
	"$PYTHON" "$top_srcdir/tests/helpers/mktar.py" big-tree "$tar.tmp" \
		"$need_files" "$need_bytes"
	tar -C / --no-recursion -rf "$tar.tmp" -T "$list"
	mv "$tar.tmp" "$tar"
}

TAR=${1:-}
if [ -z "$TAR" ]; then
	TAR=$BENCH_DIR/layer.tar
	if [ ! -s "$TAR" ]; then
		echo "generating $TAR (cached for later runs)..."
		make_layer "$TAR"
	fi
fi
# bench-compress.sh borrows the layer: made, nothing else to do
[ -z "${BENCH_LAYER_ONLY:-}" ] || exit 0
BIGDIR=$BENCH_DIR/bigdir-100k.tar
[ -s "$BIGDIR" ] ||
	"$PYTHON" "$top_srcdir/tests/helpers/mktar.py" bigdir "$BIGDIR" 100000

entries=$(tar -tf "$TAR" | wc -l)
size=$(stat -c %s "$TAR")
awk -v t="$TAR" -v e="$entries" -v s="$size" -v r="$RUNS" 'BEGIN {
	printf "layer: %s, %d entries, %.1f MB; %d runs each\n", t, e, s / 1e6, r }'

# median of the numbers on standard input
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure NAME CMD...: run CMD $RUNS times (removing $OUT first), print a
# table row: median seconds, median peak RSS, throughput.
measure() {
	local name=$1 i t=$BENCH_DIR/time.out secs=() rss=() cpus=() s r u y c
	shift
	for ((i = 0; i < RUNS; i++)); do
		rm -f "$OUT"
		sync
		"$TIME" -f '%e %M %U %S' -o "$t" "$@" >/dev/null 2>"$BENCH_DIR/err" || {
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
	awk -v n="$name" -v s="$s" -v c="$c" -v r="$r" -v z="$size" 'BEGIN {
		printf "%-34s %9.2f %8.2f %10.1f %8.0f\n", n, s, c, r / 1024, z / 1e6 / (s + 0.0001) }'
	LAST_SECS=$s
}

# CPU = user + system time: on a busy machine it shows what wall time hides
printf '\n%-34s %9s %8s %10s %8s\n' case "wall (s)" "CPU (s)" "RSS (MiB)" "MB/s"
for v in "${VARIANTS[@]}"; do
	# shellcheck disable=SC2086 # options are words
	measure "mkfs.img ${v:-(defaults)}" "${MKFS[@]}" -q $v "$TAR" "$OUT"
done
# containerd's EROFS differ argv (plugins/diff/erofs, with the
# mkfs_options its docs set), the tar on standard input: mkfs.img through
# a link named mkfs.erofs (drop-in mode), then erofs-utils' mkfs.erofs
# when it is there ($EROFS_UTILS_MKFS, default /opt/erofs-utils-1.9.3).
# Neither syncs the image.
DROPIN=$BENCH_DIR/dropin/mkfs.erofs
mkdir -p "${DROPIN%/*}"
ln -sf "${MKFS[0]}" "$DROPIN"
CONTAINERD_ARGV="--tar=f --aufs --quiet -Enoinline_data --sort=none"
# shellcheck disable=SC2016 # expanded by sh -c
run_mkfs_erofs='bin=$1 out=$2 tar=$3; shift 3; exec "$bin" "$@" "$out" <"$tar"'
# shellcheck disable=SC2086 # options are words
measure "drop-in mkfs.erofs (containerd)" \
	sh -c "$run_mkfs_erofs" sh "$DROPIN" "$OUT" "$TAR" $CONTAINERD_ARGV
EROFS_UTILS_MKFS=${EROFS_UTILS_MKFS:-/opt/erofs-utils-1.9.3/bin/mkfs.erofs}
if [ -x "$EROFS_UTILS_MKFS" ]; then
	# shellcheck disable=SC2086
	measure "erofs-utils mkfs.erofs (same argv)" \
		sh -c "$run_mkfs_erofs" sh "$EROFS_UTILS_MKFS" "$OUT" "$TAR" \
		$CONTAINERD_ARGV
else
	echo "(erofs-utils' mkfs.erofs not found at $EROFS_UTILS_MKFS: row skipped)"
fi
measure "cp" cp "$TAR" "$OUT"
measure "cp + fsync" sh -c 'cp "$1" "$2" && sync "$2"' sh "$TAR" "$OUT"

size=$(stat -c %s "$BIGDIR")
measure "mkfs.img, 100,000 empty files" "${MKFS[@]}" -q "$BIGDIR" "$OUT"
if awk "BEGIN { exit !($LAST_SECS < 1.0) }"; then
	echo "100,000-entry directory: ${LAST_SECS} s (< 1 s: ok)"
else
	echo "100,000-entry directory: ${LAST_SECS} s (over the 1 s budget)"
	exit 1
fi
