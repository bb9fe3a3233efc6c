# SPDX-License-Identifier: MIT
# Shared shell functions for the end-to-end tests (sourced, not run).
#
# Environment:
#   top_srcdir, top_builddir  set by "make check"; default: guessed from $0
#   IMGFS_MKFS                command used instead of $top_builddir/mkfs/mkfs.img
#   IMGFS_KEEP                if set, keep the work directory for inspection
#
# Conventions: exit 77 = skipped (only when not root or no EROFS), 1 = failed.
# Checks do not stop at the first failure: "fail" records it and the test
# ends with "finish", which reports and sets the exit status.

if [ -z "${top_srcdir:-}" ]; then
	top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
fi
top_builddir=${top_builddir:-$top_srcdir}
export LC_ALL=C.UTF-8

# The system interpreter: a version manager's shim would cost a second a call.
if [ -z "${PYTHON:-}" ]; then
	PYTHON=python3
	[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
fi
MKFS=${IMGFS_MKFS:-$top_builddir/mkfs/mkfs.img}
FSCK_IMG=$top_builddir/fsck/fsck.img
DUMP_IMG=$top_builddir/dump/dump.img
FMOUNT=$top_builddir/tests/helpers/fmount
TREECMP="$PYTHON $top_srcdir/tests/helpers/treecmp.py"
HELPERS=$top_srcdir/tests/helpers

T_NAME=$(basename "$0" .sh)
T_FAILS=0
T_CHECKS=0
T_NOTRUN=0
T_MOUNTS=
WORK=

log() { printf '%s: %s\n' "$T_NAME" "$*"; }

skip() {
	log "SKIP: $*"
	exit 77
}

# Record a failed check and carry on.
fail() {
	T_FAILS=$((T_FAILS + 1))
	log "FAIL: $*"
}

ok() {
	T_CHECKS=$((T_CHECKS + 1))
	log "ok: $*"
}

# check DESCRIPTION COMMAND...: run COMMAND, record ok or fail.
check() {
	local what=$1
	shift
	if "$@"; then
		ok "$what"
	else
		fail "$what (exit $?)"
	fi
}

# A broken environment (missing tool, failing setup) is a failure, not a skip.
# A check that cannot be done here: logged with the reason, counted
# neither as passed nor as failed.
not_run() {
	T_NOTRUN=$((T_NOTRUN + 1))
	log "not run: $*"
}

die() {
	log "ERROR: $*"
	exit 1
}

finish() {
	if [ "$T_FAILS" -ne 0 ]; then
		log "$T_FAILS check(s) failed, $T_CHECKS passed"
		exit 1
	fi
	if [ "$T_NOTRUN" -ne 0 ]; then
		log "all $T_CHECKS checks passed ($T_NOTRUN not run, see above)"
	else
		log "all $T_CHECKS checks passed"
	fi
	exit 0
}

require_root_erofs() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to mount images"
	if ! grep -qw erofs /proc/filesystems; then
		modprobe erofs 2>/dev/null || true
		grep -qw erofs /proc/filesystems ||
			skip "the kernel has no EROFS support"
	fi
}

require_tools() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || die "missing tool: $t"
	done
}

# Check that the programs under test exist; call after require_root_erofs.
require_build() {
	[ -x "${MKFS%% *}" ] || command -v "${MKFS%% *}" >/dev/null ||
		die "mkfs not built: $MKFS"
	[ -x "$FMOUNT" ] || die "helper not built: $FMOUNT (run make check)"
	require_tools bsdtar "$PYTHON" mount umount
}

cleanup() {
	local rc=$? d
	trap - EXIT INT TERM
	for d in $T_MOUNTS; do
		umount "$d" 2>/dev/null || umount -l "$d" 2>/dev/null ||
			log "warning: could not unmount $d"
	done
	if [ -n "$WORK" ] && [ -d "$WORK" ]; then
		# --immutable images cannot be deleted until the flag is cleared
		find "$WORK" -name '*.img' -exec chattr -i {} + 2>/dev/null
		if [ -n "${IMGFS_KEEP:-}" ]; then
			log "work directory kept: $WORK"
		else
			rm -rf "$WORK"
		fi
	fi
	exit "$rc"
}

