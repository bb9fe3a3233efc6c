#!/bin/bash
# mkfs.img's native command line: --version and --help, usage errors (exit
# 2, the valid range, the usage line and a Try hint, nothing written), an
# image given as SOURCE, the stdout/stderr split, the summary and its JSON
# form, progress on a terminal, and SOURCE_DATE_EPOCH.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup

# --version: one line on stdout, the library's version
out=$(mkfs_img --version 2>"$WORK/v.err")
rc=$?
check "--version exits 0" test $rc -eq 0
check "--version: 'mkfs.img (imgfs) X.Y.Z'" \
	grep -qxE 'mkfs\.img \(imgfs\) [0-9]+\.[0-9]+\.[0-9]+' <<<"$out"
check "--version: nothing on stderr" test ! -s "$WORK/v.err"

mkfs_img --help >"$WORK/help.out" 2>"$WORK/help.err"
rc=$?
check "--help exits 0" test $rc -eq 0
check "--help on stdout lists the exit codes" \
	grep -q '^Exit status: 0 .*1 .*' "$WORK/help.out"
check "--help names exit code 2" grep -q '2 usage error' "$WORK/help.out"
check "--help names --json" grep -q -- '--json' "$WORK/help.out"

# One file, no root entry: the root is implied (the build time).
mkdir -p "$WORK/in"
printf 'hello\n' >"$WORK/in/f"
touch -d @2000000000 "$WORK/in/f"
bsdtar -C "$WORK/in" -cf "$WORK/one.tar" f || die "bsdtar"

# usage_error NAME PATTERN ARGS...: exit 2, the message (matching PATTERN)
# first, then the usage line and the hint; nothing on stdout, no image.
usage_error() {
	local name=$1 pat=$2 rc=0
	shift 2
	rm -f "$WORK/u.img"
	mkfs_img "$@" >"$WORK/u.out" 2>"$WORK/u.err" || rc=$?
	check "$name: exit 2" test $rc -eq 2
	check "$name: message says '$pat'" \
		grep -q -- "$pat" <(head -n 1 "$WORK/u.err")
	check "$name: message starts with 'mkfs.img: '" \
		grep -q '^mkfs\.img: ' <(head -n 1 "$WORK/u.err")
	check "$name: usage line" \
		grep -qx 'usage: mkfs.img \[OPTIONS\] SOURCE IMAGE' "$WORK/u.err"
	check "$name: Try hint last" \
		test "$(tail -n 1 "$WORK/u.err")" = "Try 'mkfs.img --help' for more information."
	check "$name: nothing on stdout" test ! -s "$WORK/u.out"
	check "$name: no image" test ! -e "$WORK/u.img"
}

o=$WORK/one.tar
usage_error "-C 3000" "multiple of the block size (4096) up to 1 MiB" \
	-C 3000 "$o" "$WORK/u.img"
usage_error "-C 4096 -b 512 ok, -C 3000 -b 1024 not" "block size (1024)" \
	-b 1024 -C 3000 "$o" "$WORK/u.img"
usage_error "-C without -z" "multiple of the block size" \
	-C 6000 "$o" "$WORK/u.img"
usage_error "-z lz4hc,99" "lz4hc level 99 out of range 1..12" \
	-z lz4hc,99 "$o" "$WORK/u.img"
usage_error "-z lzma,6,100" "lzma dictionary size 100 out of range 4096..8388608" \
	-z lzma,6,100 "$o" "$WORK/u.img"
usage_error "-z lzma,10" "lzma level 10 out of range 0..9" \
	-z lzma,10 "$o" "$WORK/u.img"
usage_error "-z lz4,3" "lz4 takes no level" -z lz4,3 "$o" "$WORK/u.img"
usage_error "-z brotli" "lz4, lz4hc, lzma, deflate and zstd" \
	-z brotli "$o" "$WORK/u.img"
usage_error "-b 3000" "512, 1024, 2048 or 4096" -b 3000 "$o" "$WORK/u.img"
usage_error "--workers=0" "1 to 256" --workers=0 "$o" "$WORK/u.img"
usage_error "-L too long" "at most 16 bytes" -L 12345678901234567 "$o" \
	"$WORK/u.img"
usage_error "unknown option" "unrecognized option '--bogus'" \
	--bogus "$o" "$WORK/u.img"
usage_error "option without its value" "requires an argument" "$o" \
	"$WORK/u.img" -z
usage_error "no arguments" "missing SOURCE .* and IMAGE"
usage_error "one argument" "missing IMAGE (the image to write) after SOURCE" \
	"$o"
usage_error "three arguments" "too many arguments" "$o" "$WORK/u.img" x
usage_error "--tar" "mkfs.erofs's option" --tar=f "$o" "$WORK/u.img"
SOURCE_DATE_EPOCH=-5 usage_error "SOURCE_DATE_EPOCH=-5" \
	"SOURCE_DATE_EPOCH '-5' is not a number of seconds" "$o" "$WORK/u.img"
