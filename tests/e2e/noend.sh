#!/bin/bash
# SPDX-License-Identifier: MIT
# Tars that end right after an entry, without the end-of-archive marker,
# as some producers write them (GNU tar, bsdtar, Python's tarfile and Go
# read them without a word): converted with exactly one warning naming
# the last entry, in every mode (mkfs.img from a file and a pipe,
# --verify, the mkfs.erofs drop-in, silent with its --quiet, --oci and
# --oci --flatten, fsck.img --compare); --require-end refuses them. A tar
# cut inside the last entry's padding is refused (as by all those
# readers). Tars written with Python: cut after the last entry's padded
# data, for a ustar, a GNU and a pax archive.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
. "$top_srcdir/tests/containerd/common.sh"
setup
dropin_setup

"$PYTHON" - "$WORK" <<'PY' || die "cannot write the tars"
import io, sys, tarfile
w = sys.argv[1]
for fmt, name in [(tarfile.USTAR_FORMAT, "ustar"), (tarfile.GNU_FORMAT, "gnu"),
                  (tarfile.PAX_FORMAT, "pax")]:
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=fmt) as t:
        ti = tarfile.TarInfo("etc")
        ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, 1700000000
        t.addfile(ti)
        for n, d in [("etc/a", b"hello\n"), ("etc/last-" + name, b"x" * 700)]:
            ti = tarfile.TarInfo(n)
            ti.size, ti.mtime = len(d), 1700000000
            t.addfile(ti, io.BytesIO(d))
        end = t.offset  # after the last entry's padded data
    open("%s/%s.tar" % (w, name), "wb").write(b.getvalue()[:end])
    # the same cut before the padding of the last entry's data
    open("%s/%s-nopad.tar" % (w, name), "wb").write(b.getvalue()[:end - 324])
    # tarfile reads the padded cut entirely, and refuses the other
    with tarfile.open("%s/%s.tar" % (w, name)) as t:
        assert [m.name for m in t] == ["etc", "etc/a", "etc/last-" + name]
PY

# one_warning WHAT LOG NAME: LOG holds exactly one warning, about NAME
one_warning() {
	local n
	n=$(grep -c "warning:" "$2")
	if [ "$n" = 1 ] && grep -E "warning:" "$2" | grep -qE "ends after entry 3 \(\"etc/$3\"\) without an end-of-archive marker: truncated\?"; then
		ok "$1: one warning: $(grep "warning:" "$2")"
	else
		cat "$2"
		fail "$1: $n warnings, not one naming $3"
	fi
}

for f in ustar gnu pax; do
	T=$WORK/$f.tar
	mkfs_img "$T" "$WORK/$f.img" >"$WORK/log" 2>&1 ||
		{ cat "$WORK/log"; fail "mkfs.img $f.tar"; continue; }
	one_warning "mkfs.img $f.tar" "$WORK/log" "last-$f"
	mkdir -p "$WORK/ref/$f"
	bsdtar -xf "$T" -C "$WORK/ref/$f" || die "bsdtar -x $f.tar"
	compare_mounts "$WORK/$f.img" "$WORK/ref/$f" file --skip-root
	"$FSCK_IMG" --compare="$T" "$WORK/$f.img" >"$WORK/log" 2>&1 &&
		one_warning "fsck.img --compare=$f.tar" "$WORK/log" "last-$f" ||
		{ cat "$WORK/log"; fail "fsck.img --compare=$f.tar"; }
	mkfs_img "$T" "$WORK/strict.img" --require-end >"$WORK/log" 2>&1 &&
		fail "--require-end took $f.tar"
	grep -q "ends after entry 3 (\"etc/last-$f\") without an end-of-archive marker" "$WORK/log" &&
		[ ! -e "$WORK/strict.img" ] &&
		ok "--require-end: $f.tar refused ($(cat "$WORK/log"))" ||
		{ cat "$WORK/log"; fail "--require-end $f.tar"; }
	mkfs_img -q "$WORK/$f-nopad.tar" "$WORK/nopad.img" >"$WORK/log" 2>&1 &&
		fail "a tar cut in the last entry's padding was taken"
	grep -q "last-$f.*[Tt]runcated" "$WORK/log" && [ ! -e "$WORK/nopad.img" ] &&
		ok "cut in the padding: refused ($(cat "$WORK/log"))" ||
		{ cat "$WORK/log"; fail "cut in the padding"; }
done

T=$WORK/pax.tar
mkfs_img - "$WORK/pipe.img" <"$T" >"$WORK/log" 2>&1 &&
	one_warning "mkfs.img - (a pipe)" "$WORK/log" last-pax ||
	{ cat "$WORK/log"; fail "mkfs.img from a pipe"; }
mkfs_img --verify "$T" "$WORK/verify.img" >"$WORK/log" 2>&1 &&
	one_warning "mkfs.img --verify" "$WORK/log" last-pax ||
	{ cat "$WORK/log"; fail "mkfs.img --verify"; }
dropin --tar=f "$WORK/dropin.img" "$T" >"$WORK/log" 2>&1 &&
	one_warning "mkfs.erofs --tar=f" "$WORK/log" last-pax ||
	{ cat "$WORK/log"; fail "mkfs.erofs --tar=f"; }
dropin --tar=f --quiet "$WORK/dropin-q.img" "$T" >"$WORK/log" 2>&1 &&
	check "mkfs.erofs --tar=f --quiet: silent" test ! -s "$WORK/log" ||
	{ cat "$WORK/log"; fail "mkfs.erofs --tar=f --quiet"; }

# an OCI layout of that layer (its digest is checked): --oci, --flatten
"$PYTHON" - "$HELPERS" "$WORK/oci" "$T" <<'PY' || die "layout"
import sys
sys.path.insert(0, sys.argv[1])
import layertar
layertar.write_layout(sys.argv[2], [open(sys.argv[3], "rb").read()], "t")
PY
mkfs_img --oci "$WORK/oci" "$WORK/dst" >"$WORK/log" 2>&1 &&
	one_warning "mkfs.img --oci" "$WORK/log" last-pax ||
	{ cat "$WORK/log"; fail "mkfs.img --oci"; }
mkfs_img --oci --flatten "$WORK/oci" "$WORK/flat.img" >"$WORK/log" 2>&1 &&
	one_warning "mkfs.img --oci --flatten" "$WORK/log" last-pax ||
	{ cat "$WORK/log"; fail "mkfs.img --oci --flatten"; }
rm -rf "$WORK/dst"
mkfs_img --oci --require-end "$WORK/oci" "$WORK/dst" >"$WORK/log" 2>&1 &&
	fail "mkfs.img --oci --require-end took the layer"
grep -q "without an end-of-archive marker" "$WORK/log" &&
	ok "mkfs.img --oci --require-end: refused ($(tail -n 1 "$WORK/log"))" ||
	{ cat "$WORK/log"; fail "mkfs.img --oci --require-end"; }
finish
