#!/bin/bash
# Extended attributes and POSIX ACLs: pax SCHILY.xattr records with text,
# binary (NUL, 0xff), empty, 3000-byte and many values on files, a
# directory, a symlink and a device; then real files carrying user.,
# trusted., security. xattrs and access/default ACLs archived by bsdtar and
# by GNU tar. ACLs must come out as system.posix_acl_* xattrs.
# Then the limits: an inline xattr area of exactly 262148 bytes (the most
# i_xattr_icount can say), one more byte (refused with sharing off, moved
# to the shared area otherwise), a name list of exactly 64 KiB (listxattr's
# limit) and one more name, full names of 255 and 256 bytes; every accepted
# image is mounted and read back with getfattr. Names that are only a
# namespace prefix and system.posix_acl_* values the kernel would refuse
# must be errors naming the entry.
# Last, memory: 4000 entries with 60 KB of distinct xattrs each (and one
# 60 KB value on every tenth, to be shared) must convert with a peak RSS
# far below the 240 MB of values, which wait in a spill file until layout.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_tools setfattr setfacl tar

pymk mktar.py xattrs "$WORK/xattrs.tar" || die "mktar xattrs"
convert_and_compare "$WORK/xattrs.tar"
convert_and_compare "$WORK/xattrs.tar" -b 512

s=$WORK/src
mkdir -p "$s/acl-dir/sub" "$s/plain"
printf 'xattrs\n' >"$s/plain/x"
setfattr -n user.text -v "some text" "$s/plain/x"
setfattr -n user.hex -v 0x00ff7f80 "$s/plain/x"
setfattr -n trusted.t -v 0x0102 "$s/plain/x"
setfattr -n security.capability \
	-v 0x0100000200200000000000000000000000000000 "$s/plain/x"
ln -s x "$s/plain/link"
setfattr -h -n trusted.on-link -v yes "$s/plain/link"
printf 'acl\n' >"$s/plain/acl-file"
setfacl -m u:1001:rw,g:2002:r,m::rw "$s/plain/acl-file"
setfacl -m u:1234:rwx,o::- "$s/acl-dir"
setfacl -d -m u:1001:rx,g::r,o::- "$s/acl-dir"
# created inside a dir with a default ACL: inherits an access ACL
printf 'inherit\n' >"$s/acl-dir/inherits"
mkdir "$s/acl-dir/sub/deeper"
find "$s" -type d -exec touch -d @1400000000 {} +

bsdtar -C "$s" --xattrs --acls --format=pax -cf "$WORK/bsd-xattrs.tar" .
tar -C "$s" --xattrs --xattrs-include='*' --acls --format=posix \
	-cf "$WORK/gnu-xattrs.tar" .
# The reference must really hold the ACLs, or the check proves nothing.
bsdtar -tvf "$WORK/bsd-xattrs.tar" >/dev/null
extract "$WORK/bsd-xattrs.tar" "$WORK/probe"
getfacl -cp "$WORK/probe/acl-dir" 2>/dev/null | grep -q '^default:user:1001:r-x' ||
	die "reference extraction lost the default ACL"
getfattr -h -n trusted.on-link "$WORK/probe/plain/link" >/dev/null 2>&1 ||
	die "reference extraction lost the symlink xattr"

convert_and_compare "$WORK/bsd-xattrs.tar"
convert_and_compare "$WORK/gnu-xattrs.tar"

# --- limits and invalid names/ACLs (tars generated here) ---
"$PYTHON" - "$WORK" <<'EOF' || die "generating the limit tars"
import struct, sys, tarfile

work = sys.argv[1]


def mk(name, entries):
    tf = tarfile.open("%s/%s.tar" % (work, name), "w",
                      format=tarfile.PAX_FORMAT, encoding="utf-8",
                      errors="surrogateescape")
    for path, xattrs in entries:
        ti = tarfile.TarInfo(path)
        ti.mtime = 1600000000
        ti.mode = 0o644
        for k, v in xattrs.items():
            if isinstance(v, bytes):
                v = v.decode("utf-8", "surrogateescape")
            ti.pax_headers["SCHILY.xattr." + k] = v
        tf.addfile(ti)
    tf.close()


# 4 entries of 65532 bytes + one of 8: 12 + 262128 + 8 = 262148 bytes,
# i_xattr_icount 65535; "extra" grows the small one past the limit
def big(extra):
    x = {"user." + c: chr(65 + i) * 65527 for i, c in enumerate("abcd")}
    x["user.e"] = "e" * (3 + extra)
    return x


