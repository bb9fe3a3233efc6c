#!/bin/bash
# SPDX-License-Identifier: MIT
# mkfs.img --oci's command line: usage errors exit 2 with the message, the
# usage line and the hint; --list-units writes nothing; the destination
# may not be the source; ordinary options that do not apply are refused.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
require_build
setup_tmp

bsdtar -cf "$WORK/l.tar" -C "$top_srcdir" README.md
$MKLAYOUT "$WORK/src" "t=$WORK/l.tar:gzip" || die "mklayout failed"

# usage_error WHAT PATTERN ARGS...: exit 2, PATTERN in the message, usage
usage_error() {
	local what=$1 pat=$2 rc=0
	shift 2
	mkfs_img "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$pat" "$WORK/err" &&
		grep -q '^usage: mkfs.img --oci' "$WORK/err" &&
		grep -q "^Try 'mkfs.img --help'" "$WORK/err"; then
		ok "$what: exit 2, $(head -n 1 "$WORK/err")"
	else
		cat "$WORK/err"
		fail "$what: exit $rc"
	fi
}
usage_error "no operands" "takes SRC_LAYOUT and DST_LAYOUT" --oci
usage_error "one operand" "takes SRC_LAYOUT and DST_LAYOUT" --oci "$WORK/src"
usage_error "--shard out of range" "invalid value for --shard" --oci --shard=2/2 "$WORK/src" "$WORK/d"
usage_error "--shard not a fraction" "invalid value for --shard" --oci --shard=x "$WORK/src" "$WORK/d"
usage_error "--jobs=0" "invalid value for --jobs" --oci --jobs=0 "$WORK/src" "$WORK/d"
usage_error "--platform=linux" "invalid value for --platform" --oci --platform=linux "$WORK/src" "$WORK/d"
usage_error "unknown media type" "invalid value for --layer-media-type" --oci --layer-media-type=x "$WORK/src" "$WORK/d"
usage_error "-U" "UUID is derived" --oci -U 6e0f1a52-8f4e-4c8e-9a43-0b8a3b5e2d11 "$WORK/src" "$WORK/d"
usage_error "--tar-index" "does not apply" --oci --tar-index "$WORK/src" "$WORK/d"
usage_error "--shard with --assemble" "exclude each other" --oci --shard=0/2 --assemble "$WORK/src" "$WORK/d"
usage_error "a bad ordinary option value" "invalid value for -b" --oci -b 3000 "$WORK/src" "$WORK/d"
[ -e "$WORK/d" ] && fail "a usage error created the destination"

mkfs_img --oci --help >"$WORK/help" && grep -q -- "--shard=I/N" "$WORK/help" &&
	grep -q -- "--flatten" "$WORK/help" && ok "--oci --help lists the OCI options" ||
	fail "--oci --help"

mkfs_img --oci --list-units "$WORK/src" "$WORK/d" >"$WORK/units" ||
	fail "--list-units"
[ "$(wc -l <"$WORK/units")" -eq 1 ] && [ ! -e "$WORK/d" ] &&
	ok "--list-units: one line, nothing written" ||
	fail "--list-units wrote something or printed $(wc -l <"$WORK/units") lines"

rc=0
mkfs_img --oci -q "$WORK/src" "$WORK/src" 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] && grep -q "is the source layout" "$WORK/err" &&
	ok "the source as destination: refused" ||
	{ cat "$WORK/err"; fail "source as destination: exit $rc"; }
rc=0
mkfs_img --oci -q "$WORK/nosuch" "$WORK/d" 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] && grep -q "not an OCI image layout" "$WORK/err" &&
	ok "a missing layout: $(cat "$WORK/err")" ||
	{ cat "$WORK/err"; fail "missing layout: exit $rc"; }

finish
