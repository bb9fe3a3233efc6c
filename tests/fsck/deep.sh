#!/bin/bash
# SPDX-License-Identifier: MIT
# A tree 20,000 directories deep (paths of 40 KB, far past PATH_MAX): every
# view of dump.img and fsck.img (check, --compare, --extract) must work and
# use memory proportional to the depth, not to depth times path length
# (peak RSS below 100 MB; a path per pending directory took gigabytes).
# The extracted tree is walked with directory fds and compared with the
# archive, level by level.
. "$top_srcdir/tests/lib.sh"

DEPTH=20000
RSS_MAX_KB=$((100 * 1024))
require_tools "$PYTHON" /usr/bin/time
[ -x "$FSCK_IMG" ] || die "fsck.img not built: $FSCK_IMG"
[ -x "$DUMP_IMG" ] || die "dump.img not built: $DUMP_IMG"
[ -x "${MKFS%% *}" ] || die "mkfs.img not built: $MKFS"
setup_tmp

# One chain of single-letter directories, listed in the archive (with their
# own modes and times), and at the bottom every kind of entry.
"$PYTHON" - "$WORK/deep.tar" "$DEPTH" <<'PY' || die "tar failed"
import io, sys, tarfile
out, depth = sys.argv[1], int(sys.argv[2])
with tarfile.open(out, 'w', format=tarfile.PAX_FORMAT) as tf:
    def add(name, kind, mode, data=b'', link=''):
        ti = tarfile.TarInfo(name)
        ti.type, ti.mode, ti.linkname = kind, mode, link
        ti.mtime = 1600000000 + len(name) % 1000
        ti.size = len(data) if kind == tarfile.REGTYPE else 0
        tf.addfile(ti, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    # Most levels are implied parents (0755, the build time); every 97th
    # is listed after its children (its entry updates the implied one),
    # with its own mode and time. Listing all would make a 400 MB tar.
    bottom = '/'.join(['d'] * depth)
    add(bottom + '/f', tarfile.REGTYPE, 0o640, b'at the bottom\n')
    add(bottom + '/h', tarfile.LNKTYPE, 0o640, link=bottom + '/f')
    add(bottom + '/s', tarfile.SYMTYPE, 0o777, link='f')
    add(bottom + '/p', tarfile.FIFOTYPE, 0o620)
    add(bottom + '/e', tarfile.DIRTYPE, 0o700)
    for n in range(depth - depth % 97, 0, -97):
        add('/'.join(['d'] * n), tarfile.DIRTYPE, 0o751)
PY

# [run_rc=N] run NAME CMD...: stdout to $WORK/NAME.out, exit status N
# (default 0), peak RSS checked.
run() {
	local name=$1 rc rss want=${run_rc:-0}
	shift
	/usr/bin/time -f %M -o "$WORK/$name.rss" "$@" >"$WORK/$name.out" \
		2>"$WORK/$name.err"
	rc=$?
	rss=$(tail -n1 "$WORK/$name.rss")
	check "$name: exit $want ($rc)" [ "$rc" -eq "$want" ]
	check "$name: peak RSS $rss KB < $RSS_MAX_KB KB" [ "$rss" -lt "$RSS_MAX_KB" ]
}

run mkfs "${MKFS%% *}" -q -T 1700000000 "$WORK/deep.tar" "$WORK/deep.img"
IMG=$WORK/deep.img

run fsck "$FSCK_IMG" "$IMG"
check "fsck: $((DEPTH + 2)) directories, no '...' path" \
	grep -q "($((DEPTH + 2)) directories, 1 regular, 1 symlink, 1 special, 1 extra hard link).* 0 errors, 0 warnings" "$WORK/fsck.err"
run compare "$FSCK_IMG" --compare="$WORK/deep.tar" "$IMG"
check "compare: no difference" grep -q " 0 differences from" "$WORK/compare.err"

# A finding at the bottom names its whole path (it was ".../..." past
# 1,024 levels): the file's link count is changed in a copy of the image
# (given to fsck.img only).
BOTTOM=$("$PYTHON" -c "print('/d' * $DEPTH)")
"$DUMP_IMG" --path="$BOTTOM/f" --json "$IMG" >"$WORK/f.json" ||
	die "dump --path failed"
"$PYTHON" - "$WORK/f.json" "$IMG" "$WORK/nlink.img" <<'PY' || die "patch failed"
import json, struct, sys
ino = json.load(open(sys.argv[1]))['inode']
d = bytearray(open(sys.argv[2], 'rb').read())
pos = ino['pos']
if ino['format'] == 'extended':
    assert struct.unpack_from('<I', d, pos + 44)[0] == 2
    struct.pack_into('<I', d, pos + 44, 7)
else:
    assert struct.unpack_from('<H', d, pos + 6)[0] == 2
    struct.pack_into('<H', d, pos + 6, 7)
open(sys.argv[3], 'wb').write(d)
PY
run_rc=4 run nlink "$FSCK_IMG" "$WORK/nlink.img"
check "finding at depth: the whole path" \
	grep -qF ": $BOTTOM/f (nid " "$WORK/nlink.out"
run_rc=4 run nlinkjson "$FSCK_IMG" --json "$WORK/nlink.img"
"$PYTHON" - "$WORK/nlinkjson.out" "$BOTTOM/f" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert any(p.get('path') == sys.argv[2] for p in r['problems']), r['problems']
PY
check "finding at depth: the whole path in JSON" [ $? -eq 0 ]

# ls -R: one "PATH:" header per directory, the deepest with every entry
run ls "$DUMP_IMG" --ls -R "$IMG"
check "ls -R: a header per directory" \
	[ "$(grep -c ':$' "$WORK/ls.out")" -eq $((DEPTH + 2)) ]
"$PYTHON" - "$WORK/ls.out" "$BOTTOM" <<'PY'
import sys
want = sys.argv[2]
tail = open(sys.argv[1], 'rb').read()[-(len(want) * 2 + 4096):].decode()
blocks = tail.split('\n\n')
body = [b for b in blocks if b.startswith(want + ':\n')]
assert body, 'no header for the deepest directory'
names = sorted(l.split()[6] for l in body[0].splitlines()[1:])
assert names == ['e', 'f', 'h', 'p', 's'], names
assert tail.rstrip().endswith(want + '/e:'), tail[-200:]
PY
check "ls -R: the deepest directory listed in full" [ $? -eq 0 ]
rm -f "$WORK/ls.out"

run lsjson "$DUMP_IMG" --ls -R --json "$IMG"
check "ls --json: an object per directory" \
	[ "$(grep -c '^      "path": ' "$WORK/lsjson.out")" -eq $((DEPTH + 2)) ]
check "ls --json: the deepest path in full" \
	grep -qF "\"path\": \"$BOTTOM/e\"," "$WORK/lsjson.out"
rm -f "$WORK/lsjson.out"

run stats "$DUMP_IMG" --stats --json "$IMG"
"$PYTHON" - "$WORK/stats.out" "$DEPTH" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))['stats']
d = int(sys.argv[2])
assert s["types"]["directory"] == d + 2, s["types"]
assert s['paths'] == d + 6 and s['hardlinks'] == 1, s
PY
check "stats --json: counts of the whole tree" [ $? -eq 0 ]
run stats_text "$DUMP_IMG" --stats "$IMG"