SOURCE_DATE_EPOCH=12x usage_error "SOURCE_DATE_EPOCH=12x" \
	"SOURCE_DATE_EPOCH '12x'" "$o" "$WORK/u.img"

# A run: data only on stdout (nothing here), the summary on stderr, with
# singular nouns where there is one.
mkfs_img -T 1000 -U 6d2f1b1e-5a1e-4c1e-9f00-0123456789ab "$o" "$WORK/one.img" \
	>"$WORK/r.out" 2>"$WORK/r.err"
rc=$?
check "conversion exits 0" test $rc -eq 0
check "conversion: nothing on stdout" test ! -s "$WORK/r.out"
log "summary: $(cat "$WORK/r.err")"
check "summary: '1 entry,' (not 'entries')" grep -q ': 1 entry, 2 inodes, ' "$WORK/r.err"
check "summary: data and image sizes" \
	grep -qE '6 B data, image [0-9.]+ KiB, ratio ' "$WORK/r.err"
check "summary: alignment waste" grep -q 'alignment waste' "$WORK/r.err"
check "summary: seconds" grep -qE ', [0-9]+\.[0-9]{2} s, ' "$WORK/r.err"
check "summary: says --verify did not run" \
	grep -q 'not verified (no --verify)$' "$WORK/r.err"
check "summary: no progress line when stderr is not a terminal" \
	sh -c "! grep -q \$(printf '\\r') '$WORK/r.err'"
mkfs_img -q "$o" "$WORK/q.img" >"$WORK/q.out" 2>"$WORK/q.err"
check "-q: nothing on stderr nor stdout" \
	test ! -s "$WORK/q.err" -a ! -s "$WORK/q.out"

# The JSON summary: one document on stdout, checked against the image.
big=$WORK/in/big
head -c 300000 /dev/urandom >"$big"
seq 1 40000 >"$WORK/in/text"
bsdtar -C "$WORK/in" -czf "$WORK/two.tar.gz" f big text || die "bsdtar"
if mkfs_img --json --verify -z lz4hc "$WORK/two.tar.gz" "$WORK/two.img" \
	>"$WORK/j.out" 2>"$WORK/j.err"; then
	check "--json: the document has the summary's shape and figures" \
		"$PYTHON" - "$WORK/j.out" "$WORK/two.img" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
size = os.path.getsize(sys.argv[2])
data = 6 + 300000 + len("".join("%d\n" % i for i in range(1, 40001)))
want = {"schema_version": int, "tool": str, "version": str, "source": str,
        "image": str, "entries": int, "inodes": int, "data_bytes": int,
        "stored_data_bytes": int, "image_bytes": int,
        "compression_ratio": float, "alignment_waste_bytes": int,
        "seconds": float, "verify": dict}
for k, t in want.items():
    assert isinstance(d[k], t), (k, d.get(k))
assert d["schema_version"] == 1
assert d["tool"] == "mkfs.img"
assert d["entries"] == 3 and d["inodes"] == 4, d
assert d["data_bytes"] == data, (d["data_bytes"], data)
assert d["image_bytes"] == size, (d["image_bytes"], size)
assert 0 < d["stored_data_bytes"] < size
# the text compresses: more data than stored bytes
assert d["compression_ratio"] > 1, d["compression_ratio"]
assert abs(d["compression_ratio"] - data / d["stored_data_bytes"]) < 1e-9
assert d["alignment_waste_bytes"] < size
assert d["verify"] == {"ran": True, "passed": True}, d["verify"]
assert d["dm_verity"] is None
EOF
	check "--json: the human summary still on stderr, says verified" \
		grep -q ', verified$' "$WORK/j.err"
else
	fail "--json --verify conversion failed: $(cat "$WORK/j.err")"
fi
mkfs_img -q --json --dm-verity "$o" "$WORK/v.img" >"$WORK/jv.out" 2>"$WORK/jv.err"
check "-q --json --dm-verity: nothing on stderr" test ! -s "$WORK/jv.err"
check "-q --json --dm-verity: root hash in the document, which matches the sidecar" \
	"$PYTHON" - "$WORK/jv.out" "$WORK/v.img.dmverity" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
side = open(sys.argv[2]).read()
v = d["dm_verity"]
assert len(v["root_hash"]) == 64 and v["root_hash"] in side, (v, side)
assert isinstance(v["hash_offset"], int) and v["hash_offset"] % 4096 == 0
assert d["verify"] == {"ran": False, "passed": False}
EOF
mount_file "$WORK/two.img" "$WORK/m2" || fail "mount two.img"
check "image of the JSON run mounts and holds the data" \
	cmp "$big" "$WORK/m2/big"
unmount "$WORK/m2"

