#!/bin/bash
# SPDX-License-Identifier: MIT
# fsck.img's command line, as the three tools share it: --version and
# --help, usage errors (message, Try hint, exit 16, nothing on stdout),
# operational errors (the path named, no summary, exit 8), data on stdout
# and the summary on stderr, counts with the right plural, the JSON
# document laid out like dump.img's, and --digest output that sha256sum -c
# accepts inside a tree extracted by fsck.img --extract.
. "$top_srcdir/tests/lib.sh"

require_tools bsdtar sha256sum "$PYTHON"
[ -x "$FSCK_IMG" ] || die "fsck.img not built: $FSCK_IMG"
[ -x "$DUMP_IMG" ] || die "dump.img not built: $DUMP_IMG"
[ -x "${MKFS%% *}" ] || skip "mkfs.img not built"
setup_tmp

VERSION=$(sed -n 's/^Version: //p' "$top_builddir/imgfs.pc")
[ -n "$VERSION" ] || die "no version in $top_builddir/imgfs.pc"

# run ARGS...: fsck.img's stdout in $WORK/out, stderr in $WORK/err, exit
# status in $RC
run() {
	RC=0
	"$FSCK_IMG" "$@" >"$WORK/out" 2>"$WORK/err" || RC=$?
}

# A tree with one of each kind, so the summary's singulars show: 1 symlink,
# 1 extra hard link; and some directories and files for the plurals.
SRC=$WORK/src
make_tree "$SRC"
bsdtar --format=pax -cf "$WORK/tree.tar" -C "$SRC" . || die "bsdtar failed"
mkfs_img -q "$WORK/tree.tar" "$WORK/tree.img" || die "mkfs.img failed"
mkdir "$WORK/one"
printf 'one\n' >"$WORK/one/f"
ln "$WORK/one/f" "$WORK/one/g"
ln -s f "$WORK/one/l"
bsdtar --format=pax -cf "$WORK/one.tar" -C "$WORK/one" . ||
	die "bsdtar failed"
mkfs_img -q "$WORK/one.tar" "$WORK/one.img" || die "mkfs.img failed"

# --version, --help
run --version
check "--version: exit 0" test $RC -eq 0
check "--version: 'fsck.img (imgfs) $VERSION'" \
	test "$(cat "$WORK/out")" = "fsck.img (imgfs) $VERSION"
check "--version: nothing on stderr" test ! -s "$WORK/err"
run -V
check "-V: the same" test "$(cat "$WORK/out")" = "fsck.img (imgfs) $VERSION"
run --help
check "--help: exit 0, on stdout" test $RC -eq 0 -a ! -s "$WORK/err"
check "--help: starts with the usage line" \
	test "$(head -n 1 "$WORK/out")" = "usage: fsck.img [OPTIONS] IMAGE"
for code in 0 4 8 16; do
	check "--help lists exit code $code" \
		grep -qE "^ +$code +[a-z]" "$WORK/out"
done

# usage_error WHAT PATTERN ARGS...: exit 16, the message (matching
# PATTERN) then the Try hint on stderr, nothing on stdout
usage_error() {
	local what=$1 pat=$2
	shift 2
	run "$@"
	check "$what: exit 16" test $RC -eq 16
	check "$what: message" grep -qE "^fsck.img: $pat" "$WORK/err"
	check "$what: Try hint last" test "$(tail -n 1 "$WORK/err")" = \
		"Try 'fsck.img --help' for more information."
	check "$what: the usage line before it" test \
		"$(tail -n 2 "$WORK/err" | head -n 1)" = "usage: fsck.img [OPTIONS] IMAGE"
	check "$what: three lines on stderr" test "$(wc -l <"$WORK/err")" -eq 3
	check "$what: nothing on stdout" test ! -s "$WORK/out"
}
usage_error "unknown long option" "unknown option '--bogus'" \
	--bogus "$WORK/tree.img"
