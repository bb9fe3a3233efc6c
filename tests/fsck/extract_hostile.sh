#!/bin/bash
# SPDX-License-Identifier: MIT
# fsck.img --extract on hostile images (made by patching mkfs.img output):
# a symlink and then a directory of the same name with a file below it, a
# second ".." entry that is a regular file, a name containing '/', and a
# hard-linked directory. fsck.img must report the problems and write
# nothing outside the target directory, with and without --overwrite.
. "$top_srcdir/tests/lib.sh"

require_tools "$PYTHON"
[ -x "$FSCK_IMG" ] || die "fsck.img not built: $FSCK_IMG"
[ -x "${MKFS%% *}" ] || skip "mkfs.img not built"
setup_tmp
SB=$WORK/sandbox
mkdir -p "$SB/outside"
chmod 700 "$SB/outside"
touch -d @1000000000 "$SB/outside"

"$PYTHON" - "$WORK/layer.tar" "$SB/outside" <<'PY' || die "tar failed"
import io, sys, tarfile
out, outside = sys.argv[1], sys.argv[2]
with tarfile.open(out, 'w', format=tarfile.PAX_FORMAT) as tf:
    def add(name, kind=tarfile.REGTYPE, data=b'', link=''):
        ti = tarfile.TarInfo(name)
        ti.type = kind
        ti.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
        ti.linkname = link
        ti.size = len(data) if kind == tarfile.REGTYPE else 0
        tf.addfile(ti, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    add('aa', tarfile.SYMTYPE, link=outside)
    add('ab', tarfile.DIRTYPE)
    add('ab/x', data=b'must stay inside')
    add('ab/y', tarfile.SYMTYPE, link='../../outside/y')
    add('xy', tarfile.DIRTYPE)
    add('xy/zz', data=b'a file named ..')
    add('sl', tarfile.DIRTYPE)
    add('sl/q1', data=b'slash')
    add('hd', tarfile.DIRTYPE)
    add('hd/k1', data=b'k')
PY
mkfs_img -q "$WORK/layer.tar" "$WORK/clean.img" || die "mkfs.img failed"

# Rename entries in place: "ab" -> "aa", "zz" -> "..", "q1" -> "q/", and
# make "hd/k1" point at the root directory (a hard-linked directory).
"$PYTHON" - "$WORK/clean.img" "$WORK/hostile.img" <<'PY' || die "patch failed"
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
def patch(old, new):
    i = d.find(old)
    assert i >= 0 and d.find(old, i + 1) < 0, old
    d[i:i + len(old)] = new
    return i
patch(b'...aaabhdslxy', b'...aaaahdslxy')
patch(b'...zz', b'.....')
patch(b'...q1', b'...q/')
i = patch(b'...k1', b'...k1')
# the dirent of "k1" is the third of its block: 12 bytes each, names after
blk = i - 36
assert struct.unpack_from('<H', d, blk + 8)[0] == 36
root = struct.unpack_from('<Q', d, blk + 12)[0]   # ".." of hd = root
struct.pack_into('<Q', d, blk + 24, root)
d[blk + 24 + 10] = 2
open(sys.argv[2], 'wb').write(d)
PY

"$FSCK_IMG" -q "$WORK/clean.img"
check "the unpatched image is clean" [ $? -eq 0 ]
"$FSCK_IMG" "$WORK/hostile.img" >"$WORK/check.txt"
check "hostile image: errors reported (exit 4)" [ $? -eq 4 ]
check "... duplicate name" grep -q 'duplicate entry "aa"' "$WORK/check.txt"
check "... second \"..\"" grep -q '2 "\.\." entries' "$WORK/check.txt"
check "... name with /" grep -q "contains '/'" "$WORK/check.txt"
check "... hard-linked directory" grep -q 'a second time' "$WORK/check.txt"

for mode in plain overwrite; do
	out=$SB/out-$mode
	if [ $mode = overwrite ]; then
		mkdir -p "$out" && : >"$out/existing"
		"$FSCK_IMG" -q --overwrite --extract="$out" "$WORK/hostile.img" \
			>/dev/null 2>"$WORK/$mode.err"
	else
		"$FSCK_IMG" -q --extract="$out" "$WORK/hostile.img" \
			>/dev/null 2>"$WORK/$mode.err"
	fi
	rc=$?
	check "$mode: exit 4 or 8, not a crash ($rc)" [ $rc -eq 4 -o $rc -eq 8 ]
	check "$mode: nothing written outside" [ -z "$(ls -A "$SB/outside")" ]
	check "$mode: outside's mode and mtime untouched" \
		[ "$(stat -c %a.%Y "$SB/outside")" = 700.1000000000 ]
	check "$mode: sandbox holds only the outputs" \
		[ "$(ls -A "$SB" | grep -v '^out-' | tr '\n' ' ')" = "outside " ]
	check "$mode: aa is the symlink, not followed" [ -L "$out/aa" ]
	check "$mode: no x anywhere but inside" \
		[ -z "$(find "$WORK" -name x -not -path "$out/*")" ]
	check "$mode: the file named .. was not written" \
		[ ! -e "$SB/zz" ] && [ ! -e "$out/zz" ]
	check "$mode: ab/y symlink not created through aa" \
		[ ! -e "$SB/outside/y" ] && [ ! -L "$SB/outside/y" ]
done
# a non-empty target is refused without --overwrite
"$FSCK_IMG" -q --extract="$SB/out-plain" "$WORK/clean.img" 2>/dev/null
check "non-empty target refused (exit 8)" [ $? -eq 8 ]
finish
