#!/bin/bash
# SPDX-License-Identifier: MIT
# Compressed images written by our own mkfs.img (every algorithm, 4096- and
# 512-byte blocks, 1-block and big pclusters, ztailpacking) must read back
# identical through libimgfs, each pcluster decoded once. As root with
# EROFS, each image is also mounted and the kernel's view compared, so the
# reader and the kernel are seen to agree on the same bytes.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/zread/lib.sh"

require_zread
[ -x "${MKFS%% *}" ] || die "mkfs not built: $MKFS"
setup_tmp

$MKTREE "$WORK/small" 0 || die "cannot generate the tree"
if ! mkfs_img -q -z lz4 "$WORK/small" "$WORK/probe.img" >"$WORK/probe.err" 2>&1; then
	grep -qi 'not available\|unavailable\|not supported' "$WORK/probe.err" &&
		skip "this mkfs.img cannot compress yet"
	die "mkfs.img -z lz4 failed: $(head -n 2 "$WORK/probe.err")"
fi

KERNEL=
if [ "$(id -u)" -eq 0 ] && grep -qw erofs /proc/filesystems &&
	[ -x "$FMOUNT" ]; then
	KERNEL=1
else
	log "not root, no EROFS or no fmount helper: reader checks only"
fi

# kernel_compare NAME IMG TREE: mount (file-backed) and compare the content
kernel_compare() {
	local mnt=$WORK/mnt
	if ! mount_file "$2" "$mnt" 2>"$WORK/$1.mount"; then
		fail "$1: the kernel refuses the image: $(head -n 2 "$WORK/$1.mount")"
		return
	fi
	if diff -r --no-dereference "$3" "$mnt" >"$WORK/$1.kdiff" 2>&1; then
		ok "$1: the kernel reads the same tree"
	else
		fail "$1: the kernel's view differs: $(head -n 3 "$WORK/$1.kdiff")"
	fi
	unmount "$mnt" || fail "$1: cannot unmount"
}

# Every algorithm with 4 KiB blocks, 1-block and big pclusters; 512-byte
# blocks with big pclusters and inline tails (LZ4 also with 1-block ones).
CASES='
lz4 4096 plain
lz4 4096 big_tail
lz4 512 plain
lz4 512 big_tail
lz4hc 4096 plain
lz4hc 4096 big_tail
lzma 4096 plain
lzma 4096 big_tail
lzma 512 big_tail
deflate 4096 plain
deflate 4096 big_tail
deflate 512 big_tail
zstd 4096 plain
zstd 4096 big_tail
zstd 512 big_tail
'
while read -r alg bs variant; do
	[ -n "$alg" ] || continue
	key=alg_${alg%hc}
	name=${alg}_${bs}_$variant
	opts="-z $alg -b $bs"
	expect="$key -gt 0,ext_big -eq 0,ext_inline -eq 0"
	if [ "$variant" = big_tail ]; then
		opts="$opts -C 65536 --ztailpacking"
		expect="$key -gt 0,ext_big -gt 0,ext_inline -gt 0"
	fi
	img=$WORK/$name.img
	# shellcheck disable=SC2086 # options are split on purpose
	if ! mkfs_img -q $opts -T 0 "$WORK/small" "$img" \
		>"$WORK/$name.mkfs" 2>&1; then
		fail "$name: mkfs.img $opts failed: $(head -n 2 "$WORK/$name.mkfs")"
		continue
	fi
	zread_verify "$name" "$img" "$WORK/small" || continue
	expect_all "$name" "$expect"
	[ -n "$KERNEL" ] && kernel_compare "$name" "$img" "$WORK/small"
	rm -f "$img"
done <<EOF
$CASES
EOF

finish
