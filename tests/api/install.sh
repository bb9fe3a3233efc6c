#!/bin/bash
# SPDX-License-Identifier: MIT
# "make install DESTDIR=..." installs the public headers (all of them, and
# nothing else), the shared library, imgfs.pc, the programs and their man
# pages, and the mkfs.erofs link to mkfs.img; the example program of
# docs/architecture.md, compiled against that tree with nothing but "pkg-config --cflags --libs imgfs", converts a
# generated layer, checks it and prints a file the tar holds; and a program
# that opens the layer with libarchive's own calls links with the same
# flags (libarchive is part of the API) and makes the same image.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
. "$top_srcdir/tests/api/common.sh"
CC=${API_CC:-cc}
MAKE=${API_MAKE:-make}
require_tools "${CC%% *}" "${MAKE%% *}" pkg-config ldd cmp
setup_tmp

root=$WORK/root
# The parent make's flags (jobserver, command-line variables such as
# TESTS=) are not for this one; everything is built already.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $MAKE -C "$top_builddir" install \
	DESTDIR="$root" >"$WORK/install.log" 2>&1 ||
	{ cat "$WORK/install.log"; die "make install failed"; }

pc=$(find "$root" -name imgfs.pc)
check "imgfs.pc is installed" test -n "$pc" -a -f "$pc"
[ -n "$pc" ] || finish
export PKG_CONFIG_PATH=${pc%/*} PKG_CONFIG_SYSROOT_DIR=$root
libdir=$root$(pkg-config --variable=libdir imgfs | sed "s|^$root||")
incdir=$root$(pkg-config --variable=includedir imgfs | sed "s|^$root||")

# Installed headers: exactly include/imgfs/*.h and the generated version.h.
(cd "$top_srcdir/include/imgfs" && ls ./*.h; echo ./version.h) |
	sed 's|^\./||' | sort -u >"$WORK/want.h"
(cd "$incdir/imgfs" && ls) | sort >"$WORK/got.h"
check "the installed headers are include/imgfs/*.h and version.h" \
	cmp "$WORK/want.h" "$WORK/got.h"
check "libimgfs.so is installed" test -e "$libdir/libimgfs.so"
check "the internal library is not installed" \
	test -z "$(find "$root" -name 'libimgfs_internal*')"
for p in mkfs.img fsck.img dump.img; do
	check "$p and its man page are installed" \
		test -n "$(find "$root" -path "*/bin/$p" -type f)" -a \
		-n "$(find "$root" -path "*/man1/$p.1" -type f)"
done

# The drop-in link: $(libexecdir)/imgfs/mkfs.erofs -> $(bindir)/mkfs.img,
# in a directory of its own so that nothing of erofs-utils is replaced.
link=$(find "$root" -path '*/imgfs/mkfs.erofs')
check "the mkfs.erofs link is installed in a directory of its own" \
	test -n "$link" -a -L "$link" -a "$(ls "${link%/*}")" = mkfs.erofs
case $link in
*/libexec/imgfs/mkfs.erofs) ok "... under libexec" ;;
*) fail "the mkfs.erofs link is at '$link', not under libexec/imgfs" ;;
esac
target=$(readlink "$link")
case $target in
/*) fail "the mkfs.erofs link is absolute ($target): it breaks in DESTDIR and packages" ;;
*) ok "... relative: $target" ;;
esac
resolved=$(readlink -f "$link")
check "... resolving inside the staging tree to the installed mkfs.img" \
	test -f "$resolved" -a "${resolved#"$root"/}" != "$resolved" -a \
	"${resolved##*/}" = mkfs.img
# run under that name, through the installed link itself
mkdir -p "$WORK/dropin"
ln -s "$link" "$WORK/dropin/mkfs.erofs"
LD_LIBRARY_PATH=$libdir "$WORK/dropin/mkfs.erofs" --help >"$WORK/help" 2>&1
check "... which, run as mkfs.erofs, lists --tar= in its help" \
	grep -q -- '--tar=' "$WORK/help"

cflags=$(pkg-config --cflags imgfs) && libs=$(pkg-config --libs imgfs)
check "pkg-config --cflags --libs imgfs" test $? -eq 0
case " $cflags " in
*" -I$incdir "*) ok "the include directory is the installed one" ;;
*) fail "pkg-config --cflags gives '$cflags', not -I$incdir" ;;
esac

# shellcheck disable=SC2086
$CC $cflags -o "$WORK/convert" "$top_srcdir/examples/convert.c" $libs
check "the example builds against the installed tree" test $? -eq 0
# shellcheck disable=SC2086
$CC $cflags -o "$WORK/from_fd" "$top_srcdir/tests/api/from_fd.c" $libs
check "a step-by-step user links with pkg-config's flags alone" test $? -eq 0

export LD_LIBRARY_PATH=$libdir
check "the example runs with the installed library" \
	sh -c "ldd '$WORK/convert' | grep -q '=> $libdir/libimgfs.so'"

make_layer "$WORK/layer.tar" || die "could not generate the layer"
layer_files "$WORK/layer.tar" "$WORK" || die "could not read the layer back"
"$WORK/convert" "$WORK/layer.tar" "$WORK/image" usr/share/data.bin \
	>"$WORK/out" 2>"$WORK/err"
check "the example converts, checks and reads" test $? -eq 0
check "the file it prints is the tar's" \
	cmp "$WORK/out" "$WORK/usr_share_data.bin"
check "the image was checked clean" grep -q ' 0 errors, 0 warnings' "$WORK/err"
check "the library's version is imgfs.pc's" \
	grep -qx "libimgfs $(pkg-config --modversion imgfs) (built with .*)" \
	"$WORK/err"

"$WORK/from_fd" "$WORK/layer.tar" "$WORK/image2" 2>"$WORK/err2"
check "the step-by-step user converts" test $? -eq 0
check "... into the same image" cmp "$WORK/image" "$WORK/image2"

finish
