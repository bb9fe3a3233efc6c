#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs writing into one destination at the same time: every shard started
# twice at once (two runs race for each unit, sharing a --cache-dir, which
# then alone makes the same layout), then two --assemble runs at once; a plain run (convert + assemble) racing with the shards; in both
# cases every blob and unit record is whole from the moment it has its
# final name (watched while the runs go), the layout is byte-identical to
# a single run and no temporary file is left; the same on a filesystem
# without O_TMPFILE. --assemble with a shard missing fails, naming
# every missing unit, and writes no index.json; once the shard has run it
# succeeds.
set -u
. "$(dirname "$0")/common.sh"
shard_setup

SRC=$WORK/src
N=$SHARDS
shard_layout "$SRC" >"$WORK/umoci.log" 2>&1 ||
	die "umoci could not build the layout: $(tail -n 3 "$WORK/umoci.log")"
reference "$SRC" "$WORK/single"

# at_once NAME CMD...: start CMD in the background, its pid in PIDS.
PIDS=
at_once() {
	local name=$1
	shift
	"$@" >"$WORK/$name.out" 2>&1 &
	PIDS="$PIDS $!:$name"
}

# wait_all WHAT: wait for every run started by at_once; each must succeed.
wait_all() {
	local p bad=
	for p in $PIDS; do
		wait "${p%%:*}" || bad="$bad ${p#*:}"
	done
	PIDS=
	check "$1${bad:+: failed:$bad}" [ -z "$bad" ]
	for p in $bad; do
		sed "s/^/  $p: /" "$WORK/$p.out"
	done
}

# no_temporaries DST WHAT: no hidden temporary file is left behind.
no_temporaries() {
	local left
	left=$(find "$1" -name '.imgfs-*')
	check "$2: no temporary file left${left:+: $left}" [ -z "$left" ]
}

# 1. every shard twice, all at once, sharing one --cache-dir too; then two
# assembles at once
DST=$WORK/dst
CACHE=$WORK/cache
watch_start "$DST"
for i in $(seq 0 $((N - 1))); do
	at_once "a$i" mkfs_img --oci --jobs=1 --cache-dir="$CACHE" \
		--shard="$i/$N" "$SRC" "$DST"
	at_once "b$i" mkfs_img --oci --jobs=1 --cache-dir="$CACHE" \
		--shard="$i/$N" "$SRC" "$DST"
done
wait_all "$((2 * N)) shard runs at once, each shard twice"
# how often both runs of a shard did the same unit's work (then the second
# to publish found the first's file): the race the test is about
both=$(cat "$WORK"/a*.out | sed -n 's/^mkfs.img: converted \([^ ]*\).*/\1/p' |
	grep -cxF -f <(sed -n 's/^mkfs.img: converted \([^ ]*\).*/\1/p' \
		"$WORK"/b*.out))
log "units converted by both runs of their shard at once: $both of" \
	"$($UNITS list "$SRC" | wc -l)"
at_once asm1 mkfs_img --oci -q --assemble "$SRC" "$DST"
at_once asm2 mkfs_img --oci -q --assemble "$SRC" "$DST"
wait_all "two --assemble runs at once"
watch_stop "racing shards + racing assembles, watched"
check_same "$WORK/single" "$DST" "racing shards + racing assembles"
check_whole "$DST" "racing shards + racing assembles"
no_temporaries "$DST" "racing shards + racing assembles"

# The shared cache: each image whole (one of the layout's blobs), and a
# second layout made from it alone, every unit reused, is the same again.
bad=""
n=0
while IFS= read -r -d '' f; do
	n=$((n + 1))
	[ -f "$DST/blobs/sha256/$(sha256sum <"$f" | cut -d' ' -f1)" ] ||
		bad="$bad ${f#"$CACHE"/}"
done < <(find "$CACHE" -name '*.erofs' -print0)
check "shared --cache-dir: all $n images whole${bad:+; not:$bad}" \
	[ "$n" -gt 0 ] && [ -z "$bad" ]
for i in $(seq 0 $((N - 1))); do
	mkfs_img --oci --jobs=1 --cache-dir="$CACHE" --shard="$i/$N" "$SRC" \
		"$WORK/from-cache" 2>>"$WORK/from-cache.err" ||
		fail "--shard=$i/$N from the cache"
done
check "from the shared cache: no unit converted again" \
	[ "$(grep -c '^mkfs.img: converted ' "$WORK/from-cache.err")" = 0 ]
check "from the shared cache: --assemble" \
	mkfs_img --oci -q --assemble "$SRC" "$WORK/from-cache"
check_same "$WORK/single" "$WORK/from-cache" "from the shared cache"

