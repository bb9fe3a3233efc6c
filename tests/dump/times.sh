#!/bin/bash
# dump.img prints times the same way in every view: for mtimes before 1970
# with a fraction (pax "mtime=-1.5" is -2 s + 500000000 ns) the --path text
# form (ISO time and signed decimal), its --json form (mtime, mtime_nsec,
# mtime_iso) and the --ls listing (whole seconds) must all name the time
# the pax record gives; and the superblock's build time is the -T given,
# also when it is earlier than every mtime of the layer. No mount, no root.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/dump/common.sh"

[ -x "$MKFS" ] || die "mkfs.img not built: $MKFS"
dump_setup
setup_tmp

"$PYTHON" - "$WORK/t.tar" <<'EOF' || die "writing t.tar"
import io, sys, tarfile
times = ["-1.5", "-2.999999999", "-1.000000001", "-1", "-86400.25",
         "-1700000000.123456789", "1.5", "1600000000.75"]
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for i, v in enumerate(times):
        ti = tarfile.TarInfo("f%d" % i)
        ti.mode = 0o644
        ti.pax_headers = {"mtime": v}
        ti.size = 1
        t.addfile(ti, io.BytesIO(b"x"))
EOF
IMG=$WORK/t.img
mkfs_img -q -T 0 "$WORK/t.tar" "$IMG" || die "mkfs.img t.tar"

# Every view of every file against the tar, in one Python run.
check "text, JSON and listing agree with the pax times" \
	"$PYTHON" - "$DUMP" "$WORK/t.tar" "$IMG" <<'EOF'
import json, re, subprocess, sys, tarfile, time
from decimal import Decimal
dump, tar, img = sys.argv[1:4]
def run(*args):
    return subprocess.run([dump] + list(args) + [img], check=True,
                          capture_output=True, text=True).stdout
def iso(sec, nsec=None):
    s = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
    return s + ("Z" if nsec is None else ".%09dZ" % nsec)
listing = {}
for line in run("--ls=/").splitlines():
    f = line.split()
    if len(f) >= 7:
        listing[f[-1]] = f[-2]
bad = 0
with tarfile.open(tar) as tf:
    for ti in tf:
        want = Decimal(ti.pax_headers["mtime"])
        sec = int(want.to_integral_value(rounding="ROUND_FLOOR"))
        nsec = int((want - sec) * 10**9)
        text = run("--path=/" + ti.name)
        m = re.search(r"^Mtime:\s+(\S+) \((\S+)\)$", text, re.M)
        js = json.loads(run("--json", "--path=/" + ti.name))
        ino = js.get("inode", js)
        got = (m and m.group(1), m and Decimal(m.group(2)), ino["mtime"],
               ino["mtime_nsec"], ino["mtime_iso"], listing.get(ti.name))
        exp = (iso(sec, nsec), want, sec, nsec, iso(sec, nsec), iso(sec))
        if got != exp:
            print("%s: got %s, expected %s" % (ti.name, got, exp))
            bad += 1
sys.exit(1 if bad else 0)
EOF

# -T 0 on a layer whose files are all from 2020.
sb_build() {
	"$DUMP" --json "$1" | "$PYTHON" -c '
import json, sys
sb = json.load(sys.stdin)["superblock"]
print(sb["epoch"] + sb["build_time"], sb["build_time_iso"])'
}
"$PYTHON" - "$WORK/l.tar" <<'EOF' || die "writing l.tar"
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for i in range(8):
        ti = tarfile.TarInfo("d/f%d" % i)
        ti.mtime = 1600000000
        t.addfile(ti, io.BytesIO(b""))
EOF
for T in 0 1599999999 1600000000 5000000000; do
	mkfs_img -q -T $T "$WORK/l.tar" "$WORK/l$T.img" || die "mkfs.img -T $T"
	iso=$(date -u -d @$T +%Y-%m-%dT%H:%M:%SZ)
	check "-T $T: --json build time" test "$(sb_build "$WORK/l$T.img")" = \
		"$T $iso"
	check "-T $T: text build time" \
		grep -q "^Build time: *$iso (epoch " <("$DUMP" "$WORK/l$T.img")
done

finish