usage_error "unknown short option" "unknown option '-x'" -x "$WORK/tree.img"
usage_error "missing argument" "option '--extract' needs an argument" \
	"$WORK/tree.img" --extract
usage_error "no image" "no IMAGE given"
usage_error "two images" "only one IMAGE expected" \
	"$WORK/tree.img" "$WORK/one.img"
usage_error "bad --force-uid" \
	"invalid value for --force-uid: '-1' \(an integer from 0 to 4294967295\)" \
	--force-uid=-1 --compare="$WORK/tree.tar" "$WORK/tree.img"
usage_error "bad --extract-limit" "invalid value for --extract-limit: '0'" \
	--extract="$WORK/x0" --extract-limit=0 "$WORK/tree.img"
usage_error "bad --verity-roothash" "invalid value for --verity-roothash" \
	--verity-roothash=12 "$WORK/tree.img"
usage_error "--overwrite alone" "--overwrite only makes sense with --extract" \
	--overwrite "$WORK/tree.img"
usage_error "--digest --no-data" "--digest needs the data" \
	--digest --no-data "$WORK/tree.img"

# a clean image: the summary on stderr, stdout empty
run "$WORK/tree.img"
check "clean image: exit 0" test $RC -eq 0
check "clean image: nothing on stdout" test ! -s "$WORK/out"
check "clean image: summary on stderr" \
	grep -q "^$WORK/tree.img: .* 0 errors, 0 warnings$" "$WORK/err"
run -q "$WORK/tree.img"
check "-q: no summary" test ! -s "$WORK/err" -a ! -s "$WORK/out"

# plurals: one symlink, one extra hard link, one regular file
run "$WORK/one.img"
check "one of each: '1 directory', '1 symlink', '1 extra hard link'" \
	grep -q "(1 directory, 1 regular, 1 symlink, 0 special, 1 extra hard link), 4 data bytes read; 0 errors, 0 warnings$" \
	"$WORK/err"
printf x >"$WORK/one/x"
bsdtar --format=pax -cf "$WORK/x.tar" -C "$WORK/one" ./x || die "bsdtar failed"
mkfs_img -q "$WORK/x.tar" "$WORK/x.img" || die "mkfs.img failed"
run -v "$WORK/x.img"
check "-v: a 1-byte file is '1 byte'" \
	grep -q '^regular /x (nid [0-9]*, 1 byte)$' "$WORK/out"
run --compare="$WORK/one.tar" "$WORK/one.img"
check "--compare: '0 differences from TAR'" \
	grep -q "; 0 errors, 0 warnings, 0 differences from $WORK/one.tar$" \
	"$WORK/err"
run --compare="$WORK/tree.tar" "$WORK/one.img"
check "--compare with another tar: exit 4" test $RC -eq 4
n=$(grep -c '^differs: ' "$WORK/out")
if [ "$n" -eq 1 ]; then w=difference; else w=differences; fi
check "--compare: '$n $w' in the summary" \
	grep -q ", $n $w from $WORK/tree.tar$" "$WORK/err"

# --digest: only digest lines on stdout, one per regular file
run --digest "$WORK/tree.img"
check "--digest: exit 0" test $RC -eq 0
check "--digest: every stdout line is a sha256sum line with ./PATH" \
	test "$(grep -cvE '^[0-9a-f]{64}  \./[^/]' "$WORK/out")" -eq 0
check "--digest: no summary on stdout" \
	test "$(grep -c 'errors\|warnings' "$WORK/out")" -eq 0
check "--digest: the summary on stderr" grep -q "0 errors, 0 warnings" \
	"$WORK/err"
cp "$WORK/out" "$WORK/tree.sha256"
(cd "$SRC" && find . -type f -print0 | xargs -0 sha256sum) >"$WORK/src.sha256"
check "--digest: what sha256sum prints in the source tree, every file" \
	cmp <(sort -k2 "$WORK/tree.sha256") <(sort -k2 "$WORK/src.sha256")

