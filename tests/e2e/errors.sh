#!/bin/bash
# Failures: every case must exit non-zero, print an error naming the entry
# (or the source), and leave nothing behind in the output directory: no
# image, no temporary file.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_tools gzip xz zstd

# expect_failure NAME PATTERN SOURCE [MKFS OPTIONS...]: mkfs of SOURCE must
# fail with PATTERN (grep -E) in its messages, leaving the output dir empty.
N_OUT=0
expect_failure() {
	local name=$1 pattern=$2 src=$3 out rc=0
	shift 3
	# numbered, so that the pattern cannot match the directory's name
	N_OUT=$((N_OUT + 1))
	out=$WORK/o$N_OUT
	mkdir -p "$out"
	if [ "$src" = - ]; then
		mkfs_img "$@" - "$out/layer.img" <"$STDIN_SRC" >"$WORK/$name.out" 2>&1 || rc=$?
	else
		mkfs_img "$@" "$src" "$out/layer.img" >"$WORK/$name.out" 2>&1 || rc=$?
	fi
	sed "s/^/    | /" "$WORK/$name.out" | head -n 5
	if [ $rc -eq 0 ]; then
		fail "$name: mkfs succeeded"
	elif [ $rc -ge 128 ]; then
		fail "$name: mkfs died of a signal (exit $rc)"
	else
		ok "$name: exit $rc"
	fi
	if grep -qE -- "$pattern" "$WORK/$name.out"; then
		ok "$name: message names ${pattern}"
	else
		fail "$name: no message naming $pattern"
	fi
	if [ -n "$(ls -A "$out")" ]; then
		fail "$name: left files behind: $(ls -A "$out" | tr '\n' ' ')"
	else
		ok "$name: output directory empty"
	fi
}

pymk mktar.py missing-link "$WORK/missing-link.tar"
expect_failure missing-link-target 'd/broken-link|d/no-such-target' \
	"$WORK/missing-link.tar"

pymk mktar.py long-component "$WORK/long256.tar" 256
expect_failure name-256 'd/xxxxxxxxxxxxxxxx' "$WORK/long256.tar"

pymk mktar.py long-symlink "$WORK/long-symlink.tar"
expect_failure symlink-4096 'd/too-long' "$WORK/long-symlink.tar"

pymk mktar.py hardlink-to-dir "$WORK/hardlink-dir.tar"
expect_failure hardlink-to-dir 'd/dirlink' "$WORK/hardlink-dir.tar"

pymk mktar.py bad-xattr "$WORK/bad-xattr.tar"
expect_failure xattr-namespace 'd/odd-xattr' "$WORK/bad-xattr.tar"

pymk mktar.py bad-whiteout "$WORK/bad-whiteout.tar"
expect_failure bad-whiteout 'd/\.wh\.\.wh\.plnk' "$WORK/bad-whiteout.tar"

pymk mktar.py bad-device "$WORK/bad-device.tar"
expect_failure device-major-4096 'd/huge-major' "$WORK/bad-device.tar"

pymk mktar.py file-flags "$WORK/file-flags.tar"
# file flags a user set are dropped with a warning (fflags.sh), refused
# when asked to
expect_failure file-flags 'd/flagged.*file flags \(nodump\)' \
	"$WORK/file-flags.tar" --file-flags=error

# Names the path rules would turn into ".", ".." or nothing: whiteouts of
# "." and "..", an empty whiteout, whiteout paths ending in "." or "..",
# and non-directories whose path ends in "/", "." or "..". Each tar also
# holds a plain file; fsck.img --compare must refuse the entry as well.
"$PYTHON" - "$WORK" <<'EOF' || die "writing the bad-name tars"
import io, sys, tarfile
R, D, L, S, F = (tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.LNKTYPE,
                 tarfile.SYMTYPE, tarfile.FIFOTYPE)
