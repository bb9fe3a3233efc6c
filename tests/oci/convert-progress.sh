#!/bin/bash
# SPDX-License-Identifier: MIT
# mkfs.img --oci's progress. In a log (stderr not a terminal): one line
# when each unit starts ("converting DIFFID (unit N of M, blob ..., SIZE
# bytes)") and one when it ends ("converted ... (unit N of M, T s)").
# On a terminal (script(1) gives one): a status line redrawn in place
# (\r, erase) naming the unit, N of M, the bytes of the blob read and the
# rate. With --json: one JSON object a line on stderr per event, and the
# summary document on stdout. -q: nothing.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
require_build
require_tools script
setup_tmp

for n in 1 2 3; do
	mkdir -p "$WORK/t$n"
	head -c 2000000 /dev/urandom >"$WORK/t$n/f$n"
	bsdtar -cf "$WORK/l$n.tar" -C "$WORK/t$n" "f$n"
done
$MKLAYOUT "$WORK/src" "a=$WORK/l1.tar:gzip,$WORK/l2.tar:zstd" \
	"b=$WORK/l1.tar:gzip,$WORK/l3.tar" || die "mklayout failed"

# logs
mkfs_img --oci --jobs=2 "$WORK/src" "$WORK/d1" 2>"$WORK/log" ||
	{ cat "$WORK/log"; die "convert"; }
starts=$(grep -cE '^mkfs.img: converting sha256:[0-9a-f]{64} \(unit [1-3] of 3, blob sha256:[0-9a-f]{64}, [0-9]+ bytes\)$' "$WORK/log")
ends=$(grep -cE '^mkfs.img: converted sha256:[0-9a-f]{64} -> sha256:[0-9a-f]{64} \(unit [1-3] of 3, [0-9.]+ s\)$' "$WORK/log")
nums=$(sed -n 's/.*(unit \([0-9]\) of 3, blob.*/\1/p' "$WORK/log" | sort | tr -d '\n')
[ "$starts" -eq 3 ] && [ "$ends" -eq 3 ] && [ "$nums" = 123 ] &&
	! grep -q $'\r' "$WORK/log" &&
	ok "not a terminal: a line at the start and one at the end of each of the 3 units" ||
	{ cat "$WORK/log"; fail "log lines: $starts starts, $ends ends, units $nums"; }
grep -q warning "$WORK/log" && fail "warnings in a default conversion: $(grep warning "$WORK/log")"

# a terminal
script -qec "$MKFS --oci --jobs=1 '$WORK/src' '$WORK/d2'" /dev/null >"$WORK/tty" 2>&1 ||
	{ cat "$WORK/tty"; die "convert on a terminal"; }
if "$PYTHON" - "$WORK/tty" <<'PY'; then
import re, sys
t = open(sys.argv[1], "rb").read().decode()
status = re.findall(r"\r\x1b\[Kmkfs.img: unit ([1-3]) of 3 sha256:[0-9a-f]{12}\.\.\.: "
                    r"[0-9.]+ of [0-9.]+ MB read, [0-9.]+ MB/s", t)
lines = [l.split("\x1b[K")[-1] for l in re.split(r"[\r\n]+", t)]
conv = [l for l in lines if l.startswith("mkfs.img: converted ")]
sys.exit(not (set(status) == {"1", "2", "3"} and len(conv) == 3 and
              not any(l.startswith("mkfs.img: converting ") for l in lines)))
PY
	ok "a terminal: a status line redrawn in place (unit, N of M, MB read, rate), then one line per unit"
else
	od -c "$WORK/tty" | head -30
	fail "terminal progress"
fi

# --json
mkfs_img --oci --json "$WORK/src" "$WORK/d3" >"$WORK/out.json" 2>"$WORK/ev" ||
	{ cat "$WORK/ev"; die "convert --json"; }
"$PYTHON" - "$WORK/ev" "$WORK/out.json" <<'PY' && ok "--json: one JSON event a line (started, read, converted for each unit), the summary with its layers" || fail "--json events"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
kinds = {}
for e in ev:
    kinds.setdefault(e["event"], set()).add(e["index"])
    assert e["total"] == 3
assert kinds["unit-started"] == {1, 2, 3}, kinds
assert kinds["unit-converted"] == {1, 2, 3}, kinds
assert "unit-read" in kinds, kinds
done = [e for e in ev if e["event"] == "unit-converted"]
s = json.load(open(sys.argv[2]))
assert s["converted"] == 3 and len(s["layers"]) == 3
assert {l["digest"] for l in s["layers"]} == {e["digest"] for e in done}
PY
# reused units, and -q
mkfs_img --oci --json "$WORK/src" "$WORK/d3" >/dev/null 2>"$WORK/ev2"
[ "$(grep -c '"event":"unit-reused"' "$WORK/ev2")" -eq 3 ] &&
	ok "--json on a rerun: 3 unit-reused events" || { cat "$WORK/ev2"; fail "reused events"; }
mkfs_img --oci -q "$WORK/src" "$WORK/d4" 2>"$WORK/q"
[ ! -s "$WORK/q" ] && ok "-q: nothing on stderr" || { cat "$WORK/q"; fail "-q printed"; }

finish
