#!/bin/bash
# SPDX-License-Identifier: MIT
# fsck.img --threads: the full check reads file data on worker threads, and
# its report must not depend on the thread count. Images (uncompressed,
# inline data, 512-byte blocks, lz4hc, lzma with fragments) of a tree of many
# files are damaged at seeded random places (data and metadata alike),
# truncated, and their packed inode hit; for every mutant the text report,
# the --json document (verbose, with digests) and the exit status are
# compared byte for byte between 1, 2 and 5 threads. Every run must end
# cleanly (exit 0 or 4, within a time limit), and the mutants must really
# break data reads. The damaged images only go to fsck.img, never to the
# kernel.
. "$top_srcdir/tests/lib.sh"

require_tools "$PYTHON" timeout cmp
[ -x "$FSCK_IMG" ] || die "fsck.img not built: $FSCK_IMG"
[ -x "${MKFS%% *}" ] || skip "mkfs.img not built"
setup_tmp

# Many files of several sizes (multi-pcluster ones, tails, empty files),
# hard links and symlinks, as one tar.
"$PYTHON" - "$WORK/layer.tar" <<'PY' || die "making the tar failed"
import io, random, sys, tarfile
rnd = random.Random(12)
def add(tf, name, data=None, **kw):
    ti = tarfile.TarInfo(name)
    ti.mtime = 1600000000
    for k, v in kw.items():
        setattr(ti, k, v)
    if data is None:
        tf.addfile(ti)
    else:
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as tf:
    for d in range(8):
        add(tf, "d%d" % d, type=tarfile.DIRTYPE, mode=0o755)
        for f in range(40):
            n = rnd.choice([0, 5, 300, 4096, 5000, 70000, 300000])
            # compressible, but not trivially
            words = [b"alpha", b"beta", b"gamma", bytes([rnd.randrange(256)])]
            data = b"".join(rnd.choice(words) for _ in range(n // 4))[:n]
            add(tf, "d%d/f%02d" % (d, f), data, mode=0o644)
        add(tf, "d%d/link" % d, type=tarfile.SYMTYPE, linkname="f00")
        add(tf, "d%d/hard" % d, type=tarfile.LNKTYPE, linkname="d%d/f01" % d)
    add(tf, "big", bytes(rnd.getrandbits(8) for _ in range(1 << 20)))
PY

IMAGES=
build() { # NAME MKFS-OPTIONS...
	local name=$1
	shift
	mkfs_img -q -T 1600000000 -U 00000000-0000-0000-0000-000000000001 \
		"$@" "$WORK/layer.tar" "$WORK/$name.img" ||
		die "mkfs.img $* failed"
	IMAGES="$IMAGES $name"
}
build plain
build inline --inline-data
build lz4hc -z lz4hc
build lzma -z lzma -C 65536 --fragments
build small -b 512

# Every run of one mutant, at thread count $1, into files named after it.
run_fsck() { # THREADS IMAGE OUT-PREFIX
	local rc
	timeout 60 "$FSCK_IMG" --threads="$1" "$2" >"$3.txt" 2>"$3.err"
	rc=$?
	timeout 60 "$FSCK_IMG" --threads="$1" --json -v --digest "$2" \
		>"$3.json" 2>/dev/null
	echo "$rc $?" >"$3.rc"
}

mutants=0
broken_data=0
differ=0
unclean=0
for name in $IMAGES; do
	"$PYTHON" - "$WORK/$name.img" "$WORK/mut-$name" <<'PY' ||
import os, random, sys
src, prefix = sys.argv[1], sys.argv[2]
img = bytearray(open(src, "rb").read())
rnd = random.Random(len(img))
out = []
# scattered bytes over the whole image past the superblock
for i in range(12):
    d = bytearray(img)
    for _ in range(rnd.choice([1, 4, 32])):
        p = rnd.randrange(2048, len(d))
        d[p] = rnd.randrange(256)
    out.append(d)
# a run of zeros / garbage in the data half
for i in range(4):
    d = bytearray(img)
    p = rnd.randrange(len(d) // 2, len(d) - 4096)
    d[p:p + 4096] = (bytes(4096) if i % 2 else os.urandom(4096))
    out.append(d)
# cut short: data (and metadata after it) beyond the end
out.append(img[: len(img) * 2 // 3])
out.append(img[: len(img) - 3000])
for i, d in enumerate(out):
    open("%s-%02d.img" % (prefix, i), "wb").write(d)
PY
		die "mutating $name failed"
	for m in "$WORK/mut-$name"-*.img; do
		mutants=$((mutants + 1))
		for t in 1 2 5; do
			run_fsck "$t" "$m" "${m%.img}-t$t"
		done
		read -r rc jrc <"${m%.img}-t1.rc"
		case "$rc/$jrc" in
		[04]/[04]) ;;
		*)
			log "$(basename "$m"): exit $rc / $jrc (want 0 or 4)"
			unclean=$((unclean + 1))
			;;
		esac
		grep -q '^error: data: ' "${m%.img}-t1.txt" &&
			broken_data=$((broken_data + 1))
		for t in 2 5; do
			for ext in txt json rc; do
				cmp -s "${m%.img}-t1.$ext" "${m%.img}-t$t.$ext" &&
					continue
				log "$(basename "$m"): --threads=$t $ext differs from --threads=1"
				diff "${m%.img}-t1.$ext" "${m%.img}-t$t.$ext" | head -5
				differ=$((differ + 1))
			done
		done
	done
done
log "$mutants mutants, $broken_data with data read errors"
check "every mutant checked cleanly (exit 0 or 4, no crash or hang)" \
	[ "$unclean" -eq 0 ]
check "report, JSON and exit status identical with 1, 2 and 5 threads" \
	[ "$differ" -eq 0 ]
check "the mutants break data reads (at least 10 with data errors)" \
	[ "$broken_data" -ge 10 ]

# The intact images: same digests whatever the thread count, and equal to
# the tar's own files.
for name in $IMAGES; do
	"$FSCK_IMG" --threads=1 --digest "$WORK/$name.img" >"$WORK/$name-1.sum" \
		2>/dev/null
	"$FSCK_IMG" --threads=3 --digest "$WORK/$name.img" >"$WORK/$name-3.sum" \
		2>/dev/null
	check "$name: digests identical with 1 and 3 threads" \
		cmp -s "$WORK/$name-1.sum" "$WORK/$name-3.sum"
done
mkdir "$WORK/x" && tar -xf "$WORK/layer.tar" -C "$WORK/x" ||
	die "extracting the tar failed"
check "the digests match the tar's files (sha256sum -c)" \
	sh -c "cd '$WORK/x' && sha256sum -c --quiet '$WORK/lzma-3.sum'"

# Bad values of the option are usage errors.
"$FSCK_IMG" --threads=0 "$WORK/plain.img" >/dev/null 2>"$WORK/usage.err"
check "--threads=0 is a usage error (exit 16)" [ $? -eq 16 ]
check "the message names the option" grep -q -- "--threads" "$WORK/usage.err"
finish
