#!/bin/bash
# fsck.img on tar-index images. A doctored index whose chunk points at a
# tar header (or past the tar) is flagged, and so are an index whose tar
# was never appended and a cut tar; these images go to fsck.img only,
# never to the kernel. Then a second opinion: erofs-utils' own
# "mkfs.erofs --tar=i" index with the tar appended, as containerd's
# differ makes it, is accepted by fsck.img and mounts equal to the
# extraction, and fsck.img --compare finds the tar in it.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_tools tar

FIXED=(-T 1600000000 -U 0b5e4a6c-52a3-4c61-8d4b-0c1f6a9e3d21)
pymk mktar.py basic "$WORK/basic.tar" || die "mktar basic"
mkfs_img -q --tar-index "${FIXED[@]}" "$WORK/basic.tar" "$WORK/good.img" ||
	die "mkfs --tar-index basic"
check "fsck.img accepts the image" "$FSCK_IMG" -q "$WORK/good.img"

# doctor IMG OUT ENTRY WHERE: copy IMG to OUT with the chunk index of
# ENTRY's data moved to WHERE: "header" (the entry's own header block) or
# "past" (beyond the end of the tar).
doctor() {
	"$PYTHON" - "$@" <<'EOF'
import struct, sys
img, out, name, where = sys.argv[1:5]
b = bytearray(open(img, "rb").read())
slotoff = struct.unpack_from("<H", b, 1024 + 88)[0]
tar = struct.unpack_from("<I", b, slotoff * 128 + 68)[0] * 512
pos = tar
while True:
    h = b[pos:pos + 512]
    if not any(h):
        sys.exit("entry %s not found" % name)
    size = int(h[124:136].strip(b"\0 ") or b"0", 8)
    if h[0:100].rstrip(b"\0").decode() == name and h[156:157] in (b"0", b"\0"):
        break
    pos += 512 + (size + 511) // 512 * 512
data_blk = (pos + 512 - tar) // 512
rec = struct.pack("<HHI", 0, 1, data_blk)
at = b.find(rec, 0, tar)
if at < 0 or b.find(rec, at + 1, tar) >= 0:
    sys.exit("chunk index of %s not found once" % name)
new = (pos - tar) // 512 if where == "header" else (len(b) - tar) // 512 + 8
struct.pack_into("<HHI", b, at, 0, 1, new)
open(out, "wb").write(bytes(b))
EOF
}

# flagged WHAT IMG PATTERN: fsck.img finds errors (exit 4) saying PATTERN.
flagged() {
	local rc=0
	"$FSCK_IMG" "$2" >"$WORK/fsck.out" 2>&1 || rc=$?
	if [ "$rc" -ne 4 ]; then
		cat "$WORK/fsck.out"
		fail "$1: fsck.img exit $rc, expected 4"
	elif ! grep -q "$3" "$WORK/fsck.out"; then
		cat "$WORK/fsck.out"
		fail "$1: no message saying '$3'"
	else
		ok "$1 flagged: $(grep -m1 "$3" "$WORK/fsck.out")"
	fi
}

if doctor "$WORK/good.img" "$WORK/header.img" files/size-4096 header; then
	flagged "chunk pointing at its tar header" "$WORK/header.img" \
		"not all inside one entry's data"
else
	fail "doctoring the index (header)"
fi
if doctor "$WORK/good.img" "$WORK/past.img" files/size-512 past; then
	flagged "chunk pointing past the tar" "$WORK/past.img" \
		"beyond the end of the image\|outside the tar"
else
	fail "doctoring the index (past)"
fi

mkfs_img -q --tar-index=only "${FIXED[@]}" "$WORK/basic.tar" "$WORK/only.img" ||
	die "mkfs --tar-index=only"
flagged "an index without its tar" "$WORK/only.img" "the tar is not appended"
size=$(stat -c %s "$WORK/good.img")
head -c $((size - 1024 * 1024)) "$WORK/good.img" >"$WORK/cut.img"
flagged "a cut tar" "$WORK/cut.img" "should hold the index"

# A pax "size" record overrides the header's size field (GNU tar writes
# files of 8 GiB and more so, with 0 in the field): the tar walk follows it.
"$PYTHON" - "$WORK/paxsize.tar" <<'EOF' || die "paxsize.tar"
import io, os, sys, tarfile
data = os.urandom(5000)
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
    ti = tarfile.TarInfo("big-by-pax")
    ti.size, ti.mtime, ti.mode = len(data), 1500000000, 0o644
    ti.pax_headers = {"size": str(len(data))}
    t.addfile(ti, io.BytesIO(data))
    ti = tarfile.TarInfo("after")
    ti.size, ti.mtime = 3, 1500000000
    t.addfile(ti, io.BytesIO(b"end"))