cases = {
    "wh-dot": ("d/.wh..", R), "wh-dotdot": ("d/.wh...", R),
    "wh-empty": ("d/.wh.", R), "wh-path-dot": ("d/.wh.x/.", D),
    "wh-path-dotdot": ("d/.wh.x/y/..", D), "wh-path-slash": ("d/.wh.x/", D),
    "file-dot": ("d/f/.", R),
    "file-dotdot": ("d/f/..", R), "symlink-slash": ("d/l/", S),
    "fifo-dot": ("d/p/.", F), "hardlink-dot": ("d/h/.", L),
}
class Literal(tarfile.TarInfo):
    """Names stored as given (tarfile adds a "/" to directories')."""
    def get_info(self):
        info = super().get_info()
        info["name"] = self.name
        return info
for case, (name, kind) in cases.items():
    with tarfile.open("%s/%s.tar" % (sys.argv[1], case), "w",
                      format=tarfile.PAX_FORMAT) as t:
        for n, k, data in (("d/", D, b""), ("d/ok", R, b"ok"),
                           (name, kind, b"")):
            ti = Literal(n)
            ti.type = k
            ti.mode = 0o755 if k == D else 0o644
            ti.mtime = 1600000000
            ti.size = len(data)
            if k in (S, L):
                ti.linkname = "d/ok"
            t.addfile(ti, io.BytesIO(data))
EOF
# an image to hold those tars against with --compare
"$PYTHON" -c 'import sys, tarfile; tarfile.open(sys.argv[1], "w").close()' \
	"$WORK/empty.tar" || die "writing empty.tar"
mkfs_img -q "$WORK/empty.tar" "$WORK/empty.img" || die "mkfs empty.tar"
# bad_name CASE ENTRY-PATTERN [MKFS OPTIONS...]
bad_name() {
	local case=$1 pat=$2 rc=0
	shift 2
	expect_failure "$case$*" "^mkfs.img: $pat: " "$WORK/$case.tar" "$@"
	"$FSCK_IMG" "$@" --compare="$WORK/$case.tar" "$WORK/empty.img" \
		>"$WORK/$case.cmp" 2>&1 || rc=$?
	if [ $rc -eq 4 ] &&
		grep -qE "^differs: $pat: unrepresentable" "$WORK/$case.cmp"; then
		ok "$case$*: fsck.img --compare refuses it too"
	else
		sed "s/^/    | /" "$WORK/$case.cmp" | head -n 5
		fail "$case$*: fsck.img --compare does not refuse it (exit $rc)"
	fi
}
bad_name wh-dot 'd/\.wh\.\.'
bad_name wh-dotdot 'd/\.wh\.\.\.'
bad_name wh-empty 'd/\.wh\.'
bad_name wh-path-dot 'd/\.wh\.x/\.'
bad_name wh-path-dotdot 'd/\.wh\.x/y/\.\.'
bad_name wh-path-slash 'd/\.wh\.x/'
bad_name file-dot 'd/f/\.'
bad_name file-dotdot 'd/f/\.\.'
bad_name symlink-slash 'd/l/'
bad_name fifo-dot 'd/p/\.'
bad_name hardlink-dot 'd/h/\.'
# whiteouts kept verbatim or not, such paths still name directories only
bad_name file-dot 'd/f/\.' --keep-whiteouts
bad_name symlink-slash 'd/l/' --keep-whiteouts

# Cut inside the data of d/big-file (1 MiB of data from offset 2048).
pymk mktar.py one-big-file "$WORK/one.tar"
head -c 600000 "$WORK/one.tar" >"$WORK/truncated.tar"
expect_failure truncated-data 'd/big-file' "$WORK/truncated.tar"
STDIN_SRC=$WORK/truncated.tar expect_failure truncated-stdin 'd/big-file' -
# Cut inside the header of d/big-file (offset 1536..2047).
head -c 1800 "$WORK/one.tar" >"$WORK/truncated-header.tar"
expect_failure truncated-header '[Tt]runcated|[Ee]rror|[Uu]nexpected' \
	"$WORK/truncated-header.tar"

