#!/bin/bash
# The decoding thread (lib/source/readahead.c) ahead of the tar reader:
# - tars whose plain length is an exact multiple of the 64 KiB chunk, one
#   tar block more and one less, plain, gzip and zstd, from files and a
#   pipe: mounted and compared with bsdtar's extraction;
# - a layer (plain, and gzip: the thread is only for compressed input)
#   that goes bad while its writer keeps the pipe open (as a
#   program streaming into mkfs.erofs's stdin does): mkfs must stop with
#   the entry's error, leave no image and not wait for the writer. The
#   timeout only tells a hang from an answer: it is minutes long, and the
#   whole layer is in the pipe before mkfs starts.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup
require_tools tar gzip zstd
VERIFY_MOUNTS=loop

chunk=65536
mkdir -p "$WORK/tree/d"
# a tar of exactly N bytes: one file sized so the archive fills N
exact_tar() { # N OUT
	local n=$1 out=$2 size
	# two headers (d/, d/f), the data, the end marker; records of 512
	size=$((n - 2 * 512 - 1024))
	head -c "$size" /dev/urandom >"$WORK/tree/d/f"
	tar --format=gnu -b 1 -C "$WORK/tree" -cf "$out" d --owner=0 \
		--group=0 || die "tar failed"
	[ "$(stat -c %s "$out")" -eq "$n" ] ||
		die "$out: $(stat -c %s "$out") bytes, wanted $n"
}
for n in $((4 * chunk)) $((4 * chunk + 512)) $((4 * chunk - 512)); do
	t=$WORK/exact-$n.tar
	exact_tar "$n" "$t"
	convert_and_compare "$t"
	gzip -c "$t" >"$t.gz"
	convert_and_compare "$t.gz"
	zstd -q -c "$t" >"$t.zst"
	rm -f "$WORK/pipe.img"
	if cat "$t.zst" | mkfs_img -q - "$WORK/pipe.img"; then
		ok "$n bytes through a pipe, zstd"
		SRC_TAR=$t verify_image "$WORK/pipe.img" "$t"
	else
		fail "$n bytes through a pipe, zstd"
	fi
done

# a good entry, then a header whose checksum is wrong in the 9th chunk
# of 64 KiB, and a 10th chunk that is not whole: when the reader stops at
# the header, the thread has read all and waits in read(2) for the rest
# of that chunk (580 KiB in all, which a pipe of 1 MiB holds: the default
# limit of F_SETPIPE_SZ)
rm -f "$WORK/tree/d/f"
head -c 524288 /dev/urandom >"$WORK/tree/d/f1"
head -c 40000 /dev/urandom >"$WORK/tree/d/f2"
head -c 20000 /dev/urandom >"$WORK/tree/d/f3"
tar --format=gnu -C "$WORK/tree" -cf "$WORK/two.tar" d/f1 d/f2 d/f3 ||
	die "tar failed"
bad=$WORK/bad.tar
"$PYTHON" - "$WORK/two.tar" "$bad" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
# the second header: after the first entry's 512 + 512 KiB; break its checksum
off = 512 + 524288
b[off + 148:off + 156] = b'0000000\0'
open(sys.argv[2], 'wb').write(bytes(b))
PY
gzip -c "$bad" >"$bad.gz"
# The whole layer waits in a pipe whose writing end stays open: the
# thread reads it all and then waits for more, for ever unless stopped.
held() { # SRC IMG LOG: mkfs's exit status, 124 when it hung
	# shellcheck disable=SC2086 # IMGFS_MKFS may carry options
	"$PYTHON" "$HELPERS/heldpipe.py" "$1" "$3" 300 $MKFS -q - "$2"
}
for src in "$bad" "$bad.gz"; do
	rm -f "$WORK/held.img"
	rc=0
	held "$src" "$WORK/held.img" "$WORK/held.log" || rc=$?
	name=$(basename "$src")
	[ "$rc" -ne 125 ] || die "$name: the pipe could not be filled"
	if [ "$rc" -eq 124 ]; then
		fail "$name: mkfs waited for a writer that kept the pipe open"
	elif [ "$rc" -eq 0 ]; then
		fail "$name: a damaged header was accepted"
	elif [ "$(wc -l <"$WORK/held.log")" -ne 1 ] ||
		! grep -q 'd/f1' "$WORK/held.log"; then
		fail "$name: not one message naming the entry: $(cat "$WORK/held.log")"
	elif [ -e "$WORK/held.img" ] || ls "$WORK"/.held.img* >/dev/null 2>&1; then
		fail "$name: an image was left behind"
	else
		ok "$name: stopped with the writer still writing: $(head -c 200 "$WORK/held.log")"
	fi
done
finish
