#!/bin/bash
# Tar stream semantics: where an archive ends and what may follow it.
# - the archive ends at its end-of-archive marker: a second archive
#   appended with cat is not read (a warning says non-zero bytes follow),
#   zero padding after it is silent, and the image holds exactly the first
#   archive (bsdtar, containerd and GNU tar stop there too);
# - a stream that ends at an entry boundary without the marker is read
#   with one warning naming the last entry read, and fails so with
#   --require-end; an empty input fails unless --allow-missing-end (then
#   a warning); 1024 zero bytes are an empty layer;
# - a stream cut inside a header fails, so do a damaged header, what
#   libarchive could not decode, bytes after any compressed stream, and
#   sparse maps out of order, overlapping or beyond the file size.
# For GNU tar, bsdtar and Python tarfile output, plain and gzip, zstd, xz,
# bzip2 and lz4, from files and through pipes. Accepted cases are mounted
# and compared with bsdtar's extraction of the (first) archive and checked
# with fsck.img and fsck.img --compare; refused ones must leave nothing.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_tools tar gzip zstd xz bzip2 lz4
# the kernel side is covered by the other tests: one mount per case here
VERIFY_MOUNTS=loop
COMPRESSORS="gzip zstd xz bzip2 lz4"

compress() { # ALG < IN > OUT
	case $1 in
	zstd) zstd -q -c ;;
	lz4) lz4 -q -c ;;
	*) "$1" -c ;;
	esac
}

# run_mkfs OUT LOG SRC [OPTIONS...]: SRC "-" reads $STDIN_SRC through a pipe.
run_mkfs() {
	local out=$1 log=$2 src=$3 rc=0
	shift 3
	if [ "$src" = - ]; then
		cat "$STDIN_SRC" | mkfs_img "$@" - "$out" >"$log" 2>&1 || rc=$?
	else
		mkfs_img "$@" "$src" "$out" >"$log" 2>&1 || rc=$?
	fi
	return $rc
}

# refused NAME PATTERN SRC [OPTIONS...]: mkfs must fail with PATTERN (grep
# -E) in its message and leave its output directory empty.
N=0
refused() {
	local name=$1 pattern=$2 src=$3 out rc=0
	shift 3
	N=$((N + 1))
	out=$WORK/o$N
	mkdir -p "$out"
	run_mkfs "$out/layer.img" "$WORK/$name.out" "$src" "$@" || rc=$?
	sed "s/^/    | /" "$WORK/$name.out" | head -n 3
	if [ $rc -eq 0 ]; then
		fail "$name: mkfs succeeded"
	elif [ $rc -ge 128 ]; then
		fail "$name: mkfs died of a signal (exit $rc)"
	else
		ok "$name: exit $rc"
	fi
	# bytes, not characters: names need not be valid UTF-8
	check "$name: message names $pattern" env LC_ALL=C grep -qE -- "$pattern" "$WORK/$name.out"
	check "$name: nothing left behind" test -z "$(ls -A "$out")"
}

# accepted NAME WARNING SRC REFTAR CMPTAR [OPTIONS...]: mkfs must succeed,
# with a warning matching WARNING (or none when WARNING is empty); the
# image must hold exactly what bsdtar extracts from REFTAR and pass
# fsck.img and fsck.img --compare=CMPTAR (with the same options).
accepted() {
	local name=$1 warning=$2 src=$3 reftar=$4 cmptar=$5 img rc=0
	shift 5
	img=$WORK/$name.img
	rm -f "$img"
	run_mkfs "$img" "$WORK/$name.out" "$src" "$@" || rc=$?
	sed "s/^/    | /" "$WORK/$name.out" | head -n 3
	if [ $rc -ne 0 ]; then
		fail "$name: mkfs failed (exit $rc)"
		return
	fi
	ok "$name: converted"
	if [ -n "$warning" ]; then
		check "$name: warns: $warning" grep -qE -- "mkfs.img: warning: .*$warning" "$WORK/$name.out"
	else
		check "$name: no warning" sh -c "! grep -q warning '$WORK/$name.out'"
	fi
	SRC_TAR=$cmptar verify_image "$img" "$reftar" "$@"
}

