#!/bin/bash
# SPDX-License-Identifier: MIT
# Compressed images written by erofs-utils' mkfs.erofs (an independent
# writer, 4 KiB blocks) must read back identical through libimgfs: compact
# and full (legacy) indexes, big pclusters, ztailpacking, PLAIN pclusters,
# LZ4 with and without zero padding, LZMA when that mkfs.erofs has it.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/zread/lib.sh"

command -v mkfs.erofs >/dev/null 2>&1 ||
	skip "mkfs.erofs (erofs-utils) not installed"
require_zread
setup_tmp

# big: with multi-megabyte files (long indexes, extents of several MiB);
# small: the same without them, to keep the test quick.
$MKTREE "$WORK/big" 1 && $MKTREE "$WORK/small" 0 ||
	die "cannot generate the trees"

# name | tree | mkfs.erofs options | expectations (KEY TEST VALUE, ...)
CASES='
lz4|big|-zlz4|compressed_compact -gt 0,compressed_full -eq 0,ext_big -eq 0,ext_raw -gt 0
lz4hc|small|-zlz4hc|compressed_compact -gt 0,ext_inline -eq 0
lz4hc_big|big|-zlz4hc -C65536|ext_big -gt 0,compressed_compact -gt 0
lz4hc_tail|small|-zlz4hc -Eztailpacking|ext_inline -gt 0,ext_raw -gt 0
lz4hc12_big_tail|small|-zlz4hc,12 -C16384 -Eztailpacking|ext_big -gt 0,ext_inline -gt 0
lz4_legacy|small|-zlz4 -Elegacy-compress|compressed_full -gt 0,compressed_compact -eq 0
lz4hc_big_legacy|big|-zlz4hc -C65536 -Elegacy-compress|compressed_full -gt 0,ext_big -gt 0
lz4hc_big_tail_legacy|small|-zlz4hc -C16384 -Elegacy-compress -Eztailpacking|compressed_full -gt 0,ext_inline -gt 0,ext_big -gt 0
'
if mkfs.erofs --help 2>&1 | grep -q 'compressors are:.*lzma'; then
	CASES="$CASES
lzma|small|-zlzma -C65536 -Eztailpacking|alg_lzma -gt 0,ext_inline -gt 0
lzma_legacy|small|-zlzma -Elegacy-compress|alg_lzma -gt 0,compressed_full -gt 0"
else
	log "this mkfs.erofs has no LZMA: LZMA is covered by imgfs_writer.sh"
fi

while IFS='|' read -r name tree opts expect; do
	[ -n "$name" ] || continue
	img=$WORK/$name.img
	# shellcheck disable=SC2086 # options are split on purpose
	if ! mkfs.erofs $opts -T 0 -U 6e5f3c2a-1b4d-4e8f-9a7b-0c1d2e3f4a5b \
		"$img" "$WORK/$tree" >"$WORK/$name.mkfs" 2>&1; then
		fail "$name: mkfs.erofs $opts failed: $(tail -n 2 "$WORK/$name.mkfs")"
		continue
	fi
	zread_verify "$name" "$img" "$WORK/$tree" || continue
	expect_all "$name" "$expect"
	if [ -x "$FSCK_IMG" ]; then
		check "$name: fsck.img finds no error" "$FSCK_IMG" -q "$img"
	fi
	rm -f "$img"
done <<EOF
$CASES
EOF

# Reads in odd-sized pieces (partial extents, pieces spanning pclusters)
# and from several threads sharing one image handle.
img=$WORK/pieces.img
mkfs.erofs -zlz4hc -C16384 -Eztailpacking -T 0 "$img" "$WORK/small" \
	>/dev/null 2>&1 || die "mkfs.erofs failed"
zread_verify pieces_4097 "$img" "$WORK/small" -b 4097
zread_verify pieces_333 "$img" "$WORK/small" -b 333
check "4 threads read the same content as one" "$ZREAD" threads "$img" 4
check "a full check decodes each pcluster once" "$ZREAD" checkcount "$img"

finish
