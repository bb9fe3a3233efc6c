#!/bin/bash
# SPDX-License-Identifier: MIT
# fsck.img --extract against a concurrent attacker and into non-empty
# directories:
# - metadata (mode, owner, times, xattrs) of created FIFOs, devices and
#   symlinks goes through fds, never through a name resolved again: checked
#   with strace (every chmod/chown/utimes/setxattr call acts on an fd, an
#   empty path with AT_EMPTY_PATH, or a /proc/self/fd link);
# - a process swapping each new FIFO for a symlink to a file outside, in a
#   tight loop during the extraction, never changes that file's mode;
# - a non-empty DIR is refused (and left as it was) unless --overwrite.
. "$top_srcdir/tests/lib.sh"

require_tools "$PYTHON"
[ -x "$FSCK_IMG" ] || die "fsck.img not built: $FSCK_IMG"
[ -x "${MKFS%% *}" ] || die "mkfs.img not built: $MKFS"
[ "$(id -u)" -eq 0 ] || skip "needs root (device nodes, trusted xattrs)"
setup_tmp
NFIFO=2000

"$PYTHON" - "$WORK/layer.tar" "$NFIFO" <<'PY' || die "tar failed"
import io, sys, tarfile
out, n = sys.argv[1], int(sys.argv[2])
with tarfile.open(out, 'w', format=tarfile.PAX_FORMAT) as tf:
    def add(name, kind, mode, data=b'', link='', xattrs=None):
        ti = tarfile.TarInfo(name)
        ti.type, ti.mode, ti.linkname = kind, mode, link
        ti.mtime = 1500000000
        ti.uid = ti.gid = 1234
        ti.devmajor, ti.devminor = 1, 3
        if xattrs:
            ti.pax_headers = {'SCHILY.xattr.' + k: v for k, v in xattrs.items()}
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    add('n', tarfile.DIRTYPE, 0o755)
    for i in range(n):
        add('n/f%05d' % i, tarfile.FIFOTYPE, 0o666,
            xattrs={'trusted.t': 'fifo'} if i < 3 else None)
    add('c', tarfile.CHRTYPE, 0o666, xattrs={'trusted.t': 'dev'})
    add('l', tarfile.SYMTYPE, 0o777, link='n/f00000',
        xattrs={'trusted.t': 'link'})
    add('r', tarfile.REGTYPE, 0o604, b'data', xattrs={'user.u': 'reg'})
PY
mkfs_img -q "$WORK/layer.tar" "$WORK/layer.img" || die "mkfs.img failed"

# 1. every metadata call goes through an fd
if command -v strace >/dev/null 2>&1; then
	strace -f -qq -o "$WORK/strace.txt" "$FSCK_IMG" -q --extract="$WORK/st" "$WORK/layer.img" >/dev/null
	check "strace: extraction succeeds" [ $? -eq 0 ]
	"$PYTHON" - "$WORK/strace.txt" <<'PY'
import re, sys
# metadata-changing calls; strace versions that predate fchmodat2 (452)
# print it as syscall_0x1c4(fd, path pointer, mode, flags)
CALLS = {'chmod', 'fchmod', 'fchmodat', 'fchmodat2', 'syscall_0x1c4', 'chown',
         'lchown', 'fchown', 'fchownat', 'utimensat', 'utimes', 'futimesat',
         'utime', 'setxattr', 'lsetxattr', 'fsetxattr'}
bad, seen = [], set()
for line in open(sys.argv[1]):
    m = re.match(r'\d+\s+(\w+)\((.*)', line)
    if not m or m.group(1) not in CALLS:
        continue
    call, args = m.groups()
    seen.add(call)
    if call == 'syscall_0x1c4':
        if args.split(', ')[3] == '0x1000':  # AT_EMPTY_PATH
            continue
    proc = re.match(r'"/proc/self/fd/\d+"', args)
    empty = re.match(r'\d+, "",', args) and 'AT_EMPTY_PATH' in args
    if call in ('fchmod', 'fchown', 'fsetxattr'):
        continue
    if call in ('fchmodat', 'fchmodat2', 'fchownat', 'utimensat') and empty:
        continue
    if call in ('chmod', 'setxattr', 'utimensat') and proc:
        continue
    if call == 'utimensat' and re.match(r'AT_FDCWD, "/proc/self/fd/\d+"', args):
        continue
    bad.append(line.strip())
