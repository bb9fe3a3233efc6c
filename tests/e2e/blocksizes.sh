#!/bin/bash
# Block sizes 512, 1024, 2048 and 4096, each with the default layout (all
# regular-file data in whole, aligned blocks) and with --inline-data (tails
# packed next to the inode). FIEMAP on the mounted image must show the
# file's bytes at the reported image offsets, block aligned and never
# inline by default; O_DIRECT reads must return the same bytes.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup

pymk mktar.py basic "$WORK/basic.tar" || die "mktar basic"

# layout_check IMG BS MODE
layout_check() {
	local out=$WORK/layout.out
	mount_loop "$1" "$WORK/lmnt" || { fail "mount $1"; return; }
	if "$PYTHON" "$HELPERS/layout.py" "$WORK/lmnt" "$1" "$2" "$3" >"$out"; then
		ok "$3 layout at $2: $(tail -n 1 "$out")"
	else
		head -n 50 "$out"
		fail "$3 layout at $2"
	fi
	unmount "$WORK/lmnt"
}

for bs in 512 1024 2048 4096; do
	convert_and_compare "$WORK/basic.tar" -b "$bs" &&
		layout_check "$IMG" "$bs" aligned
	convert_and_compare "$WORK/basic.tar" -b "$bs" --inline-data &&
		layout_check "$IMG" "$bs" inline
done

finish
