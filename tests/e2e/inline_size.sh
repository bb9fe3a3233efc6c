#!/bin/bash
# SPDX-License-Identifier: MIT
# --inline-data packs inodes and file tails into the metadata blocks best
# fit (docs/format.md §4.3): an image of many tails of every size is no
# bigger than mkfs.erofs's default image of the same tree (which inlines
# tails too), uncompressed and with lz4hc, and reads back exactly through
# the kernel. mkfs.erofs builds from a bsdtar extraction of the layer, with
# -T giving every inode the layer's one mtime, so both images have compact
# inodes.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_root_erofs
require_build
require_tools mkfs.erofs

T=1600000000
# 8 directories of 150 files: random bytes (stored raw even when
# compressing) and text, of 1 byte to 12 KB, so tails take every size
# from a few bytes to a whole block; symlinks with long targets
"$PYTHON" - "$WORK/tails.tar" "$T" <<'PY' || die "cannot make tails.tar"
import io, random, sys, tarfile
rng = random.Random(23)
mtime = int(sys.argv[2])
tf = tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT)
for d in range(8):
    ti = tarfile.TarInfo("d%d" % d)
    ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, mtime
    tf.addfile(ti)
    for i in range(150):
        n = rng.randrange(1, 12000)
        if i % 3:
            data = rng.randbytes(n)
        else:
            data = (b"line %d of d%d/f%d\n" % (rng.randrange(99), d, i) * n)[:n]
        ti = tarfile.TarInfo("d%d/f%03d" % (d, i))
        ti.size, ti.mtime = n, mtime
        tf.addfile(ti, io.BytesIO(data))
    for i in range(20):
        ti = tarfile.TarInfo("d%d/l%02d" % (d, i))
        ti.type, ti.mode, ti.mtime = tarfile.SYMTYPE, 0o777, mtime
        ti.linkname = "t" * rng.randrange(1, 400)
        tf.addfile(ti)
tf.close()
PY
extract "$WORK/tails.tar" "$WORK/src" || die "bsdtar: tails.tar"
uuid=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0

for z in none lz4hc; do
	zo=()
	[ "$z" = none ] || zo=(-z "$z")
	convert_and_compare "$WORK/tails.tar" --inline-data -T "$T" -U "$uuid" \
		"${zo[@]}" || continue
	ours=$(stat -c %s "$IMG")
	ez=()
	[ "$z" = none ] || ez=(-z"$z")
	rm -f "$WORK/theirs.img"
	mkfs.erofs --quiet -T"$T" -U"$uuid" "${ez[@]}" "$WORK/theirs.img" \
		"$WORK/src" >"$WORK/mkfs.erofs.out" 2>&1 ||
		{ cat "$WORK/mkfs.erofs.out"; fail "mkfs.erofs $z"; continue; }
	theirs=$(stat -c %s "$WORK/theirs.img")
	check "$z --inline-data: $ours bytes, mkfs.erofs's default $theirs" \
		test "$ours" -le "$theirs"
	inline=$("$DUMP_IMG" --stats "$IMG" |
		sed -n 's/.*stored plainly.*(\([0-9]*\) inline)/\1/p')
	check "$z: $inline file bytes inline" test "${inline:-0}" -gt 1000000
done

finish
