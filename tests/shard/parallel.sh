#!/bin/bash
# SPDX-License-Identifier: MIT
# Sharded conversion with GNU parallel: mkfs.img --oci --list-units names
# the layout's distinct layers (checked against the layout's own JSON);
# --shard=I/N converts exactly the units whose diffID falls in shard I and
# writes no manifest; every shard at once into one destination, then
# --assemble, gives a layout byte-identical to a single run; the same with
# compression and ownership options; and docs/sharding.md's commands for
# one machine, as they are written there.
set -u
. "$(dirname "$0")/common.sh"
shard_setup
require_tools parallel

SRC=$WORK/src
N=$SHARDS
shard_layout "$SRC" >"$WORK/umoci.log" 2>&1 ||
	die "umoci could not build the layout: $(tail -n 3 "$WORK/umoci.log")"

if mkfs_img --oci --list-units "$SRC" >"$WORK/units" 2>"$WORK/units.err"; then
	ok "--list-units: $(wc -l <"$WORK/units") units"
else
	fail "--list-units: $(cat "$WORK/units.err")"
fi
$UNITS list "$SRC" >"$WORK/units.expected"
check "--list-units prints each distinct layer once, sorted by diffID" \
	cmp "$WORK/units" "$WORK/units.expected"
mkfs_img --oci --list-units "$SRC" "$WORK/untouched" >/dev/null 2>&1
check "--list-units writes nothing" [ ! -e "$WORK/untouched" ]

# run_shards OPTS...: each shard alone into an empty layout (exactly its
# units, no manifests), then every shard at once into one layout with GNU
# parallel, assembled: byte-identical to a single run with OPTS.
run_shards() {
	local tag=${*:+ $*} i got want dst=$WORK/dst single=$WORK/single
	rm -rf "$dst" "$single" "$WORK"/alone.*
	reference "$SRC" "$single" "$@"
	for i in $(seq 0 $((N - 1))); do
		if ! mkfs_img --oci --shard="$i/$N" "$@" "$SRC" "$WORK/alone.$i" \
			2>"$WORK/alone.$i.err"; then
			fail "--shard=$i/$N$tag: $(tail -n 2 "$WORK/alone.$i.err")"
			continue
		fi
		got=$(sed -n 's/^mkfs.img: converted \(sha256:[0-9a-f]*\) .*/\1/p' \
			"$WORK/alone.$i.err" | sort)
		want=$($UNITS shard "$SRC" "$i" "$N")
		check "--shard=$i/$N$tag converts its $(printf '%s' "$want" |
			grep -c .) unit(s) (first 16 hex digits mod $N) and no other" \
			[ "$got" = "$want" ]
		check "--shard=$i/$N$tag writes no index or manifest" \
			[ ! -e "$WORK/alone.$i/index.json" ]
	done
	if parallel -j "$N" --halt now,fail=1 "$MKFS" --oci -q --jobs=1 \
		--shard={}/"$N" "$@" "$SRC" "$dst" ::: $(seq 0 $((N - 1))); then
		ok "parallel: $N shards at once into one layout$tag"
	else
		fail "parallel: a shard failed$tag"
	fi
	check "--assemble$tag" mkfs_img --oci -q --assemble "$@" "$SRC" "$dst"
	check_same "$single" "$dst" "parallel + --assemble$tag"
	check_whole "$dst" "parallel + --assemble$tag"
}

run_shards
run_shards -z lz4hc,9 -C 65536 --all-root -T 1000000000

# docs/sharding.md's two commands for one machine (its N), with the
# mkfs.img under test first on PATH and the layouts' names filled in.
"$PYTHON" - "$top_srcdir/docs/sharding.md" >"$WORK/doc.sh" <<'EOF' ||
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^On one machine, every shard at once:\n+```sh\n(.*?)```",
              text, re.S | re.M)
sys.exit("no commands for one machine") if not m else print(m.group(1), end="")
EOF
	die "docs/sharding.md: no GNU parallel commands for one machine"
mkdir -p "$WORK/bin"
printf '#!/bin/sh\nexec %s "$@"\n' "$MKFS" >"$WORK/bin/mkfs.img"
chmod 0755 "$WORK/bin/mkfs.img"
rm -rf "$WORK/dst" "$WORK/single"
reference "$SRC" "$WORK/single"
if (cd "$WORK" && PATH="$WORK/bin:$PATH" &&
	sed 's/ SRC DST/ src dst/' doc.sh | bash -e); then
	ok "docs/sharding.md's GNU parallel commands:" \
		"$(grep -o 'N=[0-9]*' "$WORK/doc.sh")"
else
	fail "docs/sharding.md's GNU parallel commands"
fi
check_same "$WORK/single" "$WORK/dst" "docs/sharding.md's commands"

# The converted layers are EROFS images our checker accepts.
n=0
for d in $($UNITS layers "$WORK/dst"); do
	"$FSCK_IMG" -q "$WORK/dst/blobs/sha256/${d#sha256:}" || fail "fsck.img $d"
	n=$((n + 1))
done
check "fsck.img accepts the $n layer references of the sharded layout" \
	[ "$n" -gt 0 ]
finish