# Create $WORK and make sure everything is unmounted and removed at exit.
setup_tmp() {
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/imgfs-$T_NAME.XXXXXX") ||
		die "mktemp failed"
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	# Reference extractions go to a private tmpfs when possible: creating
	# 100,000 files there is several times faster than on a journaled fs,
	# and tmpfs keeps xattrs, ACLs, devices and holes.
	mkdir -p "$WORK/ref"
	if [ "$(id -u)" -eq 0 ] &&
		mount -t tmpfs -o mode=0755 imgfs-ref "$WORK/ref" 2>/dev/null; then
		track_mount "$WORK/ref"
	fi
}

setup() {
	require_root_erofs
	require_build
	setup_tmp
}

track_mount() { T_MOUNTS="$1 $T_MOUNTS"; }

untrack_mount() {
	local d out=
	for d in $T_MOUNTS; do
		[ "$d" = "$1" ] || out="$out $d"
	done
	T_MOUNTS=$out
}

# mount_loop IMG DIR: mount through a loop device (util-linux does the setup).
mount_loop() {
	mkdir -p "$2"
	mount -t erofs -o ro,loop "$1" "$2" || return 1
	track_mount "$2"
}

# mount_file IMG DIR [directio]: file-backed mount, no loop device.
mount_file() {
	mkdir -p "$2"
	if [ "${3:-}" = directio ]; then
		"$FMOUNT" -o directio "$1" "$2" || return 1
	else
		"$FMOUNT" "$1" "$2" || return 1
	fi
	track_mount "$2"
}

unmount() {
	umount "$1" || return 1
	untrack_mount "$1"
}

# mkfs_img ARGS...: run the mkfs under test.
mkfs_img() {
	# shellcheck disable=SC2086 # IMGFS_MKFS may carry options
	$MKFS "$@"
}

# extract TAR DIR: the reference extraction (owners, modes, xattrs, ACLs,
# ns mtimes, hard links, devices, sparse files; dir mtimes set at the end).
extract() {
	mkdir -p "$2"
	bsdtar -x -p --xattrs --acls --same-owner --numeric-owner \
		-f "$1" -C "$2" || return 1
	# bsdtar sets the root's mtime before extracting into it
	if tar_has_root "$1"; then
		"$PYTHON" "$HELPERS/tarroot.py" "$1" "$2" || return 1
	fi
}

# tar_has_root TAR: does TAR hold an entry for the root directory?
tar_has_root() {
	bsdtar -tf "$1" | grep -qxE '\.?/?|/+|\./+'
}

# Options for treecmp derived from the tar: --skip-root when the tar has no
# entry for the root directory, --whiteouts when it holds OCI whiteouts that
# mkfs is expected to convert (no --keep-whiteouts among MKFS_OPTS).
treecmp_opts_for() {
	local tar=$1 list
	shift
	list=$WORK/.list.$$
	bsdtar -tf "$tar" >"$list" || return 1
	grep -qxE '\.?/?|/+|\./+' "$list" || printf '%s\n' --skip-root
	case " $* " in
	*" --keep-whiteouts "*) ;;
	*) grep -qE '(^|/)\.wh\.' "$list" && printf '%s\n' --whiteouts ;;
	esac
	rm -f "$list"
}

blocksize_of() {
	local bs=4096
	while [ $# -gt 0 ]; do
		case $1 in
		-b) bs=$2; shift ;;
		-b*) bs=${1#-b} ;;
		esac
		shift
	done
	echo "$bs"
}

