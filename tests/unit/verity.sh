#!/bin/bash
# dm-verity hash areas and fs-verity digests from imgfs/verity.h against the
# reference tools: for data around the tree's level boundaries and random
# sizes, at 4096 and 512-byte data blocks, the hash area written after the
# data must be byte-identical to what "veritysetup format" writes with the
# same salt and UUID, give the same root hash, pass "veritysetup verify" and
# our verifier, and fail both once one data byte or one tree byte is
# flipped (our verifier naming the block). fs-verity digests must equal
# what "fsverity digest" prints. Needs neither root nor EROFS.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
TOOL=$top_builddir/tests/unit/verity_tool
[ -x "$TOOL" ] || die "helper not built: $TOOL (run make check)"
command -v veritysetup >/dev/null || die "missing veritysetup (apt-get install cryptsetup-bin)"
command -v fsverity >/dev/null || die "missing fsverity (apt-get install fsverity)"
veritysetup --version >/dev/null 2>&1 || skip "veritysetup cannot run here"
fsverity --version >/dev/null 2>&1 || skip "fsverity cannot run here"
setup_tmp

SEED=${IMGFS_VERITY_SEED:-$$}
RANDOM=$SEED
log "random seed $SEED (IMGFS_VERITY_SEED=$SEED repeats this run)"

# random bytes: /dev/urandom is fast enough for the 64 MiB case
rand_file() { head -c "$2" /dev/urandom >"$1"; }
rand_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

# flip FILE OFFSET: invert one byte in place
flip() {
	"$PYTHON" - "$1" "$2" <<'EOF'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    b = f.read(1)
    f.seek(int(sys.argv[2]))
    f.write(bytes([b[0] ^ 0xFF]))
EOF
}

field() { sed -n "s/^$1 //p" "$2"; }

# The stored digest of data block K sits in level 0, the last level, whose
# size is the data blocks' count over 128, rounded up.
level0_offset() {
	local hash_end=$1 blocks=$2
	echo $((hash_end - 4096 * ((blocks + 127) / 128)))
}

# dm_case NAME DATA_BLOCK_SIZE BYTES [TOOL OPTIONS...]
dm_case() {
	local name=$1 dbs=$2 size=$3 blocks ho salt uuid root vroot k off d
	shift 3
	d=$WORK/$name
	mkdir -p "$d"
	blocks=$(((size + dbs - 1) / dbs))
	ho=$(((blocks * dbs + 4095) / 4096 * 4096))
	salt=$(rand_hex 32)
	uuid=$(cat /proc/sys/kernel/random/uuid)
	rand_file "$d/data" "$size"
	cp "$d/data" "$d/ours"
	cp "$d/data" "$d/ref"
	# veritysetup reads whole blocks: a partial last one reads zeros
	truncate -s $((blocks * dbs)) "$d/ref"
	if ! "$TOOL" format --data-block-size="$dbs" --salt="$salt" \
		--uuid="$uuid" "$@" "$d/ours" >"$d/ours.out" 2>&1; then
		fail "$name: format failed: $(cat "$d/ours.out")"
		return
	fi
	if ! veritysetup format --hash-offset="$ho" --data-block-size="$dbs" \
		--hash-block-size=4096 --data-blocks="$blocks" --salt="$salt" \
		--uuid="$uuid" "$d/ref" "$d/ref" >"$d/ref.out" 2>&1; then
		fail "$name: veritysetup format failed: $(cat "$d/ref.out")"
		return
	fi
	root=$(field root "$d/ours.out")
	vroot=$(sed -n 's/^Root hash:[[:space:]]*//p' "$d/ref.out")
	if [ -n "$root" ] && [ "$root" = "$vroot" ]; then
		ok "$name: root hash $root as veritysetup's"
	else
		fail "$name: root hash '$root', veritysetup '$vroot'"
	fi
	check "$name: hash area byte-identical to veritysetup's" \
		cmp "$d/ours" "$d/ref"
	check "$name: hash offset $ho" [ "$(field hash_offset "$d/ours.out")" = "$ho" ]
	check "$name: sidecar JSON" [ "$(field json "$d/ours.out")" = \
		"{\"roothash\":\"$root\",\"hashoffset\":$ho}" ]
	check "$name: veritysetup verify accepts our tree" \
		veritysetup verify --hash-offset="$ho" "$d/ours" "$d/ours" "$root"
	check "$name: our verifier accepts it" \
		"$TOOL" verify "$d/ours" "$ho" "$root"

	# one flipped data byte
	k=$((RANDOM * 32768 + RANDOM))
	k=$((k % blocks))
	off=$((k * dbs + RANDOM % dbs))
	[ "$off" -lt "$size" ] || off=$((size - 1))
	cp "$d/ours" "$d/bad"
	flip "$d/bad" "$off"
	if veritysetup verify --hash-offset="$ho" "$d/bad" "$d/bad" "$root" \
		>/dev/null 2>&1; then
		fail "$name: veritysetup verify accepted a flipped byte at $off"
	else
		ok "$name: veritysetup verify rejects a flipped byte at $off"
	fi
	"$TOOL" verify "$d/bad" "$ho" "$root" >"$d/bad.out" 2>&1
	check "$name: our verifier rejects it (exit 1)" [ $? -eq 1 ]
	check "$name: ... and names data block $k" \
		grep -qx "bad_data_block $k" "$d/bad.out"

	# one flipped byte in block K's stored digest
	[ "$blocks" -gt 1 ] || return 0
	off=$(($(level0_offset "$(field hash_end "$d/ours.out")" "$blocks") + k * 32 + RANDOM % 32))
	cp "$d/ours" "$d/badtree"
	flip "$d/badtree" "$off"
	if veritysetup verify --hash-offset="$ho" "$d/badtree" "$d/badtree" \
		"$root" >/dev/null 2>&1; then
		fail "$name: veritysetup verify accepted a flipped tree byte"
	else
		ok "$name: veritysetup verify rejects a flipped tree byte at $off"
	fi
	"$TOOL" verify "$d/badtree" "$ho" "$root" >"$d/badtree.out" 2>&1
	check "$name: our verifier names level 0 block $((k / 128))" \
		grep -qx "bad_level 0 block $((k / 128))" "$d/badtree.out"
	rm -rf "$d"
}

