#!/bin/bash
# SPDX-License-Identifier: MIT
# Converted layouts as a runtime uses them: every image (and platform) of
# the corpus (tests/oci/corpus.sh) converted by mkfs.img --oci has each
# EROFS layer mounted by the kernel and the layers stacked with overlayfs
# (lowerdir=top:...:bottom, as containerd's EROFS snapshotter stacks
# them), and the merged tree must be the tree umoci unpack gives for the
# source image. The only differences allowed are overlayfs's and the
# layer format's own: a merged directory reports one link, and a
# directory a layer holds without an entry for it (umoci writes
# "etc/motd" without "etc/") is an implied directory of that layer, whose
# mtime (the build time) hides the lower one's. umoci and skopeo must
# read the converted layouts, and skopeo copy (which verifies every
# digest) copy them.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/corpus.sh"
setup
require_tools umoci skopeo zstd gzip tar setfattr
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	skip "the kernel has no overlayfs"

C=$WORK/corpus
mkdir -p "$C"
corpus_umoci_layout "$C/u" || die "corpus_umoci_layout failed"
corpus_multiplatform "$C/m" || die "corpus_multiplatform failed"
corpus_compressed "$C/z" || die "corpus_compressed failed"
for pair in "u cu" "m cm" "z cz" \
	"z czz:--layer-media-type=application/vnd.erofs.layer.v1+zstd"; do
	src=${pair% *} dst=${pair#* }
	opt=
	case $dst in *:*) opt=${dst#*:} dst=${dst%%:*} ;; esac
	# shellcheck disable=SC2086 # $opt: zero or one option
	if mkfs_img --oci -q $opt "$C/$src" "$C/$dst" >"$WORK/mkfs.log" 2>&1
	then
		ok "mkfs.img --oci $opt $src $dst"
	else
		cat "$WORK/mkfs.log"
		die "mkfs.img --oci $opt $src $dst"
	fi
done

# only_allowed TREECMP_OUT REF SRC TAG [PLATFORM]: every difference is
# one overlayfs or implied directories explain (see above).
only_allowed() {
	local out=$1 ref=$2 src=$3 tag=$4 plat=${5:-} d
	for d in $(corpus_layers "$src" "$tag" ${plat:+"$plat"} | cut -d' ' -f2); do
		corpus_blob "$src" "$d"
	done >"$WORK/layers.list"
	"$PYTHON" - "$out" "$ref" "$WORK/layers.list" <<'EOF'
import os, re, subprocess, sys
out, ref, layers = sys.argv[1:4]

def norm(p):
    p = p.strip()
    while p.startswith("./"):
        p = p[2:]
    return p.strip("/")

implied = set()
for blob in open(layers).read().split():
    names = subprocess.run(["bsdtar", "-tf", blob], check=True,
                           stdout=subprocess.PIPE).stdout.decode(
                               "utf-8", "surrogateescape").splitlines()
    listed = {norm(n) for n in names}
    for n in listed:
        parts = n.split("/")
        for i in range(1, len(parts)):
            p = "/".join(parts[:i])
            if p not in listed:
                implied.add(p)
bad = []
for line in open(out):
    line = line.rstrip("\n")
    if line.startswith("treecmp: "):
        continue
    m = re.match(r"^'(.*)': (nlink|mtime): expected \S+, actual (\S+)$", line)
    if m:
        path = norm(m.group(1))
        isdir = os.path.isdir(os.path.join(ref, path)) and \
            not os.path.islink(os.path.join(ref, path))
        if m.group(2) == "nlink" and isdir and m.group(3) == "1":
            continue
        if m.group(2) == "mtime" and isdir and path in implied:
            continue
    bad.append(line)
for line in bad:
    print("unexpected:", line)
sys.exit(1 if bad else 0)
EOF
}

# stack_case NAME CONVERTED SRC TAG [PLATFORM]
stack_case() {
	local name=$1 conv=$2 src=$3 tag=$4 plat=${5:-} mnt ref n
	mnt=$WORK/$name.merged
	ref=$WORK/$name.bundle
	if ! corpus_unpack "$src" "$tag" "$ref" ${plat:+"$plat"}; then
		fail "$name: umoci unpack of the source"
		return
	fi
	if ! corpus_stack_mount "$conv" "$tag" "$mnt" ${plat:+"$plat"}; then
		fail "$name: mounting and stacking the converted layers"
		corpus_stack_umount "$mnt"
		return
	fi
	n=$(find "$mnt.layers" -mindepth 1 -maxdepth 1 -type d | wc -l)
	ok "$name: $n EROFS layers mounted, overlayfs over them"
	$TREECMP --skip-root "$ref/rootfs" "$mnt" >"$WORK/$name.treecmp" 2>&1
	if grep -q "entries expected" "$WORK/$name.treecmp" &&
		awk '/^treecmp: / { exit !($2 == $5) }' "$WORK/$name.treecmp" &&
		only_allowed "$WORK/$name.treecmp" "$ref/rootfs" "$src" "$tag" \
			${plat:+"$plat"}; then
		ok "$name: merged tree = umoci unpack of the source" \
			"($(grep '^treecmp: ' "$WORK/$name.treecmp" | cut -d, -f1 |
				cut -d' ' -f2) entries; overlayfs link counts" \
			"and implied directories' mtimes aside)"
	else
		cat "$WORK/$name.treecmp"
		fail "$name: merged tree differs from umoci unpack"
	fi
	corpus_stack_umount "$mnt" || fail "$name: unmount"
	rm -rf "$ref"
}

stack_case app "$C/cu" "$C/u" app
stack_case app2 "$C/cu" "$C/u" app2
for p in $(corpus_platforms "$C/m" multi); do
	stack_case "multi-${p//\//-}" "$C/cm" "$C/m" multi "$p"
done
for t in gz mixed zstd docker; do
	stack_case "$t" "$C/cz" "$C/z" "$t"
	stack_case "$t-erofs-zstd" "$C/czz" "$C/z" "$t"
done

# The tools read the converted layouts. (Not the image of the Docker
# manifest: mkfs.img --oci keeps its Docker media type, and skopeo refuses
# EROFS layers in a Docker schema 2 manifest; fsck.img --oci warns.)
for lt in "cu app" "cu app2" "cz gz" "cz mixed" "cz zstd" "czz gz"; do
	# shellcheck disable=SC2086 # two words
	set -- $lt
	rm -rf "$WORK/copy"
	check "skopeo inspect oci:$1:$2" skopeo inspect "oci:$C/$1:$2" \
		>/dev/null
	check "skopeo copy oci:$1:$2 (digests verified)" \
		skopeo copy -q "oci:$C/$1:$2" "oci:$WORK/copy:$2"
	check "umoci stat $1:$2" umoci stat --image "$C/$1:$2" >/dev/null
done
rm -rf "$WORK/copy"
check "skopeo copy --all oci:cm:multi" skopeo copy -q --all \
	"oci:$C/cm:multi" "oci:$WORK/copy:multi"
for p in amd64 arm64; do
	got=$(skopeo inspect --override-arch "$p" "oci:$C/cm:multi" |
		"$PYTHON" -c 'import json, sys; d = json.load(sys.stdin); print(d["Architecture"], len(d["Layers"]))')
	if [ "$got" = "$p 2" ]; then
		ok "skopeo inspect --override-arch $p oci:cm:multi: $got"
	else
		fail "skopeo inspect --override-arch $p oci:cm:multi: $got"
	fi
done

finish
