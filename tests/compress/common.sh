# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Shell functions shared by the compression tests (sourced, not run), on top
# of tests/lib.sh.

. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

ZDIR=$top_srcdir/tests/compress
ZTIME=1600000000

# z_algorithms: the algorithms this build of mkfs.img offers, one a line.
# One that is not built in is reported and left out; any other refusal is
# an error.
z_algorithms() {
	local a empty=$WORK/.empty.tar
	[ -f "$empty" ] || bsdtar -cf "$empty" --format=pax -T /dev/null ||
		die "cannot make an empty tar"
	for a in lz4 lz4hc lzma deflate zstd; do
		if mkfs_img -q -z "$a" "$empty" "$WORK/.probe.img" \
			2>"$WORK/.probe.err"; then
			echo "$a"
		elif grep -q 'not built in' "$WORK/.probe.err"; then
			log "$a not built in: skipped" >&2
		else
			cat "$WORK/.probe.err" >&2
			die "mkfs.img refuses -z $a"
		fi
	done
	rm -f "$WORK/.probe.img" "$WORK/.probe.err"
}

# z_mkfs IMG TAR OPTIONS...: build IMG with a fixed build time.
z_mkfs() {
	local img=$1 tar=$2
	shift 2
	rm -f "$img"
	if ! mkfs_img -q -T "$ZTIME" "$@" "$tar" "$img"; then
		fail "mkfs $* $(basename "$tar")"
		return 1
	fi
	ok "mkfs $* ($(stat -c %s "$img") bytes)"
}

# z_fsck_img IMG TAR: our checker reads every file back and must find
# exactly TAR in the image. Skipped only while the reader cannot decompress.
z_fsck_img() {
	local out=$WORK/fsck.out
	[ -x "$FSCK_IMG" ] || { log "fsck.img not built: skipped"; return 0; }
	if "$FSCK_IMG" -q --compare="$2" "$1" >"$out" 2>&1; then
		ok "fsck.img --compare $(basename "$1")"
	elif grep -qiE 'not supported|EOPNOTSUPP' "$out"; then
		log "fsck.img cannot read compressed data yet: skipped"
	else
		head -n 20 "$out"
		fail "fsck.img --compare $(basename "$1")"
	fi
}

# z_listing DIR: type, mode, size and SHA-256 of every entry under DIR.
z_listing() {
	(
		cd "$1" || exit 1
		find . -mindepth 1 ! -type d -printf '%y %m %s %p\n' | sort
		find . -mindepth 1 -type d -printf '%y %m %p\n' | sort
		find . -type f -print0 | sort -z | xargs -0 -r sha256sum
	)
}

# z_fsck_erofs IMG REF: erofs-utils' fsck.erofs (erofs_fsck in tests/lib.sh)
# checks IMG and extracts it; the extraction must match the reference tree
# (content, sizes, modes). Not run where that fsck.erofs cannot read IMG.
z_fsck_erofs() {
	local img=$1 ref=$2 dir=$WORK/fsck-extract
	if ! erofs_fsck_can "$img"; then
		not_run "fsck.erofs $(basename "$img"): $EROFS_WHY"
		return 0
	fi
	check "fsck.erofs $(basename "$img")" "$FSCK_EROFS" "$img"
	rm -rf "$dir"
	if ! "$FSCK_EROFS" --extract="$dir" "$img" >"$WORK/fsck.out" 2>&1; then
		head -n 20 "$WORK/fsck.out"
		fail "fsck.erofs --extract $(basename "$img")"
		return 1
	fi
	z_listing "$ref" >"$WORK/listing.ref"
	z_listing "$dir" >"$WORK/listing.got"
	if cmp -s "$WORK/listing.ref" "$WORK/listing.got"; then
		ok "fsck.erofs extraction identical: $(basename "$img")"
	else
		diff "$WORK/listing.ref" "$WORK/listing.got" | head -n 20
		fail "fsck.erofs extraction differs: $(basename "$img")"
	fi
	rm -rf "$dir"
}

# z_sb_field IMG OFFSET SIZE: an unsigned little-endian superblock field.
z_sb_field() {
	od -A n -t "u$3" -j $((1024 + $2)) -N "$3" --endian=little "$1" |
		tr -d ' '
}

# z_randread IMG REF: mount IMG file-backed (a new mount: nothing of its
# files is cached yet), then read random slices of every file in random
# order and compare them with REF.
z_randread() {
	local mnt=$WORK/mnt.rand out
	mount_file "$1" "$mnt" || { fail "mount $1"; return 1; }
	if out=$("$PYTHON" "$ZDIR/randread.py" "$2" "$mnt" 2>&1); then
		ok "$(basename "$1"): $out"
	else
		echo "$out"
		fail "random reads differ: $(basename "$1")"
	fi
	unmount "$mnt"
}