b = bytearray(buf.getvalue())
pos = 0
while b[pos + 156:pos + 157] != b"0":     # the file's own header
    size = int(b[pos + 124:pos + 136].strip(b"\0 ") or b"0", 8)
    pos += 512 + (size + 511) // 512 * 512
b[pos + 124:pos + 136] = b"00000000000\0"
b[pos + 148:pos + 156] = b" " * 8
b[pos + 148:pos + 156] = b"%06o\0 " % sum(b[pos:pos + 512])
open(sys.argv[1], "wb").write(bytes(b))
EOF
rm -f "$WORK/paxsize.img"
if mkfs_img -q --tar-index "$WORK/paxsize.tar" "$WORK/paxsize.img"; then
	check "fsck.img follows a pax size record" "$FSCK_IMG" -q "$WORK/paxsize.img"
	extract "$WORK/paxsize.tar" "$WORK/paxsize.ref" || die "bsdtar paxsize"
	# shellcheck disable=SC2046
	compare_mounts "$WORK/paxsize.img" "$WORK/paxsize.ref" "file" \
		$(treecmp_opts_for "$WORK/paxsize.tar")
else
	fail "mkfs --tar-index paxsize.tar"
fi

# Second opinion: erofs-utils' --tar=i, then the tar appended by hand.
MKFS_EROFS=${MKFS_EROFS:-/opt/erofs-utils-1.9.3/bin/mkfs.erofs}
if [ ! -x "$MKFS_EROFS" ]; then
	MKFS_EROFS=$(command -v mkfs.erofs || true)
fi
if [ -z "$MKFS_EROFS" ] || ! "$MKFS_EROFS" --help 2>&1 | grep -q -- '--tar='; then
	log "no mkfs.erofs with --tar=: second opinion skipped"
	finish
fi
pymk mktar.py xattrs "$WORK/xattrs.tar" || die "mktar xattrs"
pymk mktar.py whiteouts "$WORK/whiteouts.tar" || die "mktar whiteouts"
make_tree "$WORK/tree" full
# A day back, keeping the nanoseconds: mkfs.erofs 1.9.3 stores an inode
# whose mtime falls in the second of its build time in compact form, whose
# nanoseconds are the superblock's, so files made just now would lose them.
"$PYTHON" - "$WORK/tree" <<'PY' || die "shifting mtimes"
import os, sys
for root, dirs, files in os.walk(sys.argv[1]):
    for n in dirs + files + ([] if root != sys.argv[1] else ["."]):
        p = os.path.join(root, n)
        st = os.lstat(p)
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - 86400 * 10**9),
                 follow_symlinks=False)
PY
tar -C "$WORK/tree" --format=posix -cf "$WORK/tree-pax.tar" . || die "tar pax"
tar -C "$WORK/tree" --format=gnu -cf "$WORK/tree-gnu.tar" . || die "tar gnu"
for s in basic xattrs whiteouts tree-pax tree-gnu; do
	tar=$WORK/$s.tar
	img=$WORK/$s.erofs-utils.img
	rm -f "$img"
	# containerd: mkfs.erofs --tar=i --aufs --quiet [opts] FILE < tar,
	# then the tar appended to FILE (internal/erofsutils)
	if ! "$MKFS_EROFS" --tar=i --aufs --quiet "$img" <"$tar"; then
		fail "mkfs.erofs --tar=i $s"
		continue
	fi
	cat "$tar" >>"$img"
	ok "mkfs.erofs --tar=i $s + tar appended ($(stat -c %s "$img") bytes)"
	check "fsck.img accepts erofs-utils' $s index" "$FSCK_IMG" -q "$img"
	# a root the tar does not list is 0777 for mkfs.erofs, 0755 for us
	if tar_has_root "$tar"; then
		check "fsck.img --compare=$s.tar on erofs-utils' index" \
			"$FSCK_IMG" -q --compare="$tar" "$img"
	fi
	ref=$(ref_dir "$tar")
	[ -d "$ref" ] || extract "$tar" "$ref" || die "bsdtar $s"
	# shellcheck disable=SC2046
	compare_mounts "$img" "$ref" "loop file" $(treecmp_opts_for "$tar")
done

finish