assert not bad, bad[:5]
assert {'fchownat', 'utimensat'} <= seen, seen
assert seen & {'fchmodat2', 'syscall_0x1c4', 'chmod'}, seen
print(sorted(seen))
PY
	check "strace: no metadata call resolves a name" [ $? -eq 0 ]
	check "strace: the FIFO got its mode, owner, time and xattr" \
		[ "$(stat -c %a.%u.%g.%Y "$WORK/st/n/f00001")" = 666.1234.1234.1500000000 ] &&
		[ "$(getfattr --only-values -n trusted.t "$WORK/st/n/f00001" 2>/dev/null)" = fifo ]
	check "strace: the device and the symlink got theirs" \
		[ "$(stat -c %F.%a.%u.%Y "$WORK/st/c")" = "character special file.666.1234.1500000000" ] &&
		[ "$(stat -c %u.%Y "$WORK/st/l")" = 1234.1500000000 ] &&
		[ "$(getfattr -h --only-values -n trusted.t "$WORK/st/l" 2>/dev/null)" = link ]
else
	log "strace not installed: the syscall check is not run (the race check below still is)"
fi

# 2. an attacker swaps each new FIFO for a symlink to a file outside
: >"$WORK/secret"
chmod 600 "$WORK/secret"
cat >"$WORK/attack.py" <<'PY'
# Wait for each FIFO in creation order and swap it at once, with the
# symlink made beforehand: as close after mknodat() as Python gets. Runs
# until the extraction has ended (the file DONE exists), not for a time:
# a slow, busy machine must not decide the outcome.
import os, sys
base, secret, n, ready, done = sys.argv[1:6]
n = int(n)
tmp = base + '/.swap'
swapped = i = 0
open(ready, 'w').close()
while i < int(n) and not os.path.exists(done):
    p = '%s/n/f%05d' % (base, i)
    if not os.path.lexists(tmp):
        try:
            os.symlink(secret, tmp)
        except OSError:
            continue
    try:
        os.stat(p, follow_symlinks=False)
    except OSError:
        continue
    try:
        os.replace(tmp, p)
        swapped += 1
    except OSError:
        pass
    i += 1
print(swapped)
PY
# Rounds until the attacker has swapped nodes in three of them (at most
# 60 rounds): each round starts the extraction only once the attacker is
# ready, so the count of rounds, not the clock, bounds the test.
round=0 swaps=0 refused=0 hit=0
while [ "$hit" -lt 3 ] && [ "$round" -lt 60 ]; do
	round=$((round + 1))
	out=$WORK/race$round
	mkdir "$out"
	"$PYTHON" "$WORK/attack.py" "$out" "$WORK/secret" "$NFIFO" \
		"$WORK/ready$round" "$WORK/done$round" >"$WORK/attack$round.txt" &
	apid=$!
	while [ ! -e "$WORK/ready$round" ] && kill -0 "$apid" 2>/dev/null; do
		sleep 0.05
	done
	"$FSCK_IMG" -q --overwrite --extract="$out" "$WORK/layer.img" \
		>/dev/null 2>"$WORK/race$round.err"
	rc=$?
	: >"$WORK/done$round"
	wait "$apid"
	n=$(cat "$WORK/attack$round.txt")
	[ "${n:-0}" -gt 0 ] && hit=$((hit + 1))
	swaps=$((swaps + ${n:-0}))
	refused=$((refused + $(grep -c 'node replaced while extracting' "$WORK/race$round.err")))
	[ $rc -eq 0 ] || [ $rc -eq 8 ] || fail "round $round: exit $rc"
	rm -rf "$out"
done
log "$round rounds, $swaps swaps by the attacker, $refused caught"
check "the attacker swapped nodes" [ "$swaps" -gt 0 ]
check "the outside file's mode never changed" \
	[ "$(stat -c %a "$WORK/secret")" = 600 ]
check "the outside file's owner and time never changed" \
	[ "$(stat -c %u "$WORK/secret")" = 0 ] &&
	[ "$(stat -c %Y "$WORK/secret")" != 1500000000 ]

# 3. a non-empty target
mkdir "$WORK/full"
echo keep >"$WORK/full/mine"
touch -d @1000000000 "$WORK/full/mine" "$WORK/full"
"$FSCK_IMG" -q --extract="$WORK/full" "$WORK/layer.img" >/dev/null \
	2>"$WORK/full.err"
check "non-empty DIR refused (exit 8)" [ $? -eq 8 ]
check "... saying how to go on" grep -q 'is not empty (use --overwrite)' "$WORK/full.err"
check "... and left as it was" \
	[ "$(ls -A "$WORK/full")" = mine ] &&
	[ "$(stat -c %Y "$WORK/full" "$WORK/full/mine" | sort -u)" = 1000000000 ]
"$FSCK_IMG" -q --overwrite --extract="$WORK/full" "$WORK/layer.img" >/dev/null
check "--overwrite extracts into it" [ $? -eq 0 ] && [ -p "$WORK/full/n/f00000" ] &&
	[ "$(cat "$WORK/full/mine")" = keep ]
finish
