#!/bin/bash
# SPDX-License-Identifier: MIT
# fsck.img --oci on hostile layouts (tests/oci/check-hostile.py edits a layout
# mkfs.img --oci converted, keeping every digest and size right): each
# must give the verdict the documents call for. A layer blob named first
# in another role (index.json entry of an unknown type, another image's
# config) is still checked as a layer; a config that is not JSON is an
# error; --compare pairs each converted manifest with its source manifest
# layer by layer (reversed layers differ); an absent non-distributable
# layer is reported as not present, not as an error; a +zstd EROFS layer
# is decompressed no further than its superblock allows; indexes nested
# past the bound are reported, each index is checked once. No image is
# mounted (a tmpfs is, for $TMPDIR).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
require_tools zstd "$PYTHON"
[ -x "$FSCK_IMG" ] || die "fsck.img not built"
setup_tmp

MKLAYOUT="$PYTHON $top_srcdir/tests/oci/mklayout.py"
HOSTILE="$PYTHON $top_srcdir/tests/oci/check-hostile.py"

"$PYTHON" - "$WORK" <<'EOF' || die "making the tars"
import io, sys, tarfile
def tar(path, files):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for name, data in files:
            ti = tarfile.TarInfo(name)
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 1000
            t.addfile(ti, io.BytesIO(data))
w = sys.argv[1]
tar(w + "/l0.tar", [("etc/passwd", b"root:x:0:0::/root:/bin/sh\n"),
                    ("bin/a", b"a" * 5000)])
tar(w + "/l1.tar", [("etc/passwd", b"root:x:0:0::/root:/bin/dash\n"),
                    ("bin/b", b"b" * 3000)])
tar(w + "/nd.tar", [("nd", b"non-distributable\n")])
EOF
$MKLAYOUT "$WORK/src" "app=$WORK/l0.tar:gzip,$WORK/l1.tar:zstd" ||
	die "mklayout"
mkfs_img --oci -q "$WORK/src" "$WORK/conv" >"$WORK/log" 2>&1 ||
	{ cat "$WORK/log"; die "mkfs.img --oci"; }
check "the converted layout passes --compare" "$FSCK_IMG" -q \
	--oci="$WORK/conv" --compare="$WORK/src"

# fresh NAME: D, a copy of the converted layout to damage.
fresh() {
	D=$WORK/$1
	rm -rf "$D"
	cp -r "$WORK/conv" "$D"
}

# reported NAME REGEX [FSCK OPTIONS...]: exit 4 and an error matching
# REGEX in the JSON findings.
reported() {
	local name=$1 re=$2 rc
	shift 2
	"$FSCK_IMG" --oci="$D" --json "$@" >"$WORK/$name.json" 2>/dev/null
	rc=$?
	if [ $rc -eq 4 ] && "$PYTHON" - "$WORK/$name.json" "$re" <<'EOF'
import json, re, sys
doc = json.load(open(sys.argv[1]))
sys.exit(0 if doc["exit_code"] == 4 and any(
    p["severity"] == "error" and re.search(sys.argv[2], p["message"])
    for p in doc["problems"]) else 1)
EOF
	then
		ok "$name: exit 4, an error matching /$re/"
	else
		"$PYTHON" -c 'import json, sys
for p in json.load(open(sys.argv[1]))["problems"]: print(p["severity"], p["message"])' \
			"$WORK/$name.json"
		fail "$name: exit $rc, expected 4 and an error matching /$re/"
	fi
}

# A. A layer blob that is no EROFS image, named first as something else.
head -c 9000 /dev/urandom >"$WORK/junk"
fresh swap-other
$HOSTILE "$D" swap-other 1 "$WORK/junk" || die "hostile swap-other"
reported swap-other "EROFS layer sha256:[0-9a-f]+ is no EROFS image"
fresh swap-config
$HOSTILE "$D" swap-config 0 "$WORK/junk" || die "hostile swap-config"
reported swap-config "EROFS layer sha256:[0-9a-f]+ is no EROFS image"

# B. A config that is not JSON (then diff_ids and os.features could not
# be checked): an error naming it.
printf '{"rootfs": {"diff_ids": []}} trailing' >"$WORK/cfg-trailing.json"
printf 'not json at all' >"$WORK/cfg-text.json"
for cfg in cfg-trailing cfg-text; do
	fresh "$cfg"
	$HOSTILE "$D" config-bytes "$WORK/$cfg.json" ||
		die "hostile config-bytes"
	reported "$cfg" "config sha256:$(sha256sum <"$WORK/$cfg.json" | cut -c1-64) of manifest sha256:[0-9a-f]+: .*not a JSON object"
done