# cut_at_last TAR OUT: OUT is TAR up to the header of its last entry (an
# entry boundary, no end-of-archive marker); prints the name of the entry
# before it, the last one OUT holds.
cut_at_last() {
	"$PYTHON" - "$1" "$2" <<'PY'
import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    m = t.getmembers()
with open(sys.argv[1], 'rb') as f:
    data = f.read(m[-1].offset)
open(sys.argv[2], 'wb').write(data)
print(m[-2].name.rstrip('/').split('/')[-1])
PY
}

# ---- archives from three producers, and a second one to append
make_tree "$WORK/tree"
mkdir -p "$WORK/tree2/second"
echo "only in the second archive" >"$WORK/tree2/second/only-here"
tar --format=gnu -cf "$WORK/gnu.tar" -C "$WORK/tree" .
bsdtar -cf "$WORK/bsd.tar" -C "$WORK/tree" .
"$PYTHON" - "$WORK/py.tar" "$WORK/tree" <<'PY'
import sys, tarfile
with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT) as t:
    t.add(sys.argv[2], arcname='.')
PY
tar -cf "$WORK/second.tar" -C "$WORK/tree2" .

for p in gnu bsd py; do
	tarf=$WORK/$p.tar
	# a second archive appended: read up to the first one's marker only
	cat "$tarf" "$WORK/second.tar" >"$WORK/$p-cat.tar"
	accepted "$p-concatenated" "not all zeros" "$WORK/$p-cat.tar" \
		"$tarf" "$WORK/$p-cat.tar"
	# zero padding past the marker (a tape record, a block device)
	cat "$tarf" /dev/zero 2>/dev/null | head -c $(($(stat -c %s "$tarf") + 30000)) \
		>"$WORK/$p-pad.tar"
	accepted "$p-zero-padding" "" "$WORK/$p-pad.tar" "$tarf" "$WORK/$p-pad.tar"
	# no end-of-archive marker
	last=$(cut_at_last "$tarf" "$WORK/$p-cut.tar")
	refused "$p-no-marker-strict" "ends after entry [0-9]+ \(\"[^\"]*$last/?\"\) without an end-of-archive marker" \
		"$WORK/$p-cut.tar" --require-end
	STDIN_SRC=$WORK/$p-cut.tar refused "$p-no-marker-strict-pipe" \
		"$last.*end-of-archive" - --require-end
	accepted "$p-no-marker" "ends after entry [0-9]+ \(\"[^\"]*$last/?\"\) without an end-of-archive marker: truncated\?" \
		"$WORK/$p-cut.tar" "$WORK/$p-cut.tar" "$WORK/$p-cut.tar"
	STDIN_SRC=$WORK/$p-cut.tar accepted "$p-no-marker-pipe" \
		"$last.*without an end-of-archive marker" - "$WORK/$p-cut.tar" \
		"$WORK/$p-cut.tar"
	# the option that used to be needed is still taken
	accepted "$p-no-marker-allowed" "$last.*without an end-of-archive marker" \
		"$WORK/$p-cut.tar" "$WORK/$p-cut.tar" "$WORK/$p-cut.tar" \
		--allow-missing-end
done

