#!/bin/bash
# SPDX-License-Identifier: MIT
# A shard killed (SIGKILL) in the middle of a layer, three times over (at
# the start, the middle and the end of the image being written):
# after each kill every file under a final name in the destination is
# whole (blobs hash to their names, and each file equals the single run's
# file of that name); the rerun converts the killed unit and the layout,
# once the other shards and --assemble have run, is byte-identical to a
# single run.
set -u
. "$(dirname "$0")/common.sh"
shard_setup

SRC=$WORK/src
DST=$WORK/dst
N=$SHARDS
shard_layout "$SRC" >"$WORK/umoci.log" 2>&1 ||
	die "umoci could not build the layout: $(tail -n 3 "$WORK/umoci.log")"
reference "$SRC" "$WORK/single"

# The largest source layer (app3's 24 MiB) and the shard it falls in.
big=
size=0
while read -r diff blob _; do
	s=$(stat -c %s "$SRC/blobs/sha256/${blob#sha256:}")
	[ "$s" -gt "$size" ] && size=$s big="$diff $blob"
done < <($UNITS list "$SRC")
read -r big_diff big_blob <<<"$big"
for i in $(seq 0 $((N - 1))); do
	$UNITS shard "$SRC" "$i" "$N" | grep -qx "$big_diff" && I=$i
done
log "largest layer $big_blob ($size bytes), unit $big_diff, shard $I/$N"

# check_final DST WHAT: every file under a final name in DST (temporary
# .imgfs-* names apart) holds the single run's bytes for that name.
check_final() {
	local f bad="" tmp
	while IFS= read -r -d '' f; do
		case ${f##*/} in
		.imgfs-*) continue ;;
		esac
		cmp -s "$DST/$f" "$WORK/single/$f" || bad="$bad $f"
	done < <(cd "$DST" && find . -type f -print0)
	tmp=$(find "$DST" -name '.imgfs-*' | wc -l)
	check "$2: every file under a final name is the single run's (temporary names left: $tmp)${bad:+; not:$bad}" \
		[ -z "$bad" ]
}

# killed once the image being written holds 1 byte, 8 MiB, 24 MiB (of 24),
# every file watched the moment it gets its final name
watch_start "$DST"
k=0
for least in 1 8388608 25165824; do
	k=$((k + 1))
	# shellcheck disable=SC2086 # IMGFS_MKFS may carry options
	how=$($UNITS killmid "$SRC/blobs/sha256/${big_blob#sha256:}" "$DST" \
		"$least" $MKFS --oci --jobs=1 --shard="$I/$N" "$SRC" "$DST")
	rc=$?
	check "kill -9 #$k of --shard=$I/$N: $how" [ "$rc" -eq 0 ]
	check_whole "$DST" "after kill #$k"
	check_final "$DST" "after kill #$k"
	check "after kill #$k: no index.json" [ ! -e "$DST/index.json" ]
done

check "rerun --shard=$I/$N" mkfs_img --oci --jobs=1 --shard="$I/$N" \
	"$SRC" "$DST" 2>"$WORK/rerun.err"
check "the rerun converted the killed unit $big_diff" \
	grep -q "^mkfs.img: converted $big_diff " "$WORK/rerun.err"
for i in $(seq 0 $((N - 1))); do
	[ "$i" = "$I" ] && continue
	check "--shard=$i/$N" mkfs_img --oci -q --shard="$i/$N" "$SRC" "$DST"
done
check "--assemble" mkfs_img --oci -q --assemble "$SRC" "$DST"
watch_stop "three killed runs, the rerun, the other shards, --assemble, watched"
check_same "$WORK/single" "$DST" "killed shard rerun + others + assemble"
check_whole "$DST" "killed shard rerun + others + assemble"
finish
