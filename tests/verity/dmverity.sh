#!/bin/bash
# mkfs.img --dm-verity: the hash tree built while the image is written.
# For layers of every entry type and of 10 MiB (three tree levels at
# 512-byte data blocks), uncompressed and compressed, at 4096 and smaller
# block sizes:
# - the image bytes are those of the same run without --dm-verity, and the
#   tree starts at their size rounded up to 4096;
# - mkfs prints the root hash and hash offset, and IMAGE.dmverity holds
#   exactly {"roothash":"<hex>","hashoffset":N} and a newline;
# - "veritysetup verify" accepts image, root hash and offset, and the tree
#   is byte for byte what "veritysetup format" writes over the image with
#   the same salt and UUID (data block size: the image's block size);
# - the kernel mounts the image with the tree after it (loop, file-backed,
#   direct I/O) and shows the layer; fsck.img verifies the tree;
# - with one data byte flipped (in a copy that only userspace reads, never
#   the kernel), "veritysetup verify" fails and fsck.img reports the block;
# - two runs (file and standard input) give the same bytes and root hash;
# - fsck.img --fsverity-digest prints what "fsverity digest" prints.
# Tar-index images (--tar-index: index and tar in one file) get a tree
# over index and tar, with 512-byte data blocks, after the tar:
# - the bytes before the tree are those without --dm-verity, and between
#   the index (the superblock's block count) and the tree lies exactly
#   the tar (its SHA-256, the diffID), then zeros up to the hash offset;
# - veritysetup verify accepts it and rejects a copy with one byte of the
#   appended tar flipped (that copy goes to veritysetup and fsck.img only,
#   never to the kernel); veritysetup format writes the same tree;
# - the kernel mounts it (loop, file-backed, direct I/O) equal to the
#   extracted tar; fsck.img finds both the tar and the tree (no warning)
#   and names the flipped block; mkfs --verify checks it; reproducible;
# - --tar-index=only and the drop-in's --tar=i refuse --dm-verity.
# This kernel has no device-mapper: the userspace verify is the judge.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
command -v veritysetup >/dev/null ||
	die "missing veritysetup (apt-get install cryptsetup-bin)"
command -v fsverity >/dev/null || die "missing fsverity (apt-get install fsverity)"
setup

UUID=3f0c8e52-9d1a-4b7e-8c55-0a1b2c3d4e5f
T=1700000000

pymk mktar.py basic "$WORK/basic.tar" || die "mktar basic"
# real files, sparse one included, and 10 MiB of random data
make_tree "$WORK/src" full || die "make_tree"
mkdir -p "$WORK/src/big"
for i in 1 2 3 4 5; do
	head -c $((i * 699999)) /dev/urandom >"$WORK/src/big/r$i"
done
tar -C "$WORK/src" --sparse -cf "$WORK/big.tar" . || die "tar"
rm -rf "$WORK/src"

