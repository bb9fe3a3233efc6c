#!/bin/bash
# SPDX-License-Identifier: MIT
# The containerd snapshotter start-up table, measured on our images: what
# it costs to unpack a layer and then to start from it, for EROFS images
# mounted file-backed (buffered and -o directio) and through a loop device,
# and for the overlayfs way (the tar extracted into a directory).
#
# usage: bench/bench-read.sh [-n RUNS] [-w WORKDIR] [-s IOPS[:MBPS]] [-o]
#                            [TAR]...   (as root)
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
#  python:     caches dropped again (still mounted), the files a Python
#              start-up importing a few standard modules opens;
#  tree, cold: caches dropped again, find + cat of every file;
#  warm:       the working set and the whole tree again, caches kept.
# Read rows for mkfs.img's image, for mkfs.erofs 1.9.3's image of the same
# layer (as containerd makes it) and for the extracted directory.
# The working sets are what a shell and coreutils, and python3, open when
# the layer is a root filesystem (strace of a chroot run in the extracted
# tree; "-" without python3), else every 20th regular file in path order.
# Medians of RUNS runs (default 3), in seconds. Every mount is undone on
# exit, even on failure. Work files go to WORKDIR (default
# $BENCH_DIR/read: the directory extraction and the images share one
# filesystem).
#
# -s IOPS[:MBPS]  a slow disk, as cloud volumes are: WORKDIR is a new ext4
#              filesystem on a loop device whose reads are limited to IOPS
#              per second (and MBPS MiB/s; e.g. 3000:125, a gp3 volume's
#              baseline) with the block I/O throttle of the cgroup v2 io
#              controller (io.max) or, where the blkio controller is
#              cgroup v1's, its root throttle rules for that device.
#              The limit is removed and the filesystem unmounted on exit.
# -o           also the working-set-first experiment: the layer rewritten
#              with the working sets' files at its front (then every other
#              entry in its order), converted by mkfs.img and read the same
#              ways (rows "working set first").
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
SLOW=
ORDERED=
while getopts "n:w:s:oh" opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	w) W=$OPTARG ;;
	s) SLOW=$OPTARG ;;
	o) ORDERED=1 ;;
	*) sed -n '3,52p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
W=${W:-$BENCH_DIR/read}
if [ -n "$SLOW" ]; then
	[[ $SLOW =~ ^[1-9][0-9]*(:[1-9][0-9]*)?$ ]] || {
		echo "bench-read: -s wants IOPS or IOPS:MBPS, not '$SLOW'" >&2
		exit 2
	}
fi

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

