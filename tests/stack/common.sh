# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Shared by tests/stack/*.sh (sourced after tests/lib.sh).

# shellcheck disable=SC2154 # top_builddir, WORK: tests/lib.sh
FLATTEN=$top_builddir/tests/stack/flatten_tool

flatten_setup() {
	[ -x "$FLATTEN" ] || die "helper not built: $FLATTEN (run make check)"
}

# flatten NAME ARGS...: run the flatten helper, its output in $WORK/NAME.out.
flatten() {
	local name=$1
	shift
	"$FLATTEN" "$@" >"$WORK/$name.out" 2>&1
}

# stack_layers NAME IMG...: mount the layer images (lowest first) and
# overlayfs over them at $WORK/NAME.merged (STACK_MOUNTS: what to unmount).
stack_layers() {
	local name=$1 i=0 lower='' img
	shift
	STACK_MOUNTS=()
	for img in "$@"; do
		i=$((i + 1))
		mount_loop "$img" "$WORK/$name.m$i" ||
			{ fail "$name: mount $(basename "$img")"; return 1; }
		STACK_MOUNTS=("$WORK/$name.m$i" "${STACK_MOUNTS[@]}")
		lower=$WORK/$name.m$i${lower:+:$lower}
	done
	mkdir -p "$WORK/$name.merged"
	mount -t overlay overlay -o "ro,lowerdir=$lower" "$WORK/$name.merged" ||
		{ fail "$name: overlayfs over $lower"; return 1; }
	track_mount "$WORK/$name.merged"
	STACK_MOUNTS=("$WORK/$name.merged" "${STACK_MOUNTS[@]}")
}

unstack_layers() {
	local d
	for d in "${STACK_MOUNTS[@]}"; do
		unmount "$d" || fail "umount $d"
	done
	STACK_MOUNTS=()
}

# same_as_overlay NAME ALLOWED FLAT_IMG LAYER_IMG...: the flattened image
# mounted and the overlayfs stack of the layer images give the same tree,
# but for what overlayfs itself shows differently: link counts (a merged
# directory reports one link; a lower file keeps its layer's count when
# some of its names are deleted above), and the differences ALLOWED (an
# extended regular expression over treecmp's lines; "" for none).
same_as_overlay() {
	local name=$1 allowed=${2:-^$} flat=$3 out=$WORK/$1.overlay.treecmp
	shift 3
	stack_layers "$name" "$@" || { unstack_layers; return 1; }
	if mount_loop "$flat" "$WORK/$name.flat"; then
		$TREECMP --skip-root "$WORK/$name.flat" "$WORK/$name.merged" \
			>"$out" 2>&1
		if grep -q "entries expected, [0-9]* in .*, [0-9]* difference" "$out" &&
			awk '/^treecmp: / { exit !($2 == $5) }' "$out" &&
			! grep -v '^treecmp: ' "$out" | grep -v ": nlink: expected" |
			grep -qvE "$allowed"; then
			ok "$name: flattened tree = overlayfs stack of the layer images, but for overlayfs's link counts ($(grep -c nlink "$out") entries) and $(grep -cE "$allowed" "$out") allowed difference(s)"
		else
			cat "$out"
			fail "$name: flattened tree differs from the overlayfs stack"
		fi
		unmount "$WORK/$name.flat" || fail "umount $name.flat"
	else
		fail "$name: mount $(basename "$flat")"
	fi
	unstack_layers
}
