#!/bin/bash
# SPDX-License-Identifier: MIT
# usage: ondisk.sh SRCDIR
# lib/format is the only place that encodes or decodes the bytes of the
# on-disk structures (docs/format.md §1.8): report each line of the
# library and the programs outside it that converts byte order, assembles
# an integer from bytes or reads a word through a cast pointer. Prints
# "FAIL: path:line: what: code" per finding; exit 1 if any, else 0.
src=${1:?usage: ondisk.sh SRCDIR}

# Not scanned: lib/format is the layer itself; lib/util (gzip trailers) and
# lib/verity (dm-verity's own superblock, sidecars) read formats other
# than EROFS.
DIRS="lib/codec lib/writer lib/reader lib/check lib/inspect lib/extract
lib/compare lib/stack lib/oci lib/source dump fsck mkfs"

# Known lines that are not EROFS fields: "path<TAB>text on the line".
ALLOW=$(printf '%s\t%s\n' \
	lib/writer/dm_verity.c 'imgfs_put_le64(seed + 16,')
# (the dm-verity salt's seed: hashed, never stored)

RULES=(
	'little-endian field by hand (use the lib/format encoder or decoder)'
	'\bimgfs_(get|put)_le(16|32|64)\b'
	'byte order by hand (use the lib/format encoder or decoder)'
	'\b(le|be)(16|32|64)toh\b|\bhto(le|be)(16|32|64)\b|__builtin_bswap|\bbswap_(16|32|64)\b'
	'integer assembled from bytes (use the lib/format decoder)'
	'\b[A-Za-z_][A-Za-z0-9_]*\[[0-9]+\] *<< *(8|16|24|32|40|48|56)\b'
	'word read or written through a cast pointer (host byte order)'
	'\( *(const +)?u?int(16|32|64)_t *\*\)'
)

allowed() { # path line
	local p t
	while IFS=$'\t' read -r p t; do
		[ "$p" = "$1" ] && [[ "$2" == *"$t"* ]] && return 0
	done <<<"$ALLOW"
	return 1
}

found=0
for ((r = 0; r < ${#RULES[@]}; r += 2)); do
	what=${RULES[r]}
	re=${RULES[r + 1]}
	for d in $DIRS; do
		[ -d "$src/$d" ] || continue
		# comment lines do not count
		while IFS=: read -r path line code; do
			rel=${path#"$src/"}
			allowed "$rel" "$code" && continue
			echo "FAIL: $rel:$line: $what: $(echo "$code" | sed 's/^[[:space:]]*//')"
			found=$((found + 1))
		done < <(grep -rnE --include='*.[ch]' "$re" "$src/$d" |
			 grep -vE '^[^:]*:[0-9]+:[[:space:]]*(/\*|\*( |/|$)|//)')
	done
done
echo "ondisk: $found violation(s)"
[ "$found" -eq 0 ]
