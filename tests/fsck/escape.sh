#!/bin/bash
# SPDX-License-Identifier: MIT
# Names with newlines, carriage returns, backslashes, escape sequences and
# invalid UTF-8 never reach the output raw:
# - fsck.img --digest writes lines as sha256sum(1) does (a leading "\",
#   and "\\", "\n", "\r" in the name): the same lines sha256sum prints for
#   the extracted files, which "sha256sum -c" accepts; no forged line;
# - fsck.img -v, dump.img --ls -R, dump.img --path, and mkfs.img's error
#   messages escape control bytes as \xNN;
# - no output of the three tools holds a control byte besides newline.
. "$top_srcdir/tests/lib.sh"

require_tools "$PYTHON" sha256sum
[ -x "$FSCK_IMG" ] || die "fsck.img not built: $FSCK_IMG"
[ -x "$DUMP_IMG" ] || die "dump.img not built: $DUMP_IMG"
[ -x "${MKFS%% *}" ] || die "mkfs.img not built: $MKFS"
setup_tmp
ZERO=0000000000000000000000000000000000000000000000000000000000000000

"$PYTHON" - "$WORK/names.tar" "$ZERO" <<'PY' || die "tar failed"
import io, sys, tarfile
out, zero = sys.argv[1], sys.argv[2]
names = ['forge\n' + zero + '  etc-passwd', 'esc\x1b[2Jclear', 'back\\slash',
         'cr\rname', 'bell\x07', 'ok-\u00e9', 'c1-\u009b']
with tarfile.open(out, 'w', format=tarfile.PAX_FORMAT) as tf:
    for i, n in enumerate(names):
        ti = tarfile.TarInfo('d/' + n)
        data = b'%d\n' % i
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
    # a raw, invalid UTF-8 byte in a name (GNU format: no pax transcoding)
with tarfile.open(out + '.raw', 'w', format=tarfile.GNU_FORMAT,
                  encoding='latin-1') as tf:
    ti = tarfile.TarInfo('lat\xe9\x9b1')
    tf.addfile(ti, io.BytesIO(b''))
PY
mkfs_img -q "$WORK/names.tar" "$WORK/names.img" || die "mkfs.img failed"
mkfs_img -q "$WORK/names.tar.raw" "$WORK/raw.img" || die "mkfs.img failed"

# no control byte but newline in @file
clean() {
	! LC_ALL=C grep -q "[[:cntrl:]]" <(tr -d '\n' <"$1")
}

"$FSCK_IMG" --digest "$WORK/names.img" >"$WORK/digest.txt"
check "--digest: exit 0" [ $? -eq 0 ]
check "--digest: one line per file, none forged" \
	[ "$(grep -c '  \./d/' "$WORK/digest.txt")" -eq 7 ] &&
	! grep -q "^$ZERO" "$WORK/digest.txt"
check "--digest: no raw control byte" clean "$WORK/digest.txt"
check "--digest: escaped like sha256sum" \
	grep -qxF "\\$(printf '2\n' | sha256sum | cut -c1-64)  ./d/back\\\\slash" \
	"$WORK/digest.txt"
"$FSCK_IMG" -q --extract="$WORK/x" "$WORK/names.img" || die "extract failed"
# sha256sum's own lines for the names it escapes (\, newline, CR) must be
# ours without the leading "./", and "sha256sum -c" must accept ours
(cd "$WORK/x" && for f in d/*; do
	case $f in *$'\n'* | *'\'* | *$'\r'*) sha256sum "$f" ;; esac
done) | sort >"$WORK/coreutils.txt"
sed 's|  \./d/|  d/|' "$WORK/digest.txt" | grep '^\\' |
	grep -v '\\x' | sort >"$WORK/ours.txt"
check "--digest: the lines sha256sum writes (3 names)" \
	[ "$(wc -l <"$WORK/ours.txt")" -eq 3 ] &&
	cmp -s "$WORK/coreutils.txt" "$WORK/ours.txt"
(cd "$WORK/x" && sha256sum -c --quiet "$WORK/ours.txt")
check "--digest: sha256sum -c accepts them" [ $? -eq 0 ]
check "--digest: other controls as \\xNN" \
	grep -qF '  ./d/esc\x1b[2Jclear' "$WORK/digest.txt"
check "--digest: UTF-8 as is, C1 controls escaped" \
	grep -qF '  ./d/ok-é' "$WORK/digest.txt" &&
	grep -qF '  ./d/c1-\xc2\x9b' "$WORK/digest.txt"

"$FSCK_IMG" -v "$WORK/names.img" >"$WORK/verbose.txt"
check "fsck -v: no raw control byte" clean "$WORK/verbose.txt"
check "fsck -v: escaped names" grep -qF '/d/bell\x07 ' "$WORK/verbose.txt"
"$FSCK_IMG" --digest "$WORK/raw.img" >"$WORK/raw.txt"
check "fsck: invalid UTF-8 as \\xNN" grep -qF '  ./lat\xe9\x9b1' "$WORK/raw.txt"

"$DUMP_IMG" --ls -R "$WORK/names.img" >"$WORK/ls.txt"
check "dump --ls: no raw control byte" clean "$WORK/ls.txt"
check "dump --ls: escaped names" \
	grep -qF ' forge\x0a'"$ZERO"'  etc-passwd' "$WORK/ls.txt" &&
	grep -qF ' cr\x0dname' "$WORK/ls.txt"
"$DUMP_IMG" --ls "$WORK/raw.img" >"$WORK/lsraw.txt"
check "dump --ls: invalid UTF-8 as \\xNN" grep -qF ' lat\xe9\x9b1' "$WORK/lsraw.txt"
"$DUMP_IMG" --path=$'/d/esc\x1b[2Jclear' "$WORK/names.img" >"$WORK/inode.txt"
check "dump --path: no raw control byte" clean "$WORK/inode.txt"
"$DUMP_IMG" --path=$'/d/none\x1b[2J' "$WORK/names.img" 2>"$WORK/notfound.txt"
check "dump: error naming a path escaped" \
	clean "$WORK/notfound.txt" && grep -qF 'none\x1b[2J' "$WORK/notfound.txt"

# mkfs.img: a library message quoting an entry name
"$PYTHON" - "$WORK/bad.tar" <<'PY' || die "tar failed"
import sys, tarfile
with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT) as tf:
    ti = tarfile.TarInfo('link\x1b[2J')
    ti.type, ti.linkname = tarfile.LNKTYPE, 'missing\x07target'
    tf.addfile(ti)
PY
mkfs_img -q "$WORK/bad.tar" "$WORK/bad.img" 2>"$WORK/mkfs.err"
check "mkfs: a missing hard-link target is an error" [ $? -ne 0 ]
check "mkfs: the message escapes the names" \
	clean "$WORK/mkfs.err" && grep -qF 'link\x1b[2J' "$WORK/mkfs.err"
finish
