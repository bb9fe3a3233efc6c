#!/bin/bash
# SPDX-License-Identifier: MIT
# mkfs.img --oci's messages name the cause: --assemble after shards run
# with other options says so and which option lines differ; --merge of
# layers converted with -z says they are compressed (not which file
# failed); a --platform no manifest has fails before anything is created.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
require_build
setup_tmp

mkdir -p "$WORK/t"
yes compressible | head -c 300000 >"$WORK/t/f"
bsdtar -cf "$WORK/l.tar" -C "$WORK/t" f
$MKLAYOUT "$WORK/src" "m=$WORK/l.tar:gzip" || die "mklayout failed"

# expect WHAT PATTERN ARGS...: exit 1 and PATTERN in the message
expect() {
	local what=$1 pat=$2 rc=0
	shift 2
	mkfs_img "$@" >/dev/null 2>"$WORK/err" || rc=$?
	if [ $rc -eq 1 ] && grep -qE -- "$pat" "$WORK/err"; then
		ok "$what: $(tail -n 1 "$WORK/err" | cut -c1-160)..."
	else
		cat "$WORK/err"
		fail "$what: exit $rc"
	fi
}
check "shard 0/1 with -z lz4" mkfs_img --oci -q -z lz4 --shard=0/1 "$WORK/src" "$WORK/sh"
expect "--assemble without -z" \
	"converted with other options .*this run: 'compress 0 [^']*', there: 'compress [1-9]" \
	--oci -q --assemble "$WORK/src" "$WORK/sh"

check "convert with -z lz4" mkfs_img --oci -q -z lz4 "$WORK/src" "$WORK/z"
B=$(layer_blobs "$WORK/z" m | head -n 1)
expect "--merge of compressed layers" \
	"layer 1 \\(blob sha256:$(basename "$B")\\) holds compressed data \\(converted with -z\\)" \
	--oci --merge "$WORK/z" "$WORK/z.img"
[ ! -e "$WORK/z.img" ] || fail "--merge left $WORK/z.img"

expect "--platform no manifest has" "no manifest .* platform given \\(--platform=linux/s390x\\)" \
	--oci -q --platform=linux/s390x "$WORK/src" "$WORK/none"
[ ! -e "$WORK/none" ] && ok "nothing created for it" || fail "$(find "$WORK/none")"

finish
