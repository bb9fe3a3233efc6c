#!/bin/bash
# SPDX-License-Identifier: MIT
# The containerd snapshotter start-up table, measured on our images: what
# it costs to unpack a layer and then to start from it, for EROFS images
# mounted file-backed (buffered and -o directio) and through a loop device,
# and for the overlayfs way (the tar extracted into a directory).
#
# usage: bench/bench-read.sh [-n RUNS] [-w WORKDIR] [TAR]...   (as root)
#
# TARs default to the realistic layer $BENCH_DIR/layer.tar (BENCH_DIR:
# /tmp/imgfs-bench) and a layer of 50,000 small files generated once into
# $BENCH_DIR/small-50k.tar (the argument "small" names it). For each layer, side by side in one run:
#  unpack:     mkfs.img (fsync, the default) and --no-fsync; mkfs.erofs
#              1.9.3 as containerd runs it (--tar=f --aufs --quiet
#              -Enoinline_data -b4096, from stdin), alone and followed by
#              sync(1) on the filesystem; bsdtar -x into a directory on the
#              same filesystem then sync: uncompressed and -z lz4hc.
#  first run:  caches dropped, then mount + read a start-up working set;
#  tree, cold: caches dropped again, find + cat of every file;
#  warm:       the working set and the whole tree again, caches kept.
# The working set is what a shell and coreutils open when the layer is a
# root filesystem (strace of a chroot run in the extracted tree), else every
# 20th regular file in path order. Medians of RUNS runs (default 3), in
# seconds. Every mount is undone on exit, even on failure. Work files go to
# WORKDIR (default $BENCH_DIR/read: the directory extraction and the images
# share one filesystem).
#
# Needs root, bsdtar, losetup, the kernel's EROFS with file-backed mounts
# (Linux 6.12+; -o directio rows are skipped with a note when the kernel
# refuses it), erofs-utils 1.9.3 in /opt/erofs-utils-1.9.3/bin (or
# MKFS_EROFS), and the build's tests/helpers/fmount ("make check" or
# "make tests/helpers/fmount" builds it; this script builds it if missing).
set -euo pipefail

RUNS=3
BENCH_DIR=${BENCH_DIR:-/tmp/imgfs-bench}
W=
while getopts "n:w:h" opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	w) W=$OPTARG ;;
	*) sed -n '3,33p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
W=${W:-$BENCH_DIR/read}

here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
if [ -z "${top_builddir:-}" ]; then
	top_builddir=$PWD
	[ -e "$top_builddir/mkfs/mkfs.img" ] || top_builddir=$top_srcdir
fi
MKFS=$top_builddir/mkfs/mkfs.img
[ -x "$top_builddir/mkfs/.libs/mkfs.img" ] &&
	MKFS="env LD_LIBRARY_PATH=$top_builddir/lib/.libs $top_builddir/mkfs/.libs/mkfs.img"
FMOUNT=$top_builddir/tests/helpers/fmount
MKFS_EROFS=${MKFS_EROFS:-/opt/erofs-utils-1.9.3/bin/mkfs.erofs}