LOOPS=
SLOW_FS= SLOW_LOOP= SLOW_DEV= SLOW_CG= SLOW_V1=
# A mount still busy (a reader interrupted with us) is retried, then
# detached lazily: nothing stays mounted after the script.
unmount() {
	umount "$1" 2>/dev/null || { sleep 1; umount "$1" 2>/dev/null; } ||
		umount -l "$1"
}
cleanup() {
	[ -n "${MNT:-}" ] && mountpoint -q "$MNT" 2>/dev/null && unmount "$MNT"
	for l in $LOOPS; do losetup -d "$l" 2>/dev/null || true; done
	if [ -n "${W:-}" ] && [ -d "$W" ]; then
		rm -rf "$W/x" "$W"/*.img "$W"/ws.* "$W"/trace.* "$W/ordered.tar"
	fi
	slow_disk_off
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The slow disk (-s): an ext4 filesystem on a loop device over a file in
# $BENCH_DIR, its reads throttled; W moves onto it.
slow_disk_on() { # IOPS[:MBPS] SIZE-BYTES
	local iops=${1%%:*} mbps= bytes=0 unified=
	[ "$1" != "$iops" ] && mbps=${1#*:} && bytes=$((mbps << 20))
	SLOW_FS=$BENCH_DIR/slow.fs
	rm -f "$SLOW_FS"
	truncate -s "$2" "$SLOW_FS"
	mkfs.ext4 -q -F "$SLOW_FS" || die "mkfs.ext4 failed"
	SLOW_LOOP=$(losetup -f --show "$SLOW_FS")
	SLOW_DEV=$(lsblk -dno MAJ:MIN "$SLOW_LOOP" | tr -d ' ')
	mkdir -p "$BENCH_DIR/slow-mnt"
	mount "$SLOW_LOOP" "$BENCH_DIR/slow-mnt"
	W=$BENCH_DIR/slow-mnt/read
	for u in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		[ -f "$u/cgroup.controllers" ] &&
			grep -qw io "$u/cgroup.controllers" && unified=$u && break
	done
	if [ -n "$unified" ]; then
		SLOW_CG=$unified/imgfs-bench-read
		echo +io >"$unified/cgroup.subtree_control" 2>/dev/null || true
		mkdir -p "$SLOW_CG"
		echo "$SLOW_DEV riops=$iops${mbps:+ rbps=$bytes}" >"$SLOW_CG/io.max" ||
			die "cannot set io.max"
		echo $$ >"$SLOW_CG/cgroup.procs"
		SLOW_HOW="cgroup v2 io.max riops=$iops${mbps:+ rbps=${mbps}MiB/s}"
	elif [ -f /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ]; then
		SLOW_V1=/sys/fs/cgroup/blkio
		echo "$SLOW_DEV $iops" >"$SLOW_V1/blkio.throttle.read_iops_device" ||
			die "cannot set blkio.throttle.read_iops_device"
		[ -z "$mbps" ] ||
			echo "$SLOW_DEV $bytes" >"$SLOW_V1/blkio.throttle.read_bps_device"
		SLOW_HOW="cgroup v1 blkio throttle (root) read_iops=$iops${mbps:+ read_bps=${mbps}MiB/s}"
	else
		die "no cgroup io controller (v2 io.max or v1 blkio) to throttle with"
	fi
	echo "bench-read: slow disk: $SLOW_LOOP ($SLOW_DEV), $SLOW_HOW" >&2
}
slow_disk_off() {
	if [ -n "$SLOW_CG" ] && [ -d "$SLOW_CG" ]; then
		echo $$ >"${SLOW_CG%/*}/cgroup.procs" 2>/dev/null || true
		echo "$SLOW_DEV riops=max rbps=max" >"$SLOW_CG/io.max" 2>/dev/null || true
		rmdir "$SLOW_CG" 2>/dev/null || true
	fi
	if [ -n "$SLOW_V1" ]; then
		echo "$SLOW_DEV 0" >"$SLOW_V1/blkio.throttle.read_iops_device" 2>/dev/null || true
		echo "$SLOW_DEV 0" >"$SLOW_V1/blkio.throttle.read_bps_device" 2>/dev/null || true
	fi
	SLOW_CG= SLOW_V1=
	if [ -n "$SLOW_LOOP" ]; then
		mountpoint -q "$BENCH_DIR/slow-mnt" && unmount "$BENCH_DIR/slow-mnt"
		losetup -d "$SLOW_LOOP" 2>/dev/null || true
		SLOW_LOOP=
	fi
	[ -z "$SLOW_FS" ] || rm -f "$SLOW_FS"
	SLOW_FS=
}

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

# The files (regular, inside the root) a command run chrooted in the
# extracted tree $1 opens or executes, NUL-separated relative paths, into
# $2; 1 when it cannot be traced.
trace_set() { # TREE LIST COMMAND...
	local x=$1 out=$2
	shift 2
	command -v strace >/dev/null || return 1
	strace -f -qq -e trace=open,openat,execve -o "$W/trace.txt" \
		chroot "$x" "$@" >/dev/null 2>&1 || return 1
	sed -n 's/.*\(open\|openat\|execve\)([^"]*"\([^"]*\)".*= [0-9].*/\2/p' \
		"$W/trace.txt" | sort -u | while read -r p; do
		if [ -f "$x/$p" ]; then printf ".%s\0" "$p"; fi
	done >"$out"
}

# Working sets of the extracted tree $1: $W/ws.list (a shell and
# coreutils) and $W/ws.py.list (python3 importing a few standard modules;
# empty without python3).
working_set() {
	local x=$1 sh=
	for s in bin/sh usr/bin/sh; do [ -x "$x/$s" ] && sh=/$s && break; done
	if [ -n "$sh" ] && trace_set "$x" "$W/ws.list" "$sh" -c \
		'ls -l / >/dev/null; cat /etc/os-release >/dev/null 2>&1; id >/dev/null; date >/dev/null; sort /etc/passwd >/dev/null 2>&1'; then
		WS_KIND="shell + coreutils start-up (strace)"
	else
		(cd "$x" && find . -type f -print0 | sort -z |
			awk 'BEGIN { RS = ORS = "\0" } NR % 20 == 1') >"$W/ws.list"
		WS_KIND="every 20th file"
	fi
	: >"$W/ws.py.list"
	PY_KIND="no python3 in the layer"
	if [ -x "$x/usr/bin/python3" ] && trace_set "$x" "$W/ws.py.list" \
		/usr/bin/python3 -c 'import os, re, argparse, subprocess, logging, datetime, collections, pathlib, email'; then
		PY_KIND="python3 -c 'import os, re, argparse, subprocess, logging, datetime, collections, pathlib, email' (strace)"
	fi
	WS_FILES=$(tr -cd '\0' <"$W/ws.list" | wc -c)
	WS_BYTES=$(cd "$x" && xargs -0 cat -- <"$W/ws.list" | wc -c)
	PY_FILES=$(tr -cd '\0' <"$W/ws.py.list" | wc -c)
	PY_BYTES=0
	[ "$PY_FILES" = 0 ] || PY_BYTES=$(cd "$x" && xargs -0 cat -- <"$W/ws.py.list" | wc -c)
}

