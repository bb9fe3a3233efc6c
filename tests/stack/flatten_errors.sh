#!/bin/bash
# SPDX-License-Identifier: MIT
# Flattening refuses what cannot be flattened, naming the layer, the entry
# and the reason, exits non-zero and leaves nothing behind (an existing
# target untouched): a hard link to a file of another layer (below or
# above), a link whose hidden target its layer never holds, bad whiteouts,
# a target that is one of the layers, a truncated layer (also through the
# opener, whose close is still called). Needs no mount.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/stack/common.sh"
setup_tmp
flatten_setup

# tar NAME SPEC...: $WORK/NAME.tar from "f:PATH", "d:PATH", "l:PATH:TARGET"
tar_of() {
	"$PYTHON" - "$WORK/$1.tar" "${@:2}" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for spec in sys.argv[2:]:
        kind, _, rest = spec.partition(":")
        ti = tarfile.TarInfo(rest.split(":")[0])
        ti.mtime = 1700000000
        if kind == "d":
            ti.type = tarfile.DIRTYPE
            ti.mode = 0o755
            t.addfile(ti)
        elif kind == "l":
            ti.type = tarfile.LNKTYPE
            ti.linkname = rest.split(":")[1]
            t.addfile(ti)
        else:
            data = ("data of " + ti.name + "\n").encode()
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
PY
}

printf 'old image\n' >"$WORK/target.img"
cp "$WORK/target.img" "$WORK/target.orig"

# refused NAME PATTERN ARGS...: flattening fails, its message matches
# PATTERN (grep -E), the target is untouched and no stray file is left
refused() {
	local name=$1 pat=$2 before
	shift 2
	before=$(ls -A "$WORK" | wc -l)
	if flatten "$name" "$@"; then
		fail "$name: flattening succeeded"
		return 1
	fi
	if grep -qE "$pat" "$WORK/$name.out"; then
		ok "$name: refused: $(grep flatten_tool: "$WORK/$name.out")"
	else
		cat "$WORK/$name.out"
		fail "$name: message does not match /$pat/"
	fi
	check "$name: target untouched" cmp -s "$WORK/target.img" "$WORK/target.orig"
	# the helper's own output file is the only new entry
	check "$name: nothing left behind" \
		test "$(ls -A "$WORK" | wc -l)" -le $((before + 1))
}

tar_of base d:etc f:etc/passwd
tar_of up-link d:etc l:etc/shadow:etc/passwd
refused link-below "layer 1: etc/shadow: hard link target \"etc/passwd\" is not in the same layer" \
	--opener "$WORK/target.img" "$WORK/base.tar" "$WORK/up-link.tar"
refused link-below-tars "up-link.tar: etc/shadow: hard link target \"etc/passwd\" is not in the same layer" \
	"$WORK/target.img" "$WORK/base.tar" "$WORK/up-link.tar"

# the link's target is in the layer above only (hidden there)
tar_of low-link l:a/link:a/file
tar_of up-file d:a f:a/file
refused link-above "low-link.tar: a/link: hard link target \"a/file\" is not a file of the same layer" \
	"$WORK/target.img" "$WORK/low-link.tar" "$WORK/up-file.tar"

tar_of wh-noname d:etc f:etc/.wh.
refused whiteout-noname "wh-noname.tar: etc/.wh.: whiteout without a name" \
	"$WORK/target.img" "$WORK/base.tar" "$WORK/wh-noname.tar"
tar_of wh-dots f:.wh..
refused whiteout-dots "whiteout for \"\.\", which is not a file name" \
	"$WORK/target.img" "$WORK/base.tar" "$WORK/wh-dots.tar"
tar_of wh-meta f:etc/.wh..wh..plnk
refused whiteout-meta "etc/.wh..wh..plnk: unknown whiteout meta-entry" \
	"$WORK/target.img" "$WORK/base.tar" "$WORK/wh-meta.tar"

cp "$WORK/base.tar" "$WORK/layer-as-target.tar"
cp "$WORK/base.tar" "$WORK/layer-as-target.orig"
refused target-is-layer "refusing to overwrite layer" \
	"$WORK/layer-as-target.tar" "$WORK/base.tar" "$WORK/layer-as-target.tar"
check "target-is-layer: the layer is untouched" \
	cmp -s "$WORK/layer-as-target.tar" "$WORK/layer-as-target.orig"

head -c 1500 "$WORK/base.tar" >"$WORK/cut.tar"
tar_of up-ok d:etc f:etc/group
refused truncated "cut.tar: etc/passwd: .*[Tt]runcated" \
	"$WORK/target.img" "$WORK/cut.tar" "$WORK/up-ok.tar"
refused truncated-opener "layer 0: etc/passwd: .*[Tt]runcated" \
	--opener "$WORK/target.img" "$WORK/cut.tar" "$WORK/up-ok.tar"
check "truncated-opener: every layer opened was closed" \
	test "$(grep -c '^open' "$WORK/truncated-opener.out")" = \
	"$(grep -c '^close' "$WORK/truncated-opener.out")"

finish
