#!/bin/bash
# SPDX-License-Identifier: MIT
# Names that are not UTF-8 in JSON (frontend/json_str.h): a tar holding files
# named with the bytes C3 A9 ("é" in UTF-8) and E9 (Latin-1 "é"), the
# UTF-8 encoding of U+DCE9 (the surrogate E9's escape stands for), an
# overlong "/", '"', '\', control bytes, valid multibyte UTF-8, a lone
# E9 and a truncated C3; a directory, a symlink target and an xattr that
# are not UTF-8 either. fsck.img --json (--digest, -v, --compare, a
# finding) and dump.img --json (--ls -R, --path of every entry, --stats,
# --cat) must give distinct strings that Python's json and
# "surrogateescape" turn back into exactly the tar's bytes, mark the
# escaped members in "surrogate_escaped", and be valid JSON (json.tool).
. "$top_srcdir/tests/lib.sh"

require_tools "$PYTHON"
[ -x "$FSCK_IMG" ] || die "fsck.img not built: $FSCK_IMG"
[ -x "$DUMP_IMG" ] || die "dump.img not built: $DUMP_IMG"
[ -x "${MKFS%% *}" ] || die "mkfs.img not built: $MKFS"
setup_tmp

# The tar, and the same with one more file (for --compare).
"$PYTHON" - "$WORK/names.tar" "$WORK/more.tar" <<'PY' || die "tar failed"
import io, sys, tarfile
NAMES = [b'\xc3\xa9', b'\xe9', b'sur\xed\xb3\xa9', b'over\xc0\xaf',
         b'q"uote', b'back\\slash', b'ctl\x01\x1f\x7f', b'nl\nname',
         b'multi-\xe2\x82\xac\xf0\x9f\x98\x80\xce\xb1', b'lone-\xe9-x',
         b'trunc\xc3', b'trunc3\xe2\x82']
def s(b):
    return b.decode('utf-8', 'surrogateescape')
def write(path, extra):
    # pax: names, link targets and xattr values as raw bytes
    # (hdrcharset=BINARY when they are not UTF-8)
    with tarfile.open(path, 'w', format=tarfile.PAX_FORMAT,
                      encoding='utf-8', errors='surrogateescape') as tf:
        def add(name, kind=tarfile.REGTYPE, data=b'', link=b'', pax=None):
            ti = tarfile.TarInfo(s(name))
            ti.type, ti.linkname, ti.mtime = kind, s(link), 1700000000
            ti.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
            ti.size = len(data)
            ti.pax_headers = pax or {}
            tf.addfile(ti, io.BytesIO(data) if data else None)
        add(b'dir-\xff\xfe', tarfile.DIRTYPE)
        for i, n in enumerate(NAMES):
            add(n, data=b'%d\n' % i)
            add(b'dir-\xff\xfe/' + n, data=b'in dir %d\n' % i)
        add(b'link-\xe9', tarfile.SYMTYPE, link=b'target-\xc3\xa9-\xe9')
        add(b'xattr', data=b'x', pax={
            'SCHILY.xattr.user.n\u00e9': s(b'v\xff\x00\xe9\xc3\xa9"\\')})
        if extra:
            add(b'extra-\xe9\xff', data=b'only in the archive\n')
write(sys.argv[1], False)
write(sys.argv[2], True)
PY
mkfs_img -q -T 1700000000 "$WORK/names.tar" "$WORK/names.img" ||
	die "mkfs.img failed"
IMG=$WORK/names.img

# Every JSON output is valid JSON for python3 -m json.tool.
valid() {
	"$PYTHON" -m json.tool "$1" >/dev/null
}