# sha256sum -c inside a tree extracted by fsck.img
run -q --extract="$WORK/x" "$WORK/tree.img"
check "--extract: exit 0" test $RC -eq 0
(cd "$WORK/x" && sha256sum -c --strict "$WORK/tree.sha256") \
	>"$WORK/c.out" 2>&1
check "sha256sum -c in the extracted tree: exit 0" test $? -eq 0
check "sha256sum -c: every file OK" test "$(grep -c ': OK$' "$WORK/c.out")" \
	-eq "$(wc -l <"$WORK/tree.sha256")"
printf changed >"$WORK/x/dir/one"
(cd "$WORK/x" && sha256sum -c --quiet "$WORK/tree.sha256") \
	>"$WORK/c.out" 2>&1
check "sha256sum -c notices a changed file" test $? -ne 0
check "... naming it" grep -q '^\./dir/one: FAILED$' "$WORK/c.out"

# operational errors: the path named, no summary, exit 8
# op_error WHAT PATTERN ARGS...
op_error() {
	local what=$1 pat=$2
	shift 2
	run "$@"
	check "$what: exit 8" test $RC -eq 8
	check "$what: names the path" grep -qF "fsck.img: $pat" "$WORK/err"
	check "$what: no summary" test "$(grep -c 'errors, ' "$WORK/err")" -eq 0
	check "$what: one line on stderr" test "$(wc -l <"$WORK/err")" -eq 1
	check "$what: nothing on stdout" test ! -s "$WORK/out"
}
op_error "missing image" "$WORK/missing.img: No such file or directory" \
	"$WORK/missing.img"
mkdir "$WORK/dir.img"
op_error "image is a directory" "$WORK/dir.img: " "$WORK/dir.img"
mkdir "$WORK/full"
: >"$WORK/full/keep"
op_error "non-empty --extract DIR" "--extract: $WORK/full is not empty" \
	--extract="$WORK/full" "$WORK/tree.img"
check "non-empty --extract DIR: left as it was" \
	test "$(ls -A "$WORK/full")" = keep
op_error "missing --compare TAR" "$WORK/missing.tar" \
	--compare="$WORK/missing.tar" "$WORK/tree.img"

# --json: the shape of dump.img's document
run --json "$WORK/tree.img"
check "--json: exit 0, nothing on stderr" test $RC -eq 0 -a ! -s "$WORK/err"
"$DUMP_IMG" --json "$WORK/tree.img" >"$WORK/dump.json" ||
	fail "dump.img --json failed"
check "--json: laid out like dump.img's" "$PYTHON" - "$WORK/out" \
	"$WORK/dump.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
dump = json.load(open(sys.argv[2]))
keys = ["schema_version", "image", "superblock", "errors", "warnings",
        "notes", "stats", "problems", "files", "differences", "extracted",
        "dm_verity", "fatal", "exit_code"]
bad = []
if list(d) != keys:
    bad.append("keys %r" % list(d))
if list(dump)[0] != "schema_version" or list(d)[0] != "schema_version":
    bad.append("schema_version is not the first key of both")
if d["schema_version"] != 2:
    bad.append("schema_version %r" % d["schema_version"])
for k in ("block_size", "feature_compat", "feature_incompat"):
    if d["superblock"].get(k) != dump["superblock"][k]:
        bad.append("superblock.%s %r, dump.img says %r" %
                   (k, d["superblock"].get(k), dump["superblock"][k]))
for k in ("files", "differences", "extracted", "dm_verity", "fatal"):
    if d[k] is not None:
        bad.append("%s is %r, not null" % (k, d[k]))
if d["errors"] or d["exit_code"] or d["problems"]:
    bad.append("not clean")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
run --json --digest "$WORK/missing.img"
check "--json, missing image: exit 8" test $RC -eq 8
check "--json, missing image: fatal names it, superblock null" \
	"$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["exit_code"] == 8 and d["superblock"] is None and
         d["fatal"].startswith(sys.argv[2] + ":") and d["files"] == [] and
         d["schema_version"] == 2 else 1)' "$WORK/out" "$WORK/missing.img"

finish
