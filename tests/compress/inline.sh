#!/bin/bash
# SPDX-License-Identifier: MIT
# --inline-data with compression (docs/format.md §4.3, §9.10): a file
# stored raw because compression does not win becomes FLAT_INLINE, its
# last partial block after the inode, as mkfs.erofs lays files out by
# default; with --ztailpacking too, compressed files keep their last
# pcluster inline. Every algorithm x block sizes 4096 and 512 x pcluster
# sizes of one block and 64 KiB: each image is mounted (loop and
# file-backed) and compared with the layer, fsck.img finds the tar in it,
# erofs-utils' fsck.erofs extracts the 4 KiB ones intact (where it can:
# erofs_fsck_can, tests/lib.sh). Raw small files take no data block, the image is smaller than
# without the option, the superblock announces ZTAILPACKING only when a
# compressed tail is inline, and the bytes do not depend on --workers
# (a raw file of several segments included).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/compress/common.sh"
setup
require_root_erofs

log "fsck.erofs: ${FSCK_EROFS:-none} $([ -z "$FSCK_EROFS" ] || "$FSCK_EROFS" -V 2>&1 | head -n 1)"

"$PYTHON" "$ZDIR/zdata.py" small "$WORK/small.tar" || die "zdata.py small"
# a raw file of several segments (compressed in jobs of 2 MiB and more),
# random small files beside xattrs, and text: what each layout decides
"$PYTHON" - "$WORK/raw.tar" <<'EOF' || die "cannot make raw.tar"
import io, random, sys, tarfile
rng = random.Random(12)
tf = tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT)
def add(name, data, xattrs=None):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mtime = 1600000000
    if xattrs:
        ti.pax_headers = {"SCHILY.xattr." + k: v for k, v in xattrs.items()}
    tf.addfile(ti, io.BytesIO(data))
add("big-random", rng.randbytes(5 * 1024 * 1024 + 1234))
for n in (1, 100, 3000, 4095, 4097, 9000):
    add("r%d" % n, rng.randbytes(n))
add("rx", rng.randbytes(2000), {"user.a": "v" * 1500, "user.b": "w" * 400})
add("text", b"".join(b"line %d of some text\n" % i for i in range(3000)))
tf.close()
EOF

for tar in small raw; do
	extract "$WORK/$tar.tar" "$WORK/ref.$tar" || die "bsdtar: $tar.tar"
done
# shellcheck disable=SC2207
topts=($(treecmp_opts_for "$WORK/small.tar"))

# shellcheck disable=SC2207
rawopts=($(treecmp_opts_for "$WORK/raw.tar"))
uuid=(-U 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0)

# inline_bytes IMG: file bytes stored inline after their inode
inline_bytes() {
	"$DUMP_IMG" --stats "$1" | sed -n 's/.*stored plainly.*(\([0-9]*\) inline)/\1/p'
}

layout_of() { "$DUMP_IMG" --path="$2" "$1" | sed -n 's/^Data layout: *//p'; }

for alg in $(z_algorithms); do
	for bs in 4096 512; do
		for pcl in $bs 65536; do
			img=$WORK/$alg-$bs-$pcl.img
			plain=$WORK/plain.img
			opts=(-b "$bs" -z "$alg" -C "$pcl")
			z_mkfs "$img" "$WORK/small.tar" "${opts[@]}" \
				--inline-data || continue
			compare_mounts "$img" "$WORK/ref.small" "loop file" \
				"${topts[@]}"
			z_fsck_img "$img" "$WORK/small.tar"
			[ "$bs" = 4096 ] && z_fsck_erofs "$img" "$WORK/ref.small"
			incompat=$(z_sb_field "$img" 80 4)
			check "ZTAILPACKING clear: raw tails only ($alg $bs $pcl)" \
				test $((incompat & 0x10)) -eq 0
			lay=$(layout_of "$img" /rand/r513)
			check "513 random bytes inline ($lay)" \
				test "$lay" = "flat_inline (2)"
			z_mkfs "$plain" "$WORK/small.tar" "${opts[@]}" || continue
			with=$(inline_bytes "$img")
			without=$(inline_bytes "$plain")
			check "$with file bytes inline ($without without the option)" \
				test "$with" -gt 0 -a "$without" = 0
			check "smaller with raw tails inline: $(stat -c %s "$img") < $(stat -c %s "$plain")" \
				test "$(stat -c %s "$img")" -lt "$(stat -c %s "$plain")"
			# and with compressed tails too
			z_mkfs "$plain" "$WORK/small.tar" "${opts[@]}" \
				--inline-data --ztailpacking || continue
			compare_mounts "$plain" "$WORK/ref.small" "loop file" \
				"${topts[@]}"
			z_fsck_img "$plain" "$WORK/small.tar"
			[ "$bs" = 4096 ] && z_fsck_erofs "$plain" "$WORK/ref.small"
			incompat=$(z_sb_field "$plain" 80 4)
			check "ZTAILPACKING set with --ztailpacking" \
				test $((incompat & 0x10)) -ne 0
			check "smaller still with compressed tails: $(stat -c %s "$plain") < $(stat -c %s "$img")" \
				test "$(stat -c %s "$plain")" -lt "$(stat -c %s "$img")"
			rm -f "$img" "$plain"
		done
	done
done

# A raw file of several segments: its last job learns only when written
# that the earlier ones stayed raw; the tail is inline all the same, and
# the bytes are those of one worker.
for alg in $(z_algorithms); do
	for extra in "" --ztailpacking; do
		one=$WORK/raw-1.img two=$WORK/raw-2.img
		# shellcheck disable=SC2086 # no option when empty
		z_mkfs "$one" "$WORK/raw.tar" -z "$alg" --inline-data $extra \
			--workers=1 "${uuid[@]}" || continue
		# shellcheck disable=SC2086
		z_mkfs "$two" "$WORK/raw.tar" -z "$alg" --inline-data $extra \
			--workers=3 "${uuid[@]}" || continue
		check "$alg $extra: same bytes with 1 and 3 workers" \
			cmp -s "$one" "$two"
		lay=$(layout_of "$one" /big-random)
		check "$alg $extra: 5 MiB of random bytes flat with an inline tail ($lay)" \
			test "$lay" = "flat_inline (2)"
		lay=$(layout_of "$one" /rx)
		check "$alg $extra: raw file behind 1.9 KB of xattrs inline ($lay)" \
			test "$lay" = "flat_inline (2)"
		compare_mounts "$one" "$WORK/ref.raw" "loop file" "${rawopts[@]}"
		z_fsck_img "$one" "$WORK/raw.tar"
		z_fsck_erofs "$one" "$WORK/ref.raw"
	done
	# without --inline-data, --ztailpacking leaves raw files block-aligned
	z_mkfs "$one" "$WORK/raw.tar" -z "$alg" --ztailpacking || continue
	lay=$(layout_of "$one" /r3000)
	check "$alg --ztailpacking alone: raw file in a block ($lay)" \
		test "$lay" = "flat_plain (0)"
done

finish