# compare_mounts IMG REF "HOW..." [TREECMP OPTIONS...]: mount IMG in each way
# listed (loop, file, directio) at once, compare every mount with REF in one
# treecmp run (REF is read once), unmount.
compare_mounts() {
	local img=$1 ref=$2 hows=$3 how mnts=() rc=0
	shift 3
	for how in $hows; do
		case $how in
		loop) mount_loop "$img" "$WORK/mnt.$how" ;;
		file) mount_file "$img" "$WORK/mnt.$how" ;;
		directio) mount_file "$img" "$WORK/mnt.$how" directio ;;
		esac || { fail "mount ($how) $img"; rc=1; continue; }
		mnts+=("$WORK/mnt.$how")
	done
	[ ${#mnts[@]} -gt 0 ] || return 1
	if $TREECMP "$@" "$ref" "${mnts[@]}" >"$WORK/treecmp.out" 2>&1; then
		ok "tree identical ($hows): $(basename "$img"):" \
			"$(tail -n 1 "$WORK/treecmp.out" | cut -d, -f1)"
	else
		rc=1
		head -n 300 "$WORK/treecmp.out"
		fail "tree differs for $(basename "$img") (see above)"
	fi
	for how in "${mnts[@]}"; do
		unmount "$how" || fail "umount $how"
	done
	return $rc
}

compare_mounted() {
	local img=$1 ref=$2 how=$3
	shift 3
	compare_mounts "$img" "$ref" "$how" "$@"
}

# fsck_image IMG BLOCKSIZE [TAR [MKFS OPTIONS...]]: our checker when built
# (with --compare=TAR when given), and fsck.erofs (erofs_fsck) for 4 KiB
# blocks, uncompressed or LZ4.
fsck_image() {
	local img=$1 bs=$2 tar=${3:-} o copts=()
	shift 2
	[ $# -gt 0 ] && shift
	if [ -x "$FSCK_IMG" ]; then
		check "fsck.img $(basename "$img")" "$FSCK_IMG" -q "$img"
		if [ -n "$tar" ]; then
			for o in "$@"; do
				case $o in
				--keep-whiteouts | --ignore-file-flags | \
				--file-flags=* | \
				--allow-missing-end | --require-end | \
				--all-root | --force-uid=* | \
				--force-gid=* | --uid-offset=* | --gid-offset=*)
					copts+=("$o") ;;
				esac
			done
			check "fsck.img --compare=$(basename "$tar") ${copts[*]}" \
				"$FSCK_IMG" -q --compare="$tar" "${copts[@]}" "$img"
		fi
	fi
	case " $* " in
	*" -z lz4"* | *" -zlz4"*) ;;
	*" -z"*) return 0 ;;
	esac
	[ "$bs" = 4096 ] && erofs_fsck "fsck.erofs $(basename "$img")" "$img"
	return 0
}

# The second opinion of erofs-utils' fsck.erofs: $FSCK_EROFS, or 1.9.3
# when built in /opt/erofs-utils-1.9.3/bin, or the one on PATH. It is
# used only on images it can read: it is asked first to extract a tiny
# image of the same block size and compression, and when the image has features
# that tiny image lacks, its version must be 1.9 or later (what imgfs
# writes was checked with 1.9.3). A check it cannot do is not run.
FSCK_EROFS=${FSCK_EROFS-}
if [ -z "$FSCK_EROFS" ]; then
	if [ -x /opt/erofs-utils-1.9.3/bin/fsck.erofs ]; then
		FSCK_EROFS=/opt/erofs-utils-1.9.3/bin/fsck.erofs
	else
		FSCK_EROFS=$(command -v fsck.erofs || true)
	fi
fi

# erofs_sb IMG FIELD: a superblock line of dump.img, after its label
erofs_sb() {
	"$DUMP_IMG" "$1" 2>/dev/null | sed -n "s/^$2: *//p"
}

