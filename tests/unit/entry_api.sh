#!/bin/bash
# An image built through the writer's entry calls alone (no libarchive, no
# tar: tests/unit/test_entry_api.c), uncompressed and with lz4: the
# library's checker, fsck.img and fsck.erofs accept it, and through the
# kernel (loop and file-backed mounts) every entry reads back as added:
# type, mode, owner, mtime with nanoseconds, contents (a 5 MiB file given
# in uneven chunks, a sparse file whose holes stay holes), symlink target,
# device numbers, xattrs, hard links, whiteouts and an opaque directory.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
TOOL=$top_builddir/tests/unit/test_entry_api
[ -x "$TOOL" ] || die "helper not built: $TOOL (run make check)"
setup

for mode in plain lz4; do
	img=$WORK/$mode.img
	arg=
	[ $mode = lz4 ] && arg=lz4
	check "$mode: built and checked by the library" "$TOOL" build "$img" $arg
	check "$mode: fsck.img accepts it" "$FSCK_IMG" "$img"
	if command -v fsck.erofs >/dev/null; then
		check "$mode: fsck.erofs accepts it" fsck.erofs "$img"
	fi
	if mount_loop "$img" "$WORK/mnt-$mode"; then
		check "$mode: loop mount holds what was added" \
			"$TOOL" compare "$WORK/mnt-$mode"
		unmount "$WORK/mnt-$mode" || fail "$mode: unmount"
	else
		fail "$mode: loop mount"
	fi
	if mount_file "$img" "$WORK/fmnt-$mode" 2>/dev/null; then
		check "$mode: file-backed mount holds what was added" \
			"$TOOL" compare "$WORK/fmnt-$mode"
		unmount "$WORK/fmnt-$mode" || fail "$mode: unmount"
	else
		log "file-backed mounts unsupported here (Linux < 6.12)"
	fi
done
finish
