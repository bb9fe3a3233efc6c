#!/bin/bash
# dump.img tells the facts an image was built from: tar layers with every
# entry type, mode, owner, time, xattr and edge size (tests/helpers/mktar.py)
# go through mkfs.img at several block sizes, and checkfacts.py compares
# what dump.img --json shows (superblock, listing, inodes, xattrs, extents,
# contents, statistics) with the tar itself. No mount, no root needed.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/dump/common.sh"

[ -x "$MKFS" ] || die "mkfs.img not built: $MKFS"
dump_setup
setup_tmp

UUID=6d2f1b1e-5a1e-4c1e-9f00-0123456789ab
T=1700000000

# facts TAR LABEL MKFS-OPTIONS...: build an image and check it.
facts() {
	local tar=$1 label=$2 img bs
	shift 2
	img=$WORK/$(basename "$tar" .tar)$(echo "$*" | tr -d ' -').img
	bs=$(blocksize_of "$@")
	if ! mkfs_img -q -T $T -U $UUID -L "$label" "$@" "$tar" "$img"; then
		fail "mkfs.img $* $(basename "$tar")"
		return
	fi
	check "facts of $(basename "$img") ($*)" $CHECKFACTS "$DUMP" "$tar" \
		"$img" --uuid $UUID --label "$label" --blocksize "$bs" \
		--build-time $T
}

pymk mktar.py basic "$WORK/basic.tar" || die "mktar basic"
pymk mktar.py xattrs "$WORK/xattrs.tar" || die "mktar xattrs"

facts "$WORK/basic.tar" basic -b 512
facts "$WORK/basic.tar" 16-byte-label-xx -b 4096 --inline-data
facts "$WORK/basic.tar" l -b 2048
facts "$WORK/basic.tar" z -b 4096 -z lzma -C 16384
facts "$WORK/basic.tar" z -b 1024 -z lz4hc
facts "$WORK/basic.tar" f -b 4096 -z zstd -C 16384 --fragments
facts "$WORK/xattrs.tar" x -b 1024 -x 0
facts "$WORK/xattrs.tar" '' -b 4096

finish
