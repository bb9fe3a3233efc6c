#!/bin/bash
# containerd's tar-index layers through the drop-in mkfs.erofs (mkfs.img
# run under that name): the differ's GenerateTarIndexAndAppendTar tees the
# tar to a temporary file while "mkfs.erofs --tar=i --aufs --quiet FILE"
# reads it on standard input, then appends the tar to FILE itself. The
# result must mount as containerd mounts layers (the file itself first, a
# loop device as the fallback) equal to the extraction, end with the tar
# (diffID), pass fsck.img, and two such layers stacked with overlayfs must
# hide what the upper one deletes. Skipped when mkfs.img has no drop-in
# mode (the mkfs.erofs command line).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_tools tar sha256sum

bin=$top_builddir/mkfs/.libs/mkfs.img
if [ -x "$bin" ]; then
	export LD_LIBRARY_PATH=$top_builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
	bin=$top_builddir/mkfs/mkfs.img
fi
# libtool's wrapper would run the program under another name: link the binary
mkdir -p "$WORK/bin"
ln -sf "$bin" "$WORK/bin/mkfs.erofs"
dropin() { PATH=$WORK/bin:$PATH mkfs.erofs "$@"; }
dropin --help 2>&1 | grep -q -- '--tar=' ||
	skip "mkfs.img has no mkfs.erofs command line (drop-in mode)"

# containerd 2.x internal/erofsutils, GenerateTarIndexAndAppendTar:
#	teeReader := io.TeeReader(r, tarFile)
#	args := append([]string{"--tar=i", "--aufs", "--quiet"}, mkfsExtraOpts...)
#	args = append(args, layerPath)
#	cmd := exec.CommandContext(ctx, "mkfs.erofs", args...)
#	cmd.Stdin = teeReader
#	...
#	f, err := os.OpenFile(layerPath, os.O_APPEND|os.O_WRONLY, 0600)
#	... io.Copy(f, tarFile)
# differ_index LAYER OUT [EXTRA OPTIONS...]
differ_index() {
	local tar=$1 out=$2
	shift 2
	rm -f "$out" "$WORK/tee.tar"
	tee "$WORK/tee.tar" <"$tar" |
		dropin --tar=i --aufs --quiet "$@" "$out" || return 1
	cat "$WORK/tee.tar" >>"$out"
}

# mount_layer IMG DIR: as containerd's mount handler: the file, else loop.
mount_layer() {
	mkdir -p "$2"
	if "$FMOUNT" "$1" "$2" 2>/dev/null; then
		MOUNTED_HOW=file
	elif mount -t erofs -o ro,loop "$1" "$2"; then
		MOUNTED_HOW=loop
	else
		return 1
	fi
	track_mount "$2"
}

tail_is_tar() {
	local size
	size=$(stat -c %s "$2")
	[ "$(tail -c "$size" "$1" | sha256sum)" = "$(sha256sum <"$2")" ]
}

pymk mktar.py basic "$WORK/lower.tar" || die "mktar basic"
pymk mktar.py whiteouts "$WORK/upper.tar" || die "mktar whiteouts"
# the containerd docs add "-T0 --mkfs-time" for reproducible layers
for opts in "" "-T0 --mkfs-time"; do
	for l in lower upper; do
		img=$WORK/$l.erofs
		# shellcheck disable=SC2086
		if ! differ_index "$WORK/$l.tar" "$img" $opts; then
			fail "mkfs.erofs --tar=i --aufs --quiet $opts ($l)"
			continue
		fi
		ok "mkfs.erofs --tar=i --aufs --quiet $opts ($l), tar appended"
		check "$l: tail is the tar (diffID)" tail_is_tar "$img" "$WORK/$l.tar"
		check "fsck.img $l" "$FSCK_IMG" -q "$img"
		ref=$(ref_dir "$WORK/$l.tar")
		[ -d "$ref" ] || extract "$WORK/$l.tar" "$ref" || die "bsdtar $l"
		# shellcheck disable=SC2046
		compare_mounts "$img" "$ref" "file loop" \
			$(treecmp_opts_for "$WORK/$l.tar")
	done
done

# Stacked as the snapshotter stacks layers: what the upper layer deletes
# (its whiteouts) is gone from the merged view, the rest of the lower is there.
if mount_layer "$WORK/lower.erofs" "$WORK/l" &&
	mount_layer "$WORK/upper.erofs" "$WORK/u"; then
	ok "layers mounted ($MOUNTED_HOW)"
	mkdir -p "$WORK/merged"
	if mount -t overlay overlay -o "ro,lowerdir=$WORK/u:$WORK/l" "$WORK/merged"; then
		track_mount "$WORK/merged"
		n_lower=$(find "$WORK/l" | wc -l)
		n_merged=$(find "$WORK/merged" | wc -l)
		check "merged view lists entries ($n_merged, lower alone $n_lower)" \
			test "$n_merged" -gt 1
		# every whiteout of the upper layer hides its name
		hidden=0
		while IFS= read -r w; do
			rel=${w#"$WORK/u/"}
			if [ -e "$WORK/merged/$rel" ] || [ -L "$WORK/merged/$rel" ]; then
				fail "whiteout $rel still visible in the merged view"
			else
				hidden=$((hidden + 1))
			fi
		done < <(find "$WORK/u" -type c)
		check "$hidden whiteouts hide their names" test "$hidden" -gt 0
		unmount "$WORK/merged" || fail "umount merged"
	else
		fail "overlay mount"
	fi
else
	fail "mounting the layers"
fi

finish
