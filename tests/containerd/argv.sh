#!/bin/bash
# SPDX-License-Identifier: MIT
# The mkfs.erofs command line (mkfs.img invoked as mkfs.erofs), option by
# option, as erofs-utils 1.9 means them: what containerd checks first
# ("mkfs.erofs --help" mentions --tar=), IMAGE SOURCE order and standard
# input, -T with and without --mkfs-time, SOURCE_DATE_EPOCH, -U clear, -L,
# ownership options, --aufs (whiteouts are kept verbatim without it), a
# directory SOURCE; options with no counterpart are refused by name and
# leave nothing behind. Durability: mkfs.erofs never syncs, nor does the
# drop-in mode; native mkfs.img syncs unless --no-fsync; all of them put
# the image in place by renaming it (strace is the judge), and a failed
# run leaves an existing image untouched.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/containerd/common.sh"
setup
dropin_setup

pymk mktar.py basic "$WORK/basic.tar" || die "mktar basic"
pymk mktar.py whiteouts "$WORK/wh.tar" || die "mktar whiteouts"

# --- what containerd looks for before enabling its EROFS differ
dropin --help >"$WORK/help" 2>&1
check "--help exits 0" test $? -eq 0
check "--help mentions --tar=" grep -q -- '--tar=' "$WORK/help"

# --- refused options: named in the message, no image left
refuse() {
	local what=$1 name
	shift
	rm -f "$WORK/no.img"
	if dropin "$@" "$WORK/no.img" <"$WORK/basic.tar" >"$WORK/err" 2>&1; then
		fail "mkfs.erofs $* accepted"
		return
	fi
	if grep -qF -- "$what" "$WORK/err" && [ ! -e "$WORK/no.img" ]; then
		ok "mkfs.erofs $*: refused ($(head -n 1 "$WORK/err"))"
	else
		cat "$WORK/err"
		fail "mkfs.erofs $*: message does not name '$what', or an image was left"
	fi
	for name in "$WORK"/.imgfs-*; do
		[ -e "$name" ] && fail "temporary file left: $name"
	done
}
refuse --exclude-path --tar=f --exclude-path=etc
refuse --chunksize --tar=f --chunksize=4096
refuse dedupe --tar=f -Ededupe
refuse nosbcrc --tar=f -Enoinline_data,nosbcrc
refuse fragments=65536 --tar=f -Efragments=65536
refuse headerball --tar=headerball
refuse -m --tar=f -m 4096
refuse --ungzip=copy.tar --tar=f --ungzip=copy.tar
refuse '-x -1' --tar=f -x -1
refuse lz4:lzma --tar=f -zlz4:lzma
refuse "'--bogus'" --tar=f --bogus
refuse "block size" --tar=f -b 8192
refuse "volume label" --tar=f -L 0123456789abcdef
rm -f "$WORK/no.img"
dropin --quiet "$WORK/no.img" "$WORK/basic.tar" 2>"$WORK/err"
check "a tar SOURCE without --tar is refused (mkfs.erofs would rebuild from it)" \
	grep -q 'basic.tar: not a directory' "$WORK/err"
check "... leaving nothing" test ! -e "$WORK/no.img"

# --- IMAGE SOURCE order; the tar on standard input, or '-'
ref=$WORK/ref.basic
extract "$WORK/basic.tar" "$ref" || die "bsdtar could not extract basic.tar"
# shellcheck disable=SC2207
topts=($(treecmp_opts_for "$WORK/basic.tar" --keep-whiteouts))
fixed=(-U clear -T 0 --mkfs-time)
for src in stdin - file; do
	img=$WORK/$src.img
	case $src in
	stdin) dropin --tar=f --quiet "${fixed[@]}" "$img" <"$WORK/basic.tar" ;;
	-) dropin --tar=f --quiet "${fixed[@]}" "$img" - <"$WORK/basic.tar" ;;
	file) dropin --tar=f --quiet "${fixed[@]}" "$img" "$WORK/basic.tar" </dev/null ;;
	esac
	check "mkfs.erofs --tar=f IMAGE ($src)" test $? -eq 0
	compare_mounts "$img" "$ref" "file" "${topts[@]}"
done
# shellcheck disable=SC2016 # expanded by sh -c
check "the three give the same bytes" \
	sh -c 'cmp "$1/stdin.img" "$1/-.img" && cmp "$1/stdin.img" "$1/file.img"' \
	sh "$WORK"

# --- times. The tar's mtimes are 1600000000 and around it (basic).
mtimes() { find "$1" -mindepth 1 -exec stat -c %Y {} + | sort -u; }
build_time() { "$DUMP_IMG" -s "$1" | sed -n 's/^Build time: *//p' | cut -d' ' -f1; }

