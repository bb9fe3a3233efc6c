# SPDX-License-Identifier: MIT
# Shared by tests/shard/*.sh (sourced, not run): a layout of several images
# sharing base layers, made with umoci, and the checks every sharded run
# ends with (byte-identical to one run, no partial blob under a final name).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

UNITS="$PYTHON $top_srcdir/tests/shard/units.py"
# Three shards for eight units: uneven shares, and with luck an empty one.
SHARDS=${SHARDS:-3}

shard_setup() {
	[ "$(id -u)" -eq 0 ] || skip "umoci unpack keeps owners and xattrs as root only"
	require_tools umoci sha256sum "$PYTHON"
	[ -x "${MKFS%% *}" ] || die "mkfs not built: $MKFS"
	setup_tmp
}

# _repack LAYOUT FROM TO BUNDLE: unpack FROM, let the caller's function
# "change" alter BUNDLE/rootfs, repack as TO (one new layer).
_repack() {
	local l=$1 from=$2 to=$3 b=$4
	rm -rf "$b"
	umoci unpack --image "$l:$from" "$b" >/dev/null || return 1
	change "$b/rootfs" || return 1
	umoci repack --image "$l:$to" "$b" || return 1
	rm -rf "$b"
}

# shard_layout DIR: an OCI layout of six images: base (two layers) and five
# images on top of it, one of which (app4) is built on another (app1); app3
# carries a 24 MiB layer, slow enough to be killed in the middle. Eight
# distinct layers in all: eight work units.
shard_layout() {
	local l=$1 b=$WORK/bundle
	umoci init --layout "$l" && umoci new --image "$l:base" || return 1
	change() {
		mkdir -p "$1/etc" "$1/usr/bin" "$1/usr/lib" &&
			printf 'NAME=shard-test\n' >"$1/etc/os-release" &&
			printf 'welcome\n' >"$1/etc/motd" &&
			head -c 262144 /dev/urandom >"$1/usr/lib/libbase.so" &&
			printf '#!/bin/sh\necho hi\n' >"$1/usr/bin/hi" &&
			chmod 0755 "$1/usr/bin/hi"
	}
	_repack "$l" base base "$b" || return 1
	change() {
		mkdir -p "$1/usr/share/doc/base" &&
			seq 1 5000 >"$1/usr/share/doc/base/numbers" &&
			ln -s ../lib/libbase.so "$1/usr/bin/libbase"
	}
	_repack "$l" base base "$b" || return 1
	change() {
		rm "$1/etc/motd" && mkdir -p "$1/app1" &&
			head -c 65536 /dev/urandom >"$1/app1/data" &&
			ln "$1/app1/data" "$1/app1/data.link"
	}
	_repack "$l" base app1 "$b" || return 1
	change() {
		rm -r "$1/usr/share/doc/base" &&
			printf 'two\n' >"$1/usr/share/doc/app2"
	}
	_repack "$l" base app2 "$b" || return 1
	change() {
		local i
		mkdir -p "$1/big" || return 1
		for i in 1 2 3 4 5 6; do
			head -c 4194304 /dev/urandom >"$1/big/part$i" || return 1
		done
	}
	_repack "$l" base app3 "$b" || return 1
	change() {
		mkdir -p "$1/app4" && printf 'four\n' >"$1/app4/file" &&
			setfattr -n user.shard -v four "$1/app4/file"
	}
	_repack "$l" app1 app4 "$b" || return 1
	change() { printf 'five\n' >"$1/etc/app5"; }
	_repack "$l" base app5 "$b" || return 1
	change() {
		local i
		mkdir -p "$1/many" || return 1
		for i in $(seq 1 200); do
			printf '%s\n' "$i" >"$1/many/f$i" || return 1
		done
	}
	_repack "$l" base app6 "$b" || return 1
	unset -f change
	umoci gc --layout "$l"
}

# layout_sums DIR: "SHA256  PATH" of every file under DIR (hidden ones
# included), sorted by path, then type and mode of everything there.
layout_sums() {
	(cd "$1" && find . -type f -print0 | sort -z | xargs -0r sha256sum &&
		find . -printf '%y %m %p\n' | sort -k 3)
}

# check_same REF DST WHAT: DST holds exactly the bytes of REF (diff -r, and
# the hash list of every file).
check_same() {
	local ref=$1 dst=$2 what=$3
	if diff -r "$ref" "$dst" >"$WORK/diff.out" 2>&1; then
		ok "$what: diff -r finds no difference"
	else
		head -n 20 "$WORK/diff.out"
		fail "$what: diff -r differs from the single run"
	fi
	layout_sums "$ref" >"$WORK/ref.sums"
	layout_sums "$dst" >"$WORK/dst.sums"
	if cmp -s "$WORK/ref.sums" "$WORK/dst.sums"; then
		ok "$what: same $(find "$dst" -type f | wc -l) files, same" \
			"SHA-256 and mode each"
	else
		diff "$WORK/ref.sums" "$WORK/dst.sums" | head -n 20
		fail "$what: hash lists differ from the single run"
	fi
}

# check_whole DST WHAT: every blob's bytes hash to its name (no partial or
# foreign content under a final name).
check_whole() {
	local bad
	bad=$($UNITS blobs "$1") || {
		fail "$2: could not hash the blobs of $1"
		return
	}
	if [ -z "$bad" ]; then
		ok "$2: all $(find "$1/blobs" -type f | wc -l) blobs hash to their names"
	else
		printf '%s\n' "$bad" | head -n 10
		fail "$2: blobs under a final name with other bytes"
	fi
}

# reference SRC REF [MKFS OPTIONS...]: the single run every sharded run
# must equal.
reference() {
	local src=$1 ref=$2
	shift 2
	if mkfs_img --oci -q "$@" "$src" "$ref"; then
		ok "single run: mkfs.img --oci${*:+ $*} SRC REF" \
			"($(find "$ref/blobs" -type f | wc -l) blobs)"
	else
		die "the single run mkfs.img --oci failed"
	fi
}

# watch_start DST / watch_stop WHAT: look at every file of DST as soon as
# it gets its final name, for the whole time the runs write into DST.
watch_start() {
	rm -f "$WORK/stop"
	$UNITS watch "$1" "$WORK/stop" >"$WORK/watch.out" 2>&1 &
	WATCHER=$!
}
watch_stop() {
	: >"$WORK/stop"
	if wait "$WATCHER"; then
		ok "$1: $(head -n 1 "$WORK/watch.out")"
	else
		cat "$WORK/watch.out"
		fail "$1: a file under a final name was not whole when it appeared"
	fi
}
