# SPDX-License-Identifier: MIT
# Shared by tests/oci/convert*.sh (sourced after tests/lib.sh): layouts
# made with umoci, the converted layers stacked with overlayfs.

MKLAYOUT="$PYTHON $top_srcdir/tests/oci/mklayout.py"

# layer_blobs LAYOUT REF: the layer blob paths of REF's manifest, lowest
# first, one a line (the first manifest of an index).
layer_blobs() {
	"$PYTHON" - "$1" "$2" <<'PY'
import json, os, sys
root, ref = sys.argv[1:]
def load(d):
    with open(os.path.join(root, "blobs", "sha256", d.split(":")[1])) as f:
        return json.load(f)
with open(os.path.join(root, "index.json")) as f:
    ix = json.load(f)
for m in ix["manifests"]:
    if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == ref:
        doc = load(m["digest"])
        while "manifests" in doc:
            doc = load(doc["manifests"][0]["digest"])
        for l in doc["layers"]:
            print(os.path.join(root, "blobs", "sha256", l["digest"].split(":")[1]))
        break
PY
}

# umoci_layout DIR: an image "t" of three gzip layers made by umoci: files,
# a hard link, xattrs; then deleted files and directories, an opaque
# directory (deleted and re-created), a re-created path of another type;
# then a new layer over a file of the first.
umoci_layout() {
	local l=$1 b=$WORK/bundle.$$
	umoci init --layout "$l" && umoci new --image "$l:t" || return 1
	umoci unpack --image "$l:t" "$b" >/dev/null || return 1
	mkdir -p "$b/rootfs/etc" "$b/rootfs/dir/sub" "$b/rootfs/gone" \
		"$b/rootfs/opq/deep" "$b/rootfs/swap" || return 1
	echo hi >"$b/rootfs/etc/hostname"
	echo a >"$b/rootfs/dir/sub/f"
	echo x >"$b/rootfs/gone/y"
	echo o >"$b/rootfs/opq/old"
	echo d >"$b/rootfs/opq/deep/d"
	echo same >"$b/rootfs/h1"
	ln "$b/rootfs/h1" "$b/rootfs/h2"
	ln -s ../etc/hostname "$b/rootfs/dir/link"
	head -c 100000 /dev/urandom >"$b/rootfs/dir/big"
	setfattr -n user.foo -v bar "$b/rootfs/etc/hostname" || return 1
	setfattr -n trusted.t -v 1 "$b/rootfs/dir" || return 1
	umoci repack --image "$l:t" "$b" || return 1
	rm -rf "$b"
	umoci unpack --image "$l:t" "$b" >/dev/null || return 1
	rm -rf "$b/rootfs/gone" "$b/rootfs/dir/sub" "$b/rootfs/opq" "$b/rootfs/h2"
	mkdir "$b/rootfs/opq" && echo new >"$b/rootfs/opq/new"
	rmdir "$b/rootfs/swap" && echo file >"$b/rootfs/swap"
	mkdir "$b/rootfs/dir/new" && echo n >"$b/rootfs/dir/new/n"
	echo v2 >"$b/rootfs/etc/hostname"
	setfattr -n user.foo -v baz "$b/rootfs/etc/hostname" || return 1
	umoci repack --image "$l:t" "$b" || return 1
	rm -rf "$b"
	umoci unpack --image "$l:t" "$b" >/dev/null || return 1
	rm -f "$b/rootfs/swap" && mkdir -p "$b/rootfs/swap/again"
	mkdir -p "$b/rootfs/gone" && echo back >"$b/rootfs/gone/y"
	umoci repack --image "$l:t" "$b" || return 1
	rm -rf "$b"
}

# What overlayfs shows differently from an extraction: a merged directory
# has one link, and a lower file keeps its layer's link count when some of
# its names are whited out above.
OVL_ALLOWED="^'[^']*': nlink: expected [0-9]+, actual [0-9]+\$"

# implied_dirs LAYOUT REF: the directories some layer of REF writes into
# without an entry of its own (umoci leaves out parents whose metadata did
# not change), as treecmp quotes paths: each layer image has to make them
# (mode 0755, owner 0:0, the build time), and overlayfs shows the upper
# layer's, where an extraction keeps the lower one's (docs/oci.md).
implied_dirs() {
	"$PYTHON" - "$1" "$2" <<'PY'
import gzip, io, json, os, subprocess, sys, tarfile
root, ref = sys.argv[1:]
def path(d):
    return os.path.join(root, "blobs", "sha256", d.split(":")[1])
ix = json.load(open(os.path.join(root, "index.json")))
for m in ix["manifests"]:
    if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == ref:
        man = json.load(open(path(m["digest"])))
out = set()
for l in man["layers"]:
    data = open(path(l["digest"]), "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    elif data[:4] == b"\x28\xb5\x2f\xfd":
        data = subprocess.run(["zstd", "-dc"], input=data, stdout=subprocess.PIPE).stdout
    names = set()
    parents = set()
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        for e in t:
            n = e.name.strip("/").removeprefix("./")
            if e.isdir():
                names.add(n)
            p = os.path.dirname(n)
            while p:
                parents.add(p)
                p = os.path.dirname(p)
    out |= parents - names
for p in sorted(out):
    print(p)
PY
}

# stack_compare NAME REF BLOB...: mount every layer blob (lowest first),
# stack them with overlayfs and compare the merged tree with REF. With
# IMPLIED set (implied_dirs), differences in those directories' metadata
# (not their type) are the documented limitation, counted and allowed.
stack_compare() {
	local name=$1 ref=$2 i=0 lower='' img out=$WORK/$1.treecmp mnts=()
	local allowed=$OVL_ALLOWED d
	for d in ${IMPLIED:-}; do
		allowed="$allowed|^'$d': (mtime|mode|owner|uid|gid|xattr)"
	done
	shift 2
	for img in "$@"; do
		i=$((i + 1))
		if ! mount_loop "$img" "$WORK/$name.m$i"; then
			fail "$name: layer $i ($(basename "$img")) does not mount"
			for img in "${mnts[@]}"; do unmount "$img"; done
			return 1
		fi
		mnts=("$WORK/$name.m$i" "${mnts[@]}")
		lower=$WORK/$name.m$i${lower:+:$lower}
	done
	ok "$name: all $i layers mount"
	mkdir -p "$WORK/$name.merged"
	if mount -t overlay overlay -o "ro,lowerdir=$lower" \
		"$WORK/$name.merged"; then
		track_mount "$WORK/$name.merged"
		mnts=("$WORK/$name.merged" "${mnts[@]}")
		$TREECMP --skip-root "$ref" "$WORK/$name.merged" >"$out" 2>&1
		if ! grep -v '^treecmp: ' "$out" | grep -qvE "$allowed" &&
			awk '/^treecmp: / { exit !($2 == $5) }' "$out"; then
			ok "$name: overlayfs stack = umoci unpack" \
				"($(tail -n 1 "$out"); implied: ${IMPLIED:-none})"
		else
			cat "$out"
			fail "$name: overlayfs stack differs from umoci unpack"
		fi
	else
		fail "$name: overlayfs over $lower"
	fi
	for img in "${mnts[@]}"; do
		unmount "$img" || fail "umount $img"
	done
}
