#!/bin/bash
# SPDX-License-Identifier: MIT
# OCI layout conversion benchmark (mkfs.img --oci).
#
# usage: bench/bench-oci.sh [-n RUNS] [-j JOBS] [-o "MKFS OPTIONS"]
#                           [-b gzip|zstd] [TAR]
#
# TAR (default: the layer bench-convert.sh caches, $BENCH_DIR/layer.tar,
# made by it when missing) is split into five layers by entries: two base
# layers shared by three images, and one layer of its own per image, all
# gzip as almost every layer in a registry is; -b zstd makes the base
# layers zstd. The layout is cached in $BENCH_DIR/oci-src-gzip (or -zstd).
# Cases, each the median of RUNS runs (default 3): cold (empty
# destination) with 1 job and with JOBS jobs (default: online CPUs); warm (the same destination again:
# every unit reused); from the cache (a new destination, --cache-dir
# filled); and reuse across images (image 1 first, then all three: the
# base layers are not converted again). Printed: wall time, units
# converted and reused, layers/s and MB/s (uncompressed tar bytes of the
# units converted per second), peak RSS (GNU time), and the speed-ups.
# The reference row is containerd's way: each layer blob of the layout,
# one after the other, decompressed by zcat or zstd -dc into
# "mkfs.erofs --tar=f --aufs --quiet -Enoinline_data -b4096 -U UUID"
# (erofs-utils 1.9.3 from ../shared/anchors, $MKFS_EROFS; the row is left
# out when it is missing), and the verified cold run is given as a
# fraction of it.
#
# Needs GNU time (/usr/bin/time), python3, zstd.
set -euo pipefail

RUNS=3
JOBS=$(nproc)
OPTS=""
BASE=gzip
while getopts "n:j:o:b:h" opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	j) JOBS=$OPTARG ;;
	o) OPTS=$OPTARG ;;
	b) BASE=$OPTARG ;;
	*) sed -n '3,26p' "$0"; exit 2 ;;
	esac
done
case $BASE in
gzip | zstd) ;;
*) echo "-b: gzip or zstd, not $BASE" >&2; exit 2 ;;
esac
shift $((OPTIND - 1))

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
command -v zstd >/dev/null || { echo "needs zstd" >&2; exit 1; }
. "$top_srcdir/bench/mkfs-binary.sh"

TAR=${1:-$BENCH_DIR/layer.tar}
if [ ! -e "$TAR" ]; then
	echo "making $TAR (bench-convert.sh's layer)..." >&2
	BENCH_DIR=$BENCH_DIR "$top_srcdir/bench/bench-convert.sh" -n 1 >/dev/null
fi
SRC=$BENCH_DIR/oci-src-$BASE
SPLIT=$BENCH_DIR/oci-split
if [ ! -e "$SRC/index.json" ] || [ "$TAR" -nt "$SRC/index.json" ]; then
	echo "splitting $TAR into 5 layers, building $SRC..." >&2
	rm -rf "$SRC" "$SPLIT"
	mkdir -p "$SPLIT"
	"$PYTHON" - "$TAR" "$SPLIT" <<'PY'
import sys, tarfile
src, out = sys.argv[1:]
with tarfile.open(src) as t:
    members = t.getmembers()
