#!/bin/bash
# Output targets and the output file: what may be replaced (only a regular
# file), checks made before the source is read, runs killed mid-way
# (nothing left behind), long target names, a target inside a directory
# source (never part of the image), and directory-source files that change
# while they are read.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_tools mknod mkfifo setpriv timeout cmp

pymk mktar.py one-big-file "$WORK/one.tar"

# dir_is_empty_but DIR NAME...: DIR holds exactly the names given.
holds_only() {
	local dir=$1 want got
	shift
	want=$(printf '%s\n' "$@" | sort)
	got=$(ls -A "$dir" | sort)
	[ "$want" = "$got" ] && return 0
	log "    $dir holds: $(echo $got)"
	return 1
}

# refuse NAME PATTERN TARGET: converting into TARGET must fail at once
# with PATTERN in the message; callers check that TARGET is unchanged.
refuse() {
	local name=$1 pattern=$2 target=$3 rc=0
	timeout 20 "$MKFS" "$WORK/one.tar" "$target" >"$WORK/$name.out" 2>&1 ||
		rc=$?
	sed "s/^/    | /" "$WORK/$name.out" | head -n 3
	check "$name: exit 1" test $rc -eq 1
	check "$name: message says '$pattern'" \
		grep -q -- "$pattern" "$WORK/$name.out"
}

# --- Targets that are not regular files are refused, and left alone.
T=$WORK/t
mkdir "$T"
mknod "$T/null" c 1 3
refuse chardev 'null: is a character device' "$T/null"
check "chardev: still the character device 1:3" \
	test "$(stat -c '%F %t:%T' "$T/null")" = "character special file 1:3"

mkfifo "$T/fifo"
refuse fifo 'fifo: is a FIFO' "$T/fifo"
check "fifo: still a FIFO" test -p "$T/fifo"

mkdir "$T/outdir"
refuse directory 'outdir: is a directory' "$T/outdir"
check "directory: still an empty directory" holds_only "$T/outdir"
refuse trailing-slash 'names a directory' "$T/outdir/"

printf 'previous image' >"$T/file"
ln -s file "$T/link"
refuse symlink 'link: is a symbolic link to file' "$T/link"
check "symlink: still a link to file" test "$(readlink "$T/link")" = file
check "symlink: the file it points to is untouched" \
	test "$(cat "$T/file")" = "previous image"
ln -s null "$T/link-to-dev"
refuse symlink-to-device 'is a symbolic link to null' "$T/link-to-dev"
check "symlink to a device: the device is untouched" test -c "$T/null"
check "refused targets: nothing else created" \
	holds_only "$T" null fifo outdir file link link-to-dev

# --- Checks happen before the source is read: a FIFO source that nobody
# writes to would block forever if it were opened first.
mkfifo "$WORK/silent.fifo"
rc=0
timeout 20 "$MKFS" "$WORK/silent.fifo" "$T/outdir" >"$WORK/early.out" 2>&1 ||
	rc=$?
check "directory target with a blocking source: refused at once (exit $rc)" \
	test $rc -eq 1
check "directory target with a blocking source: says so" \
	grep -q 'outdir: is a directory' "$WORK/early.out"
rc=0
timeout 20 "$MKFS" "$WORK/silent.fifo" "$WORK/no-such-dir/x.img" \
	>"$WORK/early2.out" 2>&1 || rc=$?
check "missing directory with a blocking source: refused at once (exit $rc)" \
	test $rc -eq 1
check "missing directory: named" grep -q 'no-such-dir' "$WORK/early2.out"
# An unwritable directory, for a user who is not root.
mkdir "$WORK/ro"
chmod 0755 "$WORK/ro"
chmod o+x "$WORK"
rc=0
timeout 20 setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$MKFS" "$WORK/silent.fifo" "$WORK/ro/x.img" >"$WORK/early3.out" 2>&1 ||
	rc=$?
sed "s/^/    | /" "$WORK/early3.out" | head -n 3
check "unwritable directory with a blocking source: refused at once (exit $rc)" \
	test $rc -eq 1
check "unwritable directory: says why" \
	grep -q 'Permission denied' "$WORK/early3.out"
check "unwritable directory: still empty" holds_only "$WORK/ro"

# Standard input that is the target itself.
cp "$WORK/one.tar" "$WORK/self.tar"
rc=0
"$MKFS" - "$WORK/self.tar" <"$WORK/self.tar" >"$WORK/self.out" 2>&1 || rc=$?
check "stdin = target: refused" test $rc -eq 1
check "stdin = target: untouched" cmp -s "$WORK/one.tar" "$WORK/self.tar"