mk("inline-max", [("d/inline-max", big(0))])
mk("inline-over", [("d/inline-over", big(1))])
# 256 names of 255 bytes + NUL = 65536 bytes listed
names = lambda n: {"user.%05d" % i + "n" * 245: "" for i in range(n)}
mk("list-max", [("d/list-max", names(256))])
mk("list-over", [("d/list-over", names(257))])
mk("name-255", [("d/name-255", {"trusted." + "t" * 247: "v"})])
mk("name-256", [("d/name-256", {"trusted." + "t" * 248: "v"})])
mk("prefix-only", [("d/prefix-only", {"user.": "v"})])
mk("prefix-only-security", [("d/prefix-only-sec", {"security.": ""})])

U = 0xFFFFFFFF


def acl(*ents, version=2):
    return struct.pack("<I", version) + b"".join(
        struct.pack("<HHI", t, p, i) for t, p, i in ents)


UO, US, GO, GR, MA, OT = 1, 2, 4, 8, 0x10, 0x20
minimal = [(UO, 6, U), (GO, 4, U), (OT, 4, U)]
bad = {
    "version": acl(*minimal, version=1),
    "size": acl(*minimal) + b"\0\0",
    "empty": acl(),
    "tag": acl(*minimal, (0x40, 4, U)),
    "order": acl((GO, 4, U), (UO, 6, U), (OT, 4, U)),
    "dup-owner": acl((UO, 6, U), (UO, 6, U), (GO, 4, U), (OT, 4, U)),
    "no-other": acl((UO, 6, U), (GO, 4, U)),
    "no-mask": acl((UO, 6, U), (US, 6, 1000), (GO, 4, U), (OT, 4, U)),
    "ids": acl((UO, 6, U), (US, 6, 1001), (US, 6, 1000), (GO, 4, U),
               (MA, 6, U), (OT, 4, U)),
    "undef-id": acl((UO, 6, U), (US, 6, U), (GO, 4, U), (MA, 6, U),
                    (OT, 4, U)),
    "perm": acl((UO, 0o17, U), (GO, 4, U), (OT, 4, U)),
}
for why, v in bad.items():
    mk("acl-" + why, [("d/acl-" + why, {"system.posix_acl_access": v})])
# what the kernel itself hands out: ids -1 on the unnamed entries
good = acl((UO, 6, U), (US, 6, 1000), (US, 4, 1002), (GO, 4, U),
           (GR, 5, 2000), (MA, 6, U), (OT, 0, U))
mk("acl-raw", [("d/acl-raw", {"system.posix_acl_access": good,
                              "system.posix_acl_default": acl(*minimal)})])
EOF

# getfattr_of DIR: "path name=0xHEX" for every xattr under DIR, sorted.
getfattr_of() {
	(cd "$1" && getfattr -R -d -m - -e hex . 2>&1) | "$PYTHON" -c '
import sys
path = None
out = []
for line in sys.stdin:
    line = line.rstrip("\n")
    if line.startswith("# file: "):
        path = line[8:]
    elif line:
        n, _, v = line.partition("=")
        out.append("%s %s=%s" % (path, n, v or "0x"))
print("\n".join(sorted(out)))'
}

# tar_xattrs TAR: the same list from the tar's SCHILY.xattr records.
tar_xattrs() {
	"$PYTHON" - "$1" <<'EOF'
import sys, tarfile
out = []
for ti in tarfile.open(sys.argv[1], encoding="utf-8",
                       errors="surrogateescape"):
    for k, v in ti.pax_headers.items():
        if k.startswith("SCHILY.xattr."):
            v = v.encode("utf-8", "surrogateescape")
            out.append("%s %s=0x%s" % (ti.name, k[13:], v.hex()))
print("\n".join(sorted(out)))
EOF
}

