#!/bin/bash
# SPDX-License-Identifier: MIT
# Memory stays bounded when a large file arrives through a pipe: a 300 MB
# file is compressed with LZ4 by 2 workers, a 100 MB one with LZMA in 1 MiB
# pclusters (8 MiB segments), reading the layer from standard input;
# mkfs.img's peak RSS must stay far below the file size (the work queue
# holds a fixed number of segments), and the file must read back intact.
# The bound does not depend on --workers: the largest count (256) on two
# CPUs (taskset) stays under the same limit, as encoders are only created
# for the CPUs the process may use. With --fragments, a layer whose files
# all go to the packed inode (2000 files of 60 KB under 64 KiB pclusters,
# 120 MB of fragments, compressed once every file is in) converts in a
# bounded RSS too (the fragments wait in a spill file; held in memory,
# they took 150 MiB), and fsck.img finds the layer in the image.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/compress/common.sh"
setup_tmp
require_tools bsdtar "$PYTHON" sha256sum taskset
[ -x "${MKFS%% *}" ] || die "mkfs not built: $MKFS"
[ -x "$FSCK_IMG" ] || die "fsck.img not built"

MB=300
PIN=
gen() { "$PYTHON" "$ZDIR/zdata.py" stream /dev/stdout "$MB"; }
digest() { gen | bsdtar -xOf - big | sha256sum | cut -d' ' -f1; }

# peak_rss LIMIT_MIB OPTIONS...: convert the stream from a pipe.
peak_rss() {
	local limit=$1 rss img=$WORK/big.img got want
	shift
	want=$(digest)
	[ ${#want} -eq 64 ] || die "cannot generate the stream"
	# the peak RSS of the whole mkfs process tree, in KiB
	# shellcheck disable=SC2086 # MKFS may carry options
	rss=$(gen | $PIN "$PYTHON" -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
		$MKFS -q "$@" - "$img") || { fail "mkfs $* from a pipe"; return; }
	check "peak RSS $((rss / 1024)) MiB < $limit MiB: $*" \
		test "$rss" -lt $((limit * 1024))
	got=$("$FSCK_IMG" --digest "$img" | awk '$2 == "./big" { print $1 }')
	check "$MB MB file intact: $*" test "$got" = "$want"
	rm -f "$img"
}

peak_rss 100 -z lz4 --workers=2
# the encoders' own tables grow with the dictionary (4 MiB here)
MB=100
peak_rss 250 -z lzma,1 -C 1048576 --workers=2
cpus=0
[ "$(nproc)" -ge 2 ] && cpus=0,1
PIN="taskset -c $cpus" peak_rss 250 -z lzma,1 -C 1048576 --workers=256
PIN=

# 2000 files of 60 KB of seeded random bytes: every one a fragment
frags() {
	"$PYTHON" -c '
import io, random, sys, tarfile
rnd = random.Random(2000)
with tarfile.open(fileobj=sys.stdout.buffer, mode="w|", format=tarfile.PAX_FORMAT) as t:
    for i in range(2000):
        data = rnd.randbytes(60 * 1024)
        ti = tarfile.TarInfo("f/%04d" % i); ti.size = len(data); ti.mtime = 1600000000
        t.addfile(ti, io.BytesIO(data))'
}
img=$WORK/frags.img
# shellcheck disable=SC2086 # MKFS may carry options
rss=$(frags | "$PYTHON" -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
	$MKFS -q -z lz4 -C 65536 --fragments - "$img") ||
	die "mkfs --fragments from a pipe"
check "peak RSS $((rss / 1024)) MiB < 90 MiB with 120 MB of fragments" \
	test "$rss" -lt $((90 * 1024))
compare_frags() { frags | "$FSCK_IMG" -q --compare=- "$img"; }
check "fsck.img --compare finds the 2000 fragments" compare_frags
rm -f "$img"

finish
