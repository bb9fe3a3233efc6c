# SPDX-License-Identifier: MIT
# Sourced by the benchmarks: MKFS, the mkfs.img command as an array.
# IMGFS_MKFS (words) when set; else the real binary of the build in
# $top_builddir rather than libtool's wrapper script, whose shell would
# be timed and whose peak RSS would be measured instead of mkfs.img's.
if [ -n "${IMGFS_MKFS:-}" ]; then
	read -r -a MKFS <<<"$IMGFS_MKFS"
elif [ -x "$top_builddir/mkfs/.libs/mkfs.img" ]; then
	export LD_LIBRARY_PATH=$top_builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	MKFS=("$top_builddir/mkfs/.libs/mkfs.img")
else
	MKFS=("$top_builddir/mkfs/mkfs.img")
fi
command -v "${MKFS[0]}" >/dev/null || { echo "mkfs.img not found: ${MKFS[0]}" >&2; exit 1; }