# ---- the same through every compression, from a file and from a pipe
last=$(cut_at_last "$WORK/py.tar" "$WORK/py-cut.tar")
for c in $COMPRESSORS; do
	compress $c <"$WORK/py-cat.tar" >"$WORK/cat.tar.$c"
	compress $c <"$WORK/py-cut.tar" >"$WORK/cut.tar.$c"
	accepted "concatenated-$c" "not all zeros" "$WORK/cat.tar.$c" \
		"$WORK/py.tar" "$WORK/cat.tar.$c"
	STDIN_SRC=$WORK/cat.tar.$c accepted "concatenated-$c-pipe" \
		"not all zeros" - "$WORK/py.tar" "$WORK/cat.tar.$c"
	refused "no-marker-$c-strict" "$last.*without an end-of-archive marker" \
		"$WORK/cut.tar.$c" --require-end
	STDIN_SRC=$WORK/cut.tar.$c refused "no-marker-$c-strict-pipe" \
		"$last.*without an end-of-archive marker" - --require-end
	STDIN_SRC=$WORK/cut.tar.$c accepted "no-marker-$c-pipe" \
		"$last.*without an end-of-archive marker" - "$WORK/py-cut.tar" \
		"$WORK/cut.tar.$c"
	# bytes after the compressed stream: refused by every decoder
	{ cat "$WORK/cat.tar.$c"; printf 'trailing junk'; } >"$WORK/junk.tar.$c"
	case $c in
	xz) pat='[Ll]zma|xz' ;;
	*) pat="trailing garbage after the $c data at byte [0-9]+ of the input" ;;
	esac
	refused "garbage-after-$c" "$pat" "$WORK/junk.tar.$c"
done

# ---- fsck.img --compare reads the tar as mkfs.img does
img=$WORK/py-no-marker.img
rc=0
"$FSCK_IMG" -q --require-end --compare="$WORK/py-cut.tar" "$img" >"$WORK/cmp.out" 2>&1 || rc=$?
check "compare --require-end: exit 8" test $rc -eq 8
check "compare --require-end: names the cause" \
	grep -q "$last.*without an end-of-archive marker" "$WORK/cmp.out"
check "compare warns" sh -c \
	"'$FSCK_IMG' --compare='$WORK/py-cut.tar' '$img' 2>&1 | grep -q 'fsck.img: warning: .*$last.*without an end-of-archive marker'"
rc=0
"$FSCK_IMG" -q --allow-missing-end "$img" 2>/dev/null || rc=$?
check "fsck --allow-missing-end without --compare: usage error" test $rc -eq 16
rc=0
"$FSCK_IMG" -q --require-end "$img" 2>/dev/null || rc=$?
check "fsck --require-end without --compare: usage error" test $rc -eq 16

# ---- empty layers
head -c 1024 /dev/zero >"$WORK/zeros.tar"
accepted "two-zero-blocks" "" "$WORK/zeros.tar" "$WORK/zeros.tar" "$WORK/zeros.tar"
: >"$WORK/empty.tar"
refused "empty-input" "empty input \(0 bytes\).*--allow-missing-end" "$WORK/empty.tar"
STDIN_SRC=$WORK/empty.tar refused "empty-input-pipe" "empty input" -
accepted "empty-input-allowed" "empty input" "$WORK/empty.tar" \
	"$WORK/zeros.tar" "$WORK/empty.tar" --allow-missing-end
gzip -c <"$WORK/empty.tar" >"$WORK/empty.tar.gz"
refused "empty-gzip" "empty input \(0 bytes once decompressed\)" "$WORK/empty.tar.gz"

# ---- cut inside headers, damaged headers, undecodable entries
"$PYTHON" - "$WORK" <<'PY'
import io, sys, tarfile
w = sys.argv[1]
def ti(name, size=0, **kw):
    t = tarfile.TarInfo(name)
    t.size, t.mtime = size, 1700000000
    for k, v in kw.items():
        setattr(t, k, v)
    return t
def write(path, members, fmt=tarfile.PAX_FORMAT):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode='w', format=fmt) as t:
        for m, data in members:
            t.addfile(m, io.BytesIO(data) if data else None)
    open(path, 'wb').write(b.getvalue())
    return b.getvalue()
# a pax extended header (long name) and then the end of the input
d = write(w + '/pax.tar', [(ti('d/first', 3), b'abc'),
                           (ti('d/' + 'n' * 150, 3), b'xyz')])