# The layer $1 rewritten into $2 with the working sets' entries first
# (hard links with their targets), then every other entry in its order;
# entries are copied as archived (pax records included).
ordered_tar() { # TAR OUT
	python3 - "$1" "$2" "$W/ws.list" "$W/ws.py.list" <<'PY'
import sys, tarfile
src, out, lists = sys.argv[1], sys.argv[2], sys.argv[3:]
want = []
for l in lists:
    with open(l, "rb") as f:
        for p in f.read().split(b"\0"):
            if p:
                want.append(p.decode("utf-8", "surrogateescape")[2:])
def key(n):
    n = n[2:] if n.startswith("./") else n
    return n.rstrip("/")
with tarfile.open(src, "r:") as t:
    members = t.getmembers()
    byname = {key(m.name): m for m in members}
    first, seen = [], set()
    for p in want:
        m = byname.get(p)
        if m is None or id(m) in seen:
            continue
        if m.islnk():
            tgt = byname.get(key(m.linkname))
            if tgt is not None and id(tgt) not in seen:
                first.append(tgt); seen.add(id(tgt))
        first.append(m); seen.add(id(m))
    with tarfile.open(out, "w:", format=tarfile.PAX_FORMAT) as o:
        for m in first + [m for m in members if id(m) not in seen]:
            o.addfile(m, t.extractfile(m) if m.isreg() else None)
PY
}

read_ws() { (cd "$1" && xargs -0 -r cat -- <"$2" >/dev/null); }
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
	ROWS+=("$(printf '| %s | %s | %s | %s | %s | %s | %s | %s |' "$@")")
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

# First run, python first run, cold tree, warm working set and tree: five
# medians ("-" for python when the layer has none).
time_reads() { # METHOD IMAGE-or-DIR
	local m=$1 src=$2 r t0 dir=$MNT p
	[ "$m" = dir ] && dir=$src
	for r in $(seq "$RUNS"); do
		drop_caches
		t0=$(now)
		if [ "$m" != dir ]; then do_mount "$m" "$src" || return 1; fi
		read_ws "$dir" "$W/ws.list"
		a=$(since "$t0")
		p=-
		if [ -s "$W/ws.py.list" ]; then
			drop_caches
			t0=$(now); read_ws "$dir" "$W/ws.py.list"; p=$(since "$t0")
		fi
		drop_caches
		t0=$(now); read_tree "$dir"; b=$(since "$t0")
		t0=$(now); read_ws "$dir" "$W/ws.list"; c=$(since "$t0")
		t0=$(now); read_tree "$dir"; d=$(since "$t0")
		[ "$m" = dir ] || do_umount "$m"
		echo "$a $p $b $c $d"
	done >"$W/times"
	for col in 1 2 3 4 5; do
		awk -v c="$col" '{ print $c }' "$W/times" | median
	done | paste -sd' '
}

# The read rows of one image, mounted each way.
image_reads() { # NAME WHAT-PREFIX UNPACK-NOTE IMAGE
	local name=$1 pre=$2 note=$3 img=$4 m what t a p b c d
	for m in file directio loop; do
		echo "bench-read: $name: $pre, $m mount" >&2
		case $m in
		file) what="$pre, file-backed (buffered)" ;;
		directio) what="$pre, file-backed -o directio" ;;
		loop) what="$pre, loop device" ;;
		esac
		if t=$(time_reads "$m" "$img"); then
			read -r a p b c d <<<"$t"
			row "$name" "$what" "$note" "$a" "$p" "$b" "$c" "$d"
		else
			row "$name" "$what" "-" "not supported by this kernel" "-" "-" "-" "-"
		fi
	done
}