run extract "$FSCK_IMG" --extract="$WORK/out" "$IMG"
# every level's mode and mtime, and the bottom, through directory fds
"$PYTHON" - "$WORK/out" "$DEPTH" <<'PY'
import os, stat, sys
root, depth = sys.argv[1], int(sys.argv[2])
fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
for n in range(1, depth + 1):
    assert os.listdir(fd) == ['d'], (n, os.listdir(fd))
    st = os.stat('d', dir_fd=fd, follow_symlinks=False)
    listed = n % 97 == 0
    want_mode = 0o751 if listed else 0o755
    want_time = 1600000000 + (2 * n - 1) % 1000 if listed else 1700000000
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == want_mode, n
    assert st.st_mtime_ns == want_time * 10**9, (n, st.st_mtime_ns)
    nfd = os.open('d', os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
    os.close(fd)
    fd = nfd
assert sorted(os.listdir(fd)) == ['e', 'f', 'h', 'p', 's'], os.listdir(fd)
st = {n: os.stat(n, dir_fd=fd, follow_symlinks=False) for n in 'efhps'}
with open(os.open('f', os.O_RDONLY, dir_fd=fd), 'rb') as f:
    assert f.read() == b'at the bottom\n'
assert st['f'].st_ino == st['h'].st_ino and st['f'].st_nlink == 2
assert stat.S_IMODE(st['f'].st_mode) == 0o640
assert os.readlink('s', dir_fd=fd) == 'f'
assert stat.S_ISFIFO(st['p'].st_mode) and stat.S_IMODE(st['p'].st_mode) == 0o620
assert stat.S_ISDIR(st['e'].st_mode) and stat.S_IMODE(st['e'].st_mode) == 0o700
PY
check "extract: every level and the bottom as in the archive" [ $? -eq 0 ]
rm -rf "$WORK/out"

# Few file descriptors (a limit of 40, hard and soft): the cursor keeps
# fewer directories open and reopens the others from the ones it kept.
"$PYTHON" - "$WORK/mid.tar" <<'PY' || die "tar failed"
import io, sys, tarfile
with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT) as tf:
    ti = tarfile.TarInfo('/'.join(['d'] * 1500) + '/f')
    ti.size, ti.mode = 3, 0o600
    tf.addfile(ti, io.BytesIO(b'mid'))
PY
mkfs_img -q -T 1700000000 "$WORK/mid.tar" "$WORK/mid.img" || die "mkfs.img failed"
(ulimit -n 40 && "$FSCK_IMG" -q --extract="$WORK/mid" "$WORK/mid.img")
check "extract with 40 fds: exit 0" [ $? -eq 0 ]
"$PYTHON" - "$WORK/mid" <<'PY'
import os, stat, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for n in range(1500):
    st = os.stat('d', dir_fd=fd, follow_symlinks=False)
    assert stat.S_IMODE(st.st_mode) == 0o755 and st.st_mtime == 1700000000, n
    nfd = os.open('d', os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
    os.close(fd)
    fd = nfd
assert os.listdir(fd) == ['f']
PY
check "extract with 40 fds: every level as in the archive" [ $? -eq 0 ]
finish
