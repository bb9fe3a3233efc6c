# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Shared by tests/containerd/*.sh (sourced after tests/lib.sh).
#
# containerd runs "mkfs.erofs" by name: these tests run mkfs.img through a
# link of that name, as the link "make install" puts in
# $(libexecdir)/imgfs/ does. libtool's wrapper script would run the
# program under another name, so the link points at the binary itself.

# shellcheck disable=SC2154 # top_builddir, WORK: tests/lib.sh
# dropin_setup: $DROPIN_DIR/mkfs.erofs -> mkfs.img; $EROFS_UTILS: the
# directory of erofs-utils' own tools when they are there (or empty).
dropin_setup() {
	local bin=$top_builddir/mkfs/.libs/mkfs.img
	if [ -x "$bin" ]; then
		export LD_LIBRARY_PATH=$top_builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	else
		bin=$top_builddir/mkfs/mkfs.img
	fi
	[ -x "$bin" ] || die "mkfs.img not built"
	DROPIN_DIR=$WORK/dropin-bin
	mkdir -p "$DROPIN_DIR"
	ln -sf "$bin" "$DROPIN_DIR/mkfs.erofs"
	EROFS_UTILS=${EROFS_UTILS-/opt/erofs-utils-1.9.3/bin}
	EROFS_UTILS_WHY="erofs-utils' mkfs.erofs 1.9 is not there ($EROFS_UTILS: .ci/run builds it)"
	[ -x "$EROFS_UTILS/mkfs.erofs" ] || EROFS_UTILS=
}

# dropin ARGS...: mkfs.erofs as containerd finds it on its PATH.
dropin() {
	PATH=$DROPIN_DIR:$PATH mkfs.erofs "$@"
}

# mount_layer IMG DIR: as containerd's mount handler does: the image file
# itself first (mount(2) with the file as source, Linux 6.12+), a loop
# device when the kernel refuses that. Sets MOUNTED_HOW (for the caller).
# shellcheck disable=SC2034
mount_layer() {
	mkdir -p "$2"
	if "$FMOUNT" "$1" "$2" 2>/dev/null; then
		MOUNTED_HOW="file"
	elif mount -t erofs -o ro,loop "$1" "$2"; then
		MOUNTED_HOW="loop"
	else
		return 1
	fi
	track_mount "$2"
}