layers=("$@")
[ ${#layers[@]} -gt 0 ] || layers=("$BENCH_DIR/layer.tar" "$(small_layer)")
for i in "${!layers[@]}"; do
	[ "${layers[$i]}" != small ] || layers[$i]=$(small_layer)
	[ -s "${layers[$i]}" ] || die "no layer ${layers[$i]}"
done
if [ -n "$SLOW" ]; then
	# room for the extraction, four images and a rewritten layer at once
	size=$(du -cb "${layers[@]}" | tail -n 1 | cut -f1)
	size=$((size * 8 > (4 << 30) ? size * 8 : 4 << 30))
	slow_disk_on "$SLOW" "$size"
fi
mkdir -p "$W"
MNT=$W/mnt
mkdir -p "$MNT"

for tar in "${layers[@]}"; do
	name=$(basename "$tar" .tar)
	CUR_TAR=$tar
	cat "$tar" >/dev/null # the input is read from the page cache
	echo "bench-read: $name: unpacking ($RUNS runs each)" >&2
	rm -rf "$W/x"
	u_tar=$(time_unpack 'rm -rf "$W/x"; mkdir "$W/x"' untar_sync "$tar")
	working_set "$W/x"
	echo "bench-read: $name: working set: $WS_KIND, $WS_FILES files, $WS_BYTES bytes" >&2
	echo "bench-read: $name: python: $PY_KIND, $PY_FILES files, $PY_BYTES bytes" >&2
	if [ -n "$ORDERED" ]; then
		ordered_tar "$tar" "$W/ordered.tar" || die "cannot rewrite $tar"
	fi
	for comp in none lz4hc; do
		zo=()
		eo=()
		[ "$comp" = none ] || { zo=(-z "$comp"); eo=("-z$comp"); }
		img=$W/$name-$comp.img
		u_img=$(time_unpack 'rm -f "$img"' mkfs_img "${zo[@]}" "$tar" "$img")
		u_nofs=$(time_unpack 'rm -f "$img"' mkfs_img --no-fsync "${zo[@]}" "$tar" "$img")
		u_er=$(time_unpack 'rm -f "$W/e.img"' mkfs_erofs "${eo[@]}" "$W/e.img")
		u_ers=$(time_unpack 'rm -f "$W/e.img"' mkfs_erofs_sync "${eo[@]}" "$W/e.img")
		label=uncompressed
		[ "$comp" = none ] || label=$comp
		row "$name" "unpack: mkfs.img $label (fsync)" "$u_img" "" "" "" "" ""
		row "$name" "unpack: mkfs.img $label --no-fsync" "$u_nofs" "" "" "" "" ""
		row "$name" "unpack: mkfs.erofs 1.9.3 $label -Enoinline_data" "$u_er" "" "" "" "" ""
		row "$name" "unpack: mkfs.erofs 1.9.3 $label -Enoinline_data + sync" "$u_ers" "" "" "" "" ""
		image_reads "$name" "EROFS by mkfs.img, $label" "(mkfs.img above)" "$img"
		image_reads "$name" "EROFS by mkfs.erofs 1.9.3, $label" "(mkfs.erofs above)" "$W/e.img"
		rm -f "$W/e.img"
		if [ -n "$ORDERED" ]; then
			mkfs_img "${zo[@]}" "$W/ordered.tar" "$img" ||
				die "mkfs.img of the rewritten layer failed"
			image_reads "$name" "EROFS by mkfs.img, $label, working set first" "-" "$img"
		fi
		rm -f "$img"
	done
	echo "bench-read: $name: extracted directory" >&2
	read -r a p b c d <<<"$(time_reads dir "$W/x")"
	row "$name" "overlayfs way: bsdtar -x + sync, directory" "$u_tar" "$a" "$p" "$b" "$c" "$d"
	rm -rf "$W/x" "$W/ordered.tar"
done

echo
echo "Start-up table ($(uname -r), $(nproc) CPUs, medians of $RUNS runs, seconds;"
echo "first run = caches dropped, mount + read the working set; python = caches"
echo "dropped, the python3 working set; tree = find + cat of every file)"
[ -z "$SLOW" ] || echo "Disk: ext4 on a loop device, reads limited by $SLOW_HOW."
echo
echo "| layer | unpack / snapshotter | unpack | first run | python | tree, cold | working set, warm | tree, warm |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
