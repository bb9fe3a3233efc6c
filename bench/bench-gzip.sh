#!/bin/bash
# SPDX-License-Identifier: MIT
# Compressed layer benchmark: mkfs.img on a .tar.gz against the gzip
# decoders alone (igzip -dc from ISA-L, zcat from zlib), and on the same
# layer as .tar.zst against zstd -dc, side by side.
#
# usage: bench/bench-gzip.sh [-n RUNS] [-s MB] [TAR.GZ]
#
# TAR.GZ defaults to a layer of about MB (default 100) megabytes of this
# system's /usr, gzip -6, cached in $BENCH_DIR (default /tmp/imgfs-bench).
# For each command the median wall, user and system seconds of RUNS runs
# (default 5, the median by wall time) are printed, and mkfs.img's wall
# and CPU time over igzip's and over zstd's.
# Needs igzip (Debian "isal") and zstd for their rows.
set -euo pipefail

RUNS=5
MB=100
while getopts "n:s:h" opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	s) MB=$OPTARG ;;
	*) sed -n '3,12p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
top_builddir=${top_builddir:-$PWD}
[ -e "$top_builddir/mkfs/mkfs.img" ] || top_builddir=$top_srcdir
. "$top_srcdir/bench/mkfs-binary.sh"
BENCH_DIR=${BENCH_DIR:-/tmp/imgfs-bench}
mkdir -p "$BENCH_DIR"
WORK=$(mktemp -d "$BENCH_DIR/gzip.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

layer=${1:-$BENCH_DIR/usr-${MB}m.tar.gz}
if [ ! -e "$layer" ]; then
	python3 - "$MB" "$layer.tmp" <<'PY'
import os, sys, tarfile
limit = int(sys.argv[1]) << 20
total = 0
with tarfile.open(sys.argv[2], "w", format=tarfile.PAX_FORMAT) as t:
    for root, dirs, files in os.walk("/usr"):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(root, f)
            if total >= limit or not os.path.isfile(p) or os.path.islink(p):
                continue
            try:
                t.add(p, recursive=False)
            except OSError:
                continue
            total += os.path.getsize(p)
PY
	gzip -6 -n <"$layer.tmp" >"$layer.part" && mv "$layer.part" "$layer"
	rm -f "$layer.tmp"
fi
echo "layer: $layer ($(($(stat -c %s "$layer") >> 20)) MiB gzip," \
	"$(($(gzip -dc "$layer" | wc -c) >> 20)) MiB tar)"

# add NAME CMD...: a command to time. Every round runs each command once,
# in turn, so that a busy spell of the machine falls on all of them; each
# run writes a new image (the one before is removed untimed, as replacing
# it would add the old file's release and, on ext4, a flush of the new one
# that the rename asks for: auto_da_alloc).
names=()
cmds=()
add() {
	names+=("$1")
	shift
	cmds+=("$(printf '%q ' "$@")")
}
add "mkfs.img --no-fsync layer.tar.gz" \
	"${MKFS[@]}" -q --no-fsync "$layer" "$WORK/out.img"
have_igzip=no
if command -v igzip >/dev/null; then
	add "igzip -dc layer.tar.gz" igzip -dc "$layer"
	have_igzip=yes
fi
add "zcat layer.tar.gz" zcat "$layer"
have_zstd=no
if command -v zstd >/dev/null; then
	zst=${layer%.gz}.zst
	[ -e "$zst" ] || { gzip -dc "$layer" | zstd -q -3 -o "$zst.part" &&
		mv "$zst.part" "$zst"; }
	add "mkfs.img --no-fsync layer.tar.zst" \
		"${MKFS[@]}" -q --no-fsync "$zst" "$WORK/out.img"
	add "zstd -dc layer.tar.zst" zstd -dc "$zst"
	have_zstd=yes
fi

TIMEFORMAT='%3R %3U %3S'
for _ in $(seq "$RUNS"); do
	for i in "${!cmds[@]}"; do
		rm -f "$WORK/out.img"
		{ time eval "${cmds[$i]}" >/dev/null 2>"$WORK/err"; } \
			2>>"$WORK/$i.all" || {
			echo "${names[$i]}: failed" >&2
			cat "$WORK/err" >&2
			exit 1
		}
	done
done
printf '%-34s %8s %8s %8s\n' "command (median of $RUNS)" wall user sys
for i in "${!cmds[@]}"; do
	sort -n "$WORK/$i.all" | sed -n "$(((RUNS + 1) / 2))p" \
		>"$WORK/${names[$i]}"
	printf '%-34s %8s %8s %8s\n' "${names[$i]}" $(cat "$WORK/${names[$i]}")
done

# ratio A B WHAT: A's wall and CPU time over B's
ratio() {
	read -r mw mu ms <"$WORK/$1"
	read -r iw iu is <"$WORK/$2"
	awk -v mw="$mw" -v mu="$mu" -v ms="$ms" -v iw="$iw" -v iu="$iu" \
		-v is="$is" -v what="$3" 'BEGIN {
		printf "%s: wall %.2fx, cpu %.2fx (target <= 1.3x)\n", what,
			mw / iw, (mu + ms) / (iu + is) }'
}
[ $have_igzip = no ] || ratio "mkfs.img --no-fsync layer.tar.gz" \
	"igzip -dc layer.tar.gz" "mkfs.img / igzip -dc"
[ $have_zstd = no ] || ratio "mkfs.img --no-fsync layer.tar.zst" \
	"zstd -dc layer.tar.zst" "mkfs.img / zstd -dc"
