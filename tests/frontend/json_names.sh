#!/bin/bash
# SPDX-License-Identifier: MIT
# One JSON behaviour for names that are not UTF-8, in all three programs
# (frontend/json_str.h): mkfs.img --json (native, and --oci --flatten),
# fsck.img --json and dump.img --json get an image path and an entry name
# holding the byte FF. Each document must be valid JSON, give the bytes
# back through Python's "surrogateescape", and list the member under
# "surrogate_escaped".
. "$top_srcdir/tests/lib.sh"

require_tools "$PYTHON"
[ -x "$FSCK_IMG" ] || die "fsck.img not built: $FSCK_IMG"
[ -x "$DUMP_IMG" ] || die "dump.img not built: $DUMP_IMG"
setup_tmp

"$PYTHON" - "$WORK/layer.tar" <<'PY' || die "tar failed"
import io, sys, tarfile
with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT,
                  encoding='utf-8', errors='surrogateescape') as tf:
    ti = tarfile.TarInfo(b'name-\xff'.decode('utf-8', 'surrogateescape'))
    ti.size, ti.mtime = 2, 1700000000
    tf.addfile(ti, io.BytesIO(b'x\n'))
PY
"$PYTHON" "$top_srcdir/tests/oci/mklayout.py" "$WORK/layout" \
	"one=$WORK/layer.tar" >/dev/null || die "mklayout failed"

# same_bytes DOC MEMBER BYTES(shell $'...'): DOC[MEMBER] (a path of keys
# and indexes, "/"-separated) is BYTES and is listed as escaped.
same_bytes() {
	"$PYTHON" - "$@" <<'PY'
import json, os, sys
doc = json.load(open(sys.argv[1], encoding='utf-8'))
path, want = sys.argv[2].split('/'), os.fsencode(sys.argv[3])
obj = doc
for k in path[:-1]:
    obj = obj[int(k)] if isinstance(obj, list) else obj[k]
got = obj[path[-1]].encode('utf-8', 'surrogateescape')
assert got == want, (got, want)
assert path[-1] in obj.get('surrogate_escaped', []), obj
PY
}

img=$WORK/$'image-\xff.img'
flat=$WORK/$'flat-\xff.img'
mkfs_img --json -T 1700000000 "$WORK/layer.tar" "$img" >"$WORK/mkfs.json" ||
	die "mkfs.img --json failed"
check "mkfs.img --json: the image path" same_bytes "$WORK/mkfs.json" image "$img"
mkfs_img --oci --flatten --json "$WORK/layout" "$flat" >"$WORK/flat.json" ||
	die "mkfs.img --oci --flatten --json failed"
check "mkfs.img --oci --flatten --json: the image path" \
	same_bytes "$WORK/flat.json" image "$flat"
"$FSCK_IMG" --json "$img" >"$WORK/fsck.json" || die "fsck.img --json failed"
check "fsck.img --json: the image path" same_bytes "$WORK/fsck.json" image "$img"
"$FSCK_IMG" --json -v "$img" >"$WORK/fsckv.json" ||
	die "fsck.img --json -v failed"
check "fsck.img --json -v: the entry name" \
	same_bytes "$WORK/fsckv.json" files/1/path $'/name-\xff'
"$DUMP_IMG" --json --ls "$img" >"$WORK/dump.json" || die "dump.img --json failed"
check "dump.img --json --ls: the entry name" \
	same_bytes "$WORK/dump.json" ls/0/entries/0/name $'name-\xff'
"$DUMP_IMG" --json --path $'/name-\xff' "$img" >"$WORK/dumpp.json" ||
	die "dump.img --json --path failed"
check "dump.img --json --path: the entry's path" \
	same_bytes "$WORK/dumpp.json" inode/path $'/name-\xff'
finish
