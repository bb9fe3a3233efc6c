#!/bin/bash
# SPDX-License-Identifier: MIT
# Damaged compressed images must give a clear error (naming the nid and the
# reason), never garbage content and never a crash: pclusters with their
# stream destroyed, bogus full and compact index records, bad map headers,
# a broken inline tail; then random mutations of whole images (read only by
# our reader, never mounted).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/zread/lib.sh"

require_zread
setup_tmp

# A small tree: one 60000-byte text file (the victim), its neighbours.
"$PYTHON" - "$WORK/tree" <<'PYEOF' || die "cannot generate the tree"
import os, random, sys
root = sys.argv[1]
os.makedirs(root)
rng = random.Random(7)
words = "alpha beta gamma delta layer block index".split()
def text(n):
    out, total = [], 0
    while total < n:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(3, 9)))
        line += " %d\n" % rng.randint(0, 9999)
        out.append(line)
        total += len(line)
    return "".join(out).encode()[:n]
for name, data in (("victim", text(60000)), ("other", text(30000)),
                   ("small", text(700)),
                   ("rand", rng.randbytes(9000) + text(9000))):
    with open(os.path.join(root, name), "wb") as f:
        f.write(data)
PYEOF

# mkimg NAME OPTIONS: the independent mkfs.erofs if present, else ours.
mkimg() {
	local name=$1
	shift
	if command -v mkfs.erofs >/dev/null 2>&1; then
		mkfs.erofs "$@" -T 0 -U 6e5f3c2a-1b4d-4e8f-9a7b-0c1d2e3f4a5b \
			"$WORK/$name.img" "$WORK/tree" >/dev/null 2>&1
	else
		return 1
	fi
}

# patch IMG OFFSET HEXBYTES
patch() {
	"$PYTHON" -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2], 0))
    f.write(bytes.fromhex(sys.argv[3]))' "$@"
}

# zero IMG OFFSET LENGTH
zero() {
	patch "$1" "$2" "$(printf '%*s' $(($3 * 2)) '' | tr ' ' 0)"
}

# first_nonzero IMG OFFSET LENGTH: offset of the first non-zero byte
first_nonzero() {
	"$PYTHON" -c 'import sys
o, n = int(sys.argv[2]), int(sys.argv[3])
with open(sys.argv[1], "rb") as f:
    f.seek(o)
    b = f.read(n)
print(o + next(i for i, c in enumerate(b) if c))' "$@"
}

# extent_field IMG PATH INDEX FIELD: field (1-based) of extent INDEX
extent_field() {
	"$ZREAD" extents "$1" "$2" | awk -v n="$3" -v f="$4" 'NR == n { print $f }'
}

# variant BASE NAME: a fresh copy of BASE.img to damage
variant() {
	cp "$WORK/$1.img" "$WORK/$2.img"
	echo "$WORK/$2.img"
}

# expect_error NAME IMG PATTERN: reading the victim fails with exit status 1
# (not a signal), and the message names the nid and matches PATTERN.
expect_error() {
	local name=$1 img=$2 pattern=$3 rc=0
	"$ZREAD" cat -i "$img" victim >"$WORK/$name.out" 2>"$WORK/$name.err" ||
		rc=$?
	if [ "$rc" -ne 1 ]; then
		fail "$name: zread exit status $rc, expected 1 (error): $(head -n 2 "$WORK/$name.err")"
	elif ! grep -qE "nid [0-9]+: .*$pattern" "$WORK/$name.err"; then
		fail "$name: message does not match '$pattern': $(head -n 2 "$WORK/$name.err")"
	else
		ok "$name: $(head -n 1 "$WORK/$name.err")"
	fi
}

# expect_intact NAME IMG FILE: FILE still reads back identical
expect_intact() {
	if "$ZREAD" cat -i "$2" "$3" 2>/dev/null | cmp -s - "$WORK/tree/$3"; then
		ok "$1: $3 still reads back identical"
	else
		fail "$1: $3 no longer reads back"
	fi
}

mkimg compact -zlz4hc -C16384 && mkimg full -zlz4hc -C16384 -Elegacy-compress &&
	mkimg tail -zlz4hc -Eztailpacking ||
	skip "mkfs.erofs (erofs-utils) not installed"
for base in compact full tail; do
	zread_verify "$base" "$WORK/$base.img" "$WORK/tree"
done

# ---- pcluster damage (compact indexes, zero padding)
pos=$(extent_field "$WORK/compact.img" victim 1 4)
plen=$(extent_field "$WORK/compact.img" victim 1 5)
[ -n "$pos" ] && [ "$plen" -gt 4096 ] || die "victim is not in a big pcluster"
start=$(first_nonzero "$WORK/compact.img" "$pos" "$plen")

img=$(variant compact pcl_zeroed)
zero "$img" "$pos" "$plen"
expect_error pcl_zeroed "$img" "file bytes 0\.\.60000: lz4 pcluster at byte $pos .*start not found"
expect_intact pcl_zeroed "$img" other
if [ -x "$FSCK_IMG" ]; then
	rc=0
	"$FSCK_IMG" "$img" >"$WORK/fsck.out" 2>&1 || rc=$?
	if [ "$rc" -eq 4 ] && grep -q 'start not found' "$WORK/fsck.out"; then
		ok "fsck.img reports the damaged pcluster"
	else
		fail "fsck.img exit $rc on a damaged pcluster: $(head -n 3 "$WORK/fsck.out")"
	fi
