#!/bin/bash
# mkfs.img's dm-verity options and fsck.img's verity check, without the
# kernel: a given salt and UUID land in the verity superblock (and
# veritysetup verify still accepts the tree), "-" means no salt; bad or
# orphan options are usage errors that write nothing; a sidecar that
# cannot be written fails the run and leaves no image; fsck.img requires
# a tree with --verity, compares the root hash with --verity-roothash or
# the sidecar, and reports a damaged tree block, a wrong root hash and a
# sidecar that disagrees as errors (exit 4).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v veritysetup >/dev/null ||
	die "missing veritysetup (apt-get install cryptsetup-bin)"
[ -x "$FSCK_IMG" ] || die "fsck.img not built"
setup_tmp

UUID=3f0c8e52-9d1a-4b7e-8c55-0a1b2c3d4e5f
VUUID=0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9
SALT=00112233445566778899aabbccddeeff
make_tree "$WORK/src" || die "make_tree"
head -c 3000000 /dev/urandom >"$WORK/src/big"
tar -C "$WORK/src" -cf "$WORK/l.tar" . || die "tar"
IMG=$WORK/l.img

# status CMD...: the exit status of CMD, its output to $WORK/out
status() {
	"$@" >"$WORK/out" 2>&1
	echo $?
}

# a given salt and UUID
out=$(mkfs_img -q -T 0 -U $UUID --dm-verity --dm-verity-salt=$SALT \
	--dm-verity-uuid=$VUUID "$WORK/l.tar" "$IMG") || fail "mkfs with salt"
root=$(printf '%s\n' "$out" | sed -n 's/^Root hash:\t//p')
off=$(printf '%s\n' "$out" | sed -n 's/^Hash offset:\t//p')
veritysetup dump "$IMG" --hash-offset="$off" >"$WORK/dump"
check "salt given" grep -q "^Salt:[[:space:]]*$SALT\$" "$WORK/dump"
check "verity UUID given" grep -q "^UUID:[[:space:]]*$VUUID\$" "$WORK/dump"
check "veritysetup verify" veritysetup verify "$IMG" "$IMG" "$root" --hash-offset="$off"

# no salt
out=$(mkfs_img -q -T 0 -U $UUID --dm-verity --dm-verity-salt=- \
	"$WORK/l.tar" "$WORK/nosalt.img") || fail "mkfs without salt"
root2=$(printf '%s\n' "$out" | sed -n 's/^Root hash:\t//p')
check "no salt" sh -c 'veritysetup dump "$1" --hash-offset="$2" | grep -q "^Salt:[[:space:]]*-\$"' \
	sh "$WORK/nosalt.img" "$off"
check "veritysetup verify (no salt)" \
	veritysetup verify "$WORK/nosalt.img" "$WORK/nosalt.img" "$root2" --hash-offset="$off"

# derived salts follow the image's UUID
mkfs_img -q -T 0 -U $VUUID --dm-verity "$WORK/l.tar" "$WORK/other.img" >/dev/null
mkfs_img -q -T 0 -U $UUID --dm-verity "$WORK/l.tar" "$WORK/derived.img" >/dev/null
s1=$(veritysetup dump "$WORK/other.img" --hash-offset="$off" | awk '/^Salt:/ {print $2}')
s2=$(veritysetup dump "$WORK/derived.img" --hash-offset="$off" | awk '/^Salt:/ {print $2}')
check "derived salts differ with the image UUID" test "$s1" != "$s2"

# --verify checks the tree too before the image is put in place
check "--verify --dm-verity" sh -c '"$1" -q --verify --dm-verity "$2" "$3" >/dev/null && test -s "$3.dmverity"' \
	sh "${MKFS%% *}" "$WORK/l.tar" "$WORK/verified.img"

# usage errors write nothing
check "odd salt: usage error" test "$(status mkfs_img --dm-verity --dm-verity-salt=abc "$WORK/l.tar" "$WORK/u.img")" = 2
check "non-hex salt: usage error" test "$(status mkfs_img --dm-verity --dm-verity-salt=zz "$WORK/l.tar" "$WORK/u.img")" = 2
check "bad verity UUID: usage error" test "$(status mkfs_img --dm-verity --dm-verity-uuid=nope "$WORK/l.tar" "$WORK/u.img")" = 2
check "--dm-verity-salt alone: usage error" test "$(status mkfs_img --dm-verity-salt=$SALT "$WORK/l.tar" "$WORK/u.img")" = 2
check "  saying it needs --dm-verity" grep -q "need --dm-verity" "$WORK/out"
check "nothing written" test ! -e "$WORK/u.img" -a ! -e "$WORK/u.img.dmverity"

