#!/bin/bash
# dump.img on damaged images: truncated, zeroed superblock or root inode,
# directory cycles, random bytes changed in the metadata. Every view must
# end with exit 0, or exit 1 and a message; never a signal, a hang or a
# sanitizer report (build with --enable-sanitizers to catch memory errors).
# The damaged images are only read by dump.img, never mounted.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/dump/common.sh"

[ -x "$MKFS" ] || die "mkfs.img not built: $MKFS"
dump_setup
setup_tmp

DAMAGE="$PYTHON $top_srcdir/tests/dump/damage.py"
SEED=${DUMP_DAMAGE_SEED:-1}
FLIPS=${DUMP_DAMAGE_FLIPS:-10}
log "seed $SEED (set DUMP_DAMAGE_SEED to repeat)"

pymk mktar.py basic "$WORK/basic.tar" || die "mktar basic"
pymk mktar.py xattrs "$WORK/xattrs.tar" || die "mktar xattrs"
mkfs_img -q -b 4096 --inline-data "$WORK/basic.tar" "$WORK/inline.img" ||
	die "mkfs.img basic"
mkfs_img -q -b 512 "$WORK/xattrs.tar" "$WORK/x512.img" ||
	die "mkfs.img xattrs"
imgs="inline x512"
pymk mktar.py big-tree "$WORK/tree.tar" 60 400000 || die "mktar big-tree"
if mkfs_img -q -b 4096 -z lz4hc -C 16384 --fragments "$WORK/tree.tar" \
	"$WORK/frag.img"; then
	imgs="$imgs frag"
else
	fail "mkfs.img --fragments"
fi
if command -v mkfs.erofs >/dev/null; then
	mkdir -p "$WORK/src"
	bsdtar -x -f "$WORK/xattrs.tar" -C "$WORK/src" 2>/dev/null
	printf 'hello\n' >"$WORK/src/small"
	yes 'compressible text' | head -c 100000 >"$WORK/src/text"
	if mkfs.erofs --quiet -zlz4hc "$WORK/lz4.img" "$WORK/src" \
		>/dev/null 2>&1; then
		imgs="$imgs lz4"
	fi
fi

mkdir -p "$WORK/d"
for img in $imgs; do
	check "damaged copies of $img.img" $DAMAGE "$DUMP" "$WORK/$img.img" \
		"$WORK/d" "$SEED" "$FLIPS"
done

finish
