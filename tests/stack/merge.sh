#!/bin/bash
# SPDX-License-Identifier: MIT
# imgfs_merge_images(): the three layers of tests/stack/layers.py converted
# one by one (mkfs.img defaults: uncompressed, no inline data), merged into
# a metadata-only image whose files point into the layer images (extra
# devices of its device table). Mounted with one device= option per layer,
# through loop devices and file-backed, it holds exactly the tree of the
# overlayfs stack of the same layer images (but for overlayfs's link
# counts), and the tree "umoci unpack" extracts and the flattened image
# holds, but for the one directory a layer writes into without naming it,
# which the layer images, and so the merged image, take from that layer's
# implied directory, as overlayfs does (docs/stack.md); fsck.img
# and erofs-utils' fsck.erofs (given the devices) accept it; two runs give
# the same bytes; compressed or inline layer images are refused naming the
# layer image and the file.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/stack/common.sh"
setup
require_tools umoci losetup
flatten_setup

LOOPS=()
detach_loops() {
	local l
	for l in "${LOOPS[@]}"; do
		losetup -d "$l" 2>/dev/null
	done
	LOOPS=()
}
# detaching a loop device still mounted frees it at the unmount
trap 'rc=$?; detach_loops; (exit $rc); cleanup' EXIT

"$PYTHON" "$top_srcdir/tests/stack/layers.py" "$WORK" ||
	die "could not write the layers"
umoci unpack --image "$WORK/oci:flat" "$WORK/bundle" >"$WORK/umoci.log" 2>&1 ||
	{ cat "$WORK/umoci.log"; die "umoci unpack failed"; }
REF=$WORK/bundle/rootfs
# layer 2's implied "meta" (tests/stack/layers.py)
IMPLIED="^'meta': (mode|uid|gid|mtime): "

# same_but_implied WHAT EXPECTED ACTUAL: the trees are the same but for
# the implied directory's metadata
same_but_implied() {
	local out=$WORK/treecmp.out
	$TREECMP --skip-root "$2" "$3" >"$out" 2>&1
	if awk '/^treecmp: / { exit !($2 == $5) }' "$out" &&
		grep -qE "$IMPLIED" "$out" &&
		! grep -v '^treecmp: ' "$out" | grep -qvE "$IMPLIED"; then
		ok "$1 (but for the implied directory's metadata)"
	else
		cat "$out"
		fail "$1"
	fi
}
IMGS=()
for i in 1 2 3; do
	mkfs_img -q -T 1700000000 "$WORK/layer$i.tar" "$WORK/layer$i.img" ||
		die "mkfs.img layer$i.tar"
	IMGS+=("$WORK/layer$i.img")
done

if flatten merge --merge -T 1700000000 "$WORK/merged.img" "${IMGS[@]}"; then
	ok "merge 3 layer images: $(stat -c %s "$WORK/merged.img") bytes"
else
	cat "$WORK/merge.out"
	fail "merge 3 layer images"
fi
flatten again --merge -T 1700000000 "$WORK/again.img" "${IMGS[@]}" ||
	fail "merge again"
check "two runs give the same bytes" cmp "$WORK/merged.img" "$WORK/again.img"
check "no file data in the merged image (2 blocks)" \
	test "$(stat -c %s "$WORK/merged.img")" -le 8192

# through loop devices, as on kernels before file-backed mounts (5.16+)
devs=
for img in "${IMGS[@]}"; do
	l=$(losetup -f --show -r "$img") || die "losetup $img"
	LOOPS+=("$l")
	devs=$devs${devs:+,}device=$l
done
mkdir -p "$WORK/mnt.loop"
if mount -t erofs -o "ro,$devs" "$WORK/merged.img" "$WORK/mnt.loop"; then
	track_mount "$WORK/mnt.loop"
	same_but_implied "mount -o $devs (loop devices): tree = umoci unpack" \
		"$REF" "$WORK/mnt.loop"
	unmount "$WORK/mnt.loop" || fail "umount mnt.loop"
else
	fail "mount -t erofs -o ro,$devs merged.img"
fi
detach_loops

# file-backed, the layer images given as files (6.12+)
devs=
for img in "${IMGS[@]}"; do devs=$devs${devs:+,}device=$img; done
mkdir -p "$WORK/mnt.file"
if "$FMOUNT" -o "$devs" "$WORK/merged.img" "$WORK/mnt.file"; then
	track_mount "$WORK/mnt.file"
	same_but_implied "file-backed, -o device=FILE...: tree = umoci unpack" \
		"$REF" "$WORK/mnt.file"
	if flatten flat -T 1700000000 "$WORK/flat.img" "$WORK"/layer[123].tar &&
		mount_loop "$WORK/flat.img" "$WORK/mnt.flat"; then
		same_but_implied "merged tree = flattened tree" \
			"$WORK/mnt.flat" "$WORK/mnt.file"
		unmount "$WORK/mnt.flat" || fail "umount mnt.flat"
	else
		fail "flatten and mount the same layers"
	fi
	# the overlayfs stack of the layer images, exactly
	if stack_layers ovl "${IMGS[@]}"; then
		out=$WORK/ovl.treecmp
		$TREECMP --skip-root "$WORK/mnt.file" "$WORK/ovl.merged" \
			>"$out" 2>&1
		if awk '/^treecmp: / { exit !($2 == $5) }' "$out" &&
			! grep -v '^treecmp: ' "$out" | grep -qv ": nlink: expected"; then
			ok "merged tree = overlayfs stack of the layer images, but for overlayfs's link counts ($(grep -c nlink "$out") entries)"
		else
			cat "$out"
			fail "merged tree differs from the overlayfs stack"
		fi
	fi
	unstack_layers
	unmount "$WORK/mnt.file" || fail "umount mnt.file"
else
	fail "file-backed mount with -o $devs"
fi

check "fsck.img accepts the merged image" "$FSCK_IMG" -q "$WORK/merged.img"
erofs_fsck "fsck.erofs --device=... accepts it" "$WORK/merged.img" \
	"${IMGS[@]/#/--device=}"

# layer images whose data cannot be pointed at
mkfs_img -q -z lz4hc "$WORK/layer1.tar" "$WORK/z1.img" || die "mkfs -z"
mkfs_img -q --inline-data "$WORK/layer2.tar" "$WORK/i2.img" || die "mkfs inline"
if flatten refz --merge "$WORK/bad.img" "$WORK/z1.img" "$WORK/layer2.img"; then
	fail "a compressed layer image was merged"
else
	check "compressed layer image refused, naming it and a file" \
		grep -qE "z1\.img: .*: data compressed" "$WORK/refz.out"
fi
if flatten refi --merge "$WORK/bad.img" "$WORK/layer1.img" "$WORK/i2.img"; then
	fail "an inline layer image was merged"
else
	check "inline layer image refused, naming it and a file" \
		grep -qE "i2\.img: .*: data inline with its inode" "$WORK/refi.out"
fi
if flatten refn --merge "$WORK/bad.img" "$WORK/layer1.img" "$WORK/layer2.tar"; then
	fail "a tar was merged as a layer image"
else
	check "a layer that is no image refused, naming it" \
		grep -qE "layer2\.tar: not an EROFS image" "$WORK/refn.out"
fi
check "nothing left behind by the refusals" test ! -e "$WORK/bad.img"

finish
