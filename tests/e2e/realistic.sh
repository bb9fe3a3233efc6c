#!/bin/bash
# A realistic layer: about 5000 entries taken from this system's /usr
# (headers, time zone data with its links, documentation), owned by root,
# converted from a tar and from a directory, at 4096 and 512 bytes.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_tools tar

N=5000
list=$WORK/list
(cd / && find usr/share/zoneinfo usr/include usr/share/doc \
	usr/lib/python3* -xdev 2>/dev/null | LC_ALL=C sort | head -n $N) >"$list.tail"
printf '%s\n' usr usr/share usr/lib >"$list"
cat "$list.tail" >>"$list"
n=$(wc -l <"$list")
[ "$n" -ge 3000 ] || die "only $n entries under /usr, need 3000"
tar -C / --no-recursion --format=posix -cf "$WORK/usr.tar" -T "$list" ||
	die "tar of /usr failed"
log "layer: $n entries, $(stat -c %s "$WORK/usr.tar") bytes"

convert_and_compare "$WORK/usr.tar"
convert_and_compare "$WORK/usr.tar" -b 512 --inline-data

# A directory source: the reference extraction itself.
src=$(ref_dir "$WORK/usr.tar")
rm -f "$WORK/dir.img"
if mkfs_img "$src" "$WORK/dir.img"; then
	ok "mkfs from a directory"
	compare_mounts "$WORK/dir.img" "$src" "loop file"
	fsck_image "$WORK/dir.img" 4096
else
	fail "mkfs from a directory"
fi

finish
