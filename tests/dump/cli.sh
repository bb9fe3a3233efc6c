#!/bin/bash
# SPDX-License-Identifier: MIT
# dump.img's command line, as the three tools share it: --version and
# --help, usage errors (message, Try hint, exit 2, nothing on stdout), an
# unreadable image (named, exit 1, nothing on stdout), views on stdout with
# stderr empty, counts with the right plural, and the JSON document's
# top-level layout (schema_version, then one key per view).
. "$top_srcdir/tests/lib.sh"

require_tools bsdtar "$PYTHON"
[ -x "$DUMP_IMG" ] || die "dump.img not built: $DUMP_IMG"
[ -x "${MKFS%% *}" ] || skip "mkfs.img not built"
setup_tmp

VERSION=$(sed -n 's/^Version: //p' "$top_builddir/imgfs.pc")
[ -n "$VERSION" ] || die "no version in $top_builddir/imgfs.pc"

# run ARGS...: stdout in $WORK/out, stderr in $WORK/err, exit status in $RC
run() {
	RC=0
	"$DUMP_IMG" "$@" >"$WORK/out" 2>"$WORK/err" || RC=$?
}

# one file with one extra hard link, one symlink; lz4 for the
# compression lines
mkdir "$WORK/one"
head -c 20000 /dev/zero >"$WORK/one/f"
ln "$WORK/one/f" "$WORK/one/g"
ln -s f "$WORK/one/l"
bsdtar --format=pax -cf "$WORK/one.tar" -C "$WORK/one" . ||
	die "bsdtar failed"
mkfs_img -q -z lz4 "$WORK/one.tar" "$WORK/one.img" || die "mkfs.img failed"
IMG=$WORK/one.img

run --version
check "--version: exit 0" test $RC -eq 0
check "--version: 'dump.img (imgfs) $VERSION'" \
	test "$(cat "$WORK/out")" = "dump.img (imgfs) $VERSION"
check "--version: nothing on stderr" test ! -s "$WORK/err"
run --help
check "--help: exit 0, on stdout" test $RC -eq 0 -a ! -s "$WORK/err"
check "--help: starts with the usage line" \
	test "$(head -n 1 "$WORK/out")" = "usage: dump.img [OPTIONS] IMAGE"
for code in 0 1 2; do
	check "--help lists exit code $code" \
		grep -qE "^ +$code +[a-z]" "$WORK/out"
done

# usage_error WHAT PATTERN ARGS...
usage_error() {
	local what=$1 pat=$2
	shift 2
	run "$@"
	check "$what: exit 2" test $RC -eq 2
	check "$what: message" grep -qE "^dump.img: $pat" "$WORK/err"
	check "$what: Try hint last" test "$(tail -n 1 "$WORK/err")" = \
		"Try 'dump.img --help' for more information."
	check "$what: the usage line before it" test \
		"$(tail -n 2 "$WORK/err" | head -n 1)" = "usage: dump.img [OPTIONS] IMAGE"
	check "$what: three lines on stderr" test "$(wc -l <"$WORK/err")" -eq 3
	check "$what: nothing on stdout" test ! -s "$WORK/out"
}
usage_error "unknown long option" "unknown option '--bogus'" --bogus "$IMG"
usage_error "unknown short option" "unknown option '-x'" -x "$IMG"
usage_error "missing argument" "option '--path' needs an argument" \
	"$IMG" --path
usage_error "no image" "no IMAGE given"
usage_error "two images" "only one IMAGE expected" "$IMG" "$IMG"
usage_error "bad --nid" "invalid nid 'x'" --nid=x "$IMG"
usage_error "-R without --ls" "-R goes with --ls" -R "$IMG"
usage_error "--cat without a file" "--cat needs a file" --cat "$IMG"

# an image that cannot be read: named, exit 1
run "$WORK/missing.img"
check "missing image: exit 1" test $RC -eq 1
check "missing image: named" \
	grep -qF "dump.img: $WORK/missing.img: No such file or directory" \
	"$WORK/err"
check "missing image: nothing on stdout" test ! -s "$WORK/out"

# views: data on stdout, nothing on stderr; plurals
run -S "$IMG"
check "-S: exit 0, nothing on stderr" test $RC -eq 0 -a ! -s "$WORK/err"
check "-S: '1 extra hard link'" \
	grep -q '^Inodes: *3 (4 paths, 1 extra hard link)$' "$WORK/out"
check "-S: '1 file, 1 extent'" \
	grep -qE '^  lz4 +1 file, 1 extent, 20000 -> [0-9]+ bytes' "$WORK/out"
run -s "$IMG"
check "-s: exit 0, nothing on stderr" test $RC -eq 0 -a ! -s "$WORK/err"
check "-s: no '1 ... slots'-style plural" \
	test "$(grep -cE '(^|[^0-9])1 [a-z ]*(slots|bytes|blocks)' "$WORK/out")" -eq 0

# JSON: schema_version first, then one key per view asked for
run --json -s -S --ls "$IMG"
check "--json: exit 0, nothing on stderr" test $RC -eq 0 -a ! -s "$WORK/err"
check "--json: schema_version 2, then superblock, ls, stats" \
	"$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if list(d) == ["schema_version", "superblock", "ls", "stats"] and
         d["schema_version"] == 2 else 1)' "$WORK/out"

finish
