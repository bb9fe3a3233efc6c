#!/bin/bash
# SPDX-License-Identifier: MIT
# A verified conversion reads each source layer blob once: the writer and
# the comparison read the same decoded stream (strace counts the opens of
# every layer blob: exactly one each, with one job and with two), and the
# summary still says every unit was verified. A warm rerun converts
# nothing and reads each layer blob once too (its digest and diffID are
# checked every run).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/oci/convert-lib.sh"
require_build
command -v strace >/dev/null || die "strace is needed"
setup_tmp

for n in a b c; do
	"$PYTHON" - "$n" "$WORK/$n.tar" <<'PY' || die "could not make layer $n"
import io, sys, tarfile
n, out = sys.argv[1], sys.argv[2]
with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
    d = tarfile.TarInfo("dir-" + n); d.type = tarfile.DIRTYPE; d.mode = 0o755
    t.addfile(d)
    for i in range(200):
        data = (("%s-%d " % (n, i)) * (i * 7 + 1)).encode()
        f = tarfile.TarInfo("dir-%s/f%03d" % (n, i)); f.size = len(data)
        t.addfile(f, io.BytesIO(data))
    s = tarfile.TarInfo("dir-%s/link" % n); s.type = tarfile.SYMTYPE
    s.linkname = "f000"; t.addfile(s)
    h = tarfile.TarInfo("dir-%s/hard" % n); h.type = tarfile.LNKTYPE
    h.linkname = "dir-%s/f001" % n; t.addfile(h)
PY
done
$MKLAYOUT "$WORK/src" "one=$WORK/a.tar:gzip,$WORK/b.tar:zstd,$WORK/c.tar" ||
	die "mklayout failed"
blobs=$(layer_blobs "$WORK/src" one)
[ "$(echo "$blobs" | wc -l)" = 3 ] || die "the layout has not three layers"

# opened TRACE: "digest:count" of each layer blob not opened exactly once
opened() {
	local b hex c bad=
	for b in $blobs; do
		hex=${b##*/}
		c=$(grep -c "blobs/sha256/$hex\"" "$1")
		[ "$c" = 1 ] || bad="$bad ${hex:0:12}:$c"
	done
	echo "$bad"
}

for jobs in 1 2; do
	dst=$WORK/dst$jobs
	strace -f -qq -o "$WORK/trace$jobs" -e trace=open,openat,openat2 \
		$MKFS --oci -q --json --jobs=$jobs "$WORK/src" "$dst" \
		>"$WORK/out$jobs.json" || die "conversion with $jobs jobs failed"
	bad=$(opened "$WORK/trace$jobs")
	verified=$("$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["verified"], d["converted"])' "$WORK/out$jobs.json")
	if [ -z "$bad" ] && [ "$verified" = "3 3" ]; then
		ok "$jobs jobs: 3 units converted and verified, each layer blob opened once"
	else
		fail "$jobs jobs: blobs opened (digest:count)$bad; verified/converted $verified"
	fi
	check_converted=$(cd "$dst" && ls blobs/sha256 | wc -l)
	[ "$check_converted" -gt 3 ] || fail "$jobs jobs: nothing written"
done

# the layout as converted is what the layout check accepts, compared
$FSCK_IMG -q --oci="$WORK/dst1" --compare="$WORK/src" >"$WORK/check.out" 2>&1 &&
	ok "fsck.img --oci --compare accepts the conversion" ||
	fail "fsck.img --oci --compare: $(head -5 "$WORK/check.out")"

# warm: every unit reused from its record, each blob read once
strace -f -qq -o "$WORK/trace-warm" -e trace=open,openat,openat2 \
	$MKFS --oci -q --json --jobs=1 "$WORK/src" "$WORK/dst1" \
	>"$WORK/warm.json" || die "warm rerun failed"
bad=$(opened "$WORK/trace-warm")
counts=$("$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["converted"], d["reused"])' "$WORK/warm.json")
[ -z "$bad" ] && [ "$counts" = "0 3" ] &&
	ok "warm rerun: 3 units reused, each layer blob read once" ||
	fail "warm rerun: blobs opened (digest:count)$bad; converted/reused $counts"

finish