die() { echo "bench-read: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (mounts, drop_caches)"
for t in bsdtar losetup mount umount sync find xargs; do
	command -v "$t" >/dev/null || die "needs $t"
done
[ -x "$MKFS_EROFS" ] || die "needs mkfs.erofs 1.9.3 at $MKFS_EROFS (set MKFS_EROFS)"
grep -qw erofs /proc/filesystems || modprobe erofs 2>/dev/null ||
	die "the kernel has no EROFS"
if [ ! -x "$FMOUNT" ]; then
	make -C "$top_builddir" tests/helpers/fmount >/dev/null ||
		die "cannot build tests/helpers/fmount"
fi

mkdir -p "$W"
MNT=$W/mnt
LOOPS=
cleanup() {
	mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"
	for l in $LOOPS; do losetup -d "$l" 2>/dev/null || true; done
	rm -rf "$W/x" "$W"/*.img "$W"/ws.* "$W"/trace.*
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$MNT"

# 50,000 small files (0 to 16 KiB, text-like), 500 directories: made once.
small_layer() {
	local tar=$BENCH_DIR/small-50k.tar
	[ -s "$tar" ] && { echo "$tar"; return; }
	python3 - "$tar.tmp" <<'PY' >&2
import io, random, sys, tarfile
rnd = random.Random(50000)
words = [b"lorem", b"ipsum", b"dolor", b"sit", b"amet", b"consectetur",
         b"adipiscing", b"elit", b"sed", b"do", b"eiusmod", b"tempor"]
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as tf:
    for d in range(500):
        ti = tarfile.TarInfo("srv/d%03d" % d)
        ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, 1700000000
        tf.addfile(ti)
        for f in range(100):
            n = int(2 ** rnd.uniform(0, 14)) - 1
            data = b" ".join(rnd.choice(words) for _ in range(n // 5 + 1))[:n]
            ti = tarfile.TarInfo("srv/d%03d/f%03d.txt" % (d, f))
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 1700000000
            tf.addfile(ti, io.BytesIO(data))
PY
	mv "$tar.tmp" "$tar"
	echo "$tar"
}

now() { date +%s%N; }
# Seconds since $1 (from now()), three decimals.
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# Working set of the extracted tree $1 into $W/ws.list (NUL-separated,
# relative paths).
working_set() {
	local x=$1 sh=
	for s in bin/sh usr/bin/sh; do [ -x "$x/$s" ] && sh=/$s && break; done
	if [ -n "$sh" ] && command -v strace >/dev/null &&
		strace -f -qq -e trace=open,openat,execve -o "$W/trace.txt" \
			chroot "$x" "$sh" -c 'ls -l / >/dev/null; cat /etc/os-release >/dev/null 2>&1; id >/dev/null; date >/dev/null; sort /etc/passwd >/dev/null 2>&1' \
			>/dev/null 2>&1; then
		# successful opens and execs of regular files inside the root
		sed -n 's/.*\(open\|openat\|execve\)([^"]*"\([^"]*\)".*= [0-9].*/\2/p' \
			"$W/trace.txt" | sort -u | while read -r p; do
			if [ -f "$x/$p" ]; then printf ".%s\0" "$p"; fi
		done >"$W/ws.list"
		WS_KIND="shell + coreutils start-up (strace)"
	else
		(cd "$x" && find . -type f -print0 | sort -z |
			awk 'BEGIN { RS = ORS = "\0" } NR % 20 == 1') >"$W/ws.list"
		WS_KIND="every 20th file"
	fi
	WS_FILES=$(tr -cd '\0' <"$W/ws.list" | wc -c)
	WS_BYTES=$(cd "$x" && xargs -0 cat -- <"$W/ws.list" | wc -c)
}

read_ws() { (cd "$1" && xargs -0 cat -- <"$W/ws.list" >/dev/null); }
read_tree() { (cd "$1" && find . -type f -print0 | xargs -0 cat -- >/dev/null); }

# Mount image $2 on $MNT the way $1 says; 1 if the kernel refuses.
do_mount() {
	case $1 in
	file) "$FMOUNT" "$2" "$MNT" ;;
	directio) "$FMOUNT" -o directio "$2" "$MNT" 2>/dev/null || return 1 ;;
	loop)
		LOOP=$(losetup -f --show -r "$2")
		LOOPS="$LOOPS $LOOP"
		mount -t erofs -o ro "$LOOP" "$MNT"
		;;
	esac
}
do_umount() {
	umount "$MNT"
	if [ "$1" = loop ]; then
		losetup -d "$LOOP"
		LOOPS=${LOOPS/ $LOOP/}
	fi
}

# Rows go to standard error as they are measured (a long run shows
# progress and keeps what it measured), and into the table at the end.
ROWS=()
row() {
	ROWS+=("$(printf '| %s | %s | %s | %s | %s | %s | %s |' "$@")")
	echo "bench-read: ${ROWS[-1]}" >&2
}

# One unpack command, RUNS times: the median.
time_unpack() { # SETUP-CMD CMD...
	local setup=$1 t0 r
	shift
	for r in $(seq "$RUNS"); do
		eval "$setup"
		t0=$(now)
		"$@" >/dev/null 2>&1 || die "failed: $*"
		since "$t0"
		echo
	done | median
}

mkfs_img() { $MKFS -q "$@"; }
# as containerd's EROFS snapshotter runs it, the layer on standard input
mkfs_erofs() { # COMPRESSION-OPTIONS... OUT
	"$MKFS_EROFS" --tar=f --aufs --quiet -Enoinline_data -b4096 "$@" \
		<"$CUR_TAR"
}
mkfs_erofs_sync() { mkfs_erofs "$@" && sync -f "$W"; }
untar_sync() { bsdtar -xf "$1" -C "$W/x" && sync -f "$W/x"; }

