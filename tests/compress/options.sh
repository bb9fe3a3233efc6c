#!/bin/bash
# SPDX-License-Identifier: MIT
# Compression options and what they put in the superblock
# (docs/format.md §3.5):
# bad levels, dictionary and pcluster sizes and worker counts outside
# 1..256 are refused with a message and leave no image; so are options
# that do nothing in the chosen mode (-C, --ztailpacking, --fragments,
# --workers without -z, --inline-data with --tar-index or --fragments,
# --ztailpacking with --fragments, --allow-missing-end with a directory);
# the drop-in mode accepts those mkfs.erofs has with a warning, as
# mkfs.erofs accepts them; plain LZ4 with
# one-block pclusters keeps the original
# superblock form (u1 = LZ4 distance, no COMPR_CFGS), everything else
# writes the algorithm bitmap and its configuration record; ZERO_PADDING
# is always on. A file that does not compress is stored flat; a large
# compressible one takes few blocks. --verify accepts compressed images, a
# truncated layer fails cleanly.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/compress/common.sh"
setup

"$PYTHON" "$ZDIR/zdata.py" small "$WORK/small.tar" || die "zdata.py small"
algs=" $(z_algorithms | tr '\n' ' ') "

# refused MESSAGE-PATTERN OPTIONS...
refused() {
	local pat=$1 img=$WORK/refused.img
	shift
	rm -f "$img"
	if mkfs_img -q "$@" "$WORK/small.tar" "$img" 2>"$WORK/err"; then
		fail "accepted: $*"
	elif [ -e "$img" ]; then
		fail "refused but left an image: $*"
	elif grep -qiE "$pat" "$WORK/err"; then
		ok "refused: $* ($(head -n 1 "$WORK/err"))"
	else
		cat "$WORK/err"
		fail "refused without saying why ($pat): $*"
	fi
}

refused 'level' -z lz4hc,13
refused 'level' -z lz4,5
refused 'level' -z lzma,10
refused 'dictionary' -z lzma,6,16777216
refused 'pcluster|-C' -z lz4 -C 6144
refused 'pcluster|-C' -z lzma -b 512 -C 768
refused 'pcluster|-C' -z lz4 -C 2097152
case $algs in *" zstd "*) refused 'window' -z zstd,3,3000000 ;; esac
case $algs in *" deflate "*) refused 'level' -z deflate,10 ;; esac
# --workers: a usage error stating the range
for n in 0 257 1024 -1 x; do
	refused "invalid value for --workers: '$n' \\(the range is 1 to 256\\)" \
		-z lz4 --workers="$n"
done

# sb IMG: incompat, u1 and the first configuration record's length
sb() {
	echo "$(z_sb_field "$1" 80 4) $(z_sb_field "$1" 84 2)" \
		"$(z_sb_field "$1" 128 2)"
}

# expect_sb OPTIONS... -- INCOMPAT U1 RECLEN [RECORD FIELD CHECKS]
img=$WORK/o.img
z_mkfs "$img" "$WORK/small.tar" -z lz4 &&
	check "lz4: zero padding, u1 = LZ4 distance, no config record" \
		test "$(sb "$img" | cut -d' ' -f1-2)" = "1 65535"
z_mkfs "$img" "$WORK/small.tar" -z lz4hc -C 16384 && {
	check "lz4hc -C 16384: COMPR_CFGS, u1 = {lz4}, 14-byte record" \
		test "$(sb "$img")" = "3 1 14"
	check "lz4 record: distance 65535, 4 blocks" \
		test "$(z_sb_field "$img" 130 2) $(z_sb_field "$img" 132 2)" = \
		"65535 4"
}
z_mkfs "$img" "$WORK/small.tar" -z lzma && {
	check "lzma: COMPR_CFGS, u1 = {lzma}, 14-byte record" \
		test "$(sb "$img")" = "3 2 14"
	check "lzma default dictionary 32 KiB for 4 KiB pclusters" \
		test "$(z_sb_field "$img" 130 4)" = 32768
}
z_mkfs "$img" "$WORK/small.tar" -z lzma -C 131072 &&
	check "lzma dictionary 4 x 128 KiB" \
		test "$(z_sb_field "$img" 130 4)" = 524288
