#!/bin/bash
# SPDX-License-Identifier: MIT
# Flattening streams file data: two layers holding 2 x 96 MiB of file data
# (one file a layer above deletes while a link of its layer keeps it, one
# visible) are flattened with a peak RSS far below their size, and the
# image holds both files' data, read back through the kernel. Entries a
# layer above hides cost no copy of their headers in memory: 50,000 of
# them, under an opaque directory, flatten in bounded memory too.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/stack/common.sh"
setup
require_tools /usr/bin/time
flatten_setup
MIB=96

"$PYTHON" - "$WORK" "$MIB" <<'PY' || die "could not write the layers"
import io, sys, tarfile
out, mib = sys.argv[1], int(sys.argv[2])

class Pattern(io.RawIOBase):
    """mib MiB of a repeating, not all-zero pattern, never held whole."""
    def __init__(self, seed):
        self.left = mib << 20
        self.block = bytes((i * 7 + seed) & 0xff for i in range(65536))
    def readable(self):
        return True
    def readinto(self, b):
        n = min(len(b), self.left, len(self.block))
        b[:n] = self.block[:n]
        self.left -= n
        return n

def add(t, name, seed):
    ti = tarfile.TarInfo(name)
    ti.size = mib << 20
    t.addfile(ti, io.BufferedReader(Pattern(seed)))

with tarfile.open(out + "/layer1.tar", "w") as t:
    add(t, "big/hidden", 1)
    ti = tarfile.TarInfo("keep/link")
    ti.type = tarfile.LNKTYPE
    ti.linkname = "big/hidden"
    t.addfile(ti)
    add(t, "big/visible", 2)
with tarfile.open(out + "/layer2.tar", "w") as t:
    ti = tarfile.TarInfo("big/.wh.hidden")
    t.addfile(ti)
PY

/usr/bin/time -f %M -o "$WORK/rss" "$FLATTEN" "$WORK/big.img" \
	"$WORK/layer1.tar" "$WORK/layer2.tar" >"$WORK/big.out" 2>&1 ||
	{ cat "$WORK/big.out"; fail "flatten $((2 * MIB)) MiB"; finish; }
rss=$(cat "$WORK/rss")
check "peak RSS ${rss} KiB < 40 MiB for $((2 * MIB)) MiB of file data" \
	test "$rss" -lt 40960

pattern() {
	"$PYTHON" -c '
import sys
mib, seed = int(sys.argv[1]), int(sys.argv[2])
block = bytes((i * 7 + seed) & 0xff for i in range(65536))
for _ in range(mib * 16):
    sys.stdout.buffer.write(block)' "$MIB" "$1"
}
if mount_loop "$WORK/big.img" "$WORK/mnt"; then
	check "the deleted target's data, kept by its link" \
		cmp -s "$WORK/mnt/keep/link" <(pattern 1)
	check "the visible file's data" \
		cmp -s "$WORK/mnt/big/visible" <(pattern 2)
	check "the deleted target is gone" test ! -e "$WORK/mnt/big/hidden"
	unmount "$WORK/mnt" || fail "umount"
else
	fail "mount big.img"
fi

"$PYTHON" - "$WORK" <<'PY' || die "could not write the many-entry layers"
import io, sys, tarfile
out = sys.argv[1]
with tarfile.open(out + "/many1.tar", "w", format=tarfile.PAX_FORMAT) as t:
    for i in range(50000):
        ti = tarfile.TarInfo("d/sub%03d/a-file-with-a-longish-name-%06d"
                             % (i % 500, i))
        ti.size = 10
        ti.pax_headers = {"SCHILY.xattr.user.note": "x" * 64}
        t.addfile(ti, io.BytesIO(b"0123456789"))
with tarfile.open(out + "/many2.tar", "w") as t:
    t.addfile(tarfile.TarInfo("d/.wh..wh..opq"))
PY
/usr/bin/time -f %M -o "$WORK/rss2" "$FLATTEN" "$WORK/many.img" \
	"$WORK/many1.tar" "$WORK/many2.tar" >"$WORK/many.out" 2>&1 ||
	{ cat "$WORK/many.out"; fail "flatten 50,000 hidden entries"; }
rss=$(cat "$WORK/rss2")
check "50,000 hidden entries: peak RSS ${rss} KiB < 40 MiB" \
	test "$rss" -lt 40960
finish
