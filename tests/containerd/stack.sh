#!/bin/bash
# SPDX-License-Identifier: MIT
# containerd's EROFS differ, converter and snapshotter, end to end. Each
# argv they give mkfs.erofs (quoted below from containerd 2.x) runs on the
# mkfs.erofs link to mkfs.img, the layer tar on standard input; the three
# layer images (tests/containerd/stack.py: whiteouts, an opaque directory,
# hard links, xattrs, paths deleted then recreated) are mounted as
# containerd's mount handler mounts them (the file itself, a loop device
# as the fallback), stacked with overlayfs as the EROFS snapshotter stacks
# them (lowerdir=upper-most:...:lowest), and the merged tree is compared
# with umoci's unpacking of the same layers from an OCI image layout, the
# reference extractor. The only differences allowed are overlayfs's own:
# a merged directory reports one link, and a lower file keeps the link
# count of its layer when some of its names are whited out above. When
# erofs-utils' mkfs.erofs is there, the same argv through it must give the
# same merged tree.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/containerd/common.sh"
setup
require_tools umoci setfattr
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	skip "the kernel has no overlayfs"
dropin_setup

"$PYTHON" "$top_srcdir/tests/containerd/stack.py" "$WORK" ||
	die "could not write the layers"
umoci unpack --image "$WORK/oci:stack" "$WORK/bundle" >"$WORK/umoci.log" 2>&1 ||
	{ cat "$WORK/umoci.log"; die "umoci unpack failed"; }
REF=$WORK/bundle/rootfs

# What overlayfs itself shows differently from an extraction.
ALLOWED="^'(\.|etc|srv|usr|usr/bin|var)': nlink: expected [0-9]+, actual 1\$"
ALLOWED="$ALLOWED|^'usr/bin/tool-link': nlink: expected 1, actual 3\$"

# stack NAME IMG...: mount the layer images (lowest first) and overlayfs
# over them at $WORK/NAME.merged; MOUNTS lists what to unmount.
stack() {
	local name=$1 i=0 lower='' img
	shift
	MOUNTS=()
	for img in "$@"; do
		i=$((i + 1))
		mount_layer "$img" "$WORK/$name.m$i" ||
			{ fail "$name: mount $(basename "$img")"; return 1; }
		MOUNTS=("$WORK/$name.m$i" "${MOUNTS[@]}")
		lower=$WORK/$name.m$i${lower:+:$lower}
	done
	log "$name: layers mounted ($MOUNTED_HOW-backed)"
	mkdir -p "$WORK/$name.merged"
	mount -t overlay overlay -o "ro,lowerdir=$lower" "$WORK/$name.merged" ||
		{ fail "$name: overlayfs over $lower"; return 1; }
	track_mount "$WORK/$name.merged"
	MOUNTS=("$WORK/$name.merged" "${MOUNTS[@]}")
}

unstack() {
	local d
	for d in "${MOUNTS[@]}"; do
		unmount "$d" || fail "umount $d"
	done
	MOUNTS=()
}

# compare_stack NAME IMG...: the merged view of IMG... against umoci's.
compare_stack() {
	local name=$1 out=$WORK/$1.treecmp
	shift
	stack "$name" "$@" || { unstack; return 1; }
	$TREECMP --skip-root "$REF" "$WORK/$name.merged" >"$out" 2>&1
	if grep -q "entries expected, \([0-9]*\) in .*, [0-9]* difference" "$out" &&
		! grep -v '^treecmp: ' "$out" | grep -qvE "$ALLOWED" &&
		awk '/^treecmp: / { exit !($2 == $5) }' "$out"; then
		ok "$name: merged tree = umoci unpack, but for overlayfs's" \
			"link counts ($(grep -c nlink "$out") entries)"
	else
		cat "$out"
		fail "$name: merged tree differs from umoci unpack"
	fi
	unstack
}

# check_images NAME IMG...: fsck.img, and fsck.erofs where it can
# (erofs_fsck, tests/lib.sh).
check_images() {
	local name=$1 img
	shift
	for img in "$@"; do
		check "$name: fsck.img $(basename "$img")" "$FSCK_IMG" -q "$img"
		erofs_fsck "$name: fsck.erofs $(basename "$img")" "$img"
	done
}

# same_as_erofs_utils NAME IMG... -- ARGV...: with erofs-utils' mkfs.erofs,
# the same argv must give the same merged tree.
same_as_erofs_utils() {
	local name=$1 i=0 img imgs=() ref args a
	shift
	[ -n "$EROFS_UTILS" ] || {
		not_run "$name: same merged tree as erofs-utils' mkfs.erofs: $EROFS_UTILS_WHY"
		return 0
	}
	while [ "$1" != -- ]; do imgs+=("$1"); shift; done
	shift
	for img in "${imgs[@]}"; do
		i=$((i + 1))
		args=()
		for a in "$@"; do args+=("${a/@LAYER@/$img.eu}"); done
		"$EROFS_UTILS/mkfs.erofs" "${args[@]}" <"$WORK/layer$i.tar" \
			>/dev/null || { fail "$name: erofs-utils' mkfs.erofs"; return 1; }
	done
	stack "$name.eu" "${imgs[@]/%/.eu}" || { unstack; return 1; }
	ref=$WORK/$name.eu.merged
	MOUNTS_EU=("${MOUNTS[@]}")
	if stack "$name.again" "${imgs[@]}"; then
		# shellcheck disable=SC2086 # TREECMP is the interpreter and script
		check "$name: same merged tree as erofs-utils' mkfs.erofs" \
			$TREECMP --skip-root "$ref" "$WORK/$name.again.merged"
	fi
	unstack
	MOUNTS=("${MOUNTS_EU[@]}")
	unstack
}

