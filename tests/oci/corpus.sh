# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# The OCI test corpus: image layouts made by real tools (umoci, skopeo,
# GNU tar, gzip, zstd), small enough to build in seconds, and the helpers
# every OCI test uses to read them back (umoci unpack as the reference
# extractor, converted EROFS layers mounted and stacked with overlayfs).
# Sourced, after tests/lib.sh when a test uses it (mounts are then
# unmounted by its cleanup trap); on its own it installs its own trap.
#
# Builders (each makes DIR, which must not exist yet, and prints nothing
# unless a tool fails; returns non-zero then):
#   corpus_umoci_layout DIR   tags "app" (5 layers) and "app2" (4 layers,
#                             the bottom two shared with "app")
#   corpus_multiplatform DIR  tag "multi": an index with linux/amd64 and
#                             linux/arm64/v8 (sharing the base layer),
#                             written by skopeo copy --all (the tag names a
#                             nested index)
#   corpus_compressed DIR     tags "gz" (3 gzip layers, umoci), "mixed"
#                             (gzip, zstd, uncompressed), "zstd" (skopeo
#                             --dest-compress-format zstd) and "docker"
#                             (skopeo --format v2s2: Docker media types;
#                             skopeo's oci: transport does not read it
#                             back, corpus.py export-dir gives a dir:)
#   corpus_referrer LAYOUT TAG NEWTAG   an SBOM of TAG (an artifact
#                             manifest whose subject is TAG's), tagged NEWTAG
# Readers:
#   corpus_unpack LAYOUT TAG DIR [OS/ARCH[/VARIANT]]
#       umoci unpack of the image into the bundle DIR; the tree is
#       DIR/rootfs (zstd and Docker layers are read through a view with
#       the same uncompressed layers, umoci 0.4 reads neither)
#   corpus_platforms LAYOUT TAG      the platforms of a multi-platform tag
#   corpus_layers LAYOUT TAG [PLATFORM]
#       "MEDIATYPE DIGEST SIZE" per layer, bottom first
#   corpus_manifest LAYOUT TAG [PLATFORM]   the manifest digest
#   corpus_blob LAYOUT DIGEST         the path of a blob
#   corpus_stack_mount CONVERTED_LAYOUT TAG MNTDIR [PLATFORM]
#       mount every EROFS layer of the image (-o ro, loop; a +zstd layer is
#       decompressed first) at MNTDIR.layers/N (N = 1 is the bottom) and
#       overlayfs lowerdir=top:...:bottom at MNTDIR (one layer: a bind
#       mount); every mount is registered for the cleanup trap
#   corpus_stack_umount MNTDIR     undo corpus_stack_mount now
#   corpus_stack_compare NAME CONVERTED_LAYOUT SRC_LAYOUT TAG [PLATFORM]
#       (after tests/lib.sh: records ok/fail) the converted image stacked
#       by corpus_stack_mount against umoci unpack of the source image;
#       the only differences allowed are overlayfs's and the layer
#       format's own: a merged directory reports one link, and a
#       directory a layer holds without an entry for it is an implied
#       directory of that layer, whose mtime hides the lower one's
#   CORPUS_TAGS_<builder>          the tags each builder writes

CORPUS_PY=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/oci/corpus.py
CORPUS_PYTHON=${PYTHON:-python3}
# Every file the builders create has this mtime; history and config
# "created" fields too, so the layouts change only when the tools do.
CORPUS_EPOCH=1700000000
CORPUS_CREATED=2023-11-14T22:13:20Z
# shellcheck disable=SC2034 # for the tests that source this file
CORPUS_TAGS_umoci="app app2"
# shellcheck disable=SC2034
CORPUS_TAGS_multiplatform="multi"
# shellcheck disable=SC2034
CORPUS_TAGS_compressed="gz mixed zstd docker"
# shellcheck disable=SC2034
CORPUS_EROFS_TYPES="application/vnd.erofs.layer.v1 application/vnd.erofs.layer.v1+zstd application/vnd.erofs"

