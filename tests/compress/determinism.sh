#!/bin/bash
# SPDX-License-Identifier: MIT
# The image does not depend on the number of compression threads nor on
# how the input arrives: --workers=1, 2 and 4, from a file and from a pipe,
# give byte-identical images for every algorithm (files of several
# segments included), with big pclusters, ztailpacking and fragments.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/compress/common.sh"
setup_tmp
require_tools bsdtar "$PYTHON" cmp
[ -x "${MKFS%% *}" ] || die "mkfs not built: $MKFS"

"$PYTHON" "$ZDIR/zdata.py" small "$WORK/small.tar" || die "zdata.py small"
"$PYTHON" "$ZDIR/zdata.py" mix "$WORK/mix.tar" || die "zdata.py mix"
fixed=(-q -T "$ZTIME" -U 0a0b0c0d-1111-2222-3333-444455556666)

# same_images TAR OPTIONS...: workers 1, 2 and 4 and a pipe agree.
same_images() {
	local tar=$1 n
	shift
	mkfs_img "${fixed[@]}" --workers=1 "$@" "$tar" "$WORK/w1.img" ||
		{ fail "mkfs --workers=1 $*"; return; }
	for n in 2 4; do
		mkfs_img "${fixed[@]}" --workers=$n "$@" "$tar" "$WORK/w.img" ||
			{ fail "mkfs --workers=$n $*"; continue; }
		check "--workers=1 and $n identical: $* $(basename "$tar")" \
			cmp -s "$WORK/w1.img" "$WORK/w.img"
	done
	if mkfs_img "${fixed[@]}" --workers=3 "$@" - "$WORK/w.img" <"$tar"; then
		check "file and pipe identical: $* $(basename "$tar")" \
			cmp -s "$WORK/w1.img" "$WORK/w.img"
	else
		fail "mkfs from a pipe $*"
	fi
}

for alg in $(z_algorithms); do
	same_images "$WORK/small.tar" -z "$alg" -C 65536 --ztailpacking
	same_images "$WORK/small.tar" -z "$alg" -b 512 --fragments
done
# files of several segments (2 MiB each at 4 KiB pclusters, 8 MiB at 1 MiB)
same_images "$WORK/mix.tar" -z lz4hc
same_images "$WORK/mix.tar" -z lzma,0 -C 131072 --fragments
same_images "$WORK/mix.tar" -z zstd -C 1048576 --ztailpacking

# Fragments filling the packed inode many times over (2000 files of 1 to
# 6 KiB of poorly compressible bytes, about 7 MiB of tails, between files
# of 3 MiB that take the workers a while): the packed inode's segments are
# queued as the files' jobs retire, which must not depend on the workers'
# speed or number.
"$PYTHON" - "$WORK/tails.tar" <<'PY' || die "tails.tar"
import io, random, sys, tarfile
rnd = random.Random(7)
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for i in range(2000):
        if i % 400 == 150:
            n = 3 << 20
            data = rnd.randbytes(n // 2) + bytes(n - n // 2)
        else:
            n = rnd.randrange(1024, 6144)
            data = bytes(rnd.getrandbits(8) & 0x3f for _ in range(n))
        ti = tarfile.TarInfo("d%02d/f%04d" % (i % 37, i))
        ti.size = n
        ti.mtime = 1600000000
        t.addfile(ti, io.BytesIO(data))
PY
same_images "$WORK/tails.tar" -z lz4 --fragments
same_images "$WORK/tails.tar" -z zstd -C 65536 --fragments

finish