# tar_case NAME ARGV...: convert the three layers with ARGV (@LAYER@
# stands for the image), the tar on standard input, then check and stack.
tar_case() {
	local name=$1 i img imgs=() args a
	shift
	for i in 1 2 3; do
		img=$WORK/$name.$i.erofs
		args=()
		for a in "$@"; do args+=("${a/@LAYER@/$img}"); done
		dropin "${args[@]}" <"$WORK/layer$i.tar" >"$WORK/out" 2>&1 ||
			{ cat "$WORK/out"; fail "$name: mkfs.erofs ${args[*]}"; return 1; }
		imgs+=("$img")
	done
	ok "$name: mkfs.erofs $* (3 layers)"
	check_images "$name" "${imgs[@]}"
	compare_stack "$name" "${imgs[@]}"
	same_as_erofs_utils "$name" "${imgs[@]}" -- "$@"
}

# 1. The EROFS differ (plugins/diff/erofs, differ_linux.go) applies a
# layer with
#	err = erofsutils.ConvertTarErofs(ctx, rc, layerBlobPath, s.mkfsExtraOpts)
# which in internal/erofsutils runs
#	args := append([]string{"--tar=f", "--aufs", "--quiet", "-Enoinline_data"}, mkfsExtraOpts...)
#	args = append(args, layerPath)
#	cmd := exec.CommandContext(ctx, "mkfs.erofs", args...)
#	cmd.Stdin = r
tar_case differ --tar=f --aufs --quiet -Enoinline_data @LAYER@

# 2. The same with the mkfs_options docs/snapshotters/erofs.md configures
# ([plugins."io.containerd.differ.v1.erofs"] mkfs_options = ["--sort=none"])
# and the reproducible-build options it recommends adding.
tar_case differ-sorted --tar=f --aufs --quiet -Enoinline_data --sort=none \
	@LAYER@
tar_case differ-reproducible --tar=f --aufs --quiet -Enoinline_data \
	-T0 --mkfs-time --sort=none @LAYER@

# 3. The image converter (core/images/converter/erofs):
#	args := append([]string{"--tar=f", "--aufs", "--quiet"}, mkfsExtraOpts...)
#	args = append(args, layerPath)
# with, by default, extraopts = {"-U", "fead9a88-fd26-578a-a655-9cbddcb89e76"}
# and, for WithCompressors(c), {"-z", c} and {"-C", "65536"}.
tar_case converter --tar=f --aufs --quiet \
	-U fead9a88-fd26-578a-a655-9cbddcb89e76 @LAYER@
tar_case converter-lz4hc --tar=f --aufs --quiet \
	-U fead9a88-fd26-578a-a655-9cbddcb89e76 -z lz4hc -C 65536 @LAYER@

# 4. The snapshotter's commit turns an overlayfs upper directory into a
# layer (internal/erofsutils):
#	args := append([]string{"--quiet", "-Enoinline_data"}, mkfsExtraOpts...)
#	args = append(args, layerPath, srcDir)
# Layers 1 and 2 (from case 1) are the lower layers of a writable overlay
# in which layer 3's changes are made by hand; the upper directory then
# holds overlayfs's own whiteouts (char 0:0) and is converted as it is.
if stack commit "$WORK/differ.1.erofs" "$WORK/differ.2.erofs"; then
	lower=$WORK/commit.m2:$WORK/commit.m1
	unmount "$WORK/commit.merged" || fail "umount commit.merged"
	MOUNTS=("${MOUNTS[@]:1}")
	up=$WORK/commit.upper
	mkdir -p "$up" "$WORK/commit.work" "$WORK/commit.rw"
	if mount -t overlay overlay \
		-o "lowerdir=$lower,upperdir=$up,workdir=$WORK/commit.work" \
		"$WORK/commit.rw"; then
		track_mount "$WORK/commit.rw"
		(
			set -e
			cd "$WORK/commit.rw"
			printf 'was a directory\n' >gonedir
			chmod 640 gonedir
			rm srv/temp
			printf 'hard linked in layer 3\n' >srv/c
			chown 5:6 srv/c
			ln srv/c usr-c
			printf 'back again\n' >etc/gone
			setfattr -n trusted.layer -v three var
			touch -h -d @1700000000 gonedir srv/c etc/gone srv etc var
		) || fail "commit: layer 3's changes in the writable overlay"
		unmount "$WORK/commit.rw" || fail "umount commit.rw"
	else
		fail "commit: writable overlayfs"
	fi
	unstack
	if dropin --quiet -Enoinline_data "$WORK/commit.3.erofs" "$up"; then
		ok "commit: mkfs.erofs --quiet -Enoinline_data LAYER UPPERDIR"
		check_images commit "$WORK/commit.3.erofs"
		compare_stack commit "$WORK/differ.1.erofs" \
			"$WORK/differ.2.erofs" "$WORK/commit.3.erofs"
		if [ -z "$EROFS_UTILS" ]; then
			not_run "commit through erofs-utils' mkfs.erofs: $EROFS_UTILS_WHY"
		elif "$EROFS_UTILS/mkfs.erofs" --quiet -Enoinline_data \
			"$WORK/commit.3.eu" "$up" >/dev/null; then
			compare_stack commit-erofs-utils "$WORK/differ.1.erofs" \
				"$WORK/differ.2.erofs" "$WORK/commit.3.eu"
		else
			fail "commit: erofs-utils' mkfs.erofs of the upper directory"
		fi
	else
		fail "commit: mkfs.erofs of the upper directory"
	fi
fi

finish
