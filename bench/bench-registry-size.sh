#!/bin/bash
# SPDX-License-Identifier: MIT
# What a registry stores per layer for each way of converting (the table of
# docs/registry.md): the gzip source blob against the EROFS blob of
# mkfs.img --oci by default (uncompressed EROFS), with -z lz4hc, with
# -z lzma, and with the +zstd media type (the uncompressed image in zstd
# frames); a registry stores each blob byte for byte
# (tests/registry/roundtrip.sh checks it), so the blob sizes are what it
# stores.
#
# usage: bench/bench-registry-size.sh [-m MIRROR]
#
# Images (the source layout is cached in $BENCH_DIR/registry-src):
#   debian  a Debian 12 root made by mmdebstrap --variant=apt bookworm
#           (root and the Debian mirror of apt's sources or -m MIRROR;
#           left out when mmdebstrap cannot make it)
#   python  debian plus a layer of this machine's Python 3 library
#           (/usr/lib/python3*: many small files)
#   corpus  the test images of tests/oci/corpus.sh ("app", "app2",
#           "multi"): small layers, a worst case for 4 KiB blocks
# Prints one Markdown table row per layer, then the totals per choice
# (every distinct blob: layers, configs, manifests, indexes).
#
# Needs umoci, skopeo, python3, setfattr; mmdebstrap for "debian".
set -euo pipefail

MIRROR=
while getopts "m:h" opt; do
	case $opt in
	m) MIRROR=$OPTARG ;;
	*) sed -n '3,24p' "$0"; exit 2 ;;
	esac
done

here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
if [ -z "${top_builddir:-}" ]; then
	top_builddir=$PWD
	[ -e "$top_builddir/mkfs/mkfs.img" ] || top_builddir=$top_srcdir
