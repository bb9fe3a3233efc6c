#!/bin/bash
# SPDX-License-Identifier: MIT
# Layers as umoci writes them: an image built with "umoci repack" in three
# steps on a real tree (files and directories deleted, a directory emptied
# and refilled, a directory turned into a file and back, a file turned
# into a directory, hard links whose target is later deleted or replaced,
# xattrs, a FIFO, a symlink), its gzip layers taken from the layout in the
# manifest's order. The flattened image, mounted, must hold exactly what
# "umoci unpack" extracts, and fsck.img must accept it.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/stack/common.sh"
setup
require_tools umoci setfattr mkfifo
flatten_setup

cd "$WORK" || die "cd $WORK"
umoci init --layout oci >/dev/null && umoci new --image oci:t >/dev/null &&
	umoci unpack --image oci:t bundle >/dev/null ||
	die "umoci could not start an image"
R=$WORK/bundle/rootfs

# step COMMANDS: run them in the bundle's rootfs, then repack a layer
step() {
	(cd "$R" && set -e && eval "$1") || die "step failed: $1"
	find "$R" -mindepth 1 -exec touch -h -d @1700000000 {} + ||
		die "touch"
	umoci repack --refresh-bundle --image oci:t bundle >/dev/null ||
		die "umoci repack failed after: $1"
}

step '
mkdir -p etc usr/bin data keep opq/olddir d2f back gonedir/sub var
echo base >etc/hostname; echo gone >etc/gone
printf "#!/bin/sh\necho 1\n" >usr/bin/tool; chmod 755 usr/bin/tool
setfattr -n user.origin -v one usr/bin/tool
ln usr/bin/tool usr/bin/tool-link; ln -s tool usr/bin/sh
head -c 70000 /dev/urandom >data/orig; chown 42:43 data/orig
ln data/orig keep/link; ln data/orig keep/link2
echo old >data/replaced; ln data/replaced keep/old
echo in-opq >opq/old1; echo x >opq/olddir/x
echo child >d2f/child; echo a >back/a; echo f >f2d
echo deep >gonedir/sub/f; mkfifo var/fifo
setfattr -n user.layer -v one var'
step '
rm etc/gone data/orig; rm -r gonedir
rm data/replaced; echo new >data/replaced
rm usr/bin/tool; printf "#!/bin/sh\necho 2\n" >usr/bin/tool
setfattr -n user.origin -v two usr/bin/tool
rm -r opq; mkdir opq; echo only >opq/new
rm -r d2f; echo file >d2f
rm -r back; echo file >back
rm f2d; mkdir f2d; echo in >f2d/inside
setfattr -n user.layer -v two var'
step '
rm back; mkdir back; echo b >back/b
echo again >etc/gone; rm keep/link2
setfattr -x user.layer var'

umoci unpack --image oci:t ref >umoci.log 2>&1 ||
	{ cat umoci.log; die "umoci unpack failed"; }
mapfile -t LAYERS < <("$PYTHON" - oci <<'PY'
import json, os, sys
root = sys.argv[1]
def blob(d):
    alg, hexd = d["digest"].split(":")
    return os.path.join(root, "blobs", alg, hexd)
index = json.load(open(os.path.join(root, "index.json")))
man = json.load(open(blob(index["manifests"][0])))
for layer in man["layers"]:
    print(blob(layer))
PY
)
[ "${#LAYERS[@]}" -eq 3 ] || die "expected 3 layers, found ${#LAYERS[@]}"
zcat "${LAYERS[@]:1}" | bsdtar -tf - 2>/dev/null | grep -q '\.wh\.' ||
	die "umoci wrote no whiteouts: nothing to test"

if flatten umoci -T 1700000000 "$WORK/flat.img" "${LAYERS[@]}"; then
	ok "flatten umoci's 3 gzip layers ($(stat -c %s "$WORK/flat.img") bytes)"
	compare_mounts "$WORK/flat.img" "$WORK/ref/rootfs" "loop file" \
		--skip-root
	check "fsck.img" "$FSCK_IMG" -q "$WORK/flat.img"
else
	cat "$WORK/umoci.out"
	fail "flatten umoci's layers"
fi
finish
