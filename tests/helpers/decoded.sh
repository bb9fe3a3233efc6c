# Sourced by the tests of the compressions the library decodes itself
# (tests/e2e/gunzip.sh, tests/e2e/unzstd.sh), after tests/lib.sh and
# tests/containerd/common.sh, with EXT set to the files' suffix (gz, zst):
# the layer they compress, and the checks they share.
FIXED=(-T 1600000000 -U 0b5e4a6c-52a3-4c61-8d4b-0c1f6a9e3d21)

# $WORK/layer.tar: files of text and of random bytes, over several decoder
# buffers; $WORK/plain.img, its image.
decoded_layer() { # SEED
	"$PYTHON" - "$WORK/layer.tar" "$1" <<'PY' || die "make layer.tar"
import io, random, sys, tarfile
rng = random.Random(int(sys.argv[2]))
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for i in range(40):
        if i % 3:
            data = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 90000)))
        else:
            data = (b"line %d of a text file\n" % i) * rng.randrange(1, 40000)
        ti = tarfile.TarInfo("d%d/f%d" % (i % 4, i))
        ti.size, ti.mtime, ti.mode = len(data), 1600000000 + i, 0o644
        t.addfile(ti, io.BytesIO(data))
PY
	mkfs_img -q "${FIXED[@]}" "$WORK/layer.tar" "$WORK/plain.img" ||
		die "mkfs of the plain tar"
}

# $WORK/NAME.$EXT, from the file or (SRC -) standard input, makes the
# image of the plain tar.
same() { # NAME SRC
	local name=$1 src=$2
	rm -f "$WORK/$name.img"
	if [ "$src" = - ]; then
		mkfs_img -q "${FIXED[@]}" - "$WORK/$name.img" <"$WORK/$name.$EXT"
	else
		mkfs_img -q "${FIXED[@]}" "$src" "$WORK/$name.img"
	fi || { fail "$name: mkfs failed"; return; }
	check "$name: same image as from the plain tar" \
		cmp "$WORK/$name.img" "$WORK/plain.img"
}

# Invert the byte at OFFSET of FILE.
flip() { # FILE OFFSET
	printf "\\x$(printf %02x $((0x$(od -An -tx1 -j "$2" -N1 "$1" | tr -d ' ') ^ 0xff)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# $WORK/NAME.$EXT is refused by mkfs.img and fsck --compare, naming the
# cause (PATTERN), with no image left.
refused() { # NAME PATTERN
	local name=$1 pattern=$2 rc=0
	mkdir -p "$WORK/o.$name"
	mkfs_img "$WORK/$name.$EXT" "$WORK/o.$name/x.img" >"$WORK/$name.out" 2>&1 || rc=$?
	sed "s/^/    | /" "$WORK/$name.out" | head -n 3
	check "$name: refused (not a signal)" test "$rc" -gt 0 -a "$rc" -lt 128
	check "$name: message names the cause" grep -qE -- "$pattern" "$WORK/$name.out"
	check "$name: no image left" test -z "$(ls -A "$WORK/o.$name")"
	rc=0
	"$FSCK_IMG" -q --compare="$WORK/$name.$EXT" "$WORK/plain.img" \
		>"$WORK/$name.fsck" 2>&1 || rc=$?
	check "$name: fsck --compare fails" test "$rc" -ne 0
	check "$name: fsck --compare names the cause" grep -qE -- "$pattern" "$WORK/$name.fsck"
}