z_mkfs "$img" "$WORK/small.tar" -z lzma,3,1048576 &&
	check "lzma dictionary as asked" \
		test "$(z_sb_field "$img" 130 4)" = 1048576
case $algs in *" deflate "*)
	z_mkfs "$img" "$WORK/small.tar" -z deflate &&
		check "deflate: u1 = {deflate}, 6-byte record, window bits 15" \
			test "$(sb "$img") $(z_sb_field "$img" 130 1)" = "3 4 6 15"
esac
case $algs in *" zstd "*)
	z_mkfs "$img" "$WORK/small.tar" -z zstd -C 65536 &&
		check "zstd: u1 = {zstd}, 6-byte record, window 512 KiB" \
			test "$(sb "$img") $(z_sb_field "$img" 131 1)" = "3 8 6 9"
esac

# Layouts, seen through the mounted image.
z_mkfs "$img" "$WORK/small.tar" -z lz4hc -C 65536 && {
	mnt=$WORK/mnt
	mount_file "$img" "$mnt" || fail "mount $img"
	blocks=$(stat -c %b "$mnt/zero/z943718")
	check "921 KiB of zeros take one block ($blocks sectors)" \
		test "$blocks" -eq 8
	blocks=$(stat -c %b "$mnt/rand/r65537")
	check "65537 random bytes stored raw: 17 blocks ($blocks sectors)" \
		test "$blocks" -eq 136
	check "random data readable" cmp -s "$mnt/rand/r65537" \
		<(bsdtar -xOf "$WORK/small.tar" rand/r65537)
	unmount "$mnt"
}
if [ -x "$DUMP_IMG" ]; then
	"$DUMP_IMG" --path=/rand/r65537 "$img" >"$WORK/dump" 2>&1
	check "incompressible file stored flat" grep -q flat_plain "$WORK/dump"
	"$DUMP_IMG" --path=/text/big "$img" >"$WORK/dump" 2>&1
	check "text stored with compact indexes" \
		grep -q compressed_compact "$WORK/dump"
fi

# --verify reads every compressed file back before the image is kept.
check "--verify accepts a compressed image" mkfs_img -q --verify \
	-z lzma -C 65536 --ztailpacking "$WORK/small.tar" "$WORK/v.img"

# Options that do nothing in the chosen mode: a usage error (exit 2,
# the message, the usage and Try lines), and no image.
# useless MESSAGE-PATTERN OPTIONS...
useless() {
	local pat=$1 img=$WORK/useless.img rc
	shift
	rm -f "$img"
	mkfs_img "$@" "$WORK/small.tar" "$img" 2>"$WORK/err"
	rc=$?
	if [ $rc -eq 2 ] && [ ! -e "$img" ] &&
		grep -qE "^mkfs.img: .*$pat" "$WORK/err" &&
		grep -q '^usage: mkfs.img ' "$WORK/err" &&
		grep -q "^Try 'mkfs.img --help'" "$WORK/err"; then
		ok "usage error: $* ($(head -n 1 "$WORK/err"))"
	else
		cat "$WORK/err"
		fail "$*: exit $rc, image left: $([ -e "$img" ] && echo yes || echo no)"
	fi
}
useless '-C.*no effect without compression' -C 65536
useless 'ztailpacking.*no effect without compression' --ztailpacking
useless 'fragments.*no effect without compression' --fragments
useless 'workers.*no effect without compression' --workers=2
useless 'inline-data.*no effect on a tar-index image' --tar-index --inline-data
useless 'ztailpacking.*no effect without compression' --tar-index --ztailpacking
useless 'inline-data.*no effect with fragments' -z lz4 --fragments --inline-data
useless 'ztailpacking.*no effect with fragments' -z lz4 --fragments --ztailpacking
# a directory source has no end-of-archive marker to miss
mkdir -p "$WORK/srcdir" && echo x >"$WORK/srcdir/f"
rm -f "$WORK/dir.img"
mkfs_img -q --allow-missing-end "$WORK/srcdir" "$WORK/dir.img" 2>"$WORK/err"
rc=$?
if [ $rc -eq 2 ] && [ ! -e "$WORK/dir.img" ] &&
	grep -q '^mkfs.img: --allow-missing-end has no effect with a directory' \
		"$WORK/err" && grep -q '^usage: mkfs.img ' "$WORK/err"; then
	ok "usage error: --allow-missing-end with a directory ($(head -n 1 "$WORK/err"))"