# erofs_fsck_can IMG: whether $FSCK_EROFS reads images like IMG; if not,
# $EROFS_WHY says why.
erofs_fsck_can() {
	local img=$1 bs algs feats pfeats a d=$WORK/erofs-probe ver
	EROFS_WHY=
	[ -n "$FSCK_EROFS" ] || { EROFS_WHY="no fsck.erofs installed"; return 1; }
	bs=$(erofs_sb "$img" "Block size" | cut -d' ' -f1)
	algs=$(erofs_sb "$img" Compression | tr -d ' ' | tr ',' ' ')
	feats=$(erofs_sb "$img" "Incompatible features" | cut -d'(' -f1)
	[ -n "$bs" ] || { EROFS_WHY="dump.img cannot read $img"; return 1; }
	mkdir -p "$d"
	[ -f "$d/probe.tar" ] || "$PYTHON" - "$d/probe.tar" <<'PY' || return 1
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    data = b"probe " * 20000
    ti = tarfile.TarInfo("f")
    ti.size = len(data)
    t.addfile(ti, io.BytesIO(data))
PY
	for a in ${algs:-none}; do
		[ "$a" = none ] && a=
		if [ ! -f "$d/$bs-$a.verdict" ]; then
			if ! $MKFS -q -b "$bs" ${a:+-z "$a"} "$d/probe.tar" \
				"$d/$bs-$a.img" >"$d/$bs-$a.verdict" 2>&1; then
				EROFS_WHY="cannot make a probe image (-b $bs ${a:+-z $a})"
				rm -f "$d/$bs-$a.verdict"
				return 1
			fi
			# --extract: a plain check does not decompress
			rm -rf "$d/x"
			"$FSCK_EROFS" --extract="$d/x" "$d/$bs-$a.img" \
				>"$d/$bs-$a.out" 2>&1 && cmp -s "$d/x/f" <(tar -xOf "$d/probe.tar" f) &&
				echo ok >"$d/$bs-$a.verdict" ||
				grep -m1 -v '^fsck.erofs' "$d/$bs-$a.out" >"$d/$bs-$a.verdict"
		fi
		if [ "$(cat "$d/$bs-$a.verdict")" != ok ]; then
			EROFS_WHY="$($FSCK_EROFS -V 2>&1 | head -n 1) cannot read a ${bs}-byte-block image${a:+ compressed with $a} ($(cat "$d/$bs-$a.verdict"))"
			return 1
		fi
		pfeats="$pfeats $(erofs_sb "$d/$bs-$a.img" "Incompatible features" | cut -d'(' -f1)"
	done
	for a in $feats; do
		case " $pfeats " in *" $a "*) continue ;; esac
		[ "$a" = none ] && continue
		ver=$("$FSCK_EROFS" -V 2>&1 | head -n 1 | grep -oE '[0-9]+\.[0-9]+' | head -n 1)
		case $ver in
		1.[0-8] | 0.*)
			EROFS_WHY="fsck.erofs $ver, and the image has the feature $a (1.9 or later needed)"
			return 1 ;;
		esac
	done
	return 0
}

# erofs_fsck WHAT IMG [OPTIONS...]: fsck.erofs OPTIONS IMG as check WHAT,
# or "not run" with the reason.
erofs_fsck() {
	local what=$1 img=$2
	shift 2
	if erofs_fsck_can "$img"; then
		check "$what" "$FSCK_EROFS" "$@" "$img"
	else
		not_run "$what: $EROFS_WHY"
	fi
}

# ref_dir TAR: where verify_image keeps the reference extraction of TAR.
ref_dir() { echo "$WORK/ref/$(basename "$1")"; }

# verify_image IMG REFTAR [MKFS OPTIONS...]: compare IMG mounted through a
# loop device, file-backed, and file-backed with directio ($VERIFY_MOUNTS
# overrides the list) against a bsdtar
# extraction of REFTAR (made once per REFTAR), then fsck it (comparing it
# with $SRC_TAR, default REFTAR). The mkfs options tell the block size, and
# whether whiteouts were kept or owners rewritten.
verify_image() {
	local img=$1 reftar=$2 ref bs topts rc=0
	shift 2
	ref=$(ref_dir "$reftar")
	if [ ! -d "$ref" ]; then
		extract "$reftar" "$ref" || die "bsdtar could not extract $reftar"
	fi
	# shellcheck disable=SC2207
	topts=($(treecmp_opts_for "$reftar" "$@"))
	bs=$(blocksize_of "$@")
	compare_mounts "$img" "$ref" "${VERIFY_MOUNTS:-loop file directio}" \
		"${topts[@]}" || rc=1
	fsck_image "$img" "$bs" "${SRC_TAR:-$reftar}" "$@"
	return $rc
}

