#!/bin/bash
# SPDX-License-Identifier: MIT
# The memory docs/oci.md states for mkfs.img --oci: peak resident memory
# (/usr/bin/time -v) grows with a layer's entries by "about N KB per tar
# entry" (verified). Two generated layers (5,000 and 25,000 small files)
# are converted with one job; the growth per entry measured must be
# within half and one and a half times the documented N.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
require_build
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is needed"
setup_tmp

doc=$(grep -o 'about [0-9.]* KB per' "$top_srcdir/docs/oci.md" | head -n 1 |
	sed 's/about \([0-9.]*\) KB per/\1/')
[ -n "$doc" ] || { fail "docs/oci.md states no 'about N KB per' tar entry"; finish; }
declare -A RSS
for n in 5000 25000; do
	"$PYTHON" - "$n" "$WORK/l$n.tar" <<'PY' || die "could not make the layer"
import io, sys, tarfile
n, out = int(sys.argv[1]), sys.argv[2]
with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
    for d in range(n // 1000 + 1):
        ti = tarfile.TarInfo("d%04d" % d); ti.type = tarfile.DIRTYPE; ti.mode = 0o755
        t.addfile(ti)
    for i in range(n):
        ti = tarfile.TarInfo("d%04d/file-%07d.txt" % (i // 1000, i)); ti.size = 100
        t.addfile(ti, io.BytesIO(b"x" * 100))
PY
	$MKLAYOUT "$WORK/s$n" "m=$WORK/l$n.tar:gzip" || die "mklayout failed"
	/usr/bin/time -v $MKFS --oci -q --jobs=1 "$WORK/s$n" "$WORK/d$n" 2>"$WORK/time$n" ||
		{ cat "$WORK/time$n"; die "convert $n entries"; }
	RSS[$n]=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time$n")
done
per=$(awk -v a="${RSS[5000]}" -v b="${RSS[25000]}" 'BEGIN { printf "%.2f", (b - a) / 20000 }')
if awk -v p="$per" -v d="$doc" 'BEGIN { exit !(p >= d / 2 && p <= d * 1.5) }'; then
	ok "peak RSS ${RSS[5000]} KB for 5,000 entries, ${RSS[25000]} KB for 25,000: $per KB per entry (docs/oci.md: about $doc)"
else
	fail "measured $per KB per entry (${RSS[5000]} / ${RSS[25000]} KB), docs/oci.md says about $doc"
fi

finish
