#!/bin/bash
# SPDX-License-Identifier: MIT
# Corruption test: mutate images from mkfs.erofs and mkfs.img in the
# superblock, inodes, directory blocks, xattrs and data; fsck.img must never
# crash or hang, and must report every targeted structural corruption.
# Prints the detection rate per region. Mutants are never mounted.
. "$top_srcdir/tests/lib.sh"

require_tools "$PYTHON" bsdtar
[ -x "$FSCK_IMG" ] || die "fsck.img not built: $FSCK_IMG"
BATCH=$top_builddir/tests/fsck/fsck_batch
[ -x "$BATCH" ] || die "helper not built: $BATCH"
setup_tmp

S=$WORK/src
mkdir -p "$S/d/e" "$S/many"
printf 'hello' >"$S/a"
head -c 9000 /dev/urandom >"$S/d/b"
ln -s a "$S/l"
ln "$S/a" "$S/d/e/hard"
for i in $(seq 1 150); do printf "%s" "$i" >"$S/many/file-$i"; done
if command -v setfattr >/dev/null; then
	setfattr -n user.k -v v "$S/a"
	setfattr -n user.s -v same "$S/many/file-1" "$S/many/file-2" \
		"$S/many/file-3" "$S/d/b"
	setfattr -n trusted.t -v "$(head -c 300 /dev/zero | tr '\0' t)" "$S/d"
fi
# Fixed times, so the layout does not depend on the clock. With four files
# needing extended inodes (their own nanoseconds), the 512-byte image's
# shared xattr area starts right where its last inode ends: a layout the
# mutation picker once mistook for an inline xattr area.
find "$S" -exec touch -h -d @1700000000 {} +
for i in 1 2 3 4; do
	touch -d "@1700000000.00000000$i" "$S/many/file-$i"
done

IMAGES=
if command -v mkfs.erofs >/dev/null 2>&1; then
	mkfs.erofs --quiet "$WORK/erofs-utils.img" "$S" >/dev/null ||
		die "mkfs.erofs failed"
	IMAGES="$IMAGES $WORK/erofs-utils.img"
fi
if [ -x "${MKFS%% *}" ]; then
	bsdtar --format=pax --xattrs -cf "$WORK/src.tar" -C "$S" . ||
		die "bsdtar failed"
	mkfs_img -q -b 512 "$WORK/src.tar" "$WORK/mkfs-512.img" ||
		die "mkfs.img -b 512 failed"
	mkfs_img -q --inline-data "$WORK/src.tar" "$WORK/mkfs-4k.img" ||
		die "mkfs.img failed"
	IMAGES="$IMAGES $WORK/mkfs-512.img $WORK/mkfs-4k.img"
fi
[ -n "$IMAGES" ] || skip "neither mkfs.erofs nor mkfs.img available"

# shellcheck disable=SC2086
"$PYTHON" "$top_srcdir/tests/fsck/corrupt.py" "$BATCH" "$FSCK_IMG" "$WORK" \
	"${CORRUPT_SEED:-20240601}" $IMAGES
check "fsck.img survives every mutant and detects the targeted corruptions" \
	[ $? -eq 0 ]
finish
