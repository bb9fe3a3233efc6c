#!/bin/bash
# File flags (pax SCHILY.fflags): filesystem-internal ones (ext4's extent,
# huge_file, index, inline_data, ...) are dropped without a word; those a
# user sets (immutable, append-only, nodump, noatime, ...) are dropped with
# one warning naming the count and the first entries, refused with
# --file-flags=error, dropped silently with --file-flags=ignore (and the
# deprecated --ignore-file-flags). Every image mounts and compares equal
# with the extraction; fsck.img --compare applies the same rule.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup

SAME=(-T 1700000000 -U 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0)

# ref_no_flags TAR: the reference extraction, made before verify_image
# would: without file flags, which would make it undeletable (immutable)
# and mean nothing to the comparison anyway.
ref_no_flags() {
	local ref
	ref=$(ref_dir "$1")
	mkdir -p "$ref"
	bsdtar -x -p --no-fflags --xattrs --acls --same-owner --numeric-owner \
		-f "$1" -C "$ref" || die "bsdtar could not extract $1"
}

# warnings FILE: how many warning lines FILE holds
warnings() { grep -c 'warning:' "$1"; }

"$PYTHON" - "$WORK" <<'EOF' || die "writing the flag tars"
import io, sys, tarfile

def tar(path, entries):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for name, kind, flags in entries:
            ti = tarfile.TarInfo(name)
            ti.type = kind
            ti.mtime = 1600000000
            ti.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
            if flags:
                ti.pax_headers = {"SCHILY.fflags": flags}
            data = b""
            if kind == tarfile.REGTYPE:
                data = name.encode() * 3
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))

R, D = tarfile.REGTYPE, tarfile.DIRTYPE
w = sys.argv[1]
# only internal flags, and names saying a flag is clear
tar(w + "/internal.tar", [
    ("d", D, "index"),
    ("d/extent", R, "extent,huge_file"),
    ("d/inline", R, "inline_data"),
    ("d/crypt", R, "extent encrypt,verity"),
    ("d/cleared", R, "noschg,dump,nouappnd"),
    ("d/plain", R, None),
])
# five entries with a user's flags, mixed with internal ones
tar(w + "/user.tar", [
    ("d", D, "index"),
    ("d/nodump", R, "extent,nodump"),
    ("d/noatime-dir", D, "noatime"),
    ("d/immutable", R, "schg"),
    ("d/append", R, "inline_data,sappnd,nocow"),
    ("d/inside", R, "extent"),
    ("d/uchg", R, "uchg"),
    ("d/plain", R, None),
])
EOF

# Internal flags: no warning, not even an error with --file-flags=error.
t=$WORK/internal.tar
ref_no_flags "$t"
IMG=$WORK/internal.img
check "internal flags: mkfs succeeds" \
	mkfs_img "$t" "$IMG" 2>"$WORK/internal.err"
check "internal flags: no warning" test "$(warnings "$WORK/internal.err")" -eq 0
verify_image "$IMG" "$t"
rm -f "$WORK/internal-error.img"
check "internal flags: --file-flags=error converts too" \
	mkfs_img --file-flags=error "$t" "$WORK/internal-error.img"
rc=0
"$FSCK_IMG" --compare="$t" --file-flags=error "$IMG" >"$WORK/internal.cmp" \
	2>&1 || rc=$?
check "internal flags: fsck --compare --file-flags=error exits 0" test $rc -eq 0
check "internal flags: fsck --compare warns about nothing" \
	test "$(warnings "$WORK/internal.cmp")" -eq 0

# A user's flags: dropped, one warning with the count and the first entries.
t=$WORK/user.tar
ref_no_flags "$t"
IMG=$WORK/user.img
check "user flags: mkfs succeeds" \
	mkfs_img "${SAME[@]}" "$t" "$IMG" 2>"$WORK/user.err"
sed "s/^/    | /" "$WORK/user.err"
check "user flags: exactly one warning" test "$(warnings "$WORK/user.err")" -eq 1
check "user flags: the warning counts 5 entries and names the first" \
	grep -q 'warning: file flags .* dropped from 5 entries: d/nodump (nodump), d/noatime-dir/* (noatime), d/immutable (schg), \.\.\.$' \
	"$WORK/user.err"
check "user flags: internal flags are not named" \
	test "$(grep -c 'extent\|inline_data\|index' "$WORK/user.err")" -eq 0
verify_image "$IMG" "$t"

# The flags leave no trace in the image: ignore gives the same bytes.
for o in --file-flags=ignore --ignore-file-flags --file-flags=warn; do
	rm -f "$WORK/same.img"
	mkfs_img "${SAME[@]}" "$o" "$t" "$WORK/same.img" 2>"$WORK/same.err" ||
		fail "mkfs $o"
	check "$o: image identical to the default's" cmp -s "$IMG" "$WORK/same.img"
	case $o in
	*ignore*) check "$o: no warning" \
		test "$(warnings "$WORK/same.err")" -eq 0 ;;
	esac
done

# --file-flags=error: refused, naming the first entry and its flags.
rm -rf "$WORK/err" && mkdir "$WORK/err"
rc=0
mkfs_img --file-flags=error "$t" "$WORK/err/user.img" 2>"$WORK/error.err" ||
	rc=$?
sed "s/^/    | /" "$WORK/error.err"
check "--file-flags=error: exit 1" test $rc -eq 1
check "--file-flags=error: names the entry and its flags" \
	grep -q 'd/nodump: file flags (nodump) cannot be stored' "$WORK/error.err"
