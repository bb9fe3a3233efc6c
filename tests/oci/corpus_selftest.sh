#!/bin/bash
# SPDX-License-Identifier: MIT
# The OCI test corpus (tests/oci/corpus.sh) is what every OCI test trusts,
# so its builders are tested here with the tools themselves as judges:
# skopeo copies every image (verifying each blob's digest and size) and
# its inspect lists the layers, media types and platforms expected; umoci
# lists and stats the tags; umoci unpack (through corpus_unpack) gives the
# trees each layer sequence must give (deletions, opaque and re-created
# directories, types swapped both ways, hard links, xattrs, devices); the
# compressed variants of one image unpack to the same tree; and two builds
# are byte-identical.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/corpus.sh"
[ "$(id -u)" -eq 0 ] || skip "umoci unpack keeps owners and devices only as root"
require_tools umoci skopeo zstd gzip tar setfattr getfattr "$PYTHON"
setup_tmp

C=$WORK/corpus
mkdir -p "$C"
for b in umoci_layout multiplatform compressed; do
	start=$(date +%s)
	if "corpus_$b" "$C/$b"; then
		ok "corpus_$b built in $(($(date +%s) - start)) s"
	else
		die "corpus_$b failed"
	fi
done
U=$C/umoci_layout M=$C/multiplatform Z=$C/compressed

# inspect_field LAYOUT TAG PYTHON-EXPR [SKOPEO OPTIONS...]: EXPR over
# skopeo inspect's document (d) or its --raw manifest (r).
inspect() {
	local layout=$1 tag=$2 expr=$3
	shift 3
	skopeo inspect "$@" "oci:$layout:$tag" >"$WORK/inspect.json" &&
		skopeo inspect --raw "$@" "oci:$layout:$tag" >"$WORK/raw.json" &&
		"$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
print(eval(sys.argv[3]))' "$WORK/inspect.json" "$WORK/raw.json" "$expr"
}

# expect WHAT ACTUAL EXPECTED
expect() {
	if [ "$2" = "$3" ]; then
		ok "$1: $2"
	else
		fail "$1: got '$2', expected '$3'"
	fi
}

# names DIR: the names in DIR, sorted, on one line.
names() {
	local f out=
	for f in "$1"/* "$1"/.[!.]*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		out="$out${out:+ }${f##*/}"
	done
	echo "$out"
}

# 1. The tools read every tag; skopeo copy verifies every blob.
copies=0
# (skopeo's oci: transport skips Docker manifests in index.json: the
# docker tag is read through a dir: export of the same blobs)
"$PYTHON" "$CORPUS_PY" export-dir "$Z" docker "$WORK/docker.dir" ||
	die "export-dir docker"
for src in "oci:$U:app" "oci:$U:app2" "oci:$M:multi" "oci:$Z:gz" \
	"oci:$Z:mixed" "oci:$Z:zstd" "dir:$WORK/docker.dir"; do
	all=
	case $src in *:multi) all=--all ;; esac
	rm -rf "$WORK/copy"
	if skopeo copy $all "$src" "oci:$WORK/copy:t" >"$WORK/copy.log" 2>&1
	then
		copies=$((copies + 1))
	else
		cat "$WORK/copy.log"
		fail "skopeo copy $all $src"
	fi
done
expect "skopeo copy (blobs verified) of every tag" "$copies" 7
expect "umoci ls (umoci_layout)" "$(umoci ls --layout "$U" | sort | xargs)" \
	"app app2"
for t in app app2 gz; do
	L=$U
	[ $t = gz ] && L=$Z
	check "umoci stat $t" umoci stat --image "$L:$t" >/dev/null
done

# 2. Layers and media types.
GZ=application/vnd.oci.image.layer.v1.tar+gzip
ZS=application/vnd.oci.image.layer.v1.tar+zstd
TAR=application/vnd.oci.image.layer.v1.tar
DGZ=application/vnd.docker.image.rootfs.diff.tar.gzip
expect "app layers" "$(inspect "$U" app 'len(d["Layers"])')" 5
expect "app2 layers" "$(inspect "$U" app2 'len(d["Layers"])')" 4
a=$(inspect "$U" app '" ".join(d["Layers"][:2])')
b=$(inspect "$U" app2 '" ".join(d["Layers"][:2])')
expect "app and app2 share their bottom two layers" "$a" "$b"
a=$(inspect "$U" app 'd["Layers"][2]')
b=$(inspect "$U" app2 'd["Layers"][2]')
if [ "$a" != "$b" ]; then
	ok "app and app2 differ above"
else
	fail "app and app2 share their third layer"
fi
expect "app media types" \
	"$(inspect "$U" app '" ".join(sorted(set(l["mediaType"] for l in r["layers"])))')" "$GZ"
expect "mixed media types" \
	"$(inspect "$Z" mixed '" ".join(l["mediaType"] for l in r["layers"])')" \
	"$GZ $ZS $TAR"
expect "zstd media types" \
	"$(inspect "$Z" zstd '" ".join(l["mediaType"] for l in r["layers"])')" \
	"$ZS $ZS $ZS"
expect "docker manifest" \
	"$(skopeo inspect --raw "dir:$WORK/docker.dir" | "$PYTHON" -c 'import json, sys
