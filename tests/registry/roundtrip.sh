#!/bin/bash
# SPDX-License-Identifier: MIT
# The round trip through a real registry (Debian's docker-registry, the
# CNCF distribution registry), as a mirror operator makes it: the corpus
# images (tests/oci/corpus.sh: "app" and "app2" sharing their base
# layers, with whiteouts and an opaque directory; "multi", a two-platform
# index; an SBOM referrer of "app") are pushed with skopeo, pulled into a
# layout, converted with mkfs.img --oci once per EROFS media type, pushed
# back under new tags (the index as one index), and pulled back by
# digest. What comes back must be what was pushed, byte for byte (every
# manifest, config and layer blob, and the registry's stored copy of each
# EROFS layer), must pass fsck.img --oci --compare against the pulled
# sources, and each image, its layers mounted and stacked with overlayfs,
# must be the tree umoci unpack gives for the source (the draft media
# type's layers, the default's bytes, are shown to be those and not
# stacked twice).
#
# The registry listens on a free port of 127.0.0.1 with its own
# configuration and storage in the test's directory, and is stopped by
# its pid when the test ends, whatever happens.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/corpus.sh"
command -v docker-registry >/dev/null ||
	skip "docker-registry is not installed (Debian package docker-registry)"
setup
require_tools umoci skopeo zstd gzip tar setfattr cmp
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	skip "the kernel has no overlayfs"

REG_PID=
registry_stop() {
	[ -n "$REG_PID" ] || return 0
	kill "$REG_PID" 2>/dev/null && wait "$REG_PID" 2>/dev/null
	REG_PID=
}
# the registry first, then tests/lib.sh's cleanup (mounts, $WORK) with
# the test's exit status
trap 'rc=$?; registry_stop; (exit $rc); cleanup' EXIT

# registry_start: docker-registry on a free port of 127.0.0.1; sets REG
# (host:port) and REG_PID. A port taken between the probe and the start
# makes the registry exit: try another.
registry_start() {
	local port i
	for _ in 1 2 3; do
		port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		cat >"$WORK/registry.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $WORK/registry
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
EOF
		docker-registry serve "$WORK/registry.yml" \
			>"$WORK/registry.log" 2>&1 &
		REG_PID=$!
		for i in $(seq 1 100); do
			kill -0 "$REG_PID" 2>/dev/null || break
			if "$PYTHON" - "$port" <<'EOF'; then
import sys, urllib.request
try:
    urllib.request.urlopen("http://127.0.0.1:%s/v2/" % sys.argv[1], timeout=1)
except Exception:
    sys.exit(1)
EOF
				REG=127.0.0.1:$port
				return 0
			fi
			sleep 0.1
		done
		registry_stop
	done
	cat "$WORK/registry.log"
	return 1
}

registry_start || die "docker-registry did not start"
ok "docker-registry $(docker-registry --version | awk '{print $NF}') on $REG (pid $REG_PID)"

# copy ARGS...: skopeo copy to and from the registry over plain HTTP
copy() {
	skopeo copy -q --src-tls-verify=false --dest-tls-verify=false "$@" \
		>>"$WORK/skopeo.log" 2>&1
}

# refs LAYOUT: "TAG DIGEST" for every entry of index.json
refs() {
	"$PYTHON" -c 'import json, sys
for m in json.load(open(sys.argv[1] + "/index.json"))["manifests"]:
    print(m.get("annotations", {}).get("org.opencontainers.image.ref.name", "-"), m["digest"])' "$1"
}
# digest_of REFS TAG: TAG's digest in what refs printed
digest_of() { awk -v t="$2" '$1 == t { print $2; exit }' <<<"$1"; }

# --- the sources, pushed and pulled into one layout ---
C=$WORK/corpus
mkdir -p "$C"
corpus_umoci_layout "$C/u" || die "corpus_umoci_layout failed"
corpus_multiplatform "$C/m" || die "corpus_multiplatform failed"
# an SBOM of "app" (an artifact manifest whose subject is app's manifest),
# tagged so that skopeo can push it
corpus_referrer "$C/u" app app-sbom || die "could not add the referrer"

SRC_TAGS="app:app app:app2 app:app-sbom multi:multi"
for rt in $SRC_TAGS; do
	repo=${rt%%:*} tag=${rt#*:} all=
	lay=$C/u
	[ "$repo" = multi ] && lay=$C/m all=--all
	check "push $tag to $REG/corpus/$repo:$tag" \
		copy $all "oci:$lay:$tag" "docker://$REG/corpus/$repo:$tag"
	check "pull $repo:$tag into a layout" \
		copy $all "docker://$REG/corpus/$repo:$tag" "oci:$WORK/pulled:$tag"
done
want=$(refs "$C/u"; refs "$C/m")
got=$(refs "$WORK/pulled")
for rt in $SRC_TAGS; do
	tag=${rt#*:} d=$(digest_of "$want" "${rt#*:}")
	check "$tag comes back from the registry as pushed ($d)" \
		test -n "$d" -a "$d" = "$(digest_of "$got" "$tag")"
done

# --- converted once per EROFS media type, pushed back, pulled by digest ---
# same_blobs A B: every blob of B is in A with the same bytes
same_blobs() {
	local b n=0
	for b in "$2"/blobs/sha256/*; do
		cmp -s "$b" "$1/blobs/sha256/${b##*/}" || {
			echo "blob ${b##*/} differs or is missing"
			return 1
		}
		n=$((n + 1))
	done
	[ $n -gt 0 ]
}