dropin --tar=f --quiet -T 1234567890 "$WORK/t.img" <"$WORK/basic.tar"
mount_layer "$WORK/t.img" "$WORK/mnt.t" || die "mount t.img"
check "-T alone: every inode's mtime is the -T time" \
	test "$(mtimes "$WORK/mnt.t")" = 1234567890
check "-T alone: the root's too" \
	test "$(stat -c %Y "$WORK/mnt.t")" = 1234567890
unmount "$WORK/mnt.t"
check "-T alone: the build time" \
	test "$(build_time "$WORK/t.img")" = 2009-02-13T23:31:30Z

dropin --tar=f --quiet -T 1234567890 --mkfs-time "$WORK/tm.img" \
	<"$WORK/basic.tar"
compare_mounts "$WORK/tm.img" "$ref" "file" "${topts[@]}"
check "-T --mkfs-time: the build time only" \
	test "$(build_time "$WORK/tm.img")" = 2009-02-13T23:31:30Z

# SOURCE_DATE_EPOCH (read after the options: it wins over -T): the build
# time, and later mtimes are brought down to it
"$PYTHON" - "$WORK/epoch.tar" <<'EOF' || die "writing epoch.tar"
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for name, mtime in (("old", 1500000000), ("new", 1700000000)):
        ti = tarfile.TarInfo(name)
        ti.mtime = mtime
        t.addfile(ti, io.BytesIO(b""))
EOF
SOURCE_DATE_EPOCH=1600000000 dropin --tar=f --quiet -T 5 --mkfs-time \
	"$WORK/sde.img" <"$WORK/epoch.tar"
mount_layer "$WORK/sde.img" "$WORK/mnt.sde" || die "mount sde.img"
check "SOURCE_DATE_EPOCH: an earlier mtime stays" \
	test "$(stat -c %Y "$WORK/mnt.sde/old")" = 1500000000
check "SOURCE_DATE_EPOCH: a later mtime is clamped" \
	test "$(stat -c %Y "$WORK/mnt.sde/new")" = 1600000000
unmount "$WORK/mnt.sde"
check "SOURCE_DATE_EPOCH: the build time" \
	test "$(build_time "$WORK/sde.img")" = 2020-09-13T12:26:40Z
SOURCE_DATE_EPOCH=soon dropin --tar=f --quiet "$WORK/no.img" \
	<"$WORK/epoch.tar" 2>"$WORK/err"
check "an invalid SOURCE_DATE_EPOCH is an error" \
	grep -q "SOURCE_DATE_EPOCH 'soon' is not a number" "$WORK/err"

# --- -U, -L
dropin --tar=f --quiet -U clear -L layer-one "$WORK/u.img" <"$WORK/epoch.tar"
check "-U clear: a zero UUID" \
	grep -q '^UUID: *00000000-0000-0000-0000-000000000000$' \
	<("$DUMP_IMG" -s "$WORK/u.img")
check "-L: the label" grep -q '^Label: *layer-one$' <("$DUMP_IMG" -s "$WORK/u.img")
dropin --tar=f --quiet -U fead9a88-fd26-578a-a655-9cbddcb89e76 \
	"$WORK/u2.img" <"$WORK/epoch.tar"
check "-U UUID" grep -q '^UUID: *fead9a88-fd26-578a-a655-9cbddcb89e76$' \
	<("$DUMP_IMG" -s "$WORK/u2.img")

# --- ownership
dropin --tar=f --quiet --all-root --uid-offset=100 "$WORK/own.img" \
	<"$WORK/basic.tar"
mount_layer "$WORK/own.img" "$WORK/mnt.own" || die "mount own.img"
check "--all-root --uid-offset=100: uids 100, gids 0" \
	test "$(find "$WORK/mnt.own" -mindepth 1 -exec stat -c %u:%g {} + |
		sort -u)" = 100:0
unmount "$WORK/mnt.own"

# --- whiteouts: verbatim without --aufs, overlayfs ones with it
dropin --tar=f --quiet "$WORK/keep.img" <"$WORK/wh.tar"
mount_layer "$WORK/keep.img" "$WORK/mnt.keep" || die "mount keep.img"
check "without --aufs: .wh. entries stay regular files" \
	test -n "$(find "$WORK/mnt.keep" -name '.wh.*' -type f)"
unmount "$WORK/mnt.keep"
dropin --tar=f --aufs --quiet "$WORK/aufs.img" <"$WORK/wh.tar"
REF_TAR='' SRC_TAR='' VERIFY_MOUNTS=file verify_image "$WORK/aufs.img" \
	"$WORK/wh.tar"

# --- a directory SOURCE (containerd's snapshotter commit)
check "a directory SOURCE" dropin --quiet -Enoinline_data "$WORK/dir.img" "$ref"
compare_mounts "$WORK/dir.img" "$ref" "file"
mkdir -p "$WORK/adir"
dropin --tar=f --quiet "$WORK/no.img" "$WORK/adir" 2>"$WORK/err"
check "--tar with a directory SOURCE is an error" \
	grep -q 'is a directory; --tar takes a tar stream' "$WORK/err"

