#!/bin/bash
# SPDX-License-Identifier: MIT
# fsck.img and veritysetup agree on every byte of the dm-verity
# superblock: each of its 512 bytes is flipped in turn (all its bits; in
# the algorithm field the 0x20 bit alone too, the case of a letter) in a
# copy of a small image made with mkfs.img --dm-verity, and "fsck.img --verity
# --verity-roothash" must accept exactly the copies "veritysetup verify"
# accepts (a byte after "sha256\0" in the algorithm field, the UUID, the
# padding). The sidecar IMAGE.dmverity is read strictly: bytes after its
# JSON object are an error, and so is a sidecar larger than 4096 bytes. The flipped copies go to veritysetup and
# fsck.img only, never to the kernel.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_tools "$PYTHON"
command -v veritysetup >/dev/null ||
	die "missing veritysetup (apt-get install cryptsetup-bin)"
[ -x "$FSCK_IMG" ] || die "fsck.img not built"
setup_tmp

"$PYTHON" - "$WORK/small.tar" <<'EOF' || die "making the tar"
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for i in range(3):
        ti = tarfile.TarInfo("f%d" % i)
        data = bytes([65 + i]) * (3000 * i + 10)
        ti.size, ti.mtime = len(data), 1000
        t.addfile(ti, io.BytesIO(data))
EOF
out=$(mkfs_img -q -T 0 --dm-verity "$WORK/small.tar" "$WORK/v.img") ||
	die "mkfs.img --dm-verity"
root=$(printf '%s\n' "$out" | sed -n 's/^Root hash:\t//p')
off=$(printf '%s\n' "$out" | sed -n 's/^Hash offset:\t//p')
if [ "${#root}" != 64 ] || [ -z "$off" ]; then die "no root hash or offset: $out"; fi
check "the image: veritysetup verify accepts it" \
	veritysetup verify "$WORK/v.img" "$WORK/v.img" "$root" \
	--hash-offset="$off"
check "the image: fsck.img --verity accepts it" \
	"$FSCK_IMG" -q --verity --verity-roothash="$root" "$WORK/v.img"

# Every byte flipped (all its bits; the 0x20 bit too in the algorithm
# field): the verdicts (accepted or not) must agree. The program itself,
# not libtool's wrapper script, which would take most of the time.
fsck=$FSCK_IMG
if [ -x "$top_builddir/fsck/.libs/fsck.img" ]; then
	fsck=$top_builddir/fsck/.libs/fsck.img
	export LD_LIBRARY_PATH=$top_builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
"$PYTHON" - "$WORK/v.img" "$off" "$root" "$fsck" "$WORK/flip.img" \
	>"$WORK/flips.out" <<'EOF'
import shutil, subprocess, sys
img, off, root, fsck, bad = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
    sys.argv[4], sys.argv[5]
with open(img, "rb") as f:
    orig = f.read()
runs = disagree = accepted = 0
for i in range(512):
    # 32..63: the algorithm's name, whose case OpenSSL ignores
    for mask in (0xFF, 0x20) if 32 <= i < 64 else (0xFF,):
        data = bytearray(orig)
        data[off + i] ^= mask
        with open(bad, "wb") as f:
            f.write(data)
        v = subprocess.run(["veritysetup", "verify", bad, bad, root,
                            "--hash-offset=%d" % off],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL).returncode
        r = subprocess.run([fsck, "-q", "--verity",
                            "--verity-roothash=" + root, bad],
                           stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        runs += 1
        accepted += v == 0
        if (v == 0) != (r.returncode == 0) or r.returncode not in (0, 4):
            disagree += 1
            print("byte %d ^ 0x%02x: veritysetup exit %d, fsck.img exit %d: %s"
                  % (i, mask, v, r.returncode,
                     r.stdout.decode(errors="replace").strip()[:200]))
print("%d flips, %d accepted by veritysetup, %d disagreements"
      % (runs, accepted, disagree))
sys.exit(1 if disagree else 0)
EOF
rc=$?
if [ $rc -eq 0 ]; then
	ok "superblock flips: $(tail -n 1 "$WORK/flips.out")"
else
	head -n 20 "$WORK/flips.out"
	fail "superblock flips: $(tail -n 1 "$WORK/flips.out")"
fi

# The sidecar: as mkfs.img writes it (a newline after the object) it is
# read; with anything after the object, or over 4096 bytes, it is an
# error.
check "the sidecar mkfs.img wrote is accepted" \
	"$FSCK_IMG" -q --verity "$WORK/v.img"
# refused WHAT MESSAGE: fsck.img exits 4 with MESSAGE for v.img.dmverity.
refused() {
	local rc
	"$FSCK_IMG" --verity "$WORK/v.img" >"$WORK/sidecar.out" 2>&1
	rc=$?
	if [ $rc -eq 4 ] && grep -q "v.img.dmverity: $2" "$WORK/sidecar.out"; then
		ok "$1: exit 4, an error"
	else
		cat "$WORK/sidecar.out"
		fail "$1: exit $rc, expected 4 and an error"
	fi
}
for tail in ' x' '{}' '"'; do
	printf '{"roothash":"%s","hashoffset":%s}%s\n' "$root" "$off" "$tail" \
		>"$WORK/v.img.dmverity"
	refused "a sidecar with '$tail' after its object" \
		"dm-verity sidecar: bytes after the JSON object"
done
{
	printf '{"roothash":"%s","hashoffset":%s}' "$root" "$off"
	head -c 5000 /dev/zero | tr '\0' ' '
	printf 'x\n'
} >"$WORK/v.img.dmverity"
refused "a sidecar of over 4096 bytes (x after 5000 spaces)" \
	"larger than 4096 bytes"

finish
