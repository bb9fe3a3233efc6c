#!/bin/bash
# SPDX-License-Identifier: MIT
# A hand-built image (tests/zread/mkcrafted.py) with the compressed layouts
# no available writer makes: tail fragments (full and compact indexes), a
# whole-file fragment, an interlaced PLAIN pcluster wrapping around its
# block, HEAD2 lclusters with DEFLATE, partial references, 8 KiB lclusters.
# Our reader must read it as expected and, as root, so must the kernel; a
# PLAIN extent the kernel refuses must be refused by our reader too.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/zread/lib.sh"

require_zread
setup_tmp

CRAFT="$PYTHON $top_srcdir/tests/zread/mkcrafted.py"
$CRAFT "$WORK/good.img" "$WORK/expect" || die "mkcrafted.py failed"
$CRAFT "$WORK/bad.img" "$WORK/expect-bad" bad || die "mkcrafted.py failed"

zread_verify crafted "$WORK/good.img" "$WORK/expect"
expect_all crafted "ext_fragment -eq 3,ext_interlaced -eq 1,ext_partial -eq 2,alg_deflate -eq 2,compressed_compact -eq 1,compressed_full -eq 7,ext_raw -eq 2"

# extent_line FILE N: line N of the extent listing of FILE
extent_line() {
	"$ZREAD" extents "$WORK/good.img" "$1" | sed -n "${2}p"
}

expect_extent() {
	local got
	got=$(extent_line "$1" "$2")
	if [ "$got" = "$3" ]; then
		ok "$1: extent $2 is '$3'"
	else
		fail "$1: extent $2 is '$got', expected '$3'"
	fi
}

expect_extent frag_tail 1 "0 4096 compressed 12288 4096 raw,shared"
expect_extent frag_tail 2 "4096 1500 fragment 0 1500 lz4"
expect_extent frag_whole 1 "0 3000 fragment 1500 3000 lz4"
expect_extent frag_compact 2 "8192 700 fragment 4500 700 lz4"
expect_extent interlaced 2 "5000 4000 compressed 24576 4096 raw,interlaced,shared"
expect_extent head2 1 "0 6000 compressed 32768 4096 deflate,shared"
expect_extent partial_deflate 1 "0 2500 compressed 32768 4096 deflate,partial,shared"
expect_extent lcl8k 1 "0 12000 compressed 40960 4096 lz4,shared"

# Reading in 1000-byte pieces crosses the interlaced wrap and fragments.
zread_verify crafted_pieces "$WORK/good.img" "$WORK/expect" -b 1000

rc=0
"$ZREAD" cat "$WORK/bad.img" raw_past_eof >/dev/null 2>"$WORK/bad.err" || rc=$?
if [ "$rc" -eq 1 ] &&
	grep -q 'uncompressed extent at byte 5000 spans 7288 bytes' "$WORK/bad.err"; then
	ok "raw_past_eof refused: $(cat "$WORK/bad.err")"
else
	fail "raw_past_eof: exit $rc: $(cat "$WORK/bad.err")"
fi
if "$ZREAD" cat "$WORK/bad.img" interlaced 2>/dev/null |
	cmp -s - "$WORK/expect/interlaced"; then
	ok "the other files of the bad image still read back"
else
	fail "the other files of the bad image no longer read back"
fi

if [ "$(id -u)" -eq 0 ] && grep -qw erofs /proc/filesystems &&
	[ -x "$FMOUNT" ]; then
	if mount_file "$WORK/good.img" "$WORK/mnt" 2>"$WORK/mount.err"; then
		check "the kernel reads the crafted image as expected" \
			diff -r "$WORK/expect" "$WORK/mnt"
		unmount "$WORK/mnt" || fail "cannot unmount"
	else
		fail "the kernel refuses the crafted image: $(cat "$WORK/mount.err")"
	fi
else
	log "not root or no EROFS: kernel comparison skipped"
fi

finish
