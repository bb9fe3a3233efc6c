#!/bin/bash
# OCI whiteouts. By default "D/.wh.NAME" becomes the overlayfs whiteout
# D/NAME (char device 0:0) and D gets trusted.overlay.origin = "";
# "D/.wh..wh..opq" makes D opaque (trusted.overlay.opaque = "y").
# --keep-whiteouts stores the .wh.* files verbatim. Finally the converted
# layer is stacked on a base layer with overlayfs and must hide what it
# deletes.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup

pymk mktar.py whiteouts "$WORK/wh.tar" || die "mktar whiteouts"
convert_and_compare "$WORK/wh.tar" -T 1600000000
mv "$IMG" "$WORK/upper.img"
convert_and_compare "$WORK/wh.tar" --keep-whiteouts

# Kept verbatim, whiteouts of "." and ".." are ordinary files named ".wh.."
# and ".wh..." (converting them is an error, see errors.sh).
"$PYTHON" - "$WORK/whdots.tar" <<'EOF' || die "writing whdots.tar"
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    ti = tarfile.TarInfo("d")
    ti.type = tarfile.DIRTYPE
    ti.mode = 0o755
    ti.mtime = 1600000000
    t.addfile(ti)
    for name, data in (("d/.wh..", b"dot"), ("d/.wh...", b"dotdot"),
                       ("d/.wh....", b"three dots")):
        ti = tarfile.TarInfo(name)
        ti.mode = 0o644
        ti.mtime = 1600000000
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
EOF
convert_and_compare "$WORK/whdots.tar" --keep-whiteouts -T 1600000000
if mount_loop "$IMG" "$WORK/whdots"; then
	check "--keep-whiteouts: d/.wh.. and d/.wh... are files" \
		test "$(cat "$WORK/whdots/d/.wh.." "$WORK/whdots/d/.wh...")" = \
		dotdotdot
	unmount "$WORK/whdots"
else
	fail "mount whdots.tar.img"
fi

# umoci, replacing a directory by a file, writes the file and then a
# whiteout for each name the directory held: the file hides them already,
# so those whiteouts are dropped (and fsck.img --compare agrees).
"$PYTHON" - "$WORK/whunder.tar" "$WORK/whunder-ref.tar" <<'EOF' ||
import io, sys, tarfile
for path, whiteouts in ((sys.argv[1], True), (sys.argv[2], False)):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        ti = tarfile.TarInfo("swap")
        ti.mode = 0o644
        ti.mtime = 1600000000
        ti.size = 4
        t.addfile(ti, io.BytesIO(b"file"))
        for name in ("swap/.wh.inner", "swap/.wh..wh..opq") * whiteouts:
            ti = tarfile.TarInfo(name)
            ti.mtime = 1600000000
            t.addfile(ti)
EOF
	die "writing whunder.tar"
REF_TAR=$WORK/whunder-ref.tar convert_and_compare "$WORK/whunder.tar" \
	-T 1600000000

# Whiteout inodes: overlayfs only needs char 0:0; report their mode too.
mount_loop "$WORK/upper.img" "$WORK/up"
for p in etc/removed.conf mixed/gone-dir mixed/gone-file top-level; do
	got=$(stat -c '%F %t:%T' "$WORK/up/$p" 2>&1)
	if [ "$got" = "character special file 0:0" ]; then
		ok "whiteout $p: $(stat -c '%A %u:%g %s' "$WORK/up/$p")"
	else
		fail "whiteout $p: expected char 0:0, got $got"
	fi
done
unmount "$WORK/up"

# A base layer with everything the upper layer deletes or hides.
b=$WORK/base
mkdir -p "$b/etc" "$b/var/cache/old" "$b/opaque-only" "$b/mixed/gone-dir" \
	"$b/keep-dir"
for f in etc/removed.conf etc/base.conf var/cache/old/x var/cache/stale \
	opaque-only/hidden mixed/gone-file mixed/gone-dir/y mixed/other \
	top-level keep-dir/z; do
	echo "base $f" >"$b/$f"
done
bsdtar -C "$b" -cf "$WORK/base.tar" .
mkfs_img "$WORK/base.tar" "$WORK/base.img" || fail "mkfs base layer"

mount_loop "$WORK/base.img" "$WORK/lower"
mount_loop "$WORK/upper.img" "$WORK/upper"
mkdir -p "$WORK/merged"
if mount -t overlay overlay \
	-o "ro,lowerdir=$WORK/upper:$WORK/lower" "$WORK/merged"; then
	track_mount "$WORK/merged"
	(cd "$WORK/merged" && find . | sort) >"$WORK/merged.list"
	cat >"$WORK/merged.expected" <<'LIST'
.
./etc
./etc/base.conf
./etc/kept.conf
./keep-dir
./keep-dir/z
./mixed
./mixed/present
./opaque-only
./plain
./var
./var/cache
./var/cache/new
LIST
	if diff -u "$WORK/merged.expected" "$WORK/merged.list"; then
		ok "overlayfs view of base + converted layer"
	else
		fail "overlayfs view of base + converted layer"
	fi
	unmount "$WORK/merged"
else
	fail "mount overlayfs with the converted layer as upper lower layer"
fi
unmount "$WORK/upper"
unmount "$WORK/lower"

finish