# --- A run killed with SIGKILL leaves nothing: the image has no name
# until it is complete. The source is a pipe whose writer waits for
# $WORK/go, created only after the kill: no race with a slow machine.
# held_source: one.tar once $WORK/go exists
held_source() {
	until [ -e "$WORK/go" ]; do sleep 0.05; done
	cat "$WORK/one.tar" 2>/dev/null
}
K=$WORK/k
mkdir "$K"
printf 'previous image' >"$K/old.img"
rm -f "$WORK/go"
held_source | "$MKFS" - "$K/old.img" 2>/dev/null &
pid=$!
# wait until mkfs has its output open (an unnamed file in $K)
for _ in $(seq 1200); do
	ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "$K/.*(deleted)" && break
	sleep 0.05
done
check "kill -9: the output was open before the source had any data" \
	sh -c "ls -l /proc/$pid/fd | grep -q '$K/.*(deleted)'"
kill -9 "$pid"
: >"$WORK/go" # the held writer ends too: wait waits for the whole pipeline
wait "$pid" 2>/dev/null
check "kill -9: nothing left but the previous image" holds_only "$K" old.img
check "kill -9: the previous image is untouched" \
	test "$(cat "$K/old.img")" = "previous image"

# Past the file size limit writes fail (SIGXFSZ is ignored), the error is
# reported and nothing is left.
rc=0
(ulimit -f 64 && "$MKFS" "$WORK/one.tar" "$K/big.img") >"$WORK/xfsz.out" 2>&1 ||
	rc=$?
sed "s/^/    | /" "$WORK/xfsz.out" | head -n 3
check "file size limit: exit 1, not a signal (exit $rc)" test $rc -eq 1
check "file size limit: reported" grep -q 'File too large' "$WORK/xfsz.out"
check "file size limit: nothing left" holds_only "$K" old.img

# --- A 255-byte target name (no temporary suffix to overflow NAME_MAX).
long=$(printf 'i%.0s' $(seq 251)).img
L=$WORK/long
mkdir "$L"
check "255-byte target name: converted" \
	"$MKFS" -q "$WORK/one.tar" "$L/$long"
check "255-byte target name: replaced" \
	"$MKFS" -q "$WORK/one.tar" "$L/$long"
check "255-byte target name: only the image in its directory" \
	holds_only "$L" "$long"
check "255-byte target name: fsck.img" "$FSCK_IMG" -q "$L/$long"

# --- The target inside a directory source: neither the image being
# written nor the one it replaces ends up in the image.
S=$WORK/src
mkdir -p "$S/sub"
printf 'data\n' >"$S/sub/file"
head -c 100000 /dev/urandom >"$S/random"
check "target inside the source: first run" \
	"$MKFS" -q "$S" "$S/sub/layer.img"
check "target inside the source: second run (replacing the first image)" \
	"$MKFS" -q "$S" "$S/sub/layer.img"
"$DUMP_IMG" --ls=/ -R "$S/sub/layer.img" >"$WORK/inside.ls" 2>&1
check "target inside the source: dump.img lists sub/file" \
	grep -q ' file$' "$WORK/inside.ls"
check "target inside the source: no image or temporary file listed" \
	sh -c "! grep -E 'layer\.img|\.imgfs-' '$WORK/inside.ls'"
mount_loop "$S/sub/layer.img" "$WORK/mnt.inside" ||
	die "cannot mount $S/sub/layer.img"
(cd "$S" && find . | grep -v '^\./sub/layer\.img$' | sort) >"$WORK/inside.want"
(cd "$WORK/mnt.inside" && find . | sort) >"$WORK/inside.got"
check "target inside the source: the mounted image holds the source less the image" \
	diff "$WORK/inside.want" "$WORK/inside.got"
check "target inside the source: data intact" \
	cmp "$S/random" "$WORK/mnt.inside/random"
unmount "$WORK/mnt.inside" || fail "umount"

# --- Filesystems without O_TMPFILE (simulated by an LD_PRELOAD shim):
# the output has a short hidden name, which is left out of a directory
# source, removed on failure and on SIGTERM, and renamed over the target.
SHIM=$top_builddir/tests/helpers/.libs/no_tmpfile.so
[ -f "$SHIM" ] || die "helper not built: $SHIM (run make check)"
F=$WORK/fallback
mkdir -p "$F/src"
printf 'data\n' >"$F/src/file"
check "named fallback: target inside the source, twice" sh -c "
	LD_PRELOAD='$SHIM' '$MKFS' -q '$F/src' '$F/src/layer.img' &&
	LD_PRELOAD='$SHIM' '$MKFS' -q '$F/src' '$F/src/layer.img'"
check "named fallback: only the image is left beside the source's file" \
	holds_only "$F/src" file layer.img