# Swapped arguments: an image as SOURCE is named as such, nothing written.
rc=0
mkfs_img "$WORK/one.img" "$WORK/new.tar" 2>"$WORK/s.err" || rc=$?
check "EROFS image as SOURCE: exit 1" test $rc -eq 1
check "EROFS image as SOURCE: says which argument is which" \
	grep -q "SOURCE $WORK/one.img is an EROFS image, not a tar layer or a directory: the arguments are SOURCE (the layer to read) then IMAGE (the image to write)" "$WORK/s.err"
check "EROFS image as SOURCE: nothing written" test ! -e "$WORK/new.tar"
rc=0
mkfs_img - "$WORK/new.tar" <"$WORK/one.img" 2>"$WORK/s.err" || rc=$?
check "EROFS image on standard input: refused" \
	grep -q "SOURCE - is an EROFS image" "$WORK/s.err"
if command -v mksquashfs >/dev/null; then
	mksquashfs "$WORK/in" "$WORK/sq.img" -quiet -noappend >/dev/null 2>&1 ||
		die "mksquashfs"
	mkfs_img "$WORK/sq.img" "$WORK/new.tar" 2>"$WORK/s.err"
	check "squashfs image as SOURCE: named" \
		grep -q "SOURCE $WORK/sq.img is a squashfs image" "$WORK/s.err"
else
	log "no mksquashfs: squashfs SOURCE not tried"
fi
rc=0
mkfs_img "$WORK/nothere.tar" "$WORK/new.img" 2>"$WORK/s.err" || rc=$?
check "missing SOURCE: exit 1, named as SOURCE" \
	grep -q "^mkfs.img: SOURCE $WORK/nothere.tar: No such file or directory$" "$WORK/s.err"
check "missing SOURCE: nothing written" test ! -e "$WORK/new.img"

# Progress on a terminal: a percentage of the (compressed) input, and the
# line cleared before the summary.
head -c 20000000 /dev/urandom >"$WORK/in/huge"
bsdtar -C "$WORK/in" -cf - . | zstd -q -1 >"$WORK/huge.tar.zst" || die "zstd"
check "progress on a pty: percentage, then the line cleared before the summary" \
	"$PYTHON" - "$MKFS" "$WORK/huge.tar.zst" "$WORK/huge.img" <<'EOF'
import os, pty, re, subprocess, sys
m, s = pty.openpty()
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL,
                     stdout=subprocess.PIPE, stderr=s)
os.close(s)
out = b""
while True:
    try:
        d = os.read(m, 65536)
    except OSError:
        break
    if not d:
        break
    out += d
assert p.wait() == 0 and p.stdout.read() == b""
text = out.decode()
print(repr(text[-400:]))
assert re.search(r"\r +\d+% .*entr(y|ies), [0-9.]+ [KMG]?i?B data read\x1b\[K", text), text
# the last progress line is erased, the summary follows on a clean line
head, tail = text.rsplit("\r\x1b[K", 1)
assert tail.startswith("mkfs.img: ") and "\r" not in tail.rstrip("\r\n"), tail
EOF

# SOURCE_DATE_EPOCH: the build time (superblock, implied root); -T wins;
# file mtimes are kept, even later ones.
SOURCE_DATE_EPOCH=1234567890 mkfs_img -q "$o" "$WORK/sde.img" ||
	fail "SOURCE_DATE_EPOCH run"
check "SOURCE_DATE_EPOCH: dump.img shows it as the build time" \
	grep -q 'epoch 1234567890 ' <("$DUMP_IMG" -s "$WORK/sde.img")
mount_file "$WORK/sde.img" "$WORK/m" || fail "mount sde.img"
check "SOURCE_DATE_EPOCH: the implied root has it as mtime" \
	test "$(stat -c %Y "$WORK/m")" = 1234567890
check "SOURCE_DATE_EPOCH: a later file mtime is kept" \
	test "$(stat -c %Y "$WORK/m/f")" = 2000000000
unmount "$WORK/m"
SOURCE_DATE_EPOCH=1234567890 mkfs_img -q -T 5 "$o" "$WORK/t.img" ||
	fail "SOURCE_DATE_EPOCH with -T run"
check "-T wins over SOURCE_DATE_EPOCH" \
	grep -q 'epoch 5 ' <("$DUMP_IMG" -s "$WORK/t.img")
# the same input and options, the same bytes
SOURCE_DATE_EPOCH=1234567890 mkfs_img -q -U 6d2f1b1e-5a1e-4c1e-9f00-0123456789ab \
	"$o" "$WORK/sde1.img" || fail "sde1"
mkfs_img -q -T 1234567890 -U 6d2f1b1e-5a1e-4c1e-9f00-0123456789ab \
	"$o" "$WORK/sde2.img" || fail "sde2"
check "SOURCE_DATE_EPOCH=N gives the bytes of -T N" \
	cmp "$WORK/sde1.img" "$WORK/sde2.img"

finish
