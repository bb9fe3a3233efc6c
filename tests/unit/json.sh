#!/bin/bash
# SPDX-License-Identifier: MIT
# fe_json_bytes() (frontend/json_str.h) against Python's own UTF-8 decoder:
# for every byte string of 1 and 2 bytes, every 3-byte string whose first
# byte starts a 3- or 4-byte sequence (second byte any, third at the
# boundaries), 4-byte strings around every boundary and random strings,
# the JSON string, read with Python's json, must equal
# bytes.decode("utf-8", "surrogateescape") (so it encodes back to the
# bytes), the line must be valid UTF-8 JSON, and "surrogate_escaped" must
# list the member exactly when the bytes are not valid UTF-8; with json-c's
# default flags too ('/' escaped). Needs neither root nor EROFS.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
TOOL=$top_builddir/tests/unit/json_tool
[ -x "$TOOL" ] || die "helper not built: $TOOL (run make check)"
require_tools "$PYTHON"
setup_tmp

SEED=${IMGFS_JSON_SEED:-$$}
log "random seed $SEED (IMGFS_JSON_SEED=$SEED repeats this run)"

"$PYTHON" - "$WORK/in.hex" "$SEED" <<'PY' || die "inputs failed"
import itertools, random, sys
rnd = random.Random(int(sys.argv[2]))
edge = [0x00, 0x2f, 0x41, 0x5c, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf,
        0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff]
out = [b'']
out += [bytes([a]) for a in range(256)]
out += [bytes([a, b]) for a in range(256) for b in range(256)]
out += [bytes([a, b, c]) for a in range(0xe0, 0xf8) for b in range(256)
        for c in edge]
out += [bytes([a, b, c, d]) for a in range(0xf0, 0xf8) for b in edge
        for c in edge for d in edge]
alphabet = list(range(0x20, 0x7f)) + edge + [0xc3, 0xa9, 0xe9, 0xe2, 0x82]
for _ in range(20000):
    out.append(bytes(rnd.choice(alphabet)
                     for _ in range(rnd.randrange(1, 16))))
with open(sys.argv[1], 'w') as f:
    f.writelines(b.hex() + '\n' for b in out)
PY

# verdict FLAG-NAME OUTPUT: compare each line with Python's decoding
verdict() {
	"$PYTHON" - "$WORK/in.hex" "$2" "$1" <<'PY'
import json, sys
ins = open(sys.argv[1]).read().split('\n')[:-1]
outs = open(sys.argv[2], 'rb').read().split(b'\n')[:-1]
bad = []
if len(ins) != len(outs):
    bad.append('%d lines for %d inputs' % (len(outs), len(ins)))
for h, line in zip(ins, outs):
    b = bytes.fromhex(h)
    try:
        o = json.loads(line.decode('utf-8'))
        want = b.decode('utf-8', 'surrogateescape')
        try:
            b.decode('utf-8')
            escaped = None
        except UnicodeDecodeError:
            escaped = ['s']
        if o['s'] != want or o['s'].encode('utf-8', 'surrogateescape') != b:
            bad.append('%s: %r, want %r' % (h, o['s'], want))
        elif o.get('surrogate_escaped') != escaped:
            bad.append('%s: surrogate_escaped %r' % (h, o.get('surrogate_escaped')))
    except ValueError as e:
        bad.append('%s: %r: %s' % (h, line, e))
for x in bad[:20]:
    print(x)
print('%s: %d byte strings, %d wrong' % (sys.argv[3], len(ins), len(bad)))
sys.exit(1 if bad else 0)
PY
}

"$TOOL" <"$WORK/in.hex" >"$WORK/out.json"
check "json_tool: exit 0" [ $? -eq 0 ]
verdict "'/' as is" "$WORK/out.json"
check "every string as Python decodes it ('/' as is)" [ $? -eq 0 ]
"$TOOL" --slash-escape <"$WORK/in.hex" >"$WORK/slash.json"
check "json_tool --slash-escape: exit 0" [ $? -eq 0 ]
verdict "'/' escaped" "$WORK/slash.json"
check "every string as Python decodes it ('/' escaped)" [ $? -eq 0 ]
check "'/' escaped in an escaped string too" \
	grep -qxF '{"s":"\/\udcff","surrogate_escaped":["s"]}' "$WORK/slash.json"
finish
