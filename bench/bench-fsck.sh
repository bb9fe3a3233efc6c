#!/bin/bash
# SPDX-License-Identifier: MIT
# fsck.img's full check (every file's data read and decompressed) with 1
# and 2 threads, against erofs-utils 1.9.3's fsck.erofs --extract (without
# a directory: its full check, decompressing everything; plain fsck.erofs
# reads no file data, and --extract=DIR fails on every --fragments image in
# 1.9.3), on images of one layer: lzma 128 KiB clusters with --fragments,
# lz4hc, uncompressed, and a tar index (--tar-index: the index, then the
# tar).
#
# usage: bench/bench-fsck.sh [-n RUNS] [-t "THREAD COUNTS"] [-p] [TAR]
#
# TAR defaults to $BENCH_DIR/layer.tar (BENCH_DIR: /tmp/imgfs-bench); the
# images are built once into $BENCH_DIR/fsck/. Images are read from the
# page cache (read once before timing). For each case the median wall time,
# CPU time (user + system) and peak RSS of RUNS runs (default 3) are
# printed, with the speed-up of each thread count over one thread.
# On a shared machine, -p (root) runs the timed commands in their own
# scheduling group at nice -20, so that other users' load does not hide
# what a second thread gives.
#
# Needs GNU time (/usr/bin/time), erofs-utils 1.9.3 in
# /opt/erofs-utils-1.9.3/bin (or FSCK_EROFS).
set -euo pipefail

RUNS=3
THREADS="1 2"
PRIO=
while getopts "n:t:ph" opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	t) THREADS=$OPTARG ;;
	p) PRIO=1 ;;
	*) sed -n '3,21p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
BENCH_DIR=${BENCH_DIR:-/tmp/imgfs-bench}
TAR=${1:-$BENCH_DIR/layer.tar}
D=$BENCH_DIR/fsck

here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
if [ -z "${top_builddir:-}" ]; then
	top_builddir=$PWD
	[ -e "$top_builddir/fsck/fsck.img" ] || top_builddir=$top_srcdir
fi
# the real binaries, not libtool's wrappers: the RSS is theirs
LIBS=$top_builddir/lib/.libs
MKFS=$top_builddir/mkfs/.libs/mkfs.img
FSCK=$top_builddir/fsck/.libs/fsck.img
[ -x "$MKFS" ] || MKFS=$top_builddir/mkfs/mkfs.img
[ -x "$FSCK" ] || FSCK=$top_builddir/fsck/fsck.img
FSCK_EROFS=${FSCK_EROFS:-/opt/erofs-utils-1.9.3/bin/fsck.erofs}
TIME=/usr/bin/time

die() { echo "bench-fsck: $*" >&2; exit 1; }
[ -x "$TIME" ] || die "needs GNU time (Debian package time)"
[ -s "$TAR" ] || die "no layer $TAR"
HAVE_EROFS=1
[ -x "$FSCK_EROFS" ] || {
	echo "bench-fsck: no $FSCK_EROFS: its rows are left out" >&2
	HAVE_EROFS=
}
mkdir -p "$D"
trap 'rm -f "$D/times" "$D/t1"' EXIT
if [ -n "$PRIO" ] && [ -z "${BENCH_FSCK_PRIO:-}" ]; then
	[ "$(id -u)" = 0 ] || die "-p needs root"
	# a new session is a new autogroup; raise its weight, then rerun
	export BENCH_FSCK_PRIO=1
	exec setsid -w bash -c 'echo -20 >/proc/self/autogroup && exec bash "$0" "$@"' \
		"$0" -n "$RUNS" -t "$THREADS" -p "$TAR"
fi

CASES=("lzma-128k-fragments:-z lzma -C 131072 --fragments"
	"lz4hc:-z lz4hc"
	"uncompressed:"
	"tar-index:--tar-index")
for c in "${CASES[@]}"; do
	name=${c%%:*}
	img=$D/$name.img
	if [ ! -s "$img" ] || [ "$img" -ot "$TAR" ]; then
		echo "bench-fsck: building $img" >&2
		# shellcheck disable=SC2086
		LD_LIBRARY_PATH=$LIBS "$MKFS" -q ${c#*:} "$TAR" "$img" ||
			die "mkfs.img failed"
	fi
done

# median of column $1 of $D/times
col() { awk -v c="$1" '{ print $c }' "$D/times" | sort -n |
	awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# Time "$@" RUNS times into $D/times: wall, cpu, rss (KiB) per line.
measure() {
	: >"$D/times"
	for _ in $(seq "$RUNS"); do
		LD_LIBRARY_PATH=$LIBS "$TIME" -f '%e %U %S %M' -o "$D/t1" \
			"$@" >/dev/null 2>&1 || [ $? -eq 4 ] ||
			die "failed: $*"
		awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$D/t1" \
			>>"$D/times"
	done
	rm -f "$D/t1"
}

echo "fsck: full check of $(basename "$TAR") images ($(nproc) CPUs, medians of $RUNS runs)"
echo
echo "| image | checker | wall s | CPU s | peak RSS MiB | vs 1 thread |"
echo "|---|---|---:|---:|---:|---:|"
for c in "${CASES[@]}"; do
	name=${c%%:*}
	img=$D/$name.img
	cat "$img" >/dev/null
	one=
	for t in $THREADS; do
		measure "$FSCK" --threads="$t" "$img"
		wall=$(col 1)
		[ -n "$one" ] || one=$wall
		printf '| %s | fsck.img --threads=%s | %s | %s | %d | %.2fx |\n' \
			"$name" "$t" "$wall" "$(col 2)" $(($(col 3) / 1024)) \
			"$(awk -v a="$one" -v b="$wall" 'BEGIN { print a / b }')"
	done
	[ -n "$HAVE_EROFS" ] || continue
	# fsck.erofs reads a tar index's data from the tar given as its
	# device (it does not follow the device table into the image)
	dev=()
	[ "$name" != tar-index ] || dev=(--device="$TAR")
	measure "$FSCK_EROFS" "${dev[@]}" --extract "$img"
	printf '| %s | fsck.erofs 1.9.3 --extract | %s | %s | %d | %.2fx |\n' \
		"$name" "$(col 1)" "$(col 2)" $(($(col 3) / 1024)) \
		"$(awk -v a="$one" -v b="$(col 1)" 'BEGIN { print a / b }')"
done
