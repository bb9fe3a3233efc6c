#!/bin/bash
# Exact times.
#   - pax mtimes before 1970 with a fraction: "mtime=-1.5" is 1.5 s before
#     the epoch, which stat() shows as -2 s + 500000000 ns. libarchive reads
#     it as -1 s + 0.5 s (and so does bsdtar -x), so the reference tree is
#     the bsdtar extraction with every mtime set again from the pax record,
#     read exactly by Python. Converting that tree as a directory must keep
#     the times too (no second correction there).
#   - -T earlier than the layer's most common mtime, and -T more than 2^32 s
#     later than it: the superblock records the build time asked for, the
#     implied directories carry it, every other mtime stays exact, and
#     fsck.img --compare accepts the image.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup

UUID=0b5e7c1a-4d2f-4c3e-8a9b-1c2d3e4f5a6b

# paxtimes TAR DIR: set each DIR/PATH's mtime to TAR's pax mtime, exactly.
paxtimes() {
	"$PYTHON" - "$1" "$2" <<'EOF'
import os, sys, tarfile
from decimal import Decimal
with tarfile.open(sys.argv[1]) as tf:
    for ti in tf:
        v = ti.pax_headers.get("mtime")
        if v is None or ti.name.strip("/") in ("", "."):
            continue
        ns = int(Decimal(v) * 10**9)
        os.utime(os.path.join(sys.argv[2], ti.name), ns=(ns, ns),
                 follow_symlinks=False)
EOF
}

# --- negative fractional pax times
NEG=$WORK/neg.tar
"$PYTHON" - "$NEG" <<'EOF' || die "writing $NEG"
import io, sys, tarfile
times = ["-1.5", "-2.999999999", "-1.000000001", "-1", "-86400.25",
         "-1700000000.123456789", "1.5", "-4294967296.5"]
def info(name, kind, mtime):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = {tarfile.DIRTYPE: 0o755, tarfile.SYMTYPE: 0o777}.get(kind, 0o644)
    ti.pax_headers = {"mtime": mtime}
    return ti
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    t.addfile(info("d", tarfile.DIRTYPE, "-100.75"))
    for i, v in enumerate(times):
        ti = info("d/f%d" % i, tarfile.REGTYPE, v)
        ti.size = 2
        t.addfile(ti, io.BytesIO(b"%02d" % i))
    ti = info("d/link", tarfile.SYMTYPE, "-3.000000001")
    ti.linkname = "f0"
    t.addfile(ti)
    t.addfile(info("d/fifo", tarfile.FIFOTYPE, "-5.5"))
    t.addfile(info("d/sub", tarfile.DIRTYPE, "-7.25"))
EOF
REF=$(ref_dir "$NEG")
extract "$NEG" "$REF" || die "bsdtar could not extract $NEG"
paxtimes "$NEG" "$REF" || die "setting the pax times on $REF"
if [ "$("$PYTHON" -c 'import os, sys; print(os.lstat(sys.argv[1]).st_mtime_ns)' \
	"$REF/d/f0")" = -1500000000 ]; then
	ok "reference: d/f0 is 1.5 s before the epoch"
else
	fail "reference: d/f0 is not 1.5 s before the epoch"
fi
convert_and_compare "$NEG" -T 1600000000
# stat through the kernel, with no reference in between
mount_loop "$IMG" "$WORK/mnt.neg" || die "mount $IMG"
check "stat: d/f0 at -2 s + 500000000 ns" \
	test "$(stat -c '%Y %y' "$WORK/mnt.neg/d/f0")" = \
	"-2 1969-12-31 23:59:58.500000000 +0000"
check "stat: d/f1 at -3 s + 1 ns" \
	test "$(stat -c '%Y %y' "$WORK/mnt.neg/d/f1")" = \
	"-3 1969-12-31 23:59:57.000000001 +0000"
unmount "$WORK/mnt.neg"
# the same tree read from a directory: stat() times are already exact
DIMG=$WORK/neg-dir.img
if mkfs_img -T 1600000000 "$REF" "$DIMG"; then
	ok "mkfs from the reference directory"
	compare_mounts "$DIMG" "$REF" "loop"
	check "fsck.img neg-dir.img" "$FSCK_IMG" -q "$DIMG"
else
	fail "mkfs from the reference directory"
