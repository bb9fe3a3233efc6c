#!/bin/bash
# SPDX-License-Identifier: MIT
# lib/format is the only place that encodes or decodes on-disk bytes
# (tests/helpers/ondisk.sh). First on a small planted tree, to show the
# checker sees every kind of hand encoding it claims to and lets the
# allowed ones pass, then on this tree.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
setup_tmp
ONDISK=$top_srcdir/tests/helpers/ondisk.sh

# put FILE TEXT: a source of the planted tree
put() {
	mkdir -p "$(dirname "$WORK/src/$1")"
	printf '%s\n' "$2" >"$WORK/src/$1"
}

put lib/writer/slot.c 'void w(unsigned char *d, unsigned int n)
{
	imgfs_put_le32(d + 64, n);
}'
put lib/reader/swap.c 'unsigned int r(const unsigned int *p) { return le32toh(*p); }'
put lib/check/bytes.c 'unsigned int c(const unsigned char *m)
{
	return m[0] | m[1] << 8;
}'
put fsck/cast.c 'unsigned int f(const void *b) { return *(const uint32_t *)b; }'
# allowed: the format layer itself, comments, other formats, known lines
put lib/format/device.c 'void e(unsigned char *b) { imgfs_put_le32(b + 64, 1); }'
put lib/oci/doc.c '/* not imgfs_get_le32(p) by hand:
 * imgfs_get_le16(p) neither */
// imgfs_put_le64() is for lib/format
int o(void);'
put lib/verity/sb.c 'unsigned int v(const void *b) { return imgfs_get_le32(b); }'
put lib/writer/dm_verity.c 'void s(unsigned char *seed, long t)
{
	imgfs_put_le64(seed + 16, (unsigned long)t);
}'

out=$WORK/planted.out
"$ONDISK" "$WORK/src" >"$out"
check "the planted tree fails" test $? -eq 1
sed 's/^/  planted: /' "$out"

# expect TEXT: a line of the report starts with TEXT
expect() {
	if grep -qF -- "$1" "$out"; then
		ok "reported: $1"
	else
		fail "not reported: $1"
	fi
}
expect 'FAIL: lib/writer/slot.c:3: little-endian field by hand'
expect 'FAIL: lib/reader/swap.c:1: byte order by hand'
expect 'FAIL: lib/check/bytes.c:3: integer assembled from bytes'
expect 'FAIL: fsck/cast.c:1: word read or written through a cast pointer'
expect 'ondisk: 4 violation(s)'
if grep -E 'lib/(format|oci|verity)/|dm_verity' "$out"; then
	fail "lib/format, a comment line, another format or a known line was reported"
else
	ok "lib/format, comment lines, other formats and known lines not reported"
fi

# This tree.
"$ONDISK" "$top_srcdir"
check "no on-disk field is encoded or decoded outside lib/format" test $? -eq 0
finish