# _corpus_run CMD...: run quietly; on failure show the output and fail.
_corpus_run() {
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then
		printf 'corpus: %s failed (exit %d):\n%s\n' "$*" $rc "$out" >&2
		return 1
	fi
}

_corpus_py() { "$CORPUS_PYTHON" "$CORPUS_PY" "$@"; }

# _corpus_stamp TREE: fixed mtimes, deepest first (so parents keep theirs).
_corpus_stamp() {
	find "$1" -depth -exec touch -h -d "@$CORPUS_EPOCH" {} +
}

# _corpus_unpack LAYOUT:TAG BUNDLE
_corpus_unpack() {
	rm -rf "$2"
	_corpus_run umoci unpack --image "$1" "$2"
}

# _corpus_repack LAYOUT:TAG BUNDLE: one layer from the bundle's changes.
_corpus_repack() {
	_corpus_stamp "$2/rootfs" &&
		_corpus_run umoci repack --history.created="$CORPUS_CREATED" \
			--history.created_by="corpus" --image "$1" "$2" &&
		rm -rf "$2"
}

# _corpus_new LAYOUT:TAG OS ARCH: an empty image with a config.
_corpus_new() {
	_corpus_run umoci new --image "$1" &&
		_corpus_run umoci config --image "$1" --os "$2" \
			--architecture "$3" --created "$CORPUS_CREATED" \
			--history.created "$CORPUS_CREATED" \
			--config.env PATH=/usr/bin:/bin --config.cmd /bin/sh \
			--config.workingdir /
}

# _corpus_tar_layer LAYOUT:TAG TREE: a layer GNU tar makes from TREE,
# appended verbatim (for what umoci repack never writes: an opaque
# directory marker).
_corpus_tar_layer() {
	local tar=$2.tar
	_corpus_stamp "$2" &&
		(cd "$2" && tar --numeric-owner --sort=name --format=pax \
			--pax-option=delete=atime,delete=ctime -cf "$tar" .) &&
		_corpus_run umoci raw add-layer \
			--history.created="$CORPUS_CREATED" \
			--history.created_by="corpus (tar)" --image "$1" "$tar" &&
		rm -rf "$2" "$tar"
}

# _corpus_tmp DIR: a scratch directory beside DIR (removed by the caller).
_corpus_tmp() { mktemp -d "${1%/}.tmp.XXXXXX"; }

_corpus_lines() { seq 1 "$2" | sed "s/^/$1 /"; }