fi
# the comparison notices a time 1 s off
"$PYTHON" - "$NEG" "$WORK/neg-off.tar" <<'EOF' || die "writing neg-off.tar"
import sys, tarfile
with tarfile.open(sys.argv[1]) as src, \
        tarfile.open(sys.argv[2], "w", format=tarfile.PAX_FORMAT) as dst:
    for ti in src:
        if ti.name == "d/f0":
            ti.pax_headers["mtime"] = "-2.5"
        dst.addfile(ti, src.extractfile(ti) if ti.isfile() else None)
EOF
"$FSCK_IMG" --compare="$WORK/neg-off.tar" "$IMG" >"$WORK/off.out" 2>&1
rc=$?
if [ $rc -eq 4 ] &&
	grep -q '^differs: /d/f0: mtime: -2.500000000 in the archive, -1.500000000 in the image' \
		"$WORK/off.out"; then
	ok "fsck.img --compare reports d/f0's mtime, in exact decimals"
else
	cat "$WORK/off.out"
	fail "fsck.img --compare on a 1 s mtime difference (exit $rc)"
fi

# Between -1 and 0 s libarchive drops the sign ("-0.5" arrives as 0.5 s):
# mkfs.img cannot tell, stores the positive time and says so for each
# such entry (not with -q); the image still matches what --compare reads.
"$PYTHON" - "$WORK/zero.tar" <<'EOF' || die "writing zero.tar"
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for name, v in (("z/minus", "-0.5"), ("z/plus", "0.5"), ("z/one", "-1.5")):
        ti = tarfile.TarInfo(name)
        ti.mode = 0o644
        ti.pax_headers = {"mtime": v}
        t.addfile(ti, io.BytesIO(b""))
EOF
rc=0
mkfs_img -T 0 "$WORK/zero.tar" "$WORK/zero.img" >"$WORK/zero.out" 2>&1 || rc=$?
check "sign lost between -1 and 0 s: mkfs.img succeeds" test $rc -eq 0
check "sign lost: a warning names z/minus" grep -q \
	'^mkfs.img: warning: z/minus: mtime 0.500000000 s may have been -0.500000000 s' \
	"$WORK/zero.out"
check "sign lost: a warning names z/plus" grep -q \
	'^mkfs.img: warning: z/plus: mtime 0.500000000 s may have been' \
	"$WORK/zero.out"
check "sign lost: no warning for z/one" \
	sh -c "! grep -q 'z/one' '$WORK/zero.out'"
rc=0
mkfs_img -q -T 0 "$WORK/zero.tar" "$WORK/zero-q.img" >"$WORK/zero-q.out" 2>&1 ||
	rc=$?
check "sign lost: -q prints nothing" test $rc -eq 0 -a ! -s "$WORK/zero-q.out"
check "sign lost: fsck.img --compare" "$FSCK_IMG" -q --compare="$WORK/zero.tar" \
	"$WORK/zero.img"

# --- -T and the layer's usual mtime
# expect_build IMG T: the superblock says the image was built at T.
expect_build() {
	local got
	got=$("$DUMP_IMG" --json "$1" | "$PYTHON" -c '
import json, sys
sb = json.load(sys.stdin)["superblock"]
print(sb["epoch"] + sb["build_time"])')
	if [ "$got" = "$2" ]; then
		ok "$(basename "$1"): recorded build time $2"
	else
		fail "$(basename "$1"): recorded build time $got, not $2"
	fi
}

# layer.tar: nine files at MTIME under implied directories (the most
# common mtime); expected.tar spells out the implied directories and the
# root at the build time T.
layer() {
	"$PYTHON" - "$@" <<'EOF'
import io, sys, tarfile
out, mtime, t = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
names = ["a/f1", "a/f2", "a/b/f3", "c/f4", "f5", "f6", "f7", "f8", "f9"]
def add(tf, name, kind, mtime, data=b""):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    ti.mtime = mtime
    ti.size = len(data)
    tf.addfile(ti, io.BytesIO(data) if data else None)
with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as l, \
        tarfile.open(out + ".expected.tar", "w",
                     format=tarfile.PAX_FORMAT) as e:
    for d in ["./", "a", "a/b", "c"]:
        add(e, d, tarfile.DIRTYPE, t)
    for n in names:
        add(l, n, tarfile.REGTYPE, mtime, n.encode())
        add(e, n, tarfile.REGTYPE, mtime, n.encode())
EOF
}

for case in "1600000000 0" "1600000000 1599999999" "0 5000000000"; do
	set -- $case
	L=$WORK/layer-$1-$2.tar
	layer "$L" "$1" "$2" || die "writing $L"
	REF_TAR=$L.expected.tar convert_and_compare "$L" -T "$2" -U $UUID
	expect_build "$IMG" "$2"
done

finish
