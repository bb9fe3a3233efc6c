#!/bin/bash
# dump.img agrees with erofs-utils' dump.erofs (an independent reader) on
# images from mkfs.erofs (plain, lz4hc-compressed, chunk-based) and from
# mkfs.img (plain and lz4hc), and tells the facts of their source tree.
# dump.erofs 1.5 only reads 4 KiB blocks. No mount, no root needed.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/dump/common.sh"

require_tools dump.erofs mkfs.erofs setfattr bsdtar
[ -x "$MKFS" ] || die "mkfs.img not built: $MKFS"
dump_setup
setup_tmp

UUID=0b5e7d2c-1f00-4a6e-8c1b-2d3e4f506172
T=1700000000
VS="$PYTHON $top_srcdir/tests/dump/vs_erofs.py"

make_src_tree "$WORK/src" || die "could not make the source tree"
# The same tree as a pax tar, for checkfacts.py.
bsdtar -c --format pax --xattrs -f "$WORK/src.tar" -C "$WORK/src" . ||
	die "bsdtar"

# erofs IMG OPTIONS...: mkfs.erofs with OPTIONS (-T overrides every mtime,
# so the images whose facts are checked keep the source's).
erofs() {
	local img=$WORK/$1
	shift
	mkfs.erofs --quiet -U $UUID "$@" "$img" "$WORK/src" \
		>"$WORK/mkfs.log" 2>&1 || { cat "$WORK/mkfs.log"; return 1; }
}

erofs plain.img --preserve-mtime || die "mkfs.erofs plain"
erofs lz4.img --preserve-mtime -zlz4hc -C16384 || die "mkfs.erofs lz4hc"
erofs chunk.img --preserve-mtime --chunksize=8192 || die "mkfs.erofs chunks"
erofs extended.img -T$T -Eforce-inode-extended || die "mkfs.erofs extended"
mkfs_img -q -T $T -U $UUID "$WORK/src" "$WORK/ours.img" ||
	fail "mkfs.img directory source"
mkfs_img -q -U $UUID -z lz4hc -C 16384 "$WORK/src" "$WORK/ours-lz4.img" ||
	fail "mkfs.img -z lz4hc"
pymk mktar.py basic "$WORK/basic.tar" || die "mktar basic"
mkfs_img -q -T $T "$WORK/basic.tar" "$WORK/basic.img" || fail "mkfs.img basic"

for img in plain lz4 chunk extended ours ours-lz4; do
	[ -f "$WORK/$img.img" ] || continue
	check "dump.img agrees with dump.erofs on $img.img" \
		$VS "$DUMP" "$WORK/$img.img"
done
[ -f "$WORK/basic.img" ] &&
	check "dump.img agrees with dump.erofs on basic.img (every 3rd file)" \
		$VS "$DUMP" "$WORK/basic.img" 3
for img in plain lz4 chunk ours-lz4; do
	[ -f "$WORK/$img.img" ] || continue
	check "facts of $img.img" $CHECKFACTS "$DUMP" \
		"$WORK/src.tar" "$WORK/$img.img" --uuid $UUID --blocksize 4096 \
		--every 1
done

finish