# First run, cold tree, warm working set and tree: four medians.
time_reads() { # METHOD IMAGE-or-DIR
	local m=$1 src=$2 r t0 dir=$MNT
	[ "$m" = dir ] && dir=$src
	for r in $(seq "$RUNS"); do
		drop_caches
		t0=$(now)
		if [ "$m" != dir ]; then do_mount "$m" "$src" || return 1; fi
		read_ws "$dir"
		a=$(since "$t0")
		drop_caches
		t0=$(now); read_tree "$dir"; b=$(since "$t0")
		t0=$(now); read_ws "$dir"; c=$(since "$t0")
		t0=$(now); read_tree "$dir"; d=$(since "$t0")
		[ "$m" = dir ] || do_umount "$m"
		echo "$a $b $c $d"
	done >"$W/times"
	for col in 1 2 3 4; do
		awk -v c="$col" '{ print $c }' "$W/times" | median
	done | paste -sd' '
}

layers=("$@")
[ ${#layers[@]} -gt 0 ] || layers=("$BENCH_DIR/layer.tar" "$(small_layer)")
for tar in "${layers[@]}"; do
	[ "$tar" != small ] || tar=$(small_layer)
	[ -s "$tar" ] || die "no layer $tar"
	name=$(basename "$tar" .tar)
	CUR_TAR=$tar
	cat "$tar" >/dev/null # the input is read from the page cache
	echo "bench-read: $name: unpacking ($RUNS runs each)" >&2
	rm -rf "$W/x"
	u_tar=$(time_unpack 'rm -rf "$W/x"; mkdir "$W/x"' untar_sync "$tar")
	working_set "$W/x"
	echo "bench-read: $name: working set: $WS_KIND, $WS_FILES files, $WS_BYTES bytes" >&2
	for comp in none lz4hc; do
		zo=()
		eo=()
		[ "$comp" = none ] || { zo=(-z "$comp"); eo=("-z$comp"); }
		img=$W/$name-$comp.img
		u_img=$(time_unpack 'rm -f "$img"' mkfs_img "${zo[@]}" "$tar" "$img")
		u_nofs=$(time_unpack 'rm -f "$img"' mkfs_img --no-fsync "${zo[@]}" "$tar" "$img")
		u_er=$(time_unpack 'rm -f "$W/e.img"' mkfs_erofs "${eo[@]}" "$W/e.img")
		u_ers=$(time_unpack 'rm -f "$W/e.img"' mkfs_erofs_sync "${eo[@]}" "$W/e.img")
		rm -f "$W/e.img"
		label=uncompressed
		[ "$comp" = none ] || label=$comp
		row "$name" "unpack: mkfs.img $label (fsync)" "$u_img" "" "" "" ""
		row "$name" "unpack: mkfs.img $label --no-fsync" "$u_nofs" "" "" "" ""
		row "$name" "unpack: mkfs.erofs 1.9.3 $label -Enoinline_data" "$u_er" "" "" "" ""
		row "$name" "unpack: mkfs.erofs 1.9.3 $label -Enoinline_data + sync" "$u_ers" "" "" "" ""
		for m in file directio loop; do
			echo "bench-read: $name: $label, $m mount" >&2
			case $m in
			file) what="EROFS file-backed (buffered), $label" ;;
			directio) what="EROFS file-backed -o directio, $label" ;;
			loop) what="EROFS loop device, $label" ;;
			esac
			if t=$(time_reads "$m" "$img"); then
				read -r a b c d <<<"$t"
				row "$name" "$what" "(mkfs.img above)" "$a" "$b" "$c" "$d"
			else
				row "$name" "$what" "-" "not supported by this kernel" "-" "-" "-"
			fi
		done
		rm -f "$img"
	done
	echo "bench-read: $name: extracted directory" >&2
	read -r a b c d <<<"$(time_reads dir "$W/x")"
	row "$name" "overlayfs way: bsdtar -x + sync, directory" "$u_tar" "$a" "$b" "$c" "$d"
	rm -rf "$W/x"
done

echo
echo "Start-up table ($(uname -r), $(nproc) CPUs, medians of $RUNS runs, seconds;"
echo "first run = caches dropped, mount + read the working set; tree = find + cat of every file)"
echo
echo "| layer | unpack / snapshotter | unpack | first run | tree, cold | working set, warm | tree, warm |"
echo "|---|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