for dbs in 4096 512; do
	for n in 1 2 127 128 129 16385; do
		dm_case "dbs$dbs-$n" "$dbs" $((n * dbs))
	done
	# random block counts, and a size that ends inside a block
	for i in 1 2; do
		n=$((RANDOM % 3000 + 1))
		dm_case "dbs$dbs-random$i-$n" "$dbs" $((n * dbs))
	done
	n=$((RANDOM % 300000 + 1))
	dm_case "dbs$dbs-bytes-$n" "$dbs" "$n"
	# the incremental API, size announced or not, in odd pieces
	dm_case "dbs$dbs-stream-known" "$dbs" $((129 * dbs + 77)) \
		--stream=known --chunk=12345
	# (three levels at 512-byte blocks; at 4096 that would be 64 MiB more)
	n=$((dbs == 512 ? 16385 : 1000))
	dm_case "dbs$dbs-stream-unknown-$n" "$dbs" $((n * dbs)) \
		--stream=unknown --chunk=1000
done

# the same seed gives the same salt, UUID and so the same tree
rand_file "$WORK/s1" 100000
cp "$WORK/s1" "$WORK/s2"
"$TOOL" format --seed=layer-1 "$WORK/s1" >"$WORK/s1.out"
"$TOOL" format --seed=layer-1 "$WORK/s2" >"$WORK/s2.out"
check "derived salt and UUID: same seed, same hash area" cmp "$WORK/s1" "$WORK/s2"
check "derived salt and UUID: same seed, same report" \
	cmp "$WORK/s1.out" "$WORK/s2.out"
rm -f "$WORK"/s?*

# Memory does not grow with the data: peak RSS for 16 MiB and 256 MiB
# (sparse files, fed without announcing the size: the spilled case).
if [ -x /usr/bin/time ]; then
	peak() {
		/usr/bin/time -f "%M" -o "$WORK/rss" "$TOOL" "$@" >/dev/null &&
			cat "$WORK/rss"
	}
	for s in 16 256; do
		truncate -s ${s}M "$WORK/m$s"
	done
	for mode in "format --stream=unknown --chunk=65536" "fsverity"; do
		# shellcheck disable=SC2086
		small=$(peak $mode "$WORK/m16") big=$(peak $mode "$WORK/m256")
		if [ -n "$small" ] && [ -n "$big" ] && [ "$big" -lt $((small + 1024)) ]; then
			ok "${mode%% *}: peak memory $small KiB for 16 MiB, $big KiB for 256 MiB"
		else
			fail "${mode%% *}: peak memory '$small' KiB for 16 MiB, '$big' KiB for 256 MiB"
		fi
	done
	rm -f "$WORK"/m16 "$WORK"/m256
else
	log "no GNU time (package time): memory bound not measured"
fi

# fs-verity digests
fsv_case() {
	local name=$1 size=$2 want got chunk
	rand_file "$WORK/f" "$size"
	want=$(fsverity digest "$WORK/f" | cut -d' ' -f1)
	got=$("$TOOL" fsverity "$WORK/f")
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		ok "fs-verity $name ($size bytes): $got"
	else
		fail "fs-verity $name ($size bytes): '$got', fsverity says '$want'"
	fi
	chunk=$((RANDOM % 9000 + 1))
	got=$("$TOOL" fsverity --chunk="$chunk" "$WORK/f")
	check "fs-verity $name fed in $chunk-byte pieces" [ "$want" = "$got" ]
}
for s in 0 1 4095 4096 4097 $((128 * 4096)) $((128 * 4096 + 1)) \
	$((129 * 4096)) $((128 * 128 * 4096 + 1)); do
	fsv_case "size" "$s"
done
for i in 1 2 3; do
	fsv_case "random$i" $((RANDOM * 64 + RANDOM % 64))
done

finish
