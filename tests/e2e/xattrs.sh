#!/bin/bash
# Extended attributes and POSIX ACLs: pax SCHILY.xattr records with text,
# binary (NUL, 0xff), empty, 3000-byte and many values on files, a
# directory, a symlink and a device; then real files carrying user.,
# trusted., security. xattrs and access/default ACLs archived by bsdtar and
# by GNU tar. ACLs must come out as system.posix_acl_* xattrs.
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

finish