r = json.load(sys.stdin)
print(r["mediaType"], " ".join(l["mediaType"] for l in r["layers"]))')" \
	"application/vnd.docker.distribution.manifest.v2+json $DGZ $DGZ $DGZ"
for src in "oci:$Z:gz" "oci:$Z:mixed" "oci:$Z:zstd" "dir:$WORK/docker.dir"; do
	skopeo inspect --config "$src" | "$PYTHON" -c \
		'import json, sys; print(" ".join(json.load(sys.stdin)["rootfs"]["diff_ids"]))'
done >"$WORK/diffids"
expect "gz, mixed, zstd, docker: same diff_ids" "$(sort -u "$WORK/diffids" | wc -l)" 1

# 3. The multi-platform index: a tag naming an index (nested in
# index.json), two platforms sharing the base layer.
expect "multi is an index" "$(inspect "$M" multi 'r["mediaType"]' \
	--override-os linux)" application/vnd.oci.image.index.v1+json
expect "multi platforms" "$(corpus_platforms "$M" multi | xargs)" \
	"linux/amd64 linux/arm64/v8"
amd=$(inspect "$M" multi '" ".join(d["Layers"]) + " " + d["Architecture"]' \
	--override-arch amd64)
arm=$(inspect "$M" multi '" ".join(d["Layers"]) + " " + d["Architecture"]' \
	--override-arch arm64 --override-variant v8)
expect "amd64: 2 layers" "$(echo "$amd" | wc -w)" 3
expect "arm64: 2 layers" "$(echo "$arm" | wc -w)" 3
expect "the platforms share the base layer" "${amd%% *}" "${arm%% *}"
expect "arm64's architecture" "${arm##* }" arm64

# 4. The trees umoci unpacks.
R=$WORK/unpack
corpus_unpack "$U" app "$R/app" || die "corpus_unpack app"
corpus_unpack "$U" app2 "$R/app2" || die "corpus_unpack app2"
a=$R/app/rootfs
expect "deleted directory" "$(ls -d "$a/gone" 2>/dev/null)" ""
expect "opaque directory (tar's .wh..wh..opq)" "$(names "$a/opaque")" fresh
expect "re-created directory (umoci's whiteouts)" \
	"$(names "$a/recreated")" new
expect "directory -> file -> directory" "$(names "$a/swap")" again
expect "file -> directory" "$(names "$a/swapfile")" inside
expect "deleted then re-created file" "$(cat "$a/etc/passwd")" \
	"root:x:0:0::/root:/bin/bash"
expect "hard links" "$(stat -c '%h %u:%g %a' "$a/srv/data")" "3 33:33 640"
expect "hard-linked pair in the base" \
	"$(stat -c %i "$a/usr/bin/tool" "$a/usr/bin/tool-link" | sort -u | wc -l)" 1
expect "security.capability" \
	"$(getfattr --absolute-names --only-values -n security.capability "$a/usr/bin/tool" | base64)" \
	"AQAAAgAgAAAAAAAAAAAAAAAAAAA="
expect "user xattrs" \
	"$(getfattr --absolute-names -d "$a/etc/motd" | grep '=' | xargs)" \
	"user.added=yes user.note=second"
expect "devices and fifo" "$(stat -c '%F %t:%T' "$a/dev/null" "$a/dev/loop9" "$a/dev/zero" "$a/dev/fifo" | xargs)" \
	"character special file 1:3 block special file 7:9 character special file 1:5 fifo 0:0"
expect "symlink retargeted" "$(readlink "$a/usr/motd-link")" ../etc/passwd
a=$R/app2/rootfs
expect "app2: own layers" \
	"$(for f in opt/app2/run srv usr/lib/libx.so; do
		[ -e "$a/$f" ] || [ -L "$a/$f" ] && echo "$f"; done)" opt/app2/run
expect "app2: xattr removed" \
	"$(getfattr --absolute-names -d "$a/etc/motd" | grep '=' | xargs)" \
	"user.added=yes"
for p in $(corpus_platforms "$M" multi); do
	corpus_unpack "$M" multi "$R/$p" "$p" || die "corpus_unpack multi $p"
done
expect "amd64 tree" "$(cat "$R/linux/amd64/rootfs/etc/arch") $(names "$R/linux/amd64/rootfs/etc")" \
	"amd64 arch"
expect "arm64 tree" "$(cat "$R/linux/arm64/v8/rootfs/etc/arch") $(names "$R/linux/arm64/v8/rootfs/etc")" \
	"arm64 arch os-release"
corpus_unpack "$Z" gz "$R/gz" || die "corpus_unpack gz"
for t in mixed zstd docker; do
	corpus_unpack "$Z" "$t" "$R/$t" || { fail "corpus_unpack $t"; continue; }
	# shellcheck disable=SC2086 # TREECMP is the interpreter and script
	check "$t unpacks to the tree gz does" $TREECMP "$R/gz/rootfs" \
		"$R/$t/rootfs"
done

# 5. Reproducible: a second build gives the same bytes.
C2=$WORK/again
mkdir -p "$C2"
for b in umoci_layout multiplatform compressed; do
	"corpus_$b" "$C2/$b" || die "corpus_$b (second build) failed"
done
for b in umoci_layout multiplatform compressed; do
	check "$b: two builds, same index.json" cmp "$C/$b/index.json" \
		"$C2/$b/index.json"
done

finish