check "--file-flags=error: nothing left behind" \
	test -z "$(ls -A "$WORK/err")"
rc=0
mkfs_img --file-flags=sometimes "$t" "$WORK/err/user.img" 2>"$WORK/bad.err" ||
	rc=$?
check "--file-flags=sometimes: a usage error" test $rc -eq 2
check "--file-flags=sometimes: says which values are valid" \
	grep -q 'warn, error or ignore' "$WORK/bad.err"

# fsck.img --compare: the same rule.
rc=0
"$FSCK_IMG" --compare="$t" "$IMG" >"$WORK/cmp.out" 2>"$WORK/cmp.err" || rc=$?
check "fsck --compare: exit 0" test $rc -eq 0
check "fsck --compare: one warning counting 5 entries" \
	test "$(grep -c 'warning: .*on 5 entries: d/nodump (nodump)' "$WORK/cmp.err")" -eq 1
rc=0
"$FSCK_IMG" --compare="$t" --file-flags=error "$IMG" >"$WORK/cmp.out" 2>&1 ||
	rc=$?
check "fsck --compare --file-flags=error: exit 4" test $rc -eq 4
check "fsck --compare --file-flags=error: one difference per entry" \
	test "$(grep -c 'unrepresentable: file flags' "$WORK/cmp.out")" -eq 5
check "fsck --compare --file-flags=error: the internal-only entry is fine" \
	test "$(grep -c 'd/inside' "$WORK/cmp.out")" -eq 0
check "fsck --compare --file-flags=error: names the flags" \
	grep -q 'd/append: unrepresentable: file flags (sappnd,nocow)' \
	"$WORK/cmp.out"
for o in --file-flags=ignore --ignore-file-flags; do
	rc=0
	"$FSCK_IMG" --compare="$t" "$o" "$IMG" >"$WORK/cmp.out" 2>&1 || rc=$?
	check "fsck --compare $o: exit 0, no warning" \
		test $rc -eq 0 -a "$(warnings "$WORK/cmp.out")" -eq 0
done
rc=0
"$FSCK_IMG" --compare="$t" --file-flags=no "$IMG" >/dev/null 2>&1 || rc=$?
check "fsck --file-flags=no: a usage error (16)" test $rc -eq 16

# Flags set with chattr on ext4 and archived by bsdtar, which writes them
# as pax SCHILY.fflags (--no-fflags would leave them out).
if command -v mkfs.ext4 >/dev/null && command -v chattr >/dev/null; then
	e4=$WORK/e4
	mkdir -p "$e4/mnt"
	truncate -s 32M "$e4/ext4.fs"
	mkfs.ext4 -q -F -O inline_data "$e4/ext4.fs" || die "mkfs.ext4"
	mount -o loop "$e4/ext4.fs" "$e4/mnt" || die "mount ext4"
	track_mount "$e4/mnt"
	m=$e4/mnt
	mkdir "$m/d" "$m/big"
	echo small >"$m/d/small"
	head -c 100000 /dev/urandom >"$m/d/large"
	for i in $(seq 200); do : >"$m/big/a-long-enough-file-name-$i"; done
	echo a >"$m/d/append" && chattr +a "$m/d/append"
	echo i >"$m/d/immutable" && chattr +i "$m/d/immutable"
	echo d >"$m/d/nodump" && chattr +d "$m/d/nodump"
	echo n >"$m/d/noatime" && chattr +A "$m/d/noatime"
	bsdtar -C "$m" --format=pax -cf "$WORK/ext4.tar" d big ||
		die "bsdtar on ext4"
	# the same flags read from the directory itself
	check "ext4 directory: mkfs succeeds" \
		mkfs_img "$m" "$WORK/ext4-dir.img" 2>"$WORK/ext4-dir.err"
	sed "s/^/    | /" "$WORK/ext4-dir.err"
	check "ext4 directory: one warning counting the 4 flagged files" \
		test "$(grep -c 'warning: .* 4 entries: ' "$WORK/ext4-dir.err")" -eq 1
	chattr -i -a "$m/d/immutable" "$m/d/append"
	unmount "$m" || fail "umount ext4"
	t=$WORK/ext4.tar
	check "ext4 tar: bsdtar recorded the flags" \
		test "$(grep -ac 'SCHILY.fflags' "$t")" -ge 4
	ref_no_flags "$t"
	IMG=$WORK/ext4.img
	check "ext4 tar: mkfs succeeds" \
		mkfs_img "$t" "$IMG" 2>"$WORK/ext4.err"
	sed "s/^/    | /" "$WORK/ext4.err"
	check "ext4 tar: one warning counting the 4 flagged files" \
		test "$(grep -c 'warning: .* 4 entries: d/' "$WORK/ext4.err")" -eq 1
	verify_image "$IMG" "$t"
	rc=0
	"$FSCK_IMG" --compare="$t" --file-flags=error "$IMG" \
		>"$WORK/ext4.cmp" 2>&1 || rc=$?
	check "ext4 tar: fsck --compare --file-flags=error: 4 differences" \
		test $rc -eq 4 -a \
		"$(grep -c 'unrepresentable: file flags' "$WORK/ext4.cmp")" -eq 4
else
	log "no mkfs.ext4 or chattr: the ext4 part is skipped"
fi

finish