# damage FILE OFFSET: overwrite 8 bytes at OFFSET
damage() {
	printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# Corrupt compressed layers. A compressible tar, so that damage near the
# start breaks the deflate stream itself.
pymk mktar.py basic "$WORK/basic.tar"
gzip -c "$WORK/basic.tar" >"$WORK/deflate.tar.gz"
damage "$WORK/deflate.tar.gz" 100
expect_failure corrupt-deflate 'gzip|[Cc]orrupt|[Dd]ecompress|deflate' \
	"$WORK/deflate.tar.gz"
gzip -c "$WORK/basic.tar" | head -c 20000 >"$WORK/cut.tar.gz"
expect_failure truncated-gzip '[Tt]runcated|gzip|[Uu]nexpected' \
	"$WORK/cut.tar.gz"
# Random data is stored, not deflated: damage in the middle changes the
# content of d/big-file and only the gzip trailer's CRC-32 tells.
gzip -c "$WORK/one.tar" >"$WORK/stored.tar.gz"
size=$(stat -c %s "$WORK/stored.tar.gz")
damage "$WORK/stored.tar.gz" $((size / 2))
gzip -t "$WORK/stored.tar.gz" 2>/dev/null && die "gzip -t accepts the damage"
expect_failure corrupt-gzip-crc 'CRC|crc|checksum|gzip|[Cc]orrupt' \
	"$WORK/stored.tar.gz"
xz -c "$WORK/one.tar" >"$WORK/corrupt.tar.xz"
damage "$WORK/corrupt.tar.xz" $(($(stat -c %s "$WORK/corrupt.tar.xz") / 2))
expect_failure corrupt-xz 'd/big-file|xz|lzma|[Cc]orrupt' "$WORK/corrupt.tar.xz"
zstd -q -c "$WORK/one.tar" >"$WORK/corrupt.tar.zst"
damage "$WORK/corrupt.tar.zst" $(($(stat -c %s "$WORK/corrupt.tar.zst") / 2))
expect_failure corrupt-zstd 'd/big-file|zstd|[Cc]orrupt|checksum' \
	"$WORK/corrupt.tar.zst"

# Not a tar at all.
head -c 10000 /dev/urandom >"$WORK/garbage.bin"
expect_failure garbage 'garbage.bin' "$WORK/garbage.bin"

expect_failure no-source 'does-not-exist' "$WORK/does-not-exist.tar"

# The output directory does not exist.
rc=0
mkfs_img "$WORK/one.tar" "$WORK/no-such-dir/x.img" 2>"$WORK/nodir.out" || rc=$?
check "missing output directory: non-zero exit" test $rc -ne 0
check "missing output directory: message names it" \
	grep -q 'no-such-dir' "$WORK/nodir.out"

# A failed conversion must not destroy an image already at the target.
printf 'previous image' >"$WORK/existing.img"
ls -A "$WORK" >"$WORK/ref/.before"
rc=0
mkfs_img "$WORK/missing-link.tar" "$WORK/existing.img" 2>/dev/null || rc=$?
ls -A "$WORK" >"$WORK/ref/.after"
check "failure over an existing image: non-zero exit" test $rc -ne 0
if [ ! -e "$WORK/existing.img" ]; then
	log "note: a failed conversion removed the existing target"
	ok "failure over an existing image: nothing left at the target"
else
	check "failure over an existing image: left untouched" \
		test "$(cat "$WORK/existing.img")" = "previous image"
fi
check "failure over an existing image: no temporary file" \
	sh -c "diff '$WORK/ref/.before' '$WORK/ref/.after' | grep -v existing.img | grep -q '^[<>]' && exit 1 || exit 0"

# The image may not overwrite its own source.
cp "$WORK/one.tar" "$WORK/self.tar"
rc=0
mkfs_img "$WORK/self.tar" "$WORK/self.tar" 2>"$WORK/self.out" || rc=$?
check "image = source: refused" test $rc -ne 0
check "image = source: source intact" cmp -s "$WORK/one.tar" "$WORK/self.tar"

# Positive control: a 255-byte name is fine.
pymk mktar.py long-component "$WORK/long255.tar" 255
convert_and_compare "$WORK/long255.tar"

finish