# limit_ok NAME [MKFS OPTIONS]: accepted, checked, and getfattr through a
# kernel mount shows exactly the tar's xattrs.
limit_ok() {
	local name=$1 tar=$WORK/$1.tar img=$WORK/$1.img
	shift
	rm -f "$img"
	if ! mkfs_img -q "$@" "$tar" "$img"; then
		fail "$name $*: refused"
		return
	fi
	check "$name $*: fsck.img" "$FSCK_IMG" -q "$img"
	check "$name $*: fsck.img --compare" "$FSCK_IMG" -q --compare="$tar" \
		"$img"
	mount_loop "$img" "$WORK/mnt.limit" || { fail "$name: mount"; return; }
	tar_xattrs "$tar" >"$WORK/$name.want"
	getfattr_of "$WORK/mnt.limit" >"$WORK/$name.got"
	check "$name $*: getfattr shows all $(wc -l <"$WORK/$name.want") xattrs" \
		cmp -s "$WORK/$name.want" "$WORK/$name.got"
	unmount "$WORK/mnt.limit" || fail "umount"
}

# limit_refused NAME PATTERN [MKFS OPTIONS]: an error naming the entry and
# PATTERN, and no image.
limit_refused() {
	local name=$1 pattern=$2 img=$WORK/out/$1.img rc=0
	shift 2
	mkdir -p "$WORK/out"
	mkfs_img -q "$@" "$WORK/$name.tar" "$img" >"$WORK/$name.err" 2>&1 || rc=$?
	sed 's/^/    | /' "$WORK/$name.err"
	check "$name $*: refused (exit $rc)" test $rc -eq 1
	check "$name $*: message names the entry and the reason" \
		grep -qE "d/[-a-z0-9]+: .*$pattern" "$WORK/$name.err"
	check "$name $*: nothing left behind" test -z "$(ls -A "$WORK/out")"
}

limit_ok inline-max -x 0
limit_ok inline-max
limit_refused inline-over "do not fit in an inode.*sharing is disabled" -x 0
limit_ok inline-over
# the inline area holds less than the 262152 bytes of xattrs: the largest
# value went to the shared area (and getfattr above still read it)
isize=$("$DUMP_IMG" --path=/d/inline-over "$WORK/inline-over.img" |
	sed -n 's/^Xattr area: *\([0-9]*\) bytes.*/\1/p')
check "inline-over: inline area of ${isize:-?} bytes, a value shared" \
	test "${isize:-999999}" -lt 262148
limit_ok list-max
limit_refused list-over "257 xattr names take 65792 bytes"
limit_ok name-255
limit_refused name-256 "longer than the kernel's limit"
limit_refused prefix-only 'xattr "user\.": the name is only a namespace prefix'
limit_refused prefix-only-security 'xattr "security\.": the name is only'
for why in version size empty tag order dup-owner no-other no-mask ids \
	undef-id perm; do
	limit_refused "acl-$why" 'posix_acl_access": not a valid POSIX ACL'
done
limit_ok acl-raw

# --- memory: xattr values are not kept in memory until layout ---
"$PYTHON" - "$WORK/xmem.tar.gz" <<'EOF' || die "generating xmem.tar.gz"
import gzip, sys, tarfile
with gzip.open(sys.argv[1], "wb", compresslevel=1) as g:
    tf = tarfile.open(fileobj=g, mode="w", format=tarfile.PAX_FORMAT)
    for i in range(4000):
        ti = tarfile.TarInfo("m%02d/f%05d" % (i // 500, i))
        ti.mtime = 1600000000
        # distinct values (compressible: the layer stays small)
        ti.pax_headers["SCHILY.xattr.user.blob"] = ("%08d-" % i) * 6000
        if i % 10 == 0:
            ti.pax_headers["SCHILY.xattr.user.same"] = "S" * 60000
        tf.addfile(ti)
    tf.close()
EOF
# shellcheck disable=SC2086 # MKFS may carry options
rss=$("$PYTHON" -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
	$MKFS -q "$WORK/xmem.tar.gz" "$WORK/xmem.img") || fail "mkfs xmem.tar.gz"
check "4000 x 60 KB xattrs: peak RSS $((${rss:-0} / 1024)) MiB < 48 MiB" \
	test "${rss:-999999999}" -lt $((48 * 1024))
check "xmem: fsck.img --compare" "$FSCK_IMG" -q --compare="$WORK/xmem.tar.gz" \
	"$WORK/xmem.img"
# the common value is stored once: 400 inodes refer to it by id
isize=$("$DUMP_IMG" --path=/m00/f00000 "$WORK/xmem.img" |
	sed -n 's/^Xattr area: *\([0-9]*\) bytes.*/\1/p')
check "xmem: the common 60 KB value is shared (inline area ${isize:-?} bytes)" \
	test "${isize:-999999}" -lt 61000
rm -f "$WORK/xmem.img" "$WORK/xmem.tar.gz"

finish
