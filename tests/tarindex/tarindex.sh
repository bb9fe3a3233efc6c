#!/bin/bash
# Tar-index images (mkfs.img --tar-index): file data stays in the tar,
# which follows the index byte for byte. Realistic layers (every entry
# type, sparse files in GNU and pax form, hard links, xattrs and ACLs,
# whiteouts, long names, pax headers, a slice of /usr) are converted;
# each image mounted through a loop device, file-backed and with direct
# I/O must equal the bsdtar extraction, fsck.img must accept it and find
# the tar's entries in it (--compare), and its tail must hash to the
# tar's SHA-256 (the layer's diffID). --tar-index=only followed by
# "cat TAR >>" must give the same bytes as --tar-index. Sparse files,
# compressed input, memory with a 512 MiB file from a pipe, and what is
# refused.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_tools tar sha256sum gzip

FIXED=(-T 1600000000 -U 0b5e4a6c-52a3-4c61-8d4b-0c1f6a9e3d21)

# tail_is_tar IMG TAR: the bytes after the index are TAR, byte for byte.
tail_is_tar() {
	local size want got
	size=$(stat -c %s "$2")
	want=$(sha256sum <"$2" | cut -d' ' -f1)
	got=$(tail -c "$size" "$1" | sha256sum | cut -d' ' -f1)
	[ "$want" = "$got" ]
}

# index_and_compare TAR [MKFS OPTIONS...]: --tar-index, then mount (loop,
# file, directio) against the extraction, fsck, compare, and check the tail.
index_and_compare() {
	local tar=$1 name ref topts o copts=()
	shift
	for o in "$@"; do
		case $o in
		--keep-whiteouts) copts+=("$o") ;;
		esac
	done
	name=$(basename "$tar")
	IMG=$WORK/$name.idx.img
	rm -f "$IMG"
	if ! mkfs_img --tar-index "$@" "$tar" "$IMG"; then
		fail "mkfs --tar-index $* $name"
		return 1
	fi
	ok "mkfs --tar-index $* $name ($(stat -c %s "$IMG") bytes, tar $(stat -c %s "$tar"))"
	ref=$(ref_dir "$tar")
	[ -d "$ref" ] || extract "$tar" "$ref" || die "bsdtar could not extract $name"
	# shellcheck disable=SC2207
	topts=($(treecmp_opts_for "$tar" "$@"))
	compare_mounts "$IMG" "$ref" "loop file directio" "${topts[@]}"
	check "fsck.img $name.idx.img" "$FSCK_IMG" -q "$IMG"
	check "fsck.img --compare $name ${copts[*]}" "$FSCK_IMG" -q \
		--compare="$tar" "${copts[@]}" "$IMG"
	check "tail of $name.idx.img is the tar (sha256)" tail_is_tar "$IMG" "$tar"
}

# Layers written by Python's tarfile (pax headers, every entry type,
# xattrs and ACLs, OCI whiteouts), by GNU tar in pax and gnu
# formats (long names, devices, sparse files, hard links, ns mtimes) and
# a slice of /usr.
for s in basic xattrs whiteouts; do
	pymk mktar.py "$s" "$WORK/$s.tar" || die "mktar $s"
done
make_tree "$WORK/tree" full
tar -C "$WORK/tree" -S --format=posix -cf "$WORK/tree-pax.tar" . ||
	die "tar pax"
tar -C "$WORK/tree" -S --format=gnu -cf "$WORK/tree-gnu.tar" . ||
	die "tar gnu"
printf '%s\n' usr usr/share >"$WORK/usr.list"
(cd / && find usr/share/zoneinfo usr/include -xdev 2>/dev/null |
	LC_ALL=C sort | head -n 2000) >>"$WORK/usr.list"
tar -C / --no-recursion --format=posix -cf "$WORK/usr.tar" \
	-T "$WORK/usr.list" || die "tar of /usr"

for s in basic xattrs whiteouts tree-pax \
	tree-gnu usr; do
	index_and_compare "$WORK/$s.tar"
