#!/bin/bash
# SPDX-License-Identifier: MIT
# What one sparse file may cost in a tar-index image: a few kilobytes of
# tar (pax GNU sparse 1.0) describing 1 GiB files whose data ranges lie on
# odd 512-byte boundaries would need 8 bytes of chunk index per 512 bytes
# of apparent size (16 MiB each) if their data stayed in the tar; such a
# file's data goes into the index instead, in chunks chosen as for any
# image, so the image stays small with mkfs.img --tar-index and with the
# drop-in's mkfs.erofs --tar=i (containerd's command line). fsck.img
# checks it in little memory, and the image, built by us from a valid tar,
# mounted by the kernel equals the bsdtar extraction. Files whose data is
# on large boundaries keep their data in the tar.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_tools /usr/bin/time

"$PYTHON" - "$WORK/odd.tar" <<'EOF' || die "sparse tar"
import io, os, sys, tarfile

def add(tf, name, size, exts):
    if not exts or exts[-1][0] + len(exts[-1][1]) < size:
        exts = exts + [(size, b"")]
    m = "%d\n" % len(exts) + "".join("%d\n%d\n" % (o, len(d)) for o, d in exts)
    body = m.encode()
    body += b"\0" * (-len(body) % 512) + b"".join(d for _, d in exts)
    ti = tarfile.TarInfo("GNUSparseFile.0/" + name)
    ti.size, ti.mtime, ti.mode = len(body), 1500000000, 0o644
    ti.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                      "GNU.sparse.name": name,
                      "GNU.sparse.realsize": str(size)}
    tf.addfile(ti, io.BytesIO(body))

r = os.urandom
G = 1 << 30
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as tf:
    for n in ("odd1", "odd2"):
        add(tf, n, G, [(512, r(512)), ((G >> 1) + 1536, r(1024)),
                       (G - 1024, r(512))])
    # data on 1 MiB boundaries: 8 KiB of index, the data stays in the tar
    add(tf, "aligned", G, [(1 << 20, r(1 << 20))])
EOF
tar=$WORK/odd.tar
tsize=$(stat -c %s "$tar")
log "tar: $tsize bytes"

# 1. mkfs.img --tar-index (the tar appended): small (the aligned file's
# 1 MiB of data, were it copied, would not fit either).
img=$WORK/odd.img
mkfs_img -q --tar-index "$tar" "$img" || die "mkfs.img --tar-index"
isize=$(stat -c %s "$img")
check "--tar-index: index + tar is the tar plus less than 1 MiB ($((isize - tsize)) bytes)" \
	test $((isize - tsize)) -lt 1048576

# 2. fsck.img in little memory, and its view of the tar.
/usr/bin/time -f %M -o "$WORK/rss" "$FSCK_IMG" -q "$img" >"$WORK/fsck.out" 2>&1
rc=$?
check "fsck.img accepts it (exit $rc)" test $rc -eq 0
rss=$(tail -n 1 "$WORK/rss")
check "fsck.img: peak RSS $rss KiB, under 64 MiB" test "$rss" -lt 65536
check "fsck.img --compare with the tar" "$FSCK_IMG" -q --compare="$tar" "$img"

# 3. The kernel's view against bsdtar's extraction.
ref=$(ref_dir "$tar")
extract "$tar" "$ref" || die "bsdtar could not extract the tar"
# shellcheck disable=SC2207
topts=($(treecmp_opts_for "$tar"))
compare_mounts "$img" "$ref" "loop file" "${topts[@]}"

# 4. The drop-in, as containerd runs it (index only, tar appended after).
build=$(cd "$top_builddir" && pwd)
bin=$build/mkfs/.libs/mkfs.img
if [ -x "$bin" ]; then
	export LD_LIBRARY_PATH=$build/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
	bin=$build/mkfs/mkfs.img
fi
mkdir -p "$WORK/bin"
ln -sf "$bin" "$WORK/bin/mkfs.erofs"
if PATH=$WORK/bin:$PATH mkfs.erofs --help 2>&1 | grep -q -- '--tar='; then
	PATH=$WORK/bin:$PATH mkfs.erofs --tar=i --aufs --quiet "$WORK/layer.erofs" \
		<"$tar" || fail "mkfs.erofs --tar=i"
	lsize=$(stat -c %s "$WORK/layer.erofs")
	check "mkfs.erofs --tar=i: index of $lsize bytes, under 1 MiB" \
		test "$lsize" -lt 1048576
	cat "$tar" >>"$WORK/layer.erofs"
	check "mkfs.erofs --tar=i + tar: fsck.img accepts it" \
		"$FSCK_IMG" -q "$WORK/layer.erofs"
else
	fail "mkfs.img has no mkfs.erofs command line (drop-in mode)"
fi

finish