"$FSCK_IMG" --json --digest "$IMG" >"$WORK/digest.json"
check "fsck --json --digest: exit 0" [ $? -eq 0 ]
"$FSCK_IMG" --json -v "$IMG" >"$WORK/verbose.json"
check "fsck --json -v: exit 0" [ $? -eq 0 ]
"$FSCK_IMG" --json --compare="$WORK/more.tar" "$IMG" >"$WORK/compare.json"
check "fsck --json --compare: exit 4 (a difference)" [ $? -eq 4 ]
"$DUMP_IMG" --json --ls -R "$IMG" >"$WORK/ls.json"
check "dump --json --ls -R: exit 0" [ $? -eq 0 ]
"$DUMP_IMG" --json --stats "$IMG" >"$WORK/stats.json"
check "dump --json --stats: exit 0" [ $? -eq 0 ]
for f in digest verbose compare ls stats; do
	check "$f: valid JSON (json.tool)" valid "$WORK/$f.json"
done

# A finding naming a file that is not UTF-8: its link count raised in a
# copy of the image (given to fsck.img only, never mounted).
"$DUMP_IMG" --json --path=$'/dir-\xff\xfe/\xe9' "$IMG" >"$WORK/e9.json" ||
	die "dump --path failed"
"$PYTHON" - "$WORK/e9.json" "$IMG" "$WORK/nlink.img" <<'PY' || die "patch failed"
import json, struct, sys
ino = json.load(open(sys.argv[1], encoding='utf-8'))['inode']
d = bytearray(open(sys.argv[2], 'rb').read())
off, fmt = (44, '<I') if ino['format'] == 'extended' else (6, '<H')
assert struct.unpack_from(fmt, d, ino['pos'] + off)[0] == 1
struct.pack_into(fmt, d, ino['pos'] + off, 3)
open(sys.argv[3], 'wb').write(d)
PY
"$FSCK_IMG" --json "$WORK/nlink.img" >"$WORK/finding.json"
check "fsck --json on a damaged copy: exit 4" [ $? -eq 4 ]
check "finding: valid JSON (json.tool)" valid "$WORK/finding.json"

# Each JSON string back to bytes, compared with the tar; every --path and
# --cat goes through dump.img too. Prints one line per failed check.
"$PYTHON" - "$WORK" "$DUMP_IMG" "$IMG" <<'PY' >"$WORK/verdict.txt" 2>&1
import base64, json, subprocess, sys, tarfile
work, dump, img = sys.argv[1:]
ESC = 'surrogate_escaped'
bad = []

def load(path):
    # strict: the document itself must be UTF-8, with no raw byte left
    return json.loads(open(path, 'rb').read().decode('utf-8'))

def raw(s):
    return s.encode('utf-8', 'surrogateescape')

def utf8(b):
    try:
        b.decode('utf-8')
        return True
    except UnicodeDecodeError:
        return False

def expect(what, got, want):
    if got != want:
        bad.append('%s: got %r, want %r' % (what, got, want))

def escaped_ok(what, rec, keys):
    """rec lists exactly those of keys whose bytes are not UTF-8."""
    want = sorted(k for k in keys
                  if isinstance(rec.get(k), str) and not utf8(raw(rec[k])))
    expect(what + ' ' + ESC, sorted(rec.get(ESC, [])), want)

tree, targets, files = {}, {}, {}
with tarfile.open(work + '/names.tar', encoding='utf-8',
                  errors='surrogateescape') as tf:
    for ti in tf:
        p = b'/' + raw(ti.name)
        tree[p] = ti
        if ti.issym():
            targets[p] = raw(ti.linkname)
        if ti.isreg():
            files[p] = tf.extractfile(ti).read()
assert any(not utf8(p) for p in tree) and b'/\xc3\xa9' in tree

def strings_distinct(what, strs):
    expect(what + ': distinct JSON strings', len(set(strs)), len(strs))

# fsck --digest: every regular file, by its exact bytes
d = load(work + '/digest.json')
expect('fsck schema_version', d.get('schema_version'), 2)
paths = [f['path'] for f in d['files']]
strings_distinct('fsck --digest', paths)
expect('fsck --digest paths', sorted(raw(p) for p in paths), sorted(files))
for f in d['files']:
    escaped_ok('fsck --digest %r' % f['path'], f, ['path', 'link_to'])
