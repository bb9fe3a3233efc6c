#!/bin/bash
# SPDX-License-Identifier: MIT
# imgfs_flatten_tars() and imgfs_flatten() on three OCI layers
# (tests/stack/layers.py: whiteouts, an opaque directory, a directory
# replaced by a file and back, a file replaced by a directory, xattrs, hard
# links, hard links whose target a layer above deletes or replaces): the
# flattened image, mounted by the kernel (loop and file-backed), holds
# exactly the tree "umoci unpack" extracts from the same layers, with
# several sets of options; fsck.img and erofs-utils' fsck.erofs accept it;
# it equals the overlayfs stack of the layers converted one by one; the
# opener form opens each layer once, top first, closes each, and gives the
# same bytes as the tar form; two runs give the same bytes. Links named
# before their hidden target keep its data too.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/stack/common.sh"
setup
require_tools umoci tar setfacl getfacl setfattr getfattr
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	skip "the kernel has no overlayfs"
flatten_setup

"$PYTHON" "$top_srcdir/tests/stack/layers.py" "$WORK" ||
	die "could not write the layers"
umoci unpack --image "$WORK/oci:flat" "$WORK/bundle" >"$WORK/umoci.log" 2>&1 ||
	{ cat "$WORK/umoci.log"; die "umoci unpack failed"; }
REF=$WORK/bundle/rootfs
LAYERS=("$WORK/layer1.tar" "$WORK/layer2.tar" "$WORK/layer3.tar")

# flat_case NAME OPTIONS...: flatten the layers into $WORK/NAME.img, compare
# it mounted with umoci's tree, check it.
flat_case() {
	local name=$1 img=$WORK/$1.img
	shift
	if ! flatten "$name" "$@" "$img" "${LAYERS[@]}"; then
		cat "$WORK/$name.out"
		fail "$name: flatten $*"
		return 1
	fi
	ok "$name: flatten $* ($(stat -c %s "$img") bytes)"
	compare_mounts "$img" "$REF" "loop file" --skip-root
	check "$name: fsck.img" "$FSCK_IMG" -q "$img"
	erofs_fsck "$name: fsck.erofs" "$img"
}

flat_case plain
flat_case fixed -T 1700000000
flat_case opener --opener -T 1700000000
flat_case lz4hc -z lz4hc,9 -C 65536 -T 1700000000
flat_case lzma-1k -z lzma -b 1024 -T 1700000000
flat_case inline-512 --inline-data -b 512 -T 1700000000

# the opener: each layer opened once, the top one first, and closed
printf 'open %s\nclose %s\n' 2 2 1 1 0 0 >"$WORK/expected-calls"
grep -E '^(open|close) ' "$WORK/opener.out" >"$WORK/calls"
check "opener: layers opened top first, each once, each closed" \
	cmp -s "$WORK/expected-calls" "$WORK/calls"
check "opener and tar forms give the same bytes" \
	cmp "$WORK/fixed.img" "$WORK/opener.img"
flatten again -T 1700000000 "$WORK/again.img" "${LAYERS[@]}" ||
	fail "flatten again"
check "two runs give the same bytes" cmp "$WORK/fixed.img" "$WORK/again.img"

# the layers converted one by one and stacked with overlayfs
for i in 1 2 3; do
	mkfs_img -q -T 1700000000 "$WORK/layer$i.tar" "$WORK/layer$i.img" ||
		fail "mkfs.img layer$i.tar"
done
# "meta": layer 2's image has an implied directory there (0755, root,
# the build time), which overlayfs shows over layer 1's
same_as_overlay overlay "^'meta': (mode|uid|gid|mtime)" "$WORK/fixed.img" \
	"$WORK/layer1.img" \
	"$WORK/layer2.img" "$WORK/layer3.img"

# hard links named before their target, which the layer above deletes
mkdir -p "$WORK/fwd"
"$PYTHON" "$top_srcdir/tests/stack/layers.py" "$WORK/fwd" forward ||
	die "could not write the forward layers"
if flatten fwd "$WORK/fwd.img" "$WORK/fwd/layer1.tar" "$WORK/fwd/layer2.tar"; then
	ok "forward: flatten"
	check "forward: fsck.img" "$FSCK_IMG" -q "$WORK/fwd.img"
	if mount_loop "$WORK/fwd.img" "$WORK/fwd.mnt"; then
		m=$WORK/fwd.mnt/f
		check "forward: the target is gone" test ! -e "$m/target"
		check "forward: the first link has the target's data" \
			cmp -s "$m/link" <("$PYTHON" -c 'import sys; sys.stdout.write("named before it came\n" * 100)')
		check "forward: the links share one inode, two links" \
			test "$(stat -c '%i %h %a %u:%g' "$m/link")" = \
			"$(stat -c '%i 2 604 7:8' "$m/link2")"
		check "forward: a visible target's links share its inode" \
			test "$(stat -c '%i %h' "$m/vis-link")" = \
			"$(stat -c '%i 2' "$m/vis-target")"
		unmount "$WORK/fwd.mnt" || fail "umount fwd.mnt"
	else
		fail "forward: mount"
	fi
else
	cat "$WORK/fwd.out"
	fail "forward: flatten"
fi

# a deleted sparse target with an ACL and xattrs, kept by its link: its
# header and data go through the temporary tar and back
mkdir -p "$WORK/sp/src/s" "$WORK/sp/src/keep"
f=$WORK/sp/src/s/file
truncate -s 8M "$f" && printf 'middle' | dd of="$f" bs=1 seek=4194304 \
	conv=notrunc status=none && printf 'end' >>"$f" &&
	ln "$f" "$WORK/sp/src/keep/s" && chmod 640 "$f" &&
	setfacl -m u:1234:r "$f" && setfattr -n user.sparse -v yes "$f" ||
	die "could not make the sparse file"
tar --format=posix --sparse --acls --xattrs --numeric-owner \
	-C "$WORK/sp/src" -cf "$WORK/sp/layer1.tar" s keep ||
	die "GNU tar"
"$PYTHON" -c '
import sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    t.addfile(tarfile.TarInfo("s/.wh.file"))' "$WORK/sp/layer2.tar" ||
	die "could not write the whiteout layer"
if flatten sparse "$WORK/sparse.img" "$WORK/sp/layer1.tar" "$WORK/sp/layer2.tar" &&
	mount_loop "$WORK/sparse.img" "$WORK/sp.mnt"; then
	m=$WORK/sp.mnt
	check "sparse: the link keeps the deleted target's data" \
		cmp -s "$m/keep/s" "$f"
	check "sparse: and its ACL" test "$(getfacl -n "$m/keep/s" 2>/dev/null |
		grep -c '^user:1234:r--')" = 1
	check "sparse: and its xattr" test "$(getfattr --only-values \
		-n user.sparse "$m/keep/s" 2>/dev/null)" = yes
	check "sparse: and its holes (an image under 1 MiB)" \
		test "$(stat -c %s "$WORK/sparse.img")" -lt 1048576
	check "sparse: the target is gone" test ! -e "$m/s/file"
	unmount "$WORK/sp.mnt" || fail "umount sp.mnt"
	check "sparse: fsck.img" "$FSCK_IMG" -q "$WORK/sparse.img"
else
	cat "$WORK/sparse.out"
	fail "sparse: flatten and mount"
fi

finish