"$DUMP_IMG" --ls=/ -R "$F/src/layer.img" >"$WORK/fallback.ls" 2>&1
check "named fallback: the image lists file" grep -q ' file$' "$WORK/fallback.ls"
check "named fallback: no image or temporary file in the image" \
	sh -c "! grep -E 'layer\.img|\.imgfs-' '$WORK/fallback.ls'"
head -c 600000 "$WORK/one.tar" >"$WORK/truncated.tar"
rc=0
LD_PRELOAD=$SHIM "$MKFS" -q "$WORK/truncated.tar" "$F/src/layer.img" \
	>/dev/null 2>&1 || rc=$?
check "named fallback: a failed run exits 1" test $rc -eq 1
check "named fallback: a failed run leaves no temporary file" \
	holds_only "$F/src" file layer.img
mkdir "$F/k"
rm -f "$WORK/go"
held_source | LD_PRELOAD=$SHIM "$MKFS" - "$F/k/x.img" 2>/dev/null &
pid=$!
for _ in $(seq 1200); do
	ls -A "$F/k" | grep -q '^\.imgfs-' && break
	sleep 0.05
done
check "named fallback: the output has a short hidden name while building" \
	sh -c "ls -A '$F/k' | grep -qx '\.imgfs-......'"
kill -TERM "$pid"
: >"$WORK/go"
wait "$pid" 2>/dev/null
check "named fallback: SIGTERM leaves nothing" holds_only "$F/k"

# --- Directory-source files whose data does not match their listing.
# A sysfs attribute claims 4096 bytes and holds a few: bound over a file of
# the source, it reads short every time.
attr=
for f in /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/uevent_seqnum \
	/sys/kernel/profiling /sys/power/state; do
	if [ -r "$f" ] && [ "$(stat -c %s "$f")" -gt "$(wc -c <"$f")" ]; then
		attr=$f
		break
	fi
done
if [ -n "$attr" ]; then
	D=$WORK/short
	mkdir -p "$D/dir"
	printf 'x\n' >"$D/a"
	: >"$D/dir/attr"
	mount --bind "$attr" "$D/dir/attr" || die "bind mount of $attr"
	track_mount "$D/dir/attr"
	for opts in "" "-z lz4"; do
		rc=0
		# shellcheck disable=SC2086
		"$MKFS" -q $opts "$D" "$WORK/short.img" >"$WORK/short.out" 2>&1 ||
			rc=$?
		sed "s/^/    | /" "$WORK/short.out" | head -n 3
		check "short read ${opts:-plain}: exit 1" test $rc -eq 1
		check "short read ${opts:-plain}: names dir/attr" \
			grep -q 'dir/attr: changed while being read' "$WORK/short.out"
		check "short read ${opts:-plain}: no image" test ! -e "$WORK/short.img"
	done
	unmount "$D/dir/attr" || fail "umount $D/dir/attr"
else
	log "note: no sysfs attribute with a short read found; short-read case not run"
fi

# A file rewritten in place, over and over, while mkfs reads it: each run
# must either fail naming it or hold a state the file really had for the
# whole read: one of its two versions exactly, or empty (between cp's
# truncation and its first write). A zero-filled or mixed copy is the bug.
C=$WORK/changing
mkdir "$C"
head -c $((24 << 20)) /dev/urandom >"$WORK/version-a"
head -c $((3 << 20)) /dev/urandom >"$WORK/version-b"
cp "$WORK/version-a" "$C/file"
(while :; do
	cp "$WORK/version-b" "$C/file"
	cp "$WORK/version-a" "$C/file"
done) &
writer=$!
n_fail=0
for i in 1 2 3 4 5; do
	rc=0
	"$MKFS" -q "$C" "$WORK/changing.img" >"$WORK/changing.out" 2>&1 || rc=$?
	if [ $rc -ne 0 ]; then
		n_fail=$((n_fail + 1))
		if grep -q '^mkfs.img: file: changed while being read' \
			"$WORK/changing.out"; then
			ok "changing file, run $i: refused, naming it"
		else
			fail "changing file, run $i: exit $rc: $(cat "$WORK/changing.out")"
		fi
		continue
	fi
	"$DUMP_IMG" --cat=file "$WORK/changing.img" >"$WORK/changing.data"
	if [ ! -s "$WORK/changing.data" ]; then
		ok "changing file, run $i: the image holds it empty, as it was between truncation and writing"
	elif cmp -s "$WORK/changing.data" "$WORK/version-a" ||
		cmp -s "$WORK/changing.data" "$WORK/version-b"; then
		ok "changing file, run $i: the image holds one version exactly"
	else
		fail "changing file, run $i: the image holds a mix"
	fi
done
kill "$writer"
wait "$writer" 2>/dev/null
log "changing file: $n_fail of 5 runs refused"

finish