# 2. a plain run (it converts every unit, then assembles) racing with the
# shards
DST=$WORK/dst2
watch_start "$DST"
at_once plain mkfs_img --oci -q --jobs=2 "$SRC" "$DST"
for i in $(seq 0 $((N - 1))); do
	at_once "s$i" mkfs_img --oci -q --jobs=1 --shard="$i/$N" "$SRC" "$DST"
done
wait_all "a plain run and $N shards at once"
watch_stop "plain run racing with shards, watched"
check_same "$WORK/single" "$DST" "plain run racing with shards"
check_whole "$DST" "plain run racing with shards"
no_temporaries "$DST" "plain run racing with shards"

# 3. as 1, on a filesystem without O_TMPFILE (NFS; simulated by an
# LD_PRELOAD shim): files are written under hidden names, then renamed
SHIM=$top_builddir/tests/helpers/.libs/no_tmpfile.so
[ -f "$SHIM" ] || die "helper not built: $SHIM (run make check)"
DST=$WORK/dst-nfs
watch_start "$DST"
# shellcheck disable=SC2086 # IMGFS_MKFS may carry options
for i in $(seq 0 $((N - 1))); do
	at_once "n$i" env LD_PRELOAD="$SHIM" $MKFS --oci -q --jobs=1 \
		--shard="$i/$N" "$SRC" "$DST"
	at_once "m$i" env LD_PRELOAD="$SHIM" $MKFS --oci -q --jobs=1 \
		--shard="$i/$N" "$SRC" "$DST"
done
wait_all "without O_TMPFILE: $((2 * N)) shard runs at once"
# shellcheck disable=SC2086
at_once nasm1 env LD_PRELOAD="$SHIM" $MKFS --oci -q --assemble "$SRC" "$DST"
# shellcheck disable=SC2086
at_once nasm2 env LD_PRELOAD="$SHIM" $MKFS --oci -q --assemble "$SRC" "$DST"
wait_all "without O_TMPFILE: two --assemble runs at once"
watch_stop "without O_TMPFILE, watched"
# that the shim took effect is seen in the system calls, not by a watcher
# that may miss the short-lived names on a loaded machine
if command -v strace >/dev/null; then
	# shellcheck disable=SC2086
	strace -f -qq -e trace=rename,renameat,renameat2,linkat \
		-o "$WORK/strace.out" env LD_PRELOAD="$SHIM" $MKFS --oci -q \
		--jobs=1 "$SRC" "$WORK/dst-nfs1" >/dev/null 2>&1
	check "without O_TMPFILE: the runs write under temporary names, then rename" \
		grep -qE 'rename[a-z0-9]*\(.*\.imgfs-' "$WORK/strace.out"
else
	not_run "without O_TMPFILE: temporary names: no strace"
fi
check_same "$WORK/single" "$DST" "without O_TMPFILE"
no_temporaries "$DST" "without O_TMPFILE"

# 4. --assemble with the largest shard missing
DST=$WORK/dst3
most=0 left=0
for i in $(seq 0 $((N - 1))); do
	n=$($UNITS shard "$SRC" "$i" "$N" | wc -l)
	[ "$n" -gt "$most" ] && most=$n left=$i
done
for i in $(seq 0 $((N - 1))); do
	[ "$i" = "$left" ] && continue
	check "--shard=$i/$N" mkfs_img --oci -q --shard="$i/$N" "$SRC" "$DST"
done
if mkfs_img --oci -q --assemble "$SRC" "$DST" 2>"$WORK/missing.err"; then
	fail "--assemble without shard $left/$N succeeded"
else
	ok "--assemble without shard $left/$N fails (exit $?)"
fi
# the unit lists in files, each step checked: a count is never empty
$UNITS shard "$SRC" "$left" "$N" | sort >"$WORK/units.missing" &&
	$UNITS list "$SRC" | cut -d' ' -f1 | sort >"$WORK/units.all" &&
	[ -s "$WORK/units.all" ] ||
	die "cannot list the units of $SRC"
named=0
while read -r d; do
	grep -qF "$d" "$WORK/missing.err" && named=$((named + 1))
done <"$WORK/units.missing"
check "... naming each of the $most missing units ($named named)" \
	[ "$named" = "$most" ]
comm -23 "$WORK/units.all" "$WORK/units.missing" >"$WORK/units.there"
others=0
while read -r d; do
	grep -qF "$d" "$WORK/missing.err" && others=$((others + 1))
done <"$WORK/units.there"
check "... and no unit that is there ($others of $(wc -l <"$WORK/units.there") named)" \
	[ "$others" = 0 ]
check "... writing no index.json" [ ! -e "$DST/index.json" ]
check "... nor oci-layout" [ ! -e "$DST/oci-layout" ]
check "--shard=$left/$N afterwards" \
	mkfs_img --oci -q --shard="$left/$N" "$SRC" "$DST"
check "--assemble afterwards" mkfs_img --oci -q --assemble "$SRC" "$DST"
check_same "$WORK/single" "$DST" "the missing shard run last"
finish