# C. The layers (and diff_ids) of the converted image reversed: each
# layer still holds what its own source annotation names, but the image
# is not its source's; --compare pairs the manifests and their layers.
fresh reverse
$HOSTILE "$D" reverse || die "hostile reverse"
check "reversed layers: consistent without --compare" "$FSCK_IMG" -q \
	--oci="$D"
reported reverse "its org.imgfs.source.digest is sha256:[0-9a-f]+, but the source manifest has sha256:[0-9a-f]+ at its place" \
	--compare="$WORK/src"
reported reverse-content "differs from its source sha256:[0-9a-f]+: /bin/a" \
	--compare="$WORK/src"

# D. A non-distributable layer absent from the source, which mkfs.img
# --oci keeps so (docs/oci.md): not present, not checked, no error.
$MKLAYOUT "$WORK/ndsrc" "nd=$WORK/l0.tar:gzip,$WORK/nd.tar:nondist" ||
	die "mklayout (non-distributable)"
rm "$WORK/ndsrc/blobs/sha256/$(sha256sum <"$WORK/nd.tar" | cut -c1-64)"
mkfs_img --oci -q "$WORK/ndsrc" "$WORK/ndconv" >"$WORK/log" 2>&1 ||
	{ cat "$WORK/log"; die "mkfs.img --oci (non-distributable)"; }
for args in "--oci=$WORK/ndsrc" "--oci=$WORK/ndconv" \
	"--oci=$WORK/ndconv --compare=$WORK/ndsrc"; do
	# shellcheck disable=SC2086 # two options at most
	"$FSCK_IMG" $args --json >"$WORK/nd.json" 2>/dev/null
	check "absent non-distributable layer: fsck.img $args: exit 0, a note" \
		"$PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(d["exit_code"] or d["errors"] or not any(
    p["severity"] == "note" and "non-distributable layer" in p["message"]
    and "not checked" in p["message"] for p in d["problems"]))' "$WORK/nd.json"
done

# E. Nested indexes (tests/oci/hostile.py nested): 16 levels pass, each
# index checked once however often it is named (8 names of the next, 8
# deep); 17 levels are an error naming the index past the bound, and the
# check ends.
NESTED="$PYTHON $top_srcdir/tests/oci/hostile.py nested"
for shape in "1 16 16" "8 8 8"; do
	# shellcheck disable=SC2086 # three numbers
	set -- $shape
	fresh "nest$1x$2"
	$NESTED "$D" "$1" "$2" || die "hostile.py nested $1 $2"
	"$FSCK_IMG" --oci="$D" --json >"$WORK/nest.json" 2>/dev/null
	check "indexes naming the next $1 times, $2 deep: exit 0, $3 indexes checked" \
		"$PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(d["exit_code"] or d["stats"]["indexes"] != int(sys.argv[2]))' \
		"$WORK/nest.json" "$3"
done
fresh nest17
$NESTED "$D" 1 17 || die "hostile.py nested 1 17"
reported nest17 "indexes nested more than 16 deep at index sha256:[0-9a-f]+$"

# F. A +zstd EROFS layer whose image (a real one) is followed by 256 MiB
# of zeros: a few hundred bytes of zstd. It is decompressed no further
# than its superblock allows: an error naming it, with $TMPDIR on a
# tmpfs of 8 MiB (no ENOSPC, no exit 8).
fresh bomb
L0=$($PYTHON -c 'import json, sys
r = sys.argv[1]
ix = json.load(open(r + "/index.json"))
m = json.load(open(r + "/blobs/sha256/" + ix["manifests"][0]["digest"][7:]))
print(m["layers"][0]["digest"][7:])' "$D") || die "layer 0"
bomb() { cat "$D/blobs/sha256/$L0" && head -c $((256 << 20)) /dev/zero; }
bomb | zstd -q -c >"$WORK/bomb.zst" || die "zstd"
sha=$(bomb | sha256sum | cut -c1-64)
log "bomb: $(stat -c %s "$WORK/bomb.zst") bytes of zstd"
$HOSTILE "$D" zstd-layer 0 "$WORK/bomb.zst" "sha256:$sha" ||
	die "hostile zstd-layer"
mkdir -p "$WORK/small"
mount -t tmpfs -o size=8m imgfs-small "$WORK/small" ||
	die "mounting a tmpfs for TMPDIR"
track_mount "$WORK/small"
saved_tmpdir=${TMPDIR-}
export TMPDIR=$WORK/small
reported zstd-bomb "zstd EROFS layer sha256:[0-9a-f]+ holds more than the [0-9]+ bytes its EROFS superblock accounts for"
export TMPDIR=$saved_tmpdir
[ -n "$TMPDIR" ] || unset TMPDIR

finish
