#!/bin/bash
# SPDX-License-Identifier: MIT
# Names are bytes: names that differ only in their Unicode form (NFC and
# NFD, U+00C5 / U+212B / "A" + U+030A, Hangul syllable and conjoining
# jamo), in names, a directory, link targets and xattr names, stay apart
# and byte for byte as archived, in pax, GNU, ustar and Go-style pax
# tars (tests/helpers/nametars.py), through mkfs.img, the mkfs.erofs
# drop-in, mkfs.img --oci and --oci --flatten: each image mounted by the
# kernel and listed against Python tarfile's reading of the same tar (the
# --merge image's names read with dump.img).
# fsck.img --compare decodes names on its own: it finds a name an image
# changed. A pax name that is not UTF-8 stays an error.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
. "$top_srcdir/tests/containerd/common.sh"
setup
NT="$PYTHON $HELPERS/nametars.py"

$NT make "$WORK" || die "nametars.py make failed"

# same_tree TAR DIR WHAT: the mounted DIR lists as tarfile reads TAR
same_tree() {
	$NT tar "$1" >"$WORK/want" || die "tarfile could not list $1"
	$NT tree "$2" >"$WORK/got" || die "cannot list $2"
	if cmp -s "$WORK/want" "$WORK/got"; then
		ok "$3: $(wc -l <"$WORK/got") paths, byte for byte as tarfile reads them"
	else
		diff "$WORK/want" "$WORK/got" | head -n 20
		fail "$3: the mounted tree differs from tarfile's reading"
	fi
}

# mount_same IMG TAR WHAT: mount IMG, list it against TAR, unmount
mount_same() {
	local m=$WORK/mnt
	if mount_file "$1" "$m"; then
		same_tree "$2" "$m" "$3"
		unmount "$m" || fail "umount $m"
	else
		fail "$3: the kernel does not mount $1"
	fi
}

for f in pax gnu ustar go; do
	check "mkfs.img $f.tar" mkfs_img -q "$WORK/$f.tar" "$WORK/$f.img"
	mount_same "$WORK/$f.img" "$WORK/$f.tar" "mkfs.img $f.tar"
	check "fsck.img --compare $f.tar: no difference" "$FSCK_IMG" -q \
		--compare "$WORK/$f.tar" "$WORK/$f.img"
done

# the drop-in, as containerd runs it
dropin_setup
check "mkfs.erofs --tar=f go.tar" dropin --quiet --tar=f "$WORK/dropin.img" \
	"$WORK/go.tar"
mount_same "$WORK/dropin.img" "$WORK/go.tar" "mkfs.erofs --tar=f go.tar"

# an OCI layout of the Go-style layer: converted, and flattened
"$PYTHON" - "$HELPERS" "$WORK/oci" "$WORK/go.tar" <<'PY' || die "layout"
import sys
sys.path.insert(0, sys.argv[1])
import layertar
layertar.write_layout(sys.argv[2], [open(sys.argv[3], "rb").read()], "t")
PY
check "mkfs.img --oci" mkfs_img --oci -q "$WORK/oci" "$WORK/dst"
BLOB=$(layer_blobs "$WORK/dst" t)
[ -f "$BLOB" ] && mount_same "$BLOB" "$WORK/go.tar" "mkfs.img --oci" ||
	fail "mkfs.img --oci: no converted layer in $WORK/dst"
check "mkfs.img --oci --flatten" mkfs_img --oci -q --flatten "$WORK/oci" \
	"$WORK/flat.img"
mount_same "$WORK/flat.img" "$WORK/go.tar" "mkfs.img --oci --flatten"
# --merge: the merged metadata image names every file as the layer does
check "mkfs.img --oci --merge" mkfs_img --oci -q --merge "$WORK/dst" \
	"$WORK/merged.img"
"$DUMP_IMG" --ls=/d "$WORK/merged.img" >"$WORK/merged.ls" 2>&1 ||
	fail "dump.img --ls of the merged image"
"$PYTHON" - "$HELPERS" "$WORK/merged.ls" <<'PY' &&
import sys
sys.path.insert(0, sys.argv[1])
import nametars
got = {l.rsplit(b" ", 1)[-1] for l in open(sys.argv[2], "rb").read().splitlines()}
want = {n.encode() for n in nametars.NAMES + nametars.DIRS}
sys.exit(0 if want <= got else 1)
PY
	ok "mkfs.img --oci --merge: every name of /d, byte for byte" ||
	{ cat "$WORK/merged.ls"; fail "mkfs.img --oci --merge: names of /d"; }

# A name changed in an image (never mounted): "A" + U+030A and U+212B
# stay apart in the good image; U+212B rewritten in place as U+00C5
# (what composing gives; the last name of a directory block ends at a
# NUL) is still a valid image, and --compare names both sides.
"$PYTHON" - "$WORK/ang.tar" <<'PY' || die "ang.tar"
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for n in ["n/A\u030a", "n/\u212b"]:
        ti = tarfile.TarInfo(n)
        ti.size = 2
        t.addfile(ti, io.BytesIO(b"x\n"))
PY
mkfs_img -q "$WORK/ang.tar" "$WORK/ang.img" || die "mkfs.img ang.tar"
check "fsck.img --compare ang.tar: no difference" "$FSCK_IMG" -q \
	--compare "$WORK/ang.tar" "$WORK/ang.img"
"$PYTHON" - "$WORK/ang.img" "$WORK/bad.img" <<'PY' ||
import sys
b = bytearray(open(sys.argv[1], "rb").read())
assert b.count(b"\xe2\x84\xab") == 1
i = b.find(b"\xe2\x84\xab")
b[i:i + 3] = b"\xc3\x85\x00"
open(sys.argv[2], "wb").write(b)
PY
	die "cannot rewrite the name in ang.img"
check "fsck.img: the rewritten image is valid" "$FSCK_IMG" -q "$WORK/bad.img"
"$FSCK_IMG" -q --compare "$WORK/ang.tar" "$WORK/bad.img" >"$WORK/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "^differs: /n/$(printf '\xe2\x84\xab'): missing" "$WORK/out" &&
	grep -q "^differs: /n/$(printf '\xc3\x85'): extra" "$WORK/out"; then
	ok "fsck.img --compare reports the changed name (exit $rc)"
else
	cat "$WORK/out"
	fail "fsck.img --compare did not report the changed name (exit $rc)"
fi

# a pax path that is not UTF-8 (and no hdrcharset=BINARY): refused
"$PYTHON" - "$HELPERS" "$WORK/latin1.tar" <<'PY' || die "latin1.tar"
import sys
sys.path.insert(0, sys.argv[1])
from nametars import go_block, pad, pax_record
recs = pax_record(b"path", b"caf\xe9")
open(sys.argv[2], "wb").write(
    go_block(b"PaxHeaders.0/caf", "x", len(recs), mode=0, mtime=0) +
    pad(recs) + go_block(b"caf", "0", 0) + b"\0" * 1024)
PY
mkfs_img -q "$WORK/latin1.tar" "$WORK/latin1.img" 2>"$WORK/err" &&
	fail "a pax path that is not UTF-8 was taken"
grep -q "entry 1 cannot be read as archived: Pathname can't be converted from UTF-8" "$WORK/err" &&
	[ ! -e "$WORK/latin1.img" ] &&
	ok "a pax path that is not UTF-8: refused ($(cat "$WORK/err"))" ||
	{ cat "$WORK/err"; fail "pax path not UTF-8"; }

finish
