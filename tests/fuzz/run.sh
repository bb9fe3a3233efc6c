#!/bin/bash
# SPDX-License-Identifier: MIT
# usage: tests/fuzz/run.sh SECONDS [TARGET...]
#
# Build libFuzzer targets together with the source tree's lib/*/*.c in a
# temporary directory (clang, with -fsanitize=fuzzer,address,undefined) and
# fuzz each for SECONDS seconds, starting from tests/fuzz/corpus. TARGET is
# "check" (the image checker, tests/fuzz/fuzz_check.c; the default),
# "dump" (every dump.img view, tests/fuzz/fuzz_dump.c) or "oci" (OCI
# layouts read, checked, converted and flattened, tests/fuzz/fuzz_oci.c,
# seeds in tests/fuzz/corpus-oci). The source tree is not written to.
# Crashing inputs are copied to $FUZZ_OUT (default ./fuzz-artifacts); add
# each to tests/fuzz/regress/ once fixed, so "make check" replays it.
# Exit status: 0 no crash, 1 crash or leak found, 2 build failure.
set -u

secs=${1:-}
case $secs in
'' | *[!0-9]*)
	echo "usage: $0 SECONDS" >&2
	exit 2
	;;
esac
shift
targets=${*:-check}
for t in $targets; do
	case $t in
	check | dump | oci) ;;
	*) echo "$0: unknown target: $t (check, dump, oci)" >&2; exit 2 ;;
	esac
done
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_OUT:-$PWD/fuzz-artifacts}
CC=${CC:-clang}
command -v "$CC" >/dev/null || { echo "$0: $CC not found" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/imgfs-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

pkgs="libarchive liblz4 liblzma uuid libxxhash libcrypto json-c"
defs=
for p in libzstd:HAVE_ZSTD zlib:HAVE_ZLIB; do
	if pkg-config --exists "${p%%:*}"; then
		pkgs="$pkgs ${p%%:*}"
		defs="$defs#define ${p##*:} 1
"
	fi
done
printf '#define PACKAGE_VERSION "fuzz"\n#define _FILE_OFFSET_BITS 64\n%s' \
	"$defs" >"$tmp/config.h"
# imgfs/version.h, which configure makes, for a tree not configured
mkdir -p "$tmp/include/imgfs"
sed 's/@IMGFS_VERSION_[A-Z]*@/0/; s/@PACKAGE_VERSION@/fuzz/' \
	"$src/include/imgfs/version.h.in" >"$tmp/include/imgfs/version.h"

# shellcheck disable=SC2086
cflags="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined
	-fno-sanitize-recover=undefined -include $tmp/config.h
	-I$src/include -I$tmp/include -I$src/lib $(pkg-config --cflags $pkgs)"
# shellcheck disable=SC2086
libs="$(pkg-config --libs $pkgs) -pthread"

mkdir -p "$tmp/obj"
objs=
for f in "$src"/lib/*/*.c; do
	# folder_file.o: several folders have a file of the same name
	o=$f; o=${o#"$src"/lib/}; o=$tmp/obj/${o//\//_}.o; o=${o%.c.o}.o
	objs="$objs $o"
	# shellcheck disable=SC2086
	$CC $cflags -fsanitize=fuzzer-no-link -c "$f" -o "$o" &
	# two compilers at a time
	[ "$(jobs -rp | wc -l)" -ge 2 ] && wait -n
done
wait
for o in $objs; do
	[ -f "$o" ] || { echo "$0: compiling $(basename "$o" .o).c failed" >&2; exit 2; }
done
# dump.img's views, and the programs' helper library (frontend/) they use
compile_dump() {
	local f o
	for f in "$src"/dump/json.c "$src"/dump/util.c "$src"/dump/super.c \
		"$src"/dump/inode.c "$src"/dump/ls.c "$src"/dump/stats.c \
		"$src"/frontend/*.c; do
		o=$tmp/obj/view_$(basename "$(dirname "$f")")_$(basename "$f" .c).o
		# shellcheck disable=SC2086
		$CC $cflags -I"$src" -I"$src/dump" -fsanitize=fuzzer-no-link \
			-c "$f" -o "$o" || return 1
		echo "$o"
	done
}

mkdir -p "$out"
found=0
for t in $targets; do
	# each target its own seeds (the OCI one encodes layouts)
	sfx=
	[ "$t" = oci ] && sfx=-oci
	rm -rf "$tmp/corpus" && mkdir -p "$tmp/corpus"
	cp "$src/tests/fuzz/corpus$sfx"/* "$tmp/corpus/"
	cp "$src/tests/fuzz/regress$sfx"/* "$tmp/corpus/" 2>/dev/null
	extra=
	if [ "$t" = dump ]; then
		extra=$(compile_dump) ||
			{ echo "$0: compiling dump/ failed" >&2; exit 2; }
	fi
	# shellcheck disable=SC2086
	$CC $cflags -I"$src" -I"$src/dump" -fsanitize=fuzzer "$src/tests/fuzz/fuzz_$t.c" \
		$extra $objs $libs -o "$tmp/fuzz_$t" ||
		{ echo "$0: linking fuzz_$t failed" >&2; exit 2; }
	echo "fuzzing $t for $secs s (artifacts: $out)"
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
	"$tmp/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 -artifact_prefix="$out/$t-" \
		"$tmp/corpus"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "$0: fuzz_$t found a problem (exit $rc); inputs in $out" >&2
		found=1
	fi
done
exit $found