fi
BENCH_DIR=${BENCH_DIR:-/tmp/imgfs-bench}
PYTHON=python3
[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
if [ -x "$top_builddir/mkfs/.libs/mkfs.img" ]; then
	export LD_LIBRARY_PATH=$top_builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	MKFS=$top_builddir/mkfs/.libs/mkfs.img
else
	MKFS=$top_builddir/mkfs/mkfs.img
fi
[ -x "$MKFS" ] || { echo "mkfs.img not found: $MKFS" >&2; exit 1; }
for t in umoci skopeo setfattr; do
	command -v "$t" >/dev/null || { echo "needs $t" >&2; exit 1; }
done

SRC=$BENCH_DIR/registry-src
work=$(mktemp -d "$BENCH_DIR.registry.XXXXXX" 2>/dev/null ||
	{ mkdir -p "$BENCH_DIR" && mktemp -d "$BENCH_DIR/registry.XXXXXX"; })
trap 'rm -rf "$work"' EXIT

# add_layer LAYOUT:TAG TAR: TAR as a gzip layer (umoci compresses it)
add_layer() {
	umoci raw add-layer --history.created_by="bench-registry-size" \
		--image "$1" "$2" >/dev/null
}

# the Debian mirror apt uses here
mirror() {
	sed -n 's/^URIs: *\(.*debian\/*\)$/\1/p' /etc/apt/sources.list.d/*.sources \
		2>/dev/null | head -n 1
}

make_src() {
	local t=$work/src
	echo "making the source layout $SRC ..." >&2
	# the corpus first (no network needed); its images are app, app2,
	# multi
	# shellcheck disable=SC1091
	. "$top_srcdir/tests/oci/corpus.sh"
	trap 'rm -rf "$work"' EXIT	# corpus.sh sets its own (it mounts nothing here)
	corpus_umoci_layout "$t" >&2
	corpus_multiplatform "$work/m" >&2
	skopeo copy -q --all "oci:$work/m:multi" "oci:$t:multi" >&2
	umoci new --image "$t:debian" >/dev/null
	# shellcheck disable=SC2086 # no mirror: no argument (mmdebstrap's own)
	if [ "$(id -u)" = 0 ] && command -v mmdebstrap >/dev/null &&
		mmdebstrap --quiet --variant=apt bookworm "$work/debian.tar" \
			${MIRROR:-$(mirror)} >&2; then
		add_layer "$t:debian" "$work/debian.tar"
	else
		echo "no Debian root (mmdebstrap needs root and the mirror):" \
			"the python image starts from an empty one" >&2
	fi
	umoci tag --image "$t:debian" python >/dev/null
	(cd / && tar --numeric-owner -cf "$work/python.tar" usr/lib/python3*)
	add_layer "$t:python" "$work/python.tar"
	rm -f "$work/debian.tar" "$work/python.tar"
	rm -rf "$SRC" && mkdir -p "$BENCH_DIR" && mv "$t" "$SRC"
}
[ -e "$SRC/index.json" ] || make_src

CHOICES=("default::" "-z lz4hc:-z lz4hc:" "-z lzma:-z lzma:"
	"+zstd::application/vnd.erofs.layer.v1+zstd")
dsts=()
for c in "${CHOICES[@]}"; do
	IFS=: read -r name opts mt <<<"$c"
	dst=$work/dst.${#dsts[@]}
	echo "mkfs.img --oci $opts ${mt:+--layer-media-type=$mt}..." >&2
	# shellcheck disable=SC2086 # opts: options
	"$MKFS" --oci -q $opts ${mt:+--layer-media-type=$mt} "$SRC" "$dst"
	dsts+=("$name=$dst")
done

"$PYTHON" - "$SRC" "${dsts[@]}" <<'EOF'
import gzip, json, os, sys
src, choices = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]

def blob(lay, d):
    return os.path.join(lay, "blobs", "sha256", d.split(":")[1])

def load(lay, d):
    with open(blob(lay, d)) as f:
        return json.load(f)

def images(lay):
    """(ref, platform, manifest) of every image, and every blob reached."""
    out, seen = [], set()
    def walk(ref, desc, plat):
        seen.add(desc["digest"])
        doc = load(lay, desc["digest"])
        if "manifests" in doc:
            for m in doc["manifests"]:
                p = m.get("platform", {})
                walk(ref, m, "%s/%s" % (p.get("os"), p.get("architecture")))
        elif "subject" not in doc:
            seen.add(doc["config"]["digest"])
            for l in doc["layers"]:
                seen.add(l["digest"])
            out.append((ref, plat, doc))
    with open(os.path.join(lay, "index.json")) as f:
        for m in json.load(f)["manifests"]:
            walk(m["annotations"]["org.opencontainers.image.ref.name"], m, "")
    return out, seen

def size(lay, d):
    return os.path.getsize(blob(lay, d))

def tar_size(lay, d):
    with gzip.open(blob(lay, d)) as f:
        n = 0
        while True:
            b = f.read(1 << 20)
            if not b:
                return n
            n += len(b)

def mb(n):
    return "%.2f MB" % (n / 1e6) if n >= 1e5 else "%.1f KB" % (n / 1e3)

src_imgs, src_seen = images(src)
conv = []
for name, lay in choices:
    imgs, seen = images(lay)
    # converted layers by source blob digest
    by_src = {}
    for _, _, doc in imgs:
        for l in doc["layers"]:
            s = l.get("annotations", {}).get("org.imgfs.source.digest")
            if s:
                by_src[s] = size(lay, l["digest"])
    conv.append((name, lay, seen, by_src))

print("| image | layer | tar | gzip source | " +
      " | ".join(n for n, *_ in conv) + " |")
print("|---" * (4 + len(conv)) + "|")
done = set()
for ref, plat, doc in src_imgs:
    for i, l in enumerate(doc["layers"]):
        d = l["digest"]
        if d in done:
            continue
        done.add(d)
        g = size(src, d)
        cells = []
        for n, lay, seen, by_src in conv:
            e = by_src[d]
            cells.append("%s (%.2f×)" % (mb(e), e / g))
        print("| %s%s | %d of %d | %s | %s | %s |" % (
            ref, " " + plat if plat else "", i + 1, len(doc["layers"]),
            mb(tar_size(src, d)), mb(g), " | ".join(cells)))
tot = sum(size(src, d) for d in src_seen)
cells = []
for n, lay, seen, _ in conv:
    t = sum(size(lay, d) for d in seen)
    cells.append("%s (%.2f×)" % (mb(t), t / tot))
print("| **all images** (distinct blobs) | | | %s | %s |" % (mb(tot),
      " | ".join(cells)))
EOF
