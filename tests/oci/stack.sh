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

corpus_stack_compare app "$C/cu" "$C/u" app
corpus_stack_compare app2 "$C/cu" "$C/u" app2
for p in $(corpus_platforms "$C/m" multi); do
	corpus_stack_compare "multi-${p//\//-}" "$C/cm" "$C/m" multi "$p"
done
for t in gz mixed zstd docker; do
	corpus_stack_compare "$t" "$C/cz" "$C/z" "$t"
	corpus_stack_compare "$t-erofs-zstd" "$C/czz" "$C/z" "$t"
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
