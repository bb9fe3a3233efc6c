#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian packages, from a clean copy of the tracked files: build them
# (dpkg-buildpackage -us -uc -b), run lintian (no error, no warning), make
# a fresh Debian 12 root with mmdebstrap and install them there, then run in
# that root: mkfs.img, fsck.img --version, the mkfs.erofs drop-in through
# its link, the example built with pkg-config, and the autopkgtest
# (debian/tests). Everything lives in one temporary directory, removed at
# the end, and every mount is made in a mount namespace of its own: the
# machine is left as it was. Root; needs the network (the Debian mirror
# of apt's sources, or MIRROR=...).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
BOUND=${DEBIAN_CI_TIMEOUT:-1800}	# seconds for each long step

section() { printf '\n==== debian: %s\n' "$*"; }
die() { echo "debian: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, chroot, mount)"
for t in git dpkg-buildpackage lintian mmdebstrap unshare timeout; do
	command -v "$t" >/dev/null || die "$t is not installed"
done

# The mirror apt uses here (deb822 or one-line sources), unless given.
mirror() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '/^URIs:/ && $2 ~ /debian\/?$/ { print $2; exit }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk '$1 == "deb" && $2 !~ /^\[/ && $2 ~ /debian\/?$/ { print $2; exit }
		     $1 == "deb" && $2 ~ /^\[/ && $3 ~ /debian\/?$/ { print $3; exit }' "$f"
	done
}
MIRROR=${MIRROR:-$(mirror | head -n 1)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

work=$(mktemp -d /tmp/imgfs-debian.XXXXXX)
# The root is mounted on only inside "unshare --mount" (gone with it) and
# by mmdebstrap, which unmounts what it mounted; should a killed step leave
# a mount under $work anyway, it is undone before anything is removed.
cleanup() {
	local m
	findmnt -rn -o TARGET | awk -v w="$work/" 'index($0, w) == 1' |
		sort -r | while read -r m; do umount -l "$m"; done
	rm -rf --one-file-system "$work"
}
trap cleanup EXIT

section "clean copy of $src"
mkdir "$work/src"
# Tracked files and new ones not ignored, as they are in the work tree
# (not the build's outputs).
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do
		[ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
	done | tar --null --no-recursion -T - -cf -) | tar -C "$work/src" -xf -
cd "$work/src"
want=$(sed -n 's/^m4_define(\[imgfs_\(major\|minor\|patch\)\], \[\([0-9]*\)\])/\2/p' \
	configure.ac | paste -sd.)
got=$(dpkg-parsechangelog -S Version)
[ "$want" = "$got" ] ||
	die "debian/changelog is at version $got, configure.ac at $want"

section "dpkg-buildpackage -us -uc -b"
DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
	timeout "$BOUND" dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1 ||
	{ tail -n 100 "$work/build.log"; die "the packages did not build"; }
cd "$work"
ls -l ./*.deb
changes=$(echo ./*.changes)

section "lintian $changes"
lintian --fail-on error,warning --display-info "$changes" ||
	die "lintian reports errors or warnings"

section "mmdebstrap --variant=apt bookworm ($MIRROR)"
debs=()
for d in "$work"/*.deb; do
	case $d in *-dbgsym_*) ;; *) debs+=("--include=$d") ;; esac
done
timeout "$BOUND" mmdebstrap --quiet --variant=apt \
	--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
	--include=gcc,libc6-dev,pkgconf,mount "${debs[@]}" \
	bookworm "$work/root" "$MIRROR" ||
	die "mmdebstrap could not make the root or install the packages"
cp -r "$work/src/debian/tests" "$work/root/tmp/debian-tests"

section "the installed packages, in the fresh root"
# In a mount namespace of its own: /dev (loop devices), /proc and the
# image mount of the autopkgtest vanish with it whatever happens.
timeout "$BOUND" unshare --mount --propagation private \
	/bin/bash -euo pipefail -s "$work/root" <<'IN_NS'
root=$1
mount --rbind /dev "$root/dev"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
chroot "$root" /bin/bash -euo pipefail -s <<'IN_ROOT'
dpkg-query -W imgfs libimgfs0 libimgfs-dev
cd "$(mktemp -d)"
mkdir -p t/etc && echo check >t/etc/hostname && tar -C t -cf layer.tar .
mkfs.img layer.tar a.erofs && fsck.img -q a.erofs
echo "mkfs.img and fsck.img: converted and checked"
fsck.img --version
link=/usr/libexec/imgfs/mkfs.erofs
echo "$link -> $(readlink "$link")"
"$link" --tar=f b.erofs layer.tar && fsck.img -q b.erofs
echo "the mkfs.erofs drop-in: converted and checked"
ex=/usr/share/doc/libimgfs-dev/examples/convert.c
[ -f "$ex" ] || { gunzip -c "$ex.gz" >convert.c; ex=convert.c; }
cc -o convert "$ex" $(pkg-config --cflags --libs imgfs)
./convert layer.tar c.erofs etc/hostname | grep -qx check
echo "the example, built with pkg-config --cflags --libs imgfs: works"
/tmp/debian-tests/convert-mount
IN_ROOT
IN_NS
section "done: built, lintian-clean, installed and working"