corpus_umoci_layout() {
	local dir=$1 t r
	[ ! -e "$dir" ] || { echo "corpus: $dir exists" >&2; return 1; }
	t=$(_corpus_tmp "$dir") || return 1
	(
		set -e
		_corpus_run umoci init --layout "$dir"
		_corpus_new "$dir:app" linux amd64

		# layer 1: the base tree
		_corpus_unpack "$dir:app" "$t/b"
		r=$t/b/rootfs
		mkdir -p "$r/etc" "$r/usr/bin" "$r/usr/lib" "$r/gone/sub" \
			"$r/recreated/old" "$r/opaque/old" "$r/swap/inner" \
			"$r/home/user" "$r/dev"
		printf 'hello\n' >"$r/etc/motd"
		setfattr -n user.note -v first "$r/etc/motd"
		printf 'root:x:0:0::/root:/bin/sh\n' >"$r/etc/passwd"
		_corpus_lines tool 2000 >"$r/usr/bin/tool"
		chmod 0755 "$r/usr/bin/tool"
		# cap_net_raw+ep, as setcap writes it (VFS_CAP_REVISION_2)
		setfattr -n security.capability \
			-v 0sAQAAAgAgAAAAAAAAAAAAAAAAAAA= "$r/usr/bin/tool"
		ln "$r/usr/bin/tool" "$r/usr/bin/tool-link"
		_corpus_lines lib 300 >"$r/usr/lib/libx.so.1"
		ln -s libx.so.1 "$r/usr/lib/libx.so"
		ln -s ../etc/motd "$r/usr/motd-link"
		ln -s /nowhere "$r/usr/dangling"
		mknod "$r/dev/null" c 1 3
		mknod "$r/dev/loop9" b 7 9
		mkfifo "$r/dev/fifo"
		printf 'gone\n' >"$r/gone/sub/file"
		printf 'gone too\n' >"$r/gone/file"
		printf 'old\n' >"$r/recreated/old/file"
		printf 'keep?\n' >"$r/recreated/file"
		printf 'old\n' >"$r/opaque/old/file"
		printf 'hidden\n' >"$r/opaque/file"
		printf 'inner\n' >"$r/swap/inner/file"
		printf 'file\n' >"$r/swapfile"
		printf 'secret\n' >"$r/home/user/.profile"
		chown -R 1000:1000 "$r/home/user"
		chmod 0700 "$r/home/user"
		_corpus_repack "$dir:app" "$t/b"

		# layer 2: deletions, a directory recreated (umoci writes a
		# whiteout per old child), types swapped, xattrs changed, new
		# hard links
		_corpus_unpack "$dir:app" "$t/b"
		rm "$r/etc/passwd"
		setfattr -n user.note -v second "$r/etc/motd"
		setfattr -n user.added -v yes "$r/etc/motd"
		rm -r "$r/gone"
		rm -r "$r/recreated"
		mkdir "$r/recreated"
		printf 'new\n' >"$r/recreated/new"
		rm -r "$r/swap"
		printf 'was a directory\n' >"$r/swap"
		rm "$r/swapfile"
		mkdir "$r/swapfile"
		printf 'was a file\n' >"$r/swapfile/inside"
		mkdir -p "$r/srv"
		_corpus_lines data 500 >"$r/srv/data"
		ln "$r/srv/data" "$r/srv/data-link"
		ln "$r/srv/data" "$r/srv/data-link2"
		chown 33:33 "$r/srv/data"
		chmod 0640 "$r/srv/data"
		_corpus_repack "$dir:app" "$t/b"
		_corpus_run umoci tag --image "$dir:app" shared

		# layer 3 (GNU tar): an opaque directory, removed and
		# re-created with other contents
		mkdir -p "$t/opq/opaque"
		: >"$t/opq/opaque/.wh..wh..opq"
		printf 'fresh\n' >"$t/opq/opaque/fresh"
		_corpus_tar_layer "$dir:app" "$t/opq"

		# layer 4: a file back to a directory, a deleted path back, a
		# symlink retargeted, a device added
		_corpus_unpack "$dir:app" "$t/b"
		rm "$r/swap"
		mkdir "$r/swap"
		printf 'again\n' >"$r/swap/again"
		printf 'root:x:0:0::/root:/bin/bash\n' >"$r/etc/passwd"
		rm "$r/usr/motd-link"
		ln -s ../etc/passwd "$r/usr/motd-link"
		mknod "$r/dev/zero" c 1 5
		_corpus_repack "$dir:app" "$t/b"

		# layer 5: a small change only
		_corpus_unpack "$dir:app" "$t/b"
		printf 'hello again\n' >"$r/etc/motd"
		_corpus_repack "$dir:app" "$t/b"

		# app2: the bottom two layers of app, then its own
		_corpus_unpack "$dir:shared" "$t/b"
		rm "$r/usr/lib/libx.so"
		mkdir -p "$r/opt/app2"
		_corpus_lines app2 100 >"$r/opt/app2/run"
		chmod 0755 "$r/opt/app2/run"
		_corpus_repack "$dir:app2-1" "$t/b"
		_corpus_unpack "$dir:app2-1" "$t/b"
		rm -r "$r/srv"
		setfattr -x user.note "$r/etc/motd"
		_corpus_repack "$dir:app2" "$t/b"
		_corpus_run umoci rm --image "$dir:app2-1"
		_corpus_run umoci rm --image "$dir:shared"
	)
	local rc=$?
	rm -rf "$t"
	return $rc
}