done
# options that apply to the metadata still apply
index_and_compare "$WORK/basic.tar" -x 1 "${FIXED[@]}"
index_and_compare "$WORK/whiteouts.tar" --keep-whiteouts

# The sparse file's holes are holes: the index is small.
idx=$WORK/tree-pax.tar.idx.img
t=$(stat -c %s "$WORK/tree-pax.tar")
i=$(stat -c %s "$idx")
check "tree-pax index is small ($((i - t)) bytes before the tar)" \
	test $((i - t)) -lt 65536

# Sparse files written as pax GNU sparse 1.0: ranges on 4 KiB (and
# 512-byte) boundaries are indexed, chunk by chunk, holes staying holes;
# ranges that split 512-byte blocks cannot be indexed: an error naming
# the file.
"$PYTHON" - "$WORK/sparse-ok.tar" "$WORK/sparse-bad.tar" <<'EOF' || die "sparse tars"
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
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as tf:
    add(tf, "aligned", 64 << 20, [(8192, r(4096)), (1 << 20, r(12288)),
                                 (40 << 20, r(4096))])
    add(tf, "half-k", 1 << 20, [(0, r(512)), (4096, r(1024)),
                                ((1 << 20) - 512, r(512))])
    add(tf, "tail-data", 100000, [(65536, r(100000 - 65536))])
    add(tf, "no-data", 1 << 30, [])
with tarfile.open(sys.argv[2], "w", format=tarfile.PAX_FORMAT) as tf:
    add(tf, "fine", 8192, [(0, r(4096))])
    add(tf, "split-block", 8192, [(100, b"ab"), (4096, r(10))])
EOF
index_and_compare "$WORK/sparse-ok.tar"
i=$WORK/sparse-ok.tar.idx.img
# 8 bytes of chunk index per 4 KiB of the 64 MiB file (128 KiB), the rest
# small: holes take no room
check "sparse-ok: index + tar is the tar plus less than 192 KiB" \
	test $(($(stat -c %s "$i") - $(stat -c %s "$WORK/sparse-ok.tar"))) -lt 196608
rm -f "$WORK/bad.img"
if mkfs_img -q --tar-index "$WORK/sparse-bad.tar" "$WORK/bad.img" 2>"$WORK/err"; then
	fail "sparse ranges splitting a block: accepted"
elif grep -q "split-block.*cannot be indexed" "$WORK/err" && [ ! -e "$WORK/bad.img" ]; then
	ok "sparse ranges splitting a block refused: $(cat "$WORK/err")"
else
	cat "$WORK/err"
	fail "sparse ranges splitting a block: wrong message or output left"
fi

# --tar-index=only + cat TAR >> gives the very bytes of --tar-index.
for s in basic tree-gnu; do
	tar=$WORK/$s.tar
	rm -f "$WORK/a.img" "$WORK/o.img"
	if mkfs_img -q --tar-index "${FIXED[@]}" "$tar" "$WORK/a.img" &&
		mkfs_img -q --tar-index=only "${FIXED[@]}" - "$WORK/o.img" <"$tar"; then
		ok "mkfs --tar-index and --tar-index=only (stdin) $s"
		check "--tar-index=only index is shorter than the tar" \
			test "$(stat -c %s "$WORK/o.img")" -lt "$(stat -c %s "$tar")"
		cat "$tar" >>"$WORK/o.img"
		check "only + cat >> equals --tar-index ($s)" \
			cmp "$WORK/a.img" "$WORK/o.img"
		compare_mounts "$WORK/o.img" "$(ref_dir "$tar")" "file" \
			$(treecmp_opts_for "$tar")
	else
		fail "mkfs --tar-index / --tar-index=only $s"
	fi
done

# Memory grows with entries, not data: a 512 MiB file streamed through a
# pipe, index only and index + tar.
if [ -x /usr/bin/time ]; then
	for mode in only append; do
		rm -f "$WORK/big.img"
		"$PYTHON" -c '