# parts by entry count; every part keeps the directories it writes into
n = len(members)
bounds = [0, n * 30 // 100, n * 60 // 100, n * 73 // 100, n * 86 // 100, n]
with tarfile.open(src) as t:
    for i in range(5):
        with tarfile.open("%s/part%d.tar" % (out, i), "w", format=tarfile.PAX_FORMAT) as o:
            for m in members[bounds[i]:bounds[i + 1]]:
                o.addfile(m, t.extractfile(m) if m.isreg() else None)
PY
	P=$SPLIT
	"$PYTHON" "$top_srcdir/tests/oci/mklayout.py" "$SRC" \
		"img1=$P/part0.tar:$BASE,$P/part1.tar:$BASE,$P/part2.tar:gzip" \
		"img2=$P/part0.tar:$BASE,$P/part1.tar:$BASE,$P/part3.tar:gzip" \
		"img3=$P/part0.tar:$BASE,$P/part1.tar:$BASE,$P/part4.tar:gzip"
fi
# uncompressed bytes of each unit, by diffID
declare -A UBYTES
for f in "$SPLIT"/part*.tar; do
	UBYTES["sha256:$(sha256sum <"$f" | cut -d' ' -f1)"]=$(stat -c %s "$f")
done

WORK=$BENCH_DIR/oci-work
trap 'rm -rf "$WORK"' EXIT

# run NAME PREP ARGS...: RUNS times (PREP, a function, before each), the
# median wall time, its converted/reused counts and the peak RSS
run() {
	local name=$1 prep=$2 i walls=() rss=0 r w
	shift 2
	for ((i = 0; i < RUNS; i++)); do
		$prep
		# shellcheck disable=SC2086 # OPTS are options
		"$TIME" -f '%e %M' -o "$WORK/time" "${MKFS[@]}" --oci --json $OPTS "$@" \
			>"$WORK/sum.json" 2>"$WORK/err" ||
			{ cat "$WORK/err" >&2; exit 1; }
		read -r w r <"$WORK/time"
		walls+=("$w")
		[ "$r" -gt "$rss" ] && rss=$r
	done
	local med
	med=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	"$PYTHON" - "$WORK/sum.json" "$med" "$rss" "$name" "$SRC" <<'PY' | tee -a "$WORK/results"
import json, os, subprocess, sys
s = json.load(open(sys.argv[1]))
wall, rss, name, src = float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
ub = dict(l.split() for l in open(os.environ["UBFILE"]))
conv = s["converted"]
# the units converted are those not reused: their uncompressed bytes
mb = sum(int(v) for v in ub.values()) / 1e6 if conv == s["units"] else None
print("%-28s %7.2f s  %2d converted %2d reused  %6.2f layers/s  %s  peak RSS %6.1f MB" % (
    name, wall, conv, s["reused"], conv / wall if wall else 0,
    ("%7.1f MB/s" % (mb / wall)) if mb else "     -     ", rss / 1024))
print("WALL", name, wall, file=open(os.environ["WALLS"], "a"))
PY
}

mkdir -p "$WORK"
export UBFILE=$WORK/ubytes WALLS=$WORK/walls
for k in "${!UBYTES[@]}"; do echo "$k ${UBYTES[$k]}"; done >"$UBFILE"
: >"$WALLS"
fresh() { rm -rf "$WORK/dst"; }
# unverified units are not reused by verifying runs: a destination of its own
fresh_nv() { rm -rf "$WORK/nv"; }
fresh_cache() { rm -rf "$WORK/dst" "$WORK/cache"; }
fresh_keep_cache() { rm -rf "$WORK/dst"; }
none() { :; }
half() { rm -rf "$WORK/dst"; "${MKFS[@]}" --oci -q --ref=img1 $OPTS "$SRC" "$WORK/dst"; }

echo "mkfs.img --oci: $(du -sh "$SRC" | cut -f1) layout ($BASE base layers), 3 images, 5 units" \
	"($(du -ch "$SPLIT"/part*.tar | tail -n 1 | cut -f1) of tar); $RUNS runs each; options: ${OPTS:-none}"
run "cold, 1 job" fresh --jobs=1 "$SRC" "$WORK/dst"
run "cold, $JOBS jobs" fresh "--jobs=$JOBS" "$SRC" "$WORK/dst"
run "cold, $JOBS jobs, no verify" fresh_nv "--jobs=$JOBS" --no-verify "$SRC" "$WORK/nv"
run "warm destination" none "--jobs=$JOBS" "$SRC" "$WORK/dst"
run "cold + --cache-dir" fresh_cache "--jobs=$JOBS" "--cache-dir=$WORK/cache" "$SRC" "$WORK/dst"
run "new destination, warm cache" fresh_keep_cache "--jobs=$JOBS" "--cache-dir=$WORK/cache" "$SRC" "$WORK/dst"
run "img2+3 after img1 (reuse)" half "--jobs=$JOBS" "$SRC" "$WORK/dst"

# containerd's way: every layer blob, one after the other
MKFS_EROFS=${MKFS_EROFS:-/opt/erofs-utils-1.9.3/bin/mkfs.erofs}
containerd_way() {
	local i=0 mt blob
	while read -r mt blob; do
		i=$((i + 1))
		case $mt in
		*gzip) zcat "$blob" ;;
		*zstd) zstd -q -dc "$blob" ;;
		*) cat "$blob" ;;
		esac | "$MKFS_EROFS" --tar=f --aufs --quiet -Enoinline_data \
			-b4096 -U "$(cat /proc/sys/kernel/random/uuid)" \
			"$WORK/erofs-$i.img" || return 1
	done <"$WORK/blobs"
}
if [ -x "$MKFS_EROFS" ]; then
	"$PYTHON" - "$SRC" >"$WORK/blobs" <<'PY'
import json, os, sys
root = sys.argv[1]
def blob(d):
    return os.path.join(root, "blobs", *d["digest"].split(":", 1))
def walk(d, seen):
    doc = json.load(open(blob(d)))
    for m in doc.get("manifests", []):
        walk(m, seen)
    for l in doc.get("layers", []):
        if l["digest"] not in seen:
            seen.add(l["digest"])
            print(l["mediaType"], blob(l))
seen = set()
for m in json.load(open(os.path.join(root, "index.json")))["manifests"]:
    walk(m, seen)
PY
	walls=()
	for ((i = 0; i < RUNS; i++)); do
		export -f containerd_way
		export WORK MKFS_EROFS
		"$TIME" -f '%e %M' -o "$WORK/time" bash -c containerd_way ||
			{ echo "containerd's way failed" >&2; exit 1; }
		read -r w r <"$WORK/time"
		walls+=("$w")
	done
	med=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	printf '%-28s %7.2f s  %2d layers, zcat/zstd -dc | mkfs.erofs 1.9.3 --tar=f, one after the other\n' \
		"containerd's way" "$med" "$(wc -l <"$WORK/blobs")" |
		tee -a "$WORK/results"
	echo "WALL containerd $med" >>"$WALLS"
else
	echo "(no $MKFS_EROFS: containerd's way not measured)"
fi
"$PYTHON" - "$WALLS" "$JOBS" <<'PY'
import sys
w = {}
for l in open(sys.argv[1]):
    _, rest = l.split(" ", 1)
    name, t = rest.rsplit(" ", 1)
    w[name] = float(t)
j = sys.argv[2]
c1, cn = w["cold, 1 job"], w["cold, %s jobs" % j]
print("speed-up of %s jobs over 1: %.2fx" % (j, c1 / cn))
print("speed-up of a warm destination over cold: %.1fx" % (cn / w["warm destination"]))
print("speed-up of a warm --cache-dir over cold: %.1fx" % (cn / w["new destination, warm cache"]))
print("cost of verification: %.0f%% of a cold run" % (100 * (cn - w["cold, %s jobs, no verify" % j]) / cn))
if "containerd" in w:
    print("verified cold run, %s jobs, over containerd's way: %.2f (target <= 0.33)" % (j, cn / w["containerd"]))
PY