corpus_multiplatform() {
	local dir=$1 t src r
	[ ! -e "$dir" ] || { echo "corpus: $dir exists" >&2; return 1; }
	t=$(_corpus_tmp "$dir") || return 1
	src=$t/src
	(
		set -e
		_corpus_run umoci init --layout "$src"
		_corpus_new "$src:amd64" linux amd64
		_corpus_unpack "$src:amd64" "$t/b"
		r=$t/b/rootfs
		mkdir -p "$r/etc" "$r/usr/bin"
		printf 'base\n' >"$r/etc/os-release"
		_corpus_lines shared 200 >"$r/usr/bin/shared"
		_corpus_repack "$src:amd64" "$t/b"
		# arm64 starts from the same base layer
		_corpus_run umoci tag --image "$src:amd64" arm64
		_corpus_run umoci config --image "$src:arm64" \
			--architecture arm64 --created "$CORPUS_CREATED" \
			--history.created "$CORPUS_CREATED"

		_corpus_unpack "$src:amd64" "$t/b"
		printf 'amd64\n' >"$r/etc/arch"
		_corpus_lines x86 100 >"$r/usr/bin/prog"
		rm "$r/etc/os-release"
		_corpus_repack "$src:amd64" "$t/b"

		_corpus_unpack "$src:arm64" "$t/b"
		printf 'arm64\n' >"$r/etc/arch"
		_corpus_lines aarch64 120 >"$r/usr/bin/prog"
		mkdir "$r/usr/lib"
		ln -s ../bin/prog "$r/usr/lib/prog"
		_corpus_repack "$src:arm64" "$t/b"

		_corpus_py index "$src" multi amd64=linux/amd64 \
			arm64=linux/arm64/v8
		_corpus_run skopeo copy --all "oci:$src:multi" "oci:$dir:multi"
	)
	local rc=$?
	rm -rf "$t"
	return $rc
}

corpus_compressed() {
	local dir=$1 t r
	[ ! -e "$dir" ] || { echo "corpus: $dir exists" >&2; return 1; }
	t=$(_corpus_tmp "$dir") || return 1
	(
		set -e
		_corpus_run umoci init --layout "$dir"
		_corpus_new "$dir:gz" linux amd64
		_corpus_unpack "$dir:gz" "$t/b"
		r=$t/b/rootfs
		mkdir -p "$r/etc" "$r/var/lib" "$r/data"
		printf 'one\n' >"$r/etc/one"
		_corpus_lines compressible 5000 >"$r/data/text"
		head -c 65536 /dev/zero | tr '\0' z >"$r/data/zeds"
		_corpus_repack "$dir:gz" "$t/b"

		_corpus_unpack "$dir:gz" "$t/b"
		printf 'two\n' >"$r/etc/two"
		rm "$r/data/zeds"
		ln -s text "$r/data/text-link"
		setfattr -n user.layer -v two "$r/etc/two"
		_corpus_repack "$dir:gz" "$t/b"

		_corpus_unpack "$dir:gz" "$t/b"
		rm "$r/etc/one"
		mkdir "$r/var/lib/three"
		printf 'three\n' >"$r/var/lib/three/file"
		ln "$r/var/lib/three/file" "$r/var/lib/three/link"
		_corpus_repack "$dir:gz" "$t/b"

		# layer 1 as zstd, layer 2 uncompressed, blobs written by the
		# command-line tools
		_corpus_py recompress "$dir" gz mixed1 1 zstd
		_corpus_py recompress "$dir" mixed1 mixed 2 none
		_corpus_run umoci rm --image "$dir:mixed1"
		_corpus_run skopeo copy --dest-compress-format zstd \
			"oci:$dir:gz" "oci:$t/zstd:zstd"
		_corpus_run skopeo copy "oci:$t/zstd:zstd" "oci:$dir:zstd"
		_corpus_run skopeo copy --format v2s2 "oci:$dir:gz" \
			"dir:$t/docker"
		_corpus_py import-dir "$dir" "$t/docker" docker
	)
	local rc=$?
	rm -rf "$t"
	return $rc
}