import sys, tarfile
ti = tarfile.TarInfo("big")
ti.size = 512 << 20
class Z:
    left = ti.size
    def read(self, n):
        n = min(n, self.left)
        self.left -= n
        return b"\x5a" * n
with tarfile.open(fileobj=sys.stdout.buffer, mode="w|") as t:
    t.addfile(ti, Z())
' | /usr/bin/time -f %M -o "$WORK/rss" "$MKFS" -q --tar-index=$mode - \
			"$WORK/big.img" || { fail "mkfs --tar-index=$mode of a 512 MiB file"; continue; }
		rss=$(tail -n 1 "$WORK/rss")
		check "--tar-index=$mode of a 512 MiB file from a pipe: ${rss} KiB resident" \
			test "$rss" -lt 65536
	done
	big_data() { head -c $((512 << 20)) /dev/zero | tr '\0' Z; }
	if mount_file "$WORK/big.img" "$WORK/mnt.big"; then
		check "512 MiB file read back from the tar (file-backed mount)" \
			cmp "$WORK/mnt.big/big" <(big_data)
		unmount "$WORK/mnt.big" || fail "umount mnt.big"
	else
		fail "mount 512 MiB index + tar"
	fi
fi

# Compressed input is decompressed into the appended copy: the tail is
# the uncompressed tar, whose SHA-256 is the diffID (OCI: the digest of
# the uncompressed layer), and the image equals the one from the plain tar.
gzip -9 -n -c "$WORK/basic.tar" >"$WORK/basic.tar.gz"
rm -f "$WORK/gz.img" "$WORK/plain.img"
if mkfs_img -q --tar-index "${FIXED[@]}" - "$WORK/gz.img" <"$WORK/basic.tar.gz" &&
	mkfs_img -q --tar-index "${FIXED[@]}" "$WORK/basic.tar" "$WORK/plain.img"; then
	ok "mkfs --tar-index from gzip on stdin"
	check "gzip input: the tail is the uncompressed tar (diffID)" \
		tail_is_tar "$WORK/gz.img" "$WORK/basic.tar"
	check "gzip input: same image as from the plain tar" \
		cmp "$WORK/gz.img" "$WORK/plain.img"
	compare_mounts "$WORK/gz.img" "$(ref_dir "$WORK/basic.tar")" "loop" \
		$(treecmp_opts_for "$WORK/basic.tar")
	check "fsck.img gzip-input image" "$FSCK_IMG" -q "$WORK/gz.img"
else
	fail "mkfs --tar-index from gzip"
fi

# What does not apply is refused, saying why, leaving nothing behind.
refused() {
	local what=$1 pattern=$2
	shift 2
	rm -f "$WORK/bad.img"
	if mkfs_img -q "$@" "$WORK/bad.img" 2>"$WORK/err"; then
		fail "$what: accepted"
	elif ! grep -q "$pattern" "$WORK/err"; then
		cat "$WORK/err"
		fail "$what: message does not say '$pattern'"
	elif [ -e "$WORK/bad.img" ]; then
		fail "$what: left $WORK/bad.img"
	else
		ok "$what refused: $(head -n 1 "$WORK/err")"
	fi
}
refused "--tar-index with -z lz4" "cannot be compressed" \
	--tar-index -z lz4 "$WORK/basic.tar"
refused "--tar-index of a directory" "not from a directory" \
	--tar-index "$WORK/tree"
refused "--tar-index -b 4096" "512-byte blocks" \
	--tar-index -b 4096 "$WORK/basic.tar"
refused "--tar-index=only --verify" "without its tar" \
	--tar-index=only --verify "$WORK/basic.tar"
rm -f "$WORK/v.img"
check "--tar-index --verify" mkfs_img -q --tar-index --verify \
	"$WORK/basic.tar" "$WORK/v.img"
refused "--tar=i (mkfs.erofs's spelling)" "mkfs.erofs's option" \
	--tar=i "$WORK/basic.tar"
refused "--tar-index=bogus" "invalid value" \
	--tar-index=bogus "$WORK/basic.tar"

finish