# a sidecar that cannot be written: the run fails, no image is left
mkdir "$WORK/d.img.dmverity"
check "sidecar path is a directory: mkfs fails" test "$(status mkfs_img --dm-verity "$WORK/l.tar" "$WORK/d.img")" = 1
check "  naming it" grep -q "d.img.dmverity: is a directory" "$WORK/out"
check "  and leaving no image" test ! -e "$WORK/d.img"
check "--no-dm-verity-sidecar writes none" sh -c '"$1" -q --dm-verity --no-dm-verity-sidecar "$2" "$3" >/dev/null && test -s "$3" && test ! -e "$3.dmverity"' \
	sh "${MKFS%% *}" "$WORK/l.tar" "$WORK/n.img"

# fsck.img
mkfs_img -q -T 0 -U $UUID "$WORK/l.tar" "$WORK/plain.img" || fail "mkfs plain"
check "plain image: fsck.img passes" test "$(status "$FSCK_IMG" "$WORK/plain.img")" = 0
check "plain image, --verity: exit 4" test "$(status "$FSCK_IMG" --verity "$WORK/plain.img")" = 4
check "  no tree" grep -q "error: verity: no dm-verity tree" "$WORK/out"
check "tree, sidecar beside: exit 0" test "$(status "$FSCK_IMG" "$IMG")" = 0
check "  compared with the sidecar" grep -q "root hash $root as given by IMAGE.dmverity" "$WORK/out"
check "  no trailing-bytes warning" grep -q "0 errors, 0 warnings" "$WORK/out"
check "--verity-roothash: exit 0" test "$(status "$FSCK_IMG" --verity-roothash="$root" "$IMG")" = 0
check "wrong --verity-roothash: exit 4" test "$(status "$FSCK_IMG" --verity-roothash="$root2" "$IMG")" = 4
check "  naming both" grep -q "root hash $root, expected $root2" "$WORK/out"
check "bad --verity-roothash: usage error" test "$(status "$FSCK_IMG" --verity-roothash=12 "$IMG")" = 16
printf '{"roothash":"%s","hashoffset":%s}\n' "$root" $((off + 4096)) >"$WORK/off.json"
check "sidecar with another offset: exit 4" test "$(status "$FSCK_IMG" --verity-sidecar="$WORK/off.json" "$IMG")" = 4
check "  saying so" grep -q "gives hash offset $((off + 4096))" "$WORK/out"
echo '{"roothash":42}' >"$WORK/junk.json"
check "sidecar without a root hash: exit 4" test "$(status "$FSCK_IMG" --verity-sidecar="$WORK/junk.json" "$IMG")" = 4
# no sidecar, no root hash: the tree is checked, the root noted as not compared
cp "$IMG" "$WORK/alone.img"
check "no sidecar: exit 0" test "$(status "$FSCK_IMG" -v "$WORK/alone.img")" = 0
check "  root not compared" grep -q "(not compared)" "$WORK/out"
# one byte of the first level-0 block (~740 data blocks: two levels, the
# superblock's block, level 1, then level 0): named, exit 4
cp "$IMG" "$WORK/tree.img"
cp "$IMG.dmverity" "$WORK/tree.img.dmverity"
"$PYTHON" -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1)
f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 1]))' "$WORK/tree.img" $((off + 8192 + 5))
check "damaged tree block: exit 4" test "$(status "$FSCK_IMG" "$WORK/tree.img")" = 4
check "  naming the data block whose stored hash changed" grep -q "error: verity: dm-verity: data block 0 " "$WORK/out"
check "--no-verity skips it" test "$(status "$FSCK_IMG" --no-verity "$WORK/tree.img")" = 0
check "--verity-roothash and --verity-sidecar: usage error" \
	test "$(status "$FSCK_IMG" --verity-roothash="$root" --verity-sidecar=x "$IMG")" = 16

finish
