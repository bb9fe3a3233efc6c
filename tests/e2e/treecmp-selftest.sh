#!/bin/bash
# The comparer must notice every kind of difference it claims to check,
# or the other tests prove nothing. Two copies of a tree; each mutation of
# the second must make treecmp fail and name the path.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (owners, devices, trusted xattrs)"
require_tools setfattr "$PYTHON"
setup_tmp

a=$WORK/a
make_tree "$a" full
setfattr -n user.k -v v "$a/dir/one"
setfattr -n trusted.t -v 0x00ff "$a/dir/block"
truncate -s 64M "$a/dir/sparse"
printf data | dd of="$a/dir/sparse" bs=1 seek=$((32 << 20)) conv=notrunc status=none
mkdir "$a/whdir"
: >"$a/whdir/.wh.gone"
: >"$a/whdir/.wh..wh..opq"
touch -d @1400000000 "$a/dir" "$a/whdir"

# flip_byte FILE OFFSET: invert one byte, keeping the file's mtime
flip_byte() {
	"$PYTHON" -c 'import os, sys
p, off = sys.argv[1], int(sys.argv[2])
st = os.stat(p)
with open(p, "r+b") as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 0xff]))
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))' "$1" "$2"
}

# mutate DESCRIPTION NEEDLE COMMAND: COMMAND runs in a fresh copy ($b);
# treecmp must then fail with NEEDLE (the path, maybe more) in its report.
mutate() {
	local what=$1 path=$2 out=$WORK/out
	shift 2
	rm -rf "$WORK/b"
	cp -a "$a" "$WORK/b"
	b=$WORK/b
	(cd "$b" && eval "$*") || die "mutation failed: $*"
	if $TREECMP "$a" "$b" >"$out" 2>&1; then
		fail "$what: not detected"
	elif ! grep -qF "$path" "$out"; then
		cat "$out"
		fail "$what: reported without naming $path"
	else
		ok "$what: $(grep -F "$path" "$out" | head -n 1)"
	fi
}

rm -rf "$WORK/b" && cp -a "$a" "$WORK/b"
check "identical copies compare equal" $TREECMP "$a" "$WORK/b"

mutate "content" "dir/block-plus-one': content differs at offset 4096" \
	'flip_byte dir/block-plus-one 4096'
mutate "data in a hole" "dir/sparse': content differs at offset 1000" \
	'flip_byte dir/sparse 1000'
mutate "size" dir/one 'printf xy >dir/one; touch -d @1500000000 dir/one'
mutate "mode" dir/one 'chmod 0640 dir/one'
mutate "setuid bit" special/suid 'chmod u-s special/suid'
mutate "sticky bit" special/sticky 'chmod -t special/sticky'
mutate "uid" dir/one 'chown 1001 dir/one'
mutate "gid" dir/one 'chgrp 1001 dir/one'
mutate "mtime seconds" dir/one 'touch -d @1500000001 dir/one'
mutate "mtime nanoseconds" special/suid 'touch -d @1700000000.123456788 special/suid'
mutate "directory mtime" dir/sub 'touch -d @1400000001 dir/sub'
mutate "symlink target" dir/sub/symlink 'ln -sfn ../onf dir/sub/symlink; touch -h -d @1600000000 dir/sub/symlink; touch -d @1400000000 dir/sub'
mutate "device number" special/chr 'rm special/chr; mknod special/chr c 10 201; touch -d @1400000000 special'
mutate "type" special/fifo 'rm special/fifo; : >special/fifo; touch -h -d @1700000000.123456789 special/fifo; touch -d @1400000000 special'
mutate "xattr value" dir/one 'setfattr -n user.k -v w dir/one'
mutate "binary xattr value" dir/block 'setfattr -n trusted.t -v 0x00fe dir/block'
mutate "missing xattr" dir/one 'setfattr -x user.k dir/one'
mutate "extra xattr" dir/empty 'setfattr -n user.new -v 1 dir/empty'
mutate "hard link split" dir/sub/hardlink 'cp -p dir/block dir/sub/hardlink.new; mv dir/sub/hardlink.new dir/sub/hardlink; touch -d @1400000000 dir/sub'
mutate "missing entry" dir/empty 'rm dir/empty; touch -d @1400000000 dir'
mutate "extra entry" dir/extra ': >dir/extra; touch -d @1400000000 dir'
mutate "root mode" "'.'" 'chmod 0700 .'

# --whiteouts: the .wh. files become char 0:0 plus overlay xattrs.
w=$WORK/w
rm -rf "$w" && cp -a "$a" "$w"
rm "$w/whdir/.wh.gone" "$w/whdir/.wh..wh..opq"
mknod "$w/whdir/gone" c 0 0
setfattr -n trusted.overlay.opaque -v y "$w/whdir"
setfattr -n trusted.overlay.origin -v '' "$w/whdir" 2>/dev/null ||
	setfattr -n trusted.overlay.origin "$w/whdir"
touch -d @1400000000 "$w/whdir"
check "--whiteouts accepts the converted tree" $TREECMP --whiteouts "$a" "$w"
setfattr -x trusted.overlay.opaque "$w/whdir"
check "--whiteouts notices a missing opaque xattr" \
	sh -c "! $TREECMP --whiteouts '$a' '$w' >/dev/null"

finish