corpus_referrer() { _corpus_py referrer "$@"; }
corpus_manifest() { _corpus_py manifest "$@"; }
corpus_layers() { _corpus_py layers "$@"; }
corpus_platforms() { _corpus_py platforms "$@"; }
corpus_blob() { printf '%s/blobs/%s/%s\n' "$1" "${2%%:*}" "${2#*:}"; }

corpus_unpack() {
	local layout=$1 tag=$2 bundle=$3 plat=${4:-} view
	rm -rf "$bundle"
	mkdir -p "$(dirname "$bundle")" || return 1
	view=$(_corpus_tmp "$bundle") || return 1
	# a view of just this manifest: umoci 0.4 reads neither indexes,
	# zstd layers nor Docker media types
	if _corpus_py view "$layout" "$tag" "${plat:--}" "$view" ref &&
		_corpus_run umoci unpack --image "$view:ref" "$bundle"; then
		rm -rf "$view"
		return 0
	fi
	rm -rf "$view"
	return 1
}

# Mount tracking: tests/lib.sh's when it is there, else our own trap.
if ! declare -F track_mount >/dev/null; then
	CORPUS_OWN_MOUNTS=
	track_mount() { CORPUS_OWN_MOUNTS="$1 $CORPUS_OWN_MOUNTS"; }
	untrack_mount() {
		local d out=
		for d in $CORPUS_OWN_MOUNTS; do
			[ "$d" = "$1" ] || out="$out $d"
		done
		CORPUS_OWN_MOUNTS=$out
	}
	corpus_cleanup() {
		local d
		for d in $CORPUS_OWN_MOUNTS; do
			umount "$d" 2>/dev/null || umount -l "$d" 2>/dev/null
		done
		CORPUS_OWN_MOUNTS=
	}
	trap corpus_cleanup EXIT
fi

corpus_stack_mount() {
	local layout=$1 tag=$2 mnt=$3 plat=${4:-} i=0 lower='' mt digest blob
	mkdir -p "$mnt" "$mnt.layers" || return 1
	while read -r mt digest _; do
		i=$((i + 1))
		blob=$(corpus_blob "$layout" "$digest")
		case $mt in
		application/vnd.erofs.layer.v1 | application/vnd.erofs) ;;
		application/vnd.erofs.layer.v1+zstd)
			zstd -q -d -c "$blob" >"$mnt.layers/$i.erofs" || return 1
			blob=$mnt.layers/$i.erofs ;;
		*)
			echo "corpus: layer $i ($digest) is $mt, not EROFS" >&2
			return 1 ;;
		esac
		mkdir -p "$mnt.layers/$i"
		mount -t erofs -o ro,loop "$blob" "$mnt.layers/$i" || {
			echo "corpus: mount of layer $i ($digest) failed" >&2
			return 1
		}
		track_mount "$mnt.layers/$i"
		lower=$mnt.layers/$i${lower:+:$lower}
	done < <(corpus_layers "$layout" "$tag" ${plat:+"$plat"})
	[ $i -gt 0 ] || { echo "corpus: $tag has no layer" >&2; return 1; }
	if [ $i -eq 1 ]; then
		mount --bind "$lower" "$mnt" || return 1
	else
		mount -t overlay overlay -o "ro,lowerdir=$lower" "$mnt" ||
			return 1
	fi
	track_mount "$mnt"
}

corpus_stack_umount() {
	local mnt=$1 d rc=0
	for d in "$mnt" "$mnt".layers/*; do
		[ -d "$d" ] || continue
		if mountpoint -q "$d"; then
			umount "$d" || rc=1
		fi
		untrack_mount "$d"
	done
	rm -rf "$mnt.layers"
	return $rc
}

# _corpus_only_allowed TREECMP_OUT REF SRC TAG [PLATFORM]: every difference is
# one overlayfs or implied directories explain (see above).
_corpus_only_allowed() {
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

corpus_stack_compare() {
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
		_corpus_only_allowed "$WORK/$name.treecmp" "$ref/rootfs" "$src" "$tag" \
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