# the two names of the issue: different strings, each its own bytes
by = {raw(f['path']): f['path'] for f in d['files']}
expect('/C3 A9', by.get(b'/\xc3\xa9'), '/\u00e9')
expect('/E9', by.get(b'/\xe9'), '/\udce9')

# fsck -v: every path, the symlink too
v = load(work + '/verbose.json')
paths = [f['path'] for f in v['files']]
strings_distinct('fsck -v', paths)
expect('fsck -v paths', sorted(raw(p) for p in paths),
       sorted([b'/'] + list(tree)))

# fsck --compare: the file only in the archive, named exactly
c = load(work + '/compare.json')
diffs = c['differences']
expect('compare: one difference', len(diffs), 1)
for x in diffs:
    expect('compare path', raw(x['path']), b'/extra-\xe9\xff')
    escaped_ok('compare', x, ['path', 'message'])

# a finding about /dir-FF FE/E9 names it exactly
f = load(work + '/finding.json')
named = [p for p in f['problems'] if 'path' in p]
expect('finding names the file',
       [raw(p['path']) for p in named], [b'/dir-\xff\xfe/\xe9'])
for p in named:
    escaped_ok('finding', p, ['path', 'message'])

# dump --ls -R: every directory and entry, symlink targets
ls = load(work + '/ls.json')
expect('dump schema_version', ls.get('schema_version'), 2)
seen = {}
for dr in ls['ls']:
    escaped_ok('ls dir %r' % dr['path'], dr, ['path'])
    strings_distinct('ls %r' % dr['path'], [e['name'] for e in dr['entries']])
    for e in dr['entries']:
        escaped_ok('ls entry %r' % e['name'], e, ['name', 'target'])
        p = raw(dr['path']).rstrip(b'/') + b'/' + raw(e['name'])
        seen[p] = e
        if p in targets:
            expect('ls target of %r' % p, raw(e['target']), targets[p])
expect('dump --ls -R paths', sorted(seen), sorted(tree))

# dump --path of every entry (its path as given), --cat of every file
for p in sorted(tree):
    r = subprocess.run([dump.encode(), b'--json', b'--path=' + p,
                        img.encode()], capture_output=True)
    if r.returncode:
        bad.append('--path=%r: exit %d' % (p, r.returncode))
        continue
    ino = json.loads(r.stdout.decode('utf-8'))['inode']
    expect('--path=%r path' % p, raw(ino['path']), p)
    escaped_ok('--path=%r' % p, ino,
               ['path', 'target', 'target_error', 'xattrs_error',
                'extents_error'])
    if p in targets:
        expect('--path=%r target' % p, raw(ino['target']), targets[p])
    want = {raw(k[len('SCHILY.xattr.'):]): raw(val)
            for k, val in tree[p].pax_headers.items()
            if k.startswith('SCHILY.xattr.')}
    got = {raw(x['name']): raw(x['value']) for x in ino['xattrs']}
    expect('--path=%r xattrs' % p, got, want)
    for x in ino['xattrs']:
        escaped_ok('--path=%r xattr' % p, x, ['name', 'suffix', 'value'])
    if p in files:
        r = subprocess.run([dump.encode(), b'--json', b'--cat=' + p,
                            img.encode()], capture_output=True)
        cat = json.loads(r.stdout.decode('utf-8'))['cat']
        expect('--cat=%r path' % p, raw(cat['path']), p)
        escaped_ok('--cat=%r' % p, cat, ['path'])
        expect('--cat=%r data' % p, base64.b64decode(cat['data']), files[p])

# dump --stats: the directory that is not UTF-8 among the largest
st = load(work + '/stats.json')['stats']
top = [raw(x['path']) for x in st['largest_dirs']]
expect('stats: largest directories', sorted(top), [b'/', b'/dir-\xff\xfe'])
for x in st['largest_dirs']:
    escaped_ok('stats dir', x, ['path'])

for b in bad:
    print(b)
print('%d paths checked' % len(tree))
sys.exit(1 if bad else 0)
PY
check "every name decodes back to the tar's bytes, escapes marked" [ $? -eq 0 ]
cat "$WORK/verdict.txt"
finish
