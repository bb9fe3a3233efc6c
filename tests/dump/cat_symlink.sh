#!/bin/bash
# SPDX-License-Identifier: MIT
# dump.img --cat follows symlinks as cat(1) would with the image as its
# root: relative and absolute targets, links through directories, ".."
# that stays at the image root, chains up to the kernel's 40 links, loops
# and longer chains refused (ELOOP), dangling links and links to
# directories refused; nothing outside the image is ever read.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/dump/common.sh"

require_tools "$PYTHON"
[ -x "${MKFS%% *}" ] || die "mkfs.img not built: $MKFS"
dump_setup
setup_tmp

"$PYTHON" - "$WORK/links.tar" <<'PY' || die "tar failed"
import io, sys, tarfile
with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT) as tf:
    def add(name, data=None, link=None, kind=None):
        ti = tarfile.TarInfo(name)
        if link is not None:
            ti.type, ti.linkname = tarfile.SYMTYPE, link
        elif kind:
            ti.type = kind
        else:
            ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data) if data is not None else None)
    add('etc', kind=tarfile.DIRTYPE)
    add('etc/real', b'real file\n')
    add('etc/hostname', b'the image, not the host\n')
    add('rel', link='etc/real')
    add('abs', link='/etc/real')
    add('up', link='../../../etc/real')
    add('host', link='/../../../../etc/hostname')
    add('dirlink', link='etc')
    add('sub', kind=tarfile.DIRTYPE)
    add('sub/back', link='../dirlink/./real')
    add('sub/deep', link='../../sub/../etc/../abs')
    for i in range(40):
        add('c%02d' % i, link='c%02d' % (i + 1) if i < 39 else 'etc/real')
    for i in range(41):
        add('d%02d' % i, link='d%02d' % (i + 1) if i < 40 else 'etc/real')
    add('loop1', link='loop2')
    add('loop2', link='loop1')
    add('dang', link='nothing/here')
    add('todir', link='/etc')
    add('notdir', link='etc/real/x')
PY
mkfs_img -q "$WORK/links.tar" "$WORK/links.img" || die "mkfs.img failed"
IMG=$WORK/links.img

for p in rel abs up dirlink/real sub/back sub/deep /c00 c39 rel/ ; do
	out=$("$DUMP" --cat="$p" "$IMG" 2>&1)
	rc=$?
	if [ "$p" = rel/ ]; then
		check "--cat=rel/: not a directory (exit 1)" [ $rc -eq 1 ]
		continue
	fi
	check "--cat=$p: the file behind the links" \
		[ $rc -eq 0 ] && [ "$out" = "real file" ]
done
out=$("$DUMP" --cat=host "$IMG")
check "--cat: \"..\" stays at the image root, never the host's /etc" \
	[ $? -eq 0 ] && [ "$out" = "the image, not the host" ]
"$DUMP" --cat=d00 "$IMG" >/dev/null 2>"$WORK/d00.err"
check "--cat: 41 links refused (exit 1)" [ $? -eq 1 ] &&
	grep -q 'Too many levels of symbolic links' "$WORK/d00.err"
"$DUMP" --cat=loop1 "$IMG" >/dev/null 2>"$WORK/loop.err"
check "--cat: a loop refused" [ $? -eq 1 ] &&
	grep -q 'Too many levels of symbolic links' "$WORK/loop.err"
"$DUMP" --cat=dang "$IMG" >/dev/null 2>"$WORK/dang.err"
check "--cat: a dangling link: not found" [ $? -eq 1 ] &&
	grep -q 'No such file' "$WORK/dang.err"
"$DUMP" --cat=todir "$IMG" >/dev/null 2>"$WORK/todir.err"
check "--cat: a link to a directory: not a regular file" [ $? -eq 1 ] &&
	grep -q 'not a regular file (directory)' "$WORK/todir.err"
"$DUMP" --cat=notdir "$IMG" >/dev/null 2>"$WORK/notdir.err"
check "--cat: a path through a file: not a directory" [ $? -eq 1 ] &&
	grep -q 'Not a directory' "$WORK/notdir.err"
"$DUMP" --cat=abs --json "$IMG" >"$WORK/cat.json"
"$PYTHON" - "$WORK/cat.json" <<'PY'
import base64, json, sys
c = json.load(open(sys.argv[1]))['cat']
assert c['path'] == 'abs' and base64.b64decode(c['data']) == b'real file\n', c
PY
check "--cat --json: the target's content under the given path" [ $? -eq 0 ]
# other views still show the link itself
"$DUMP" --path=abs "$IMG" >"$WORK/inode.txt"
check "--path: the symlink itself, not followed" grep -q '^Type: *symlink' "$WORK/inode.txt"
finish
