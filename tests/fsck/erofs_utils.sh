#!/bin/bash
# SPDX-License-Identifier: MIT
# fsck.img on images written by an independent tool (mkfs.erofs from
# erofs-utils) and by mkfs.img: every image must check clean, --digest must
# match sha256sum of the sources, and --extract must reproduce the source
# tree exactly (types, modes, owners, ns mtimes, xattrs, ACLs, content,
# symlinks, devices, hard links). Needs root (device nodes, owners).
. "$top_srcdir/tests/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root for device nodes and owners"
command -v mkfs.erofs >/dev/null 2>&1 || skip "mkfs.erofs (erofs-utils) not installed"
require_tools bsdtar setfattr setfacl "$PYTHON" sha256sum
[ -x "$FSCK_IMG" ] || die "fsck.img not built: $FSCK_IMG"
setup_tmp
TREEDIFF="$PYTHON $top_srcdir/tests/fsck/treediff.py"

# A tree exercising every inode type and metadata field.
make_tree() {
	local s=$1 i
	mkdir -p "$s/dir/sub/deeper" "$s/big" "$s/empty" "$s/acl"
	: >"$s/zero"
	printf x >"$s/one"
	head -c 4095 /dev/urandom >"$s/b4095"
	head -c 4096 /dev/urandom >"$s/b4096"
	head -c 4097 /dev/urandom >"$s/b4097"
	head -c 300000 /dev/urandom >"$s/dir/rand"
	printf 'inline tail data' >"$s/dir/sub/small"
	ln "$s/dir/rand" "$s/dir/sub/rand.link"
	ln "$s/dir/rand" "$s/rand.link2"
	ln -s ../rand "$s/dir/sub/rel"
	ln -s "$(printf 'l%.0s' $(seq 1 300))" "$s/longlink"
	ln -s /abs/target "$s/abs"
	mknod "$s/cdev" c 4 64
	mknod "$s/bdev" b 259 300000
	mkfifo "$s/fifo"
	"$PYTHON" -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$s/sock"
	for i in $(seq 1 600); do
		printf '%s' "$i" >"$s/big/entry-with-a-longish-name-$i"
	done
	setfattr -n user.foo -v bar "$s/one"
	setfattr -n user.shared -v same "$s/b4095" "$s/b4096" "$s/b4097" "$s/zero"
	setfattr -n trusted.overlay.opaque -v y "$s/dir"
	setfattr -n security.test -v 0sAAECAwQ= "$s/b4095"
	setfattr -n user.big -v "$(head -c 2000 /dev/zero | tr '\0' v)" "$s/dir/sub/small"
	setfacl -m u:1234:rw,g:99:r "$s/acl"
	setfacl -d -m u:1234:rwx "$s/acl"
	chmod 4755 "$s/b4096"
	chmod 2711 "$s/dir/sub"
	chmod 1777 "$s/empty"
	chown 70000:70001 "$s/b4097"
	chown 123:456 "$s/dir/sub/small" "$s/fifo"
	chown -h 5:6 "$s/abs"
	touch -h -d '2020-02-03 04:05:06.123456789' "$s/one" "$s/abs" "$s/dir/sub"
	touch -d '1999-12-31 23:59:59.5' "$s/big"
}

# tree_sha DIR: what fsck.img --digest prints for DIR's regular files
tree_sha() {
	(cd "$1" && find . -type f -print0 | xargs -0 sha256sum | sort -k2)
}

SRC=$WORK/src
make_tree "$SRC"
tree_sha "$SRC" >"$WORK/want.sha"

# check_image NAME IMG REFTREE REFSHA [TREEDIFF OPTIONS]
check_image() {
	local name=$1 img=$2 ref=$3 sha=$4 out=$WORK/out-$1
	shift 4
	"$FSCK_IMG" "$img" >"$WORK/$name.log" 2>&1
	check "$name: fsck.img exits 0" [ $? -eq 0 ]
	grep -q ' 0 errors, 0 warnings' "$WORK/$name.log" ||
		fail "$name: not clean: $(cat "$WORK/$name.log")"
	"$FSCK_IMG" -q --digest "$img" | sort -k2 >"$WORK/$name.sha"
	check "$name: --digest matches sha256sum" \
		cmp -s "$sha" "$WORK/$name.sha"
	"$FSCK_IMG" -q --extract="$out" "$img"
	check "$name: --extract exits 0" [ $? -eq 0 ]
	check "$name: extracted tree equals the source" \
		$TREEDIFF "$@" "$ref" "$out"
	"$FSCK_IMG" -q --json "$img" >"$WORK/$name.json"
	check "$name: --json is valid JSON with 0 errors" "$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["errors"] == 0 and d["exit_code"] == 0 and
         d["stats"]["inodes"] > 600 else 1)' "$WORK/$name.json"
}

# erofs-utils: default (tail packing), plain blocks, chunk-based
mkfs.erofs --quiet "$WORK/eu-default.img" "$SRC" >/dev/null ||
	die "mkfs.erofs failed"
check_image eu-default "$WORK/eu-default.img" "$SRC" "$WORK/want.sha"
mkfs.erofs --quiet -Enoinline_data "$WORK/eu-noinline.img" "$SRC" >/dev/null
check_image eu-noinline "$WORK/eu-noinline.img" "$SRC" "$WORK/want.sha"
mkfs.erofs --quiet --chunksize=4096 "$WORK/eu-chunk4k.img" "$SRC" >/dev/null
check_image eu-chunk4k "$WORK/eu-chunk4k.img" "$SRC" "$WORK/want.sha"
mkfs.erofs --quiet --chunksize=16384 -x1 "$WORK/eu-chunk16k.img" "$SRC" >/dev/null
check_image eu-chunk16k "$WORK/eu-chunk16k.img" "$SRC" "$WORK/want.sha"
# -T: every mtime becomes the build time (compact inodes)
mkfs.erofs --quiet -T1234567 "$WORK/eu-T.img" "$SRC" >/dev/null
check_image eu-T "$WORK/eu-T.img" "$SRC" "$WORK/want.sha" --mtime=1234567

# mkfs.img from a pax tar of the same tree (ns mtimes; no socket: tar
# cannot hold one), every block size; the reference is bsdtar's extraction
if [ -x "${MKFS%% *}" ]; then
	rm "$SRC/sock"
	bsdtar --format=pax --xattrs --acls -cf "$WORK/src.tar" -C "$SRC" . ||
		die "bsdtar failed"
	extract "$WORK/src.tar" "$WORK/ref" || die "reference extraction failed"
	tree_sha "$WORK/ref" >"$WORK/ref.sha"
	for bs in 512 1024 2048 4096; do
		mkfs_img -q -b "$bs" "$WORK/src.tar" "$WORK/m$bs.img" ||
			fail "mkfs.img -b $bs failed"
		check_image "mkfs-b$bs" "$WORK/m$bs.img" "$WORK/ref" "$WORK/ref.sha"
		"$FSCK_IMG" -q --compare="$WORK/src.tar" "$WORK/m$bs.img"
		check "mkfs-b$bs: --compare with the source tar" [ $? -eq 0 ]
	done
	mkfs_img -q --inline-data "$WORK/src.tar" "$WORK/minline.img" ||
		fail "mkfs.img --inline-data failed"
	check_image mkfs-inline "$WORK/minline.img" "$WORK/ref" "$WORK/ref.sha"
else
	log "mkfs.img not built: its images are not tested"
fi
finish