else
	cat "$WORK/err"
	fail "--allow-missing-end with a directory: exit $rc"
fi
check "-z lz4 --inline-data --ztailpacking accepted" \
	mkfs_img -q -z lz4 --inline-data --ztailpacking "$WORK/small.tar" \
	"$WORK/ok.img"

# Drop-in mode: mkfs.erofs accepts such options silently, so do we, with
# a warning (none with --quiet); the image is the one without them.
. "$top_srcdir/tests/containerd/common.sh"
dropin_setup
fixed=(-T 1600000000 -U 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0)
# warned MESSAGE-PATTERN [OPTIONS...] -- [OPTIONS OF THE SAME IMAGE...]
warned() {
	local pat=$1 opts=() same=()
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	same=("$@")
	if dropin "${fixed[@]}" "${opts[@]}" --tar=f "$WORK/w.img" \
		"$WORK/small.tar" >/dev/null 2>"$WORK/err" &&
		grep -qE "^mkfs.erofs: warning: .*$pat" "$WORK/err"; then
		ok "drop-in ${opts[*]}: $(head -n 1 "$WORK/err")"
	else
		cat "$WORK/err"
		fail "drop-in ${opts[*]}: no warning ($pat)"
	fi
	if dropin --quiet "${fixed[@]}" "${opts[@]}" --tar=f "$WORK/q.img" \
		"$WORK/small.tar" 2>"$WORK/err" && [ ! -s "$WORK/err" ]; then
		ok "drop-in --quiet ${opts[*]}: silent"
	else
		cat "$WORK/err"
		fail "drop-in --quiet ${opts[*]}: not silent"
	fi
	dropin --quiet "${fixed[@]}" "${same[@]}" --tar=f "$WORK/s.img" \
		"$WORK/small.tar" &&
		check "drop-in ${opts[*]}: the image of '${same[*]}'" \
			cmp -s "$WORK/w.img" "$WORK/s.img"
}
warned 'no effect without compression' -Eztailpacking --
warned 'no effect without compression' -C65536 --
warned 'no effect without compression' -Efragments --
warned 'no effect without compression' --workers=2 --
warned 'no effect with fragments' -zlz4 -Efragments -Eztailpacking -- \
	-zlz4 -Efragments
warned 'no effect with fragments' -zlz4 -Efragments -Einline_data -- \
	-zlz4 -Efragments
# inline data is mkfs.erofs's default: nothing to say where it does nothing
for o in "-zlz4 -Efragments --tar=f" "--tar=i"; do
	# shellcheck disable=SC2086
	if dropin $o "$WORK/d.img" "$WORK/small.tar" >/dev/null \
		2>"$WORK/err" && ! grep -q warning "$WORK/err"; then
		ok "drop-in $o: no warning for the default inline data"
	else
		cat "$WORK/err"
		fail "drop-in $o: warned for the default inline data"
	fi
done

# A layer cut short inside a file: an error, and no image.
head -c 300000 "$WORK/small.tar" >"$WORK/cut.tar"
rm -f "$WORK/cut.img"
if mkfs_img -q -z lz4hc "$WORK/cut.tar" "$WORK/cut.img" 2>"$WORK/err"; then
	fail "truncated layer accepted"
else
	check "truncated layer: error ($(head -n 1 "$WORK/err")), no image" \
		test ! -e "$WORK/cut.img"
fi

finish