open(w + '/cut-after-pax.tar', 'wb').write(d[:2048])
# cut in the middle of the second header
open(w + '/cut-in-header.tar', 'wb').write(d[:1024 + 300])
# the second header's checksum is wrong
d = bytearray(write(w + '/ck.tar', [(ti('d/good', 3), b'abc'),
                                    (ti('d/bad', 3), b'xyz')],
                    tarfile.USTAR_FORMAT))
d[1024 + 148:1024 + 156] = b'0000000\0'
open(w + '/bad-checksum.tar', 'wb').write(bytes(d))
# an ACL libarchive cannot parse (it would drop it)
write(w + '/bad-acl.tar', [(ti('d/badacl', 3, pax_headers={
    'SCHILY.acl.access': 'user::rwx,user:bob:zzz,group::r--,other::---'}),
    b'abc')])
# a pax path that is not UTF-8 (and no hdrcharset=BINARY)
b = bytearray(write(w + '/badutf.tar', [(ti('d/cafX', 0, pax_headers={
    'path': 'd/cafZ'}), None)]))
b[b.find(b'd/cafZ') + 5] = 0xe9
open(w + '/bad-utf8.tar', 'wb').write(bytes(b))
# pax 0.1 sparse files: a good map and three bad ones
def sparse(path, blocks, realsize):
    data = b''.join(bytes([65 + i]) * n for i, (o, n) in enumerate(blocks))
    m = ti('d/GNUSparseFile.0/s', len(data), pax_headers={
        'GNU.sparse.numblocks': str(len(blocks)),
        'GNU.sparse.map': ','.join('%d,%d' % b for b in blocks),
        'GNU.sparse.size': str(realsize), 'GNU.sparse.name': 'd/s'})
    d = ti('d', type=tarfile.DIRTYPE, mode=0o755)
    write(path, [(d, None), (m, data), (ti('d/after', 2), b'ok')])
sparse(w + '/sparse-ok.tar', [(0, 10), (8192, 10), (16384, 5)], 20000)
sparse(w + '/sparse-order.tar', [(8192, 10), (0, 10)], 20000)
sparse(w + '/sparse-overlap.tar', [(0, 100), (50, 100)], 20000)
sparse(w + '/sparse-beyond.tar', [(0, 10), (8192, 100)], 8200)
PY
refused "cut-after-pax-header" "after entry 1 \(\"d/first\"\).*(truncated|Damaged)" \
	"$WORK/cut-after-pax.tar"
refused "cut-in-header" "[Tt]runcated" "$WORK/cut-in-header.tar"
refused "bad-checksum" "damaged tar header at byte 1024 .*after entry 1 \(\"d/good\"\)" \
	"$WORK/bad-checksum.tar"
refused "undecodable-acl" "d/badacl.*SCHILY.acl" "$WORK/bad-acl.tar"
refused "pax-path-not-utf8" "d/caf.*entry 1.*Pathname can.t be converted" \
	"$WORK/bad-utf8.tar"

# ---- sparse maps
accepted "sparse-ok" "" "$WORK/sparse-ok.tar" "$WORK/sparse-ok.tar" \
	"$WORK/sparse-ok.tar"
for s in order overlap beyond; do
	case $s in
	beyond) pat='d/s: sparse map reaches beyond the file size' ;;
	*) pat='d/s: sparse map out of order or overlapping' ;;
	esac
	refused "sparse-$s" "$pat" "$WORK/sparse-$s.tar"
	refused "sparse-$s-lz4" "$pat" "$WORK/sparse-$s.tar" -z lz4
	rc=0
	"$FSCK_IMG" --compare="$WORK/sparse-$s.tar" "$WORK/sparse-ok.img" \
		>"$WORK/sparse-$s.cmp" 2>&1 || rc=$?
	check "compare with sparse-$s: differences (exit 4)" test $rc -eq 4
	check "compare with sparse-$s: d/s unrepresentable" \
		grep -q "d/s: unrepresentable: sparse map" "$WORK/sparse-$s.cmp"
done

finish