# json_field FILE KEY
json_field() {
	"$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# flip FILE OFFSET: invert one byte in place
flip() {
	"$PYTHON" - "$1" "$2" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    b = f.read(1)
    f.seek(int(sys.argv[2]))
    f.write(bytes([b[0] ^ 0xFF]))
PY
}

# one TAR NAME MKFS-OPTIONS...: every check above for one image
one() {
	local tar=$1 name=$2 img plain out root off size bs dump salt vuuid
	shift 2
	img=$WORK/$name.img
	plain=$WORK/$name.plain.img
	bs=$(blocksize_of "$@")
	if ! out=$(mkfs_img -q "$@" -T $T -U $UUID --dm-verity "$tar" "$img"); then
		fail "mkfs --dm-verity $* $name"
		return
	fi
	root=$(printf '%s\n' "$out" | sed -n 's/^Root hash:\t//p')
	off=$(printf '%s\n' "$out" | sed -n 's/^Hash offset:\t//p')
	check "$name: root hash printed ($root)" \
		test "${#root}" = 64
	# the image itself is unchanged, the tree starts after it
	mkfs_img -q "$@" -T $T -U $UUID "$tar" "$plain" || fail "mkfs $* $name"
	size=$(stat -c %s "$plain")
	check "$name: image bytes as without --dm-verity" \
		cmp -n "$size" "$plain" "$img"
	check "$name: hash offset $off is $size rounded up to 4096" \
		test "$off" = $(((size + 4095) / 4096 * 4096))
	# the sidecar, byte for byte
	printf '{"roothash":"%s","hashoffset":%s}\n' "$root" "$off" \
		>"$WORK/expected.dmverity"
	check "$name: sidecar IMAGE.dmverity" \
		cmp "$WORK/expected.dmverity" "$img.dmverity"
	# the reference tool
	check "$name: veritysetup verify accepts it" \
		veritysetup verify "$img" "$img" "$root" --hash-offset="$off"
	dump=$(veritysetup dump "$img" --hash-offset="$off")
	salt=$(printf '%s\n' "$dump" | awk '/^Salt:/ {print $2}')
	vuuid=$(printf '%s\n' "$dump" | awk '/^UUID:/ {print $2}')
	check "$name: data block size is the image's ($bs)" \
		test "$(printf '%s\n' "$dump" | awk '/^Data block size:/ {print $4}')" = "$bs"
	cp "$plain" "$WORK/ref.img"
	truncate -s "$off" "$WORK/ref.img"
	veritysetup format "$WORK/ref.img" "$WORK/ref.img" --hash-offset="$off" \
		--data-block-size="$bs" --data-blocks=$(((size + bs - 1) / bs)) \
		--salt="$salt" --uuid="$vuuid" >"$WORK/format.out" ||
		fail "veritysetup format"
	check "$name: veritysetup format writes the same bytes" \
		cmp "$WORK/ref.img" "$img"
	check "$name: and the same root hash" \
		grep -q "Root hash:.*$root" "$WORK/format.out"
	# the kernel, and fsck.img (which finds the tree and the sidecar)
	verify_image "$img" "$tar" "$@"
	check "$name: fsck.img --verity verifies the tree against the sidecar" \
		sh -c '"$1" --verity "$2" 2>&1 >/dev/null | grep -q "matches the image.*root hash $3 as given by IMAGE.dmverity"' \
		sh "$FSCK_IMG" "$img" "$root"
	# reproducible, from a file or a pipe
	mkfs_img -q "$@" -T $T -U $UUID --dm-verity - "$WORK/again.img" \
		<"$tar" >"$WORK/again.out" || fail "mkfs from stdin"
	check "$name: same bytes again (standard input)" cmp "$img" "$WORK/again.img"
	check "$name: same sidecar again" cmp "$img.dmverity" "$WORK/again.img.dmverity"
	check "$name: same root hash printed" \
		grep -q "$root" "$WORK/again.out"
	# fs-verity digest of the image file
	check "$name: --fsverity-digest as fsverity digest" \
		test "$("$FSCK_IMG" --fsverity-digest "$img" | cut -d' ' -f1)" = \
		"$(fsverity digest "$img" | cut -d' ' -f1)"
	# one data byte flipped, in the middle of the image: userspace only
	cp "$img" "$WORK/bad.img"
	flip "$WORK/bad.img" $((size / 2))
	if veritysetup verify "$WORK/bad.img" "$WORK/bad.img" "$root" \
		--hash-offset="$off" >/dev/null 2>&1; then
		fail "$name: veritysetup verify accepted a flipped byte"
	else
		ok "$name: veritysetup verify rejects a flipped byte"
	fi
	"$FSCK_IMG" --verity-roothash="$root" "$WORK/bad.img" \
		>"$WORK/fsck.out" 2>&1
	check "$name: fsck.img exits 4 on the flipped byte" test $? = 4
	check "$name: and names its block" grep -q \
		"error: verity: .*data block $((size / 2 / bs)) (offset $((size / 2 / bs * bs))) does not match" \
		"$WORK/fsck.out"
	rm -f "$img" "$img.dmverity" "$plain" "$WORK/again.img" \
		"$WORK/again.img.dmverity" "$WORK/bad.img" "$WORK/ref.img"
}

# index_end IMG: where a tar-index image's index ends and its tar begins
# (the superblock's block count, of 512-byte blocks)
index_end() {
	"$PYTHON" -c '
import struct, sys
with open(sys.argv[1], "rb") as f:
    f.seek(1024 + 36)
    print(struct.unpack("<I", f.read(4))[0] * 512)' "$1"
}

# between IMG FROM TO: sha256 of bytes [FROM, TO) of IMG
between() {
	tail -c +$(($2 + 1)) "$1" | head -c $(($3 - $2)) | sha256sum | cut -d' ' -f1
}

# index_one TAR NAME: --tar-index --dm-verity, every check above
index_one() {
	local tar=$1 name=$2 img plain out root off size tsize iend dump
	local salt vuuid ref flipat
	img=$WORK/$name.img
	plain=$WORK/$name.plain.img
	if ! out=$(mkfs_img -q --tar-index -T $T -U $UUID --dm-verity "$tar" "$img"); then
		fail "mkfs --tar-index --dm-verity $name"
		return
	fi
	root=$(printf '%s\n' "$out" | sed -n 's/^Root hash:\t//p')
	off=$(printf '%s\n' "$out" | sed -n 's/^Hash offset:\t//p')
	check "$name: root hash printed ($root)" test "${#root}" = 64
	mkfs_img -q --tar-index -T $T -U $UUID "$tar" "$plain" ||
		fail "mkfs --tar-index $name"
	size=$(stat -c %s "$plain")
	tsize=$(stat -c %s "$tar")
	iend=$(index_end "$img")
	check "$name: index + tar bytes as without --dm-verity" \
		cmp -n "$size" "$plain" "$img"
	check "$name: index ($iend bytes) + tar ($tsize bytes) is the file's data ($size bytes)" \
		test $((iend + tsize)) = "$size"
	check "$name: hash offset $off is $size rounded up to 4096" \
		test "$off" = $(((size + 4095) / 4096 * 4096))
	check "$name: the bytes between index and tree are the tar (sha256, diffID)" \
		test "$(between "$img" "$iend" $((iend + tsize)))" = \
		"$(sha256sum <"$tar" | cut -d' ' -f1)"
	check "$name: then zeros up to the tree" \
		test "$(between "$img" "$size" "$off")" = \
		"$(head -c $((off - size)) /dev/zero | sha256sum | cut -d' ' -f1)"
	printf '{"roothash":"%s","hashoffset":%s}\n' "$root" "$off" \
		>"$WORK/expected.dmverity"
	check "$name: sidecar IMAGE.dmverity" \
		cmp "$WORK/expected.dmverity" "$img.dmverity"
	check "$name: veritysetup verify accepts it" \
		veritysetup verify "$img" "$img" "$root" --hash-offset="$off"
	dump=$(veritysetup dump "$img" --hash-offset="$off")
	salt=$(printf '%s\n' "$dump" | awk '/^Salt:/ {print $2}')
	vuuid=$(printf '%s\n' "$dump" | awk '/^UUID:/ {print $2}')
	check "$name: 512-byte data blocks" \
		test "$(printf '%s\n' "$dump" | awk '/^Data block size:/ {print $4}')" = 512
	check "$name: the tree covers index and tar ($((size / 512)) data blocks)" \
		test "$(printf '%s\n' "$dump" | awk '/^Data blocks:/ {print $3}')" = $((size / 512))
	cp "$plain" "$WORK/ref.img"
	truncate -s "$off" "$WORK/ref.img"
	veritysetup format "$WORK/ref.img" "$WORK/ref.img" --hash-offset="$off" \
		--data-block-size=512 --data-blocks=$((size / 512)) \
		--salt="$salt" --uuid="$vuuid" >"$WORK/format.out" ||
		fail "veritysetup format"
	check "$name: veritysetup format writes the same bytes" \
		cmp "$WORK/ref.img" "$img"
	check "$name: and the same root hash" \
		grep -q "Root hash:.*$root" "$WORK/format.out"
	# the kernel reads index and tar with the tree after them
	ref=$(ref_dir "$tar")
	[ -d "$ref" ] || extract "$tar" "$ref" || die "bsdtar could not extract $tar"
	compare_mounts "$img" "$ref" "loop file directio" \
		$(treecmp_opts_for "$tar")
	"$FSCK_IMG" --verity "$img" >"$WORK/fsck.out" 2>&1
	check "$name: fsck.img --verity accepts it" test $? = 0
	check "$name: fsck.img finds the tree after the tar, checks it against the sidecar" \
		grep -q "dm-verity tree at offset $off matches the image ($((size / 512)) data blocks of 512 bytes), root hash $root as given by IMAGE.dmverity" \
		"$WORK/fsck.out"
	check "$name: fsck.img: no error, no warning" \
		grep -q "; 0 errors, 0 warnings$" "$WORK/fsck.out"
	check "$name: fsck.img --compare finds the tar's entries" \
		"$FSCK_IMG" -q --compare="$tar" "$img"
	rm -f "$WORK/again.img"
	check "$name: mkfs --verify checks index, tar and tree" \
		mkfs_img -q --tar-index -T $T -U $UUID --dm-verity --verify \
		- "$WORK/again.img" <"$tar"
	check "$name: same bytes again (standard input)" cmp "$img" "$WORK/again.img"
	check "$name: same sidecar again" cmp "$img.dmverity" "$WORK/again.img.dmverity"
	# one byte of the appended tar flipped: userspace only
	flipat=$((iend + tsize / 2))
	cp "$img" "$WORK/bad.img"
	flip "$WORK/bad.img" "$flipat"
	if veritysetup verify "$WORK/bad.img" "$WORK/bad.img" "$root" \
		--hash-offset="$off" >/dev/null 2>&1; then
		fail "$name: veritysetup verify accepted a flipped tar byte"
	else
		ok "$name: veritysetup verify rejects a flipped tar byte"
	fi
	"$FSCK_IMG" --verity-roothash="$root" "$WORK/bad.img" \
		>"$WORK/fsck.out" 2>&1
	check "$name: fsck.img exits 4 on the flipped tar byte" test $? = 4
	check "$name: and names its block" grep -q \
		"error: verity: .*data block $((flipat / 512)) (offset $((flipat / 512 * 512))) does not match" \
		"$WORK/fsck.out"
	rm -f "$img" "$img.dmverity" "$plain" "$WORK/again.img" \
		"$WORK/again.img.dmverity" "$WORK/bad.img" "$WORK/ref.img"
}

# refused WHAT PATTERN COMMAND...: fails saying PATTERN, leaves no image
refused() {
	local what=$1 pattern=$2
	shift 2
	rm -f "$WORK/bad.img" "$WORK/bad.img.dmverity"
	if "$@" 2>"$WORK/err"; then
		fail "$what: accepted"
	elif ! grep -q -- "$pattern" "$WORK/err"; then
		cat "$WORK/err"
		fail "$what: message does not say '$pattern'"
	elif [ -e "$WORK/bad.img" ] || [ -e "$WORK/bad.img.dmverity" ]; then
		fail "$what: left an image or sidecar"
	else
		ok "$what refused: $(head -n 1 "$WORK/err")"
	fi
}

one "$WORK/basic.tar" basic
one "$WORK/basic.tar" basic512 -b 512
one "$WORK/big.tar" big
one "$WORK/big.tar" big512 -b 512
one "$WORK/big.tar" biglz4 -z lz4
one "$WORK/basic.tar" basiczstd -z zstd -b 1024 --inline-data

index_one "$WORK/basic.tar" basic-index
index_one "$WORK/big.tar" big-index

# The caller appends the tar after an index written alone: no tree can
# cover it from here.
refused "--tar-index=only --dm-verity" "the caller appends the tar" \
	mkfs_img -q --tar-index=only --dm-verity "$WORK/basic.tar" "$WORK/bad.img"
# mkfs.img run as mkfs.erofs (libtool's wrapper would rename it: the binary)
bin=$top_builddir/mkfs/.libs/mkfs.img
if [ -x "$bin" ]; then
	export LD_LIBRARY_PATH=$top_builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
	bin=$top_builddir/mkfs/mkfs.img
fi
mkdir -p "$WORK/bin"
ln -sf "$bin" "$WORK/bin/mkfs.erofs"
refused "drop-in mkfs.erofs --tar=i --dm-verity" "dm-verity" \
	env PATH="$WORK/bin:$PATH" mkfs.erofs --tar=i --quiet --dm-verity \
	"$WORK/bad.img" "$WORK/basic.tar"

finish