# --- the same argv through erofs-utils' mkfs.erofs: the same tree (but
# the root, which it makes 0777 when the tar has no entry for it)
if [ -n "$EROFS_UTILS" ]; then
	while read -r -a argv; do
		rm -f "$WORK/ours.img" "$WORK/theirs.img"
		dropin "${argv[@]}" "$WORK/ours.img" <"$WORK/basic.tar" ||
			{ fail "mkfs.erofs ${argv[*]}"; continue; }
		"$EROFS_UTILS/mkfs.erofs" "${argv[@]}" "$WORK/theirs.img" \
			<"$WORK/basic.tar" >/dev/null ||
			{ fail "erofs-utils: mkfs.erofs ${argv[*]}"; continue; }
		erofs_fsck "fsck.erofs accepts mkfs.erofs ${argv[*]}" \
			"$WORK/ours.img"
		mount_layer "$WORK/theirs.img" "$WORK/mnt.theirs" ||
			die "mount theirs.img"
		compare_mounts "$WORK/ours.img" "$WORK/mnt.theirs" file --skip-root
		unmount "$WORK/mnt.theirs"
	done <<'EOF'
--tar=f --aufs
--tar=f -T 1234 -b 512
--tar=f -x 0 -E ^inline_data
--tar=f -x 1000 -Enoinline_data,^ztailpacking
--tar=f -zlz4 -Eztailpacking
--tar=f -zlzma,level=6,dictsize=65536 -C 131072 -Efragments
--tar=f -z deflate,9 -C 16384 --workers=2
--tar=f -zzstd,level=3 -E ^fragments --all-time -T 99
--tar=f --force-uid=7 --force-gid=8 --uid-offset=0 -U random
--tar --sort=path --ungzip -d 0
EOF
else
	not_run "the same argv through erofs-utils' mkfs.erofs: $EROFS_UTILS_WHY"
fi

# --- durability and atomicity
if command -v strace >/dev/null; then
	trace() {
		strace -f -qq -e trace=fsync,fdatasync,syncfs,sync,renameat,renameat2,rename,linkat \
			-o "$WORK/trace" "$@" >/dev/null 2>&1
	}
	syncs() { grep -cE '(fsync|fdatasync|syncfs|sync)\(' "$WORK/trace"; }
	# shellcheck disable=SC2317 # called below
	placed() { grep -qE '(rename|renameat2?|linkat)\(.*= 0$' "$WORK/trace"; }
	bin=$(readlink "$DROPIN_DIR/mkfs.erofs")
	trace "$DROPIN_DIR/mkfs.erofs" --tar=f --quiet "$WORK/d.img" "$WORK/basic.tar"
	check "drop-in mode: no fsync (as mkfs.erofs)" test "$(syncs)" = 0
	check "drop-in mode: the image is renamed into place" placed
	trace "$bin" -q "$WORK/basic.tar" "$WORK/d.img"
	check "native mkfs.img: file and directory fsynced" test "$(syncs)" = 2
	trace "$bin" -q --no-fsync "$WORK/basic.tar" "$WORK/d.img"
	check "native mkfs.img --no-fsync: no fsync" test "$(syncs)" = 0
	check "native mkfs.img --no-fsync: still renamed into place" placed
	if [ -n "$EROFS_UTILS" ]; then
		trace "$EROFS_UTILS/mkfs.erofs" --tar=f --quiet "$WORK/eu.img" \
			"$WORK/basic.tar"
		check "erofs-utils' mkfs.erofs does not fsync either" \
			test "$(syncs)" = 0
	else
		not_run "erofs-utils' mkfs.erofs does not fsync either: $EROFS_UTILS_WHY"
	fi
else
	log "strace missing: durability checks skipped"
fi
"$MKFS" -q -T 0 -U 6f1c5b8e-0000-4000-8000-000000000001 "$WORK/basic.tar" \
	"$WORK/synced.img"
"$MKFS" -q -T 0 -U 6f1c5b8e-0000-4000-8000-000000000001 --no-fsync \
	"$WORK/basic.tar" "$WORK/unsynced.img"
check "--no-fsync changes no byte of the image" \
	cmp "$WORK/synced.img" "$WORK/unsynced.img"
cp "$WORK/stdin.img" "$WORK/keep-me.img"
head -c 3000 "$WORK/basic.tar" >"$WORK/cut.tar"
dropin --tar=f --quiet "$WORK/keep-me.img" <"$WORK/cut.tar" 2>"$WORK/err"
check "a truncated tar is an error" test $? -ne 0 -a -s "$WORK/err"
check "... which leaves the existing image untouched" \
	cmp -s "$WORK/stdin.img" "$WORK/keep-me.img"

finish