# convert_and_compare TAR [MKFS OPTIONS...]: convert TAR to $IMG
# ($WORK/NAME.img, replaced by the next call for the same TAR) and
# verify_image it against TAR, or against $REF_TAR when set (a tar holding
# the expected result).
convert_and_compare() {
	local tar=$1 name
	shift
	name=$(basename "$tar")
	IMG=$WORK/$name.img
	rm -f "$IMG"
	if ! mkfs_img "$@" "$tar" "$IMG"; then
		fail "mkfs $* $name"
		return 1
	fi
	ok "mkfs $* $name ($(stat -c %s "$IMG") bytes)"
	SRC_TAR=$tar verify_image "$IMG" "${REF_TAR:-$tar}" "$@"
}

# pymk SCRIPT ARGS...: run a python helper from tests/helpers.
pymk() {
	local s=$1
	shift
	"$PYTHON" "$HELPERS/$s" "$@"
}

# make_tree DIR [full]: populate DIR with real files to archive with tar.
# The plain tree suits every format (V7 included): short names, regular
# files, directories, symlinks, hard links, small owners. "full" adds what
# only newer formats carry: devices, FIFOs, setuid/setgid/sticky, owners
# beyond 21 bits, nanosecond mtimes, names and link targets past 100 bytes,
# and a sparse file.
make_tree() {
	local d=$1 full=${2:-} long
	mkdir -p "$d/dir/sub" "$d/empty"
	: >"$d/dir/empty"
	printf x >"$d/dir/one"
	head -c 4096 /dev/urandom >"$d/dir/block"
	head -c 4097 /dev/urandom >"$d/dir/block-plus-one"
	head -c 1048579 /dev/urandom >"$d/dir/sub/mib"
	ln "$d/dir/block" "$d/dir/sub/hardlink"
	ln -s ../one "$d/dir/sub/symlink"
	ln -s dir/sub "$d/link-to-dir"
	chown 1000:1000 "$d/dir/one"
	chown -h 33:44 "$d/link-to-dir"
	chmod 0600 "$d/dir/empty"
	chmod 0750 "$d/dir/sub"
	if [ "$full" = full ]; then
		long=$(printf 'long-%.0s' $(seq 30))
		mkdir -p "$d/special/$long/$long"
		printf 'deep\n' >"$d/special/$long/$long/$long"
		ln -s "$(printf 't%.0s' $(seq 200))/$long" "$d/special/long-target"
		mknod "$d/special/chr" c 10 200
		mknod "$d/special/blk" b 259 3000
		mkfifo "$d/special/fifo"
		printf s >"$d/special/suid"
		chmod 4755 "$d/special/suid"
		printf s >"$d/special/sgid"
		chmod 2711 "$d/special/sgid"
		mkdir "$d/special/sticky"
		chmod 1777 "$d/special/sticky"
		printf u >"$d/special/big-owner"
		chown 3000000:4000000 "$d/special/big-owner"
		truncate -s 10M "$d/special/sparse"
		printf 'middle' | dd of="$d/special/sparse" bs=1 seek=4194304 \
			conv=notrunc status=none
		printf 'end' | dd of="$d/special/sparse" bs=1 seek=10485757 \
			conv=notrunc status=none
		touch -h -d @1700000000.123456789 "$d/special/fifo" \
			"$d/special/long-target" "$d/special/suid"
		touch -h -d @1000000000.5 "$d/special/sticky"
	fi
	touch -h -d @1600000000 "$d/dir/sub/symlink"
	touch -d @1500000000 "$d/dir/one"
	# directories last: creating their entries changed their mtimes
	find "$d" -mindepth 1 -type d -exec touch -d @1400000000 {} +
	touch -d @1300000000 "$d"
}