# stored_erofs CONVERTED MEDIATYPE: every layer blob of that media type is
# in the registry's storage with the same bytes; prints their number
stored_erofs() {
	"$PYTHON" - "$1" "$2" "$WORK/registry/docker/registry/v2/blobs" <<'EOF'
import filecmp, json, os, sys
lay, mt, store = sys.argv[1:]
seen = set()
for name in os.listdir(lay + "/blobs/sha256"):
    try:
        doc = json.load(open(lay + "/blobs/sha256/" + name))
    except (ValueError, UnicodeDecodeError):
        continue
    for l in doc.get("layers", []) if isinstance(doc, dict) else []:
        if l["mediaType"] != mt:
            continue
        h = l["digest"].split(":")[1]
        data = os.path.join(store, "sha256", h[:2], h, "data")
        if not filecmp.cmp(lay + "/blobs/sha256/" + h, data, shallow=False):
            sys.exit("layer %s: the registry stores other bytes" % h)
        seen.add(h)
if not seen:
    sys.exit("no %s layer" % mt)
print(len(seen))
EOF
}

i=0
for mt in $CORPUS_EROFS_TYPES; do
	i=$((i + 1))
	conv=$WORK/conv$i back=$WORK/back$i
	suffix=erofs$i
	# the first with --subject: its manifests name the tar images they
	# come from, which are in the same repositories
	subj=
	[ $i -eq 1 ] && subj=--subject
	if ! mkfs_img --oci -q $subj --layer-media-type="$mt" "$WORK/pulled" \
		"$conv" >"$WORK/mkfs.log" 2>&1; then
		cat "$WORK/mkfs.log"
		fail "mkfs.img --oci $subj --layer-media-type=$mt"
		continue
	fi
	ok "mkfs.img --oci $subj --layer-media-type=$mt"
	want=$(refs "$conv")
	for rt in $SRC_TAGS; do
		repo=${rt%%:*} tag=${rt#*:} all=
		[ "$repo" = multi ] && all=--all
		d=$(digest_of "$want" "$tag")
		[ -n "$d" ] || { fail "$mt: $tag not converted"; continue; }
		check "$mt: push $tag as $repo:$tag-$suffix" \
			copy $all "oci:$conv:$tag" \
			"docker://$REG/corpus/$repo:$tag-$suffix"
		check "$mt: pull $repo@$d back" \
			copy $all "docker://$REG/corpus/$repo@$d" "oci:$back:$tag"
	done
	got=$(refs "$back")
	for rt in $SRC_TAGS; do
		tag=${rt#*:} d=$(digest_of "$want" "${rt#*:}")
		check "$mt: $tag comes back under its digest" \
			test -n "$d" -a "$(digest_of "$got" "$tag")" = "$d"
	done
	check "$mt: every blob pulled back is the converted one, byte for byte" \
		same_blobs "$conv" "$back"
	if n=$(stored_erofs "$conv" "$mt"); then
		ok "$mt: the registry stores the $n EROFS layers byte for byte"
	else
		fail "$mt: the registry's copy of the layers: $n"
	fi
	if "$FSCK_IMG" -q --oci="$back" --compare="$WORK/pulled" \
		>"$WORK/fsck.out" 2>&1; then
		ok "$mt: fsck.img --oci --compare: the pulled-back layout" \
			"represents the sources"
	else
		cat "$WORK/fsck.out"
		fail "$mt: fsck.img --oci --compare"
	fi
	for tp in app app2 $(corpus_platforms "$WORK/pulled" multi |
		sed 's|^|multi=|'); do
		tag=${tp%%=*} p=
		[ "$tag" = "$tp" ] || p=${tp#*=}
		name=$suffix-$tag${p:+-${p//\//-}}
		# the draft type's blobs are the default's (mkfs.img writes the
		# same image under either type): shown equal, they are not
		# stacked again
		if [ "$mt" = application/vnd.erofs ] &&
			[ "$(corpus_layers "$back" "$tag" ${p:+"$p"} | cut -d' ' -f2,3)" = \
			"$(corpus_layers "$WORK/back1" "$tag" ${p:+"$p"} | cut -d' ' -f2,3)" ]
		then
			ok "$name: the layer blobs of $mt are those stacked above"
			continue
		fi
		corpus_stack_compare "$name" "$back" "$WORK/pulled" "$tag" ${p:+"$p"}
	done
done

registry_stop
log "${SECONDS}s"
finish
