#!/bin/bash
# SPDX-License-Identifier: MIT
# fsck.img --compare: an image built by mkfs.img from a layer matches it
# exactly (whatever the compression of the tar), and a deliberately altered
# file, a dropped entry, a changed mode, ownership options, whiteout
# handling and a byte changed in the image's data are all reported.
. "$top_srcdir/tests/lib.sh"

require_tools "$PYTHON" gzip zstd
[ -x "$FSCK_IMG" ] || die "fsck.img not built: $FSCK_IMG"
[ -x "${MKFS%% *}" ] || skip "mkfs.img not built"
setup_tmp
CMPTAR="$PYTHON $top_srcdir/tests/fsck/cmptar.py"

for v in base content drop mode longlink; do
	$CMPTAR $v "$WORK/$v.tar" || die "cmptar.py $v failed"
done
gzip -c "$WORK/base.tar" >"$WORK/base.tar.gz"
zstd -q -c "$WORK/base.tar" >"$WORK/base.tar.zst"
mkfs_img -q "$WORK/base.tar" "$WORK/base.img" || die "mkfs.img failed"
mkfs_img -q -b 512 --inline-data "$WORK/base.tar.gz" "$WORK/base512.img" ||
	die "mkfs.img -b 512 failed"

# expect NAME STATUS KIND... -- FSCK ARGS: exit STATUS and, in the JSON
# report, exactly the difference kinds KIND ("path:kind" pairs)
expect() {
	local name=$1 want=$2 kinds=() got
	shift 2
	while [ "$1" != -- ]; do
		kinds+=("$1")
		shift
	done
	shift
	"$FSCK_IMG" --json "$@" >"$WORK/$name.json"
	got=$?
	check "$name: exit status $want" [ "$got" -eq "$want" ]
	check "$name: differences ${kinds[*]:-none}" "$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
got = sorted("%s:%s" % (x["path"], x["kind"]) for x in d["differences"])
want = sorted(sys.argv[2:])
if got != want:
    print("got", got, "want", want)
    sys.exit(1)' "$WORK/$name.json" "${kinds[@]}"
}

expect same 0 -- --compare="$WORK/base.tar" "$WORK/base.img"
expect same-gz 0 -- --compare="$WORK/base.tar.gz" "$WORK/base.img"
expect same-zst 0 -- --compare="$WORK/base.tar.zst" "$WORK/base.img"
expect same-512 0 -- --compare="$WORK/base.tar" "$WORK/base512.img"
# hard links share one inode: /dir/file and /hl both differ
expect content 4 /dir/file:content /hl:content -- \
	--compare="$WORK/content.tar" "$WORK/base.img"
expect drop 4 /sym:extra -- --compare="$WORK/drop.tar" "$WORK/base.img"
expect mode 4 /dir/file:mode /hl:mode -- \
	--compare="$WORK/mode.tar" "$WORK/base.img"
# a symlink mkfs.img refuses, where the image has one: reported, not
# compared (this used to crash)
expect longlink 4 sym:unrepresentable -- \
	--compare="$WORK/longlink.tar" "$WORK/base.img"

# --no-data would leave every file's content unread: a usage error
"$FSCK_IMG" --no-data --compare="$WORK/base.tar" "$WORK/base.img" \
	>"$WORK/nodata.out" 2>"$WORK/nodata.err"
check "--no-data with --compare: usage error (16)" [ $? -eq 16 ]
check "... naming both options" grep -q -- '--compare.*--no-data' "$WORK/nodata.err"
check "... nothing on standard output" [ ! -s "$WORK/nodata.out" ]

# ownership options must be given to --compare as they were to mkfs.img
mkfs_img -q --uid-offset=5 --force-gid=7 "$WORK/base.tar" "$WORK/own.img" ||
	die "mkfs.img --uid-offset failed"
expect owner-opts 0 -- --uid-offset=5 --force-gid=7 \
	--compare="$WORK/base.tar" "$WORK/own.img"
"$FSCK_IMG" -q --compare="$WORK/base.tar" "$WORK/own.img" >"$WORK/own.txt"
check "owner differences without the options" [ $? -eq 4 ]
check "... reported as owner" grep -q '^differs: /dir/file: owner: 1000:1000 in the archive, 1005:7 in the image' "$WORK/own.txt"
mkfs_img -q --all-root "$WORK/base.tar" "$WORK/root.img" ||
	die "mkfs.img --all-root failed"
expect all-root 0 -- --all-root --compare="$WORK/base.tar" "$WORK/root.img"

# whiteouts kept verbatim
mkfs_img -q --keep-whiteouts "$WORK/base.tar" "$WORK/keep.img" ||
	die "mkfs.img --keep-whiteouts failed"
expect keep-whiteouts 0 -- --keep-whiteouts --compare="$WORK/base.tar" \
	"$WORK/keep.img"
expect whiteouts-mismatch 4 /dir:xattr /opq:xattr /dir/gone:missing \
	/dir/.wh.gone:extra /opq/.wh..wh..opq:extra -- \
	--compare="$WORK/base.tar" "$WORK/keep.img"

# one byte of file data changed in the image itself: the image is still
# structurally valid, only --compare sees it
"$PYTHON" - "$WORK/base.img" "$WORK/tampered.img" <<'PY' || die "patch failed"
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
i = d.find(b'UNIQUE-CONTENT-MARKER')
assert i > 0
d[i + 3] ^= 0x20
open(sys.argv[2], 'wb').write(d)
PY
"$FSCK_IMG" -q "$WORK/tampered.img"
check "tampered data: structurally clean" [ $? -eq 0 ]
expect tampered 4 /dir/file:content /hl:content -- \
	--compare="$WORK/base.tar" "$WORK/tampered.img"
finish