fi

img=$(variant compact pcl_token)
patch "$img" "$start" ff
expect_error pcl_token "$img" "LZ4 stream"

img=$(variant compact pcl_head_cut)
zero "$img" "$start" 300
expect_error pcl_head_cut "$img" "LZ4 stream"

img=$(variant compact pcl_tail_cut)
zero "$img" $((pos + plen - 64)) 64
expect_error pcl_tail_cut "$img" "LZ4 stream"

# ---- compact index damage (docs/format.md §9.6)
read -r hpos iend <<EOF
$("$ZREAD" index "$WORK/compact.img" victim)
EOF
ebase=$((hpos + 8))
c4=$(( ((32 - ebase % 32) / 4) & 7 ))
[ "$c4" -ge 2 ] || die "unexpected compact layout (c4init $c4)"
img=$(variant compact cidx_base)
patch "$img" $((ebase + 4)) 00ffff00
expect_error cidx_base "$img" "beyond the end of the image"

img=$(variant compact cidx_lcn0)
patch "$img" "$ebase" 0020   # entry 0: NONHEAD, distance 0
expect_error cidx_lcn0 "$img" "look-back distance"

img=$(variant compact cidx_algo)
patch "$img" $((hpos + 6)) 05
expect_error cidx_algo "$img" "unknown compression algorithm 5"

img=$(variant compact cidx_big)
patch "$img" $((hpos + 4)) 0300   # BIG_PCLUSTER_1 without _2
expect_error cidx_big "$img" "BIG_PCLUSTER_1 and _2 differ"

# ---- full index damage (docs/format.md §9.5; legacy images have no zero
# padding)
read -r hpos iend <<EOF
$("$ZREAD" index "$WORK/full.img" victim)
EOF
rec=$((hpos + 16))
img=$(variant full fidx_blkaddr)
patch "$img" $((rec + 4)) 00ffff00
expect_error fidx_blkaddr "$img" "beyond the end of the image"

img=$(variant full fidx_clusterofs)
patch "$img" $((rec + 2)) 0020
expect_error fidx_clusterofs "$img" "clusterofs 8192 is not below"

img=$(variant full fidx_delta0)
patch "$img" $((rec + 8 * 5 + 4)) 0000
expect_error fidx_delta0 "$img" "bogus look-back distance 0"

img=$(variant full fidx_lookback)
patch "$img" $((rec + 8 * 3 + 4)) 0900   # distance 9 from lcluster 3
expect_error fidx_lookback "$img" "bogus look-back distance 9"

img=$(variant full fidx_cblkcnt)
patch "$img" $((rec + 8 + 4)) ff0f   # CBLKCNT 2047 blocks
expect_error fidx_cblkcnt "$img" "over 1 MiB"

img=$(variant full fidx_lzma)
patch "$img" $((hpos + 6)) 01
expect_error fidx_lzma "$img" "lzma is not enabled"

img=$(variant full fidx_fragment)
patch "$img" $((hpos + 7)) 80
expect_error fidx_fragment "$img" "no packed inode"

img=$(variant full fidx_delta1)
patch "$img" $((rec + 8 * 2 + 6)) 4000   # delta1 64, past EOF
zero "$img" $((rec + 8 * 3)) 8            # record 3 becomes a head
expect_error fidx_delta1 "$img" "delta1 of lcluster 2 jumps over the head at lcluster 3"

img=$(variant full fidx_stream)
pos=$(extent_field "$WORK/full.img" victim 1 4)
start=$(first_nonzero "$img" "$pos" 4096)
zero "$img" "$start" 16
expect_error fidx_stream "$img" "LZ4 stream"

# legacy LZ4 without zero padding: the stream is left-aligned
mkimg nopad -zlz4 -Elegacy-compress || die "mkfs.erofs failed"
zread_verify nopad "$WORK/nopad.img" "$WORK/tree"
img=$(variant nopad nopad_stream)
zero "$img" "$(extent_field "$WORK/nopad.img" victim 1 4)" 16
expect_error nopad_stream "$img" "LZ4 stream"

# ---- inline tail pcluster (ztailpacking)
read -r hpos iend <<EOF
$("$ZREAD" index "$WORK/tail.img" victim)
EOF
n=$("$ZREAD" extents "$WORK/tail.img" victim | wc -l)
ipos=$(extent_field "$WORK/tail.img" victim "$n" 4)
ilen=$(extent_field "$WORK/tail.img" victim "$n" 5)
[ "$ipos" = "$iend" ] || fail "inline pcluster at $ipos, index ends at $iend"
img=$(variant tail tail_zeroed)
zero "$img" "$ipos" "$ilen"
expect_error tail_zeroed "$img" "inline lz4 pcluster .*start not found"

img=$(variant tail tail_size)
patch "$img" $((hpos + 2)) a00f   # idata_size 4000
expect_error tail_size "$img" "crosses a block boundary"

# ---- random mutations: errors are fine, crashes and hangs are not
for base in compact full tail nopad; do
	check "$base: 300 mutated images read without a crash" \
		"$ZREAD" fuzz "$WORK/$base.img" 300 "$(cksum <"$WORK/$base.img" | cut -d' ' -f1)"
done

finish
