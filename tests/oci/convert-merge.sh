#!/bin/bash
# SPDX-License-Identifier: MIT
# mkfs.img --oci --merge: the one image chosen in a converted layout
# merged into a metadata-only image (imgfs_merge_images, lib/stack) whose
# devices are the EROFS layer blobs, each checked against its digest. It
# mounts with one device= option per layer, in the order mkfs.img prints,
# to the tree umoci unpack gives for the source image (but for the
# directories a umoci layer only implies, as for the overlayfs stack:
# docs/oci.md); a blob that does not match its digest is refused. The
# mount commands mkfs.img prints (a loop device per layer blob, then
# mount(8) with device=/dev/loopN: util-linux 2.38 loops the image itself
# and the kernel refuses regular files as device=) are run as printed;
# the tree mounted is also the one --flatten gives for the source image.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
setup
require_tools umoci setfattr losetup

LOOPS=()
detach_loops() {
	local l
	for l in "${LOOPS[@]}"; do
		losetup -d "$l" 2>/dev/null
	done
	LOOPS=()
}
trap 'rc=$?; detach_loops; (exit $rc); cleanup' EXIT

umoci_layout "$WORK/src" >"$WORK/umoci.log" 2>&1 ||
	{ cat "$WORK/umoci.log"; die "umoci could not build the layout"; }
umoci unpack --image "$WORK/src:t" "$WORK/ref" >/dev/null 2>&1 ||
	die "umoci unpack failed"
check "convert" mkfs_img --oci -q "$WORK/src" "$WORK/dst"
mkfs_img --oci --merge "$WORK/dst" "$WORK/merged.img" 2>"$WORK/merge.out" ||
	{ cat "$WORK/merge.out"; die "--merge failed"; }
ok "--merge: $(tail -n 1 "$WORK/merge.out" | cut -c1-60)..."
# the commands printed: "  dN=$(losetup ... 'BLOB')" lines, then mount
sed -n 's/^  //p' "$WORK/merge.out" >"$WORK/mount.sh"
mapfile -t DEVS < <(sed -n "s/^d[0-9]*=\$(losetup -f --show -r '\(.*\)')\$/\1/p" "$WORK/mount.sh")
mapfile -t BLOBS < <(layer_blobs "$WORK/dst" t)
[ "${DEVS[*]}" = "${BLOBS[*]}" ] &&
	ok "the loop devices printed are of the layer blobs, bottom first" ||
	{ cat "$WORK/merge.out"; fail "devices printed: ${DEVS[*]}"; }

allowed=$OVL_ALLOWED
for d in $(implied_dirs "$WORK/src" t); do
	allowed="$allowed|^'$d': (mtime|mode|owner|uid|gid|xattr)"
done
mkdir -p "$WORK/mnt"
# run the printed commands, DIR being the mount point; the loop devices
# they attach are detached by the trap, whatever happens
run_printed() {
	local line i=0 mounted=1
	while IFS= read -r line; do
		case $line in
		d[0-9]*=*)
			eval "$line" || return 1
			i=$((i + 1))
			eval "LOOPS+=(\"\$d$i\")"
			;;
		mount\ *)
			eval "${line% DIR} \"\$WORK/mnt\"" || return 1
			mounted=0
			;;
		*) return 1 ;;
		esac
	done <"$WORK/mount.sh"
	return $mounted
}
if run_printed; then
	track_mount "$WORK/mnt"
	$TREECMP --skip-root "$WORK/ref/rootfs" "$WORK/mnt" >"$WORK/cmp" 2>&1
	if ! grep -v '^treecmp: ' "$WORK/cmp" | grep -qvE "$allowed" &&
		awk '/^treecmp: / { exit !($2 == $5) }' "$WORK/cmp"; then
		ok "the printed commands mount it: tree = umoci unpack ($(tail -n 1 "$WORK/cmp"))"
	else
		cat "$WORK/cmp"
		fail "merged tree differs from umoci unpack"
	fi
	# and the image --flatten makes of the source image
	if mkfs_img --oci -q --flatten "$WORK/src" "$WORK/flat.img" &&
		mount_loop "$WORK/flat.img" "$WORK/flat"; then
		$TREECMP --skip-root "$WORK/flat" "$WORK/mnt" >"$WORK/cmpf" 2>&1
		if ! grep -v '^treecmp: ' "$WORK/cmpf" | grep -qvE "$allowed" &&
			awk '/^treecmp: / { exit !($2 == $5) }' "$WORK/cmpf"; then
			ok "the mounted merge = --flatten of the source ($(tail -n 1 "$WORK/cmpf"))"
		else
			cat "$WORK/cmpf"
			fail "merged tree differs from --flatten"
		fi
		unmount "$WORK/flat" || fail "umount flat"
	else
		fail "--flatten of the source, mounted"
	fi
	unmount "$WORK/mnt" || fail "umount"
else
	cat "$WORK/mount.sh"
	fail "the printed mount commands failed"
fi
detach_loops

# a layer blob altered after conversion is refused, naming it
cp -a "$WORK/dst" "$WORK/bad"
B=$(layer_blobs "$WORK/bad" t | sed -n 2p)
printf 'X' | dd of="$B" bs=1 seek=2000 conv=notrunc 2>/dev/null
mkfs_img --oci -q --merge "$WORK/bad" "$WORK/bad.img" 2>"$WORK/err" &&
	fail "an altered layer blob was merged"
grep -q "blob sha256:$(basename "$B")" "$WORK/err" && [ ! -e "$WORK/bad.img" ] &&
	ok "an altered layer blob: $(cat "$WORK/err")" ||
	{ cat "$WORK/err"; fail "altered layer blob"; }
# a source (tar) layout is not a converted one
mkfs_img --oci -q --merge "$WORK/src" "$WORK/tar.img" 2>"$WORK/err" &&
	fail "a tar layout was merged"
grep -q "not an uncompressed EROFS layer" "$WORK/err" &&
	ok "a tar layout is refused: $(cut -c1-100 "$WORK/err")..." ||
	{ cat "$WORK/err"; fail "tar layout"; }

finish
