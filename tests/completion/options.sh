#!/bin/bash
# SPDX-License-Identifier: MIT
# The bash completion (completion/imgfs.bash) against the programs' --help:
# it offers exactly the options --help lists (mkfs.img, mkfs.img --oci,
# fsck.img, fsck.img --oci=DIR, dump.img), its lists of values are those
# --help writes in prose (-z, -b, --layer-media-type), the a|b|c choices
# come from --help, and paths complete as files or directories as the
# option's argument says.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup_tmp
PATH=$top_builddir/mkfs:$top_builddir/fsck:$top_builddir/dump:$PATH
for p in mkfs.img fsck.img dump.img; do
	command -v "$p" >/dev/null || die "$p not built"
done
# shellcheck disable=SC1091 # the completion, sourced as bash does
. "$top_srcdir/completion/imgfs.bash" || die "the completion does not load"

# comp LINE: what the completion offers at the end of LINE, sorted, one a
# line (as bash calls it: COMP_WORDBREAKS holds '=' by default)
comp() {
	local w
	read -ra w <<<"$1"
	COMP_LINE=$1 COMP_POINT=${#1} COMPREPLY=()
	_imgfs "${w[0]}" 2>"$WORK/comp.err"
	[ -s "$WORK/comp.err" ] && cat "$WORK/comp.err" >&2
	[ ${#COMPREPLY[@]} -eq 0 ] || printf '%s\n' "${COMPREPLY[@]}" | sort
}

# help_opts HELP: the options HELP lists, found without the completion's
# parser: every --long word, and the short options opening a line or
# following one ("-q, --quiet")
help_opts() {
	{
		grep -oE -- '(^|[^A-Za-z0-9-])--[A-Za-z0-9][-A-Za-z0-9]*' <<<"$1" |
			sed 's/^[^-]*//'
		grep -E '^[[:space:]]+-' <<<"$1" |
			grep -oE -- '(^[[:space:]]+|, )-[A-Za-z]\b' | tr -d ' ,'
	} | sort -u
}

# same_opts NAME LINE HELP
same_opts() {
	comp "$2" | sed 's/=$//' | sort -u >"$WORK/got"
	help_opts "$3" >"$WORK/want"
	if [ -s "$WORK/want" ] && cmp -s "$WORK/got" "$WORK/want"; then
		ok "$1: the $(wc -l <"$WORK/want") options of --help"
	else
		diff "$WORK/want" "$WORK/got"
		fail "$1: the completion's options differ from --help's"
	fi
}

mkfs_help=$(mkfs.img --help)
oci_help=$(mkfs.img --oci --help)
fsck_help=$(fsck.img --help)
fsck_oci_help=$(fsck.img --oci=. --help)
dump_help=$(dump.img --help)
same_opts "mkfs.img" "mkfs.img -" "$mkfs_help"
same_opts "mkfs.img --oci (its own and a single conversion's)" \
	"mkfs.img --oci -" "$mkfs_help
$oci_help"
same_opts "fsck.img" "fsck.img -" "$fsck_help"
same_opts "fsck.img --oci=DIR" "fsck.img --oci=. -" "$fsck_oci_help"
same_opts "dump.img" "dump.img -" "$dump_help"

# expect NAME LINE WANT...: the completion of LINE is WANT (sorted)
expect() {
	local name=$1 line=$2 got want
	shift 2
	got=$(comp "$line" | tr '\n' ' ')
	want=
	[ $# -eq 0 ] || want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	if [ "$got" = "$want" ]; then
		ok "$name: '$line' gives ${want% }"
	else
		fail "$name: '$line' gives '$got', not '$want'"
	fi
}

# para HELP OPTION: the help text of OPTION (its line and continuations)
para() {
	awk -v o="$2" '
		/^[[:space:]]+-/ { on = 0 }
		/^[[:space:]]+-/ && index($0, o) { on = 1 }
		/^[^[:space:]]/ || /^$/ { on = 0 }
		on' <<<"$1" | tr -s ' \n' ' '
}

# the values the completion lists itself are those of --help
zalgs=$(para "$mkfs_help" "-z ALG" | sed -E 's/.*data: //' | tr -d ',' |
	tr ' ' '\n' | grep -v '^$')
# shellcheck disable=SC2086 # a list of words
expect "-z: the algorithms --help lists" "mkfs.img -z " $zalgs
bsizes=$(para "$mkfs_help" "-b SIZE" | sed -E 's/.*size: //; s/\(default.*//' |
	grep -oE '[0-9]+')
# shellcheck disable=SC2086
expect "-b: the block sizes --help lists" "mkfs.img -b " $bsizes
types=$(para "$oci_help" "--layer-media-type=" | grep -oE 'application/[^ ,]+')
# shellcheck disable=SC2086
expect "--layer-media-type: the types --help lists" \
	"mkfs.img --oci --layer-media-type=" $types
expect "-z after --oci" "mkfs.img --oci -z lz4" lz4 lz4hc
expect "a|b|c choices from --help" "mkfs.img --file-flags=" \
	warn error ignore
expect "optional choices" "mkfs.img --tar-index=" append only
expect "fsck.img's --file-flags" "fsck.img --file-flags=e" error
expect "options after a value" "mkfs.img -z lz4 --tar-index=o" only

# paths: files, or directories where the argument is one
mkdir -p "$WORK/c/layouts" "$WORK/c/lost dir"
: >"$WORK/c/layer.tar"
: >"$WORK/c/lay.img"
cd "$WORK/c" || die "cd"
expect "positional arguments: files" "mkfs.img -q la" layer.tar lay.img \
	layouts
expect "--compare=TAR: files" "fsck.img --compare=lay" layer.tar lay.img \
	layouts
expect "--extract=DIR: directories" "fsck.img --extract=l" layouts \
	"lost dir"
expect "--cache-dir=DIR: directories" "mkfs.img --oci --cache-dir=" \
	layouts "lost dir"
expect "fsck.img --oci=DIR --compare=SRC_LAYOUT: directories" \
	"fsck.img --oci=layouts --compare=" layouts "lost dir"
expect "no values for a number" "mkfs.img --workers="
expect "dump.img --path=PATH is inside the image: nothing" \
	"dump.img --path="
expect "unique option with a value: no space after it" "mkfs.img --oci --cache" \
	"--cache-dir="

# "make install" puts it where bash-completion looks, once per program
MAKE=${API_MAKE:-make}
# shellcheck disable=SC2086 # MAKE may carry options
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $MAKE -s -C "$top_builddir" \
	install-bash-completion DESTDIR="$WORK/root" >"$WORK/install.log" 2>&1 ||
	{ cat "$WORK/install.log"; fail "make install-bash-completion"; }
dir=$(find "$WORK/root" -type d -name completions -path '*/bash-completion/*')
check "installed in .../bash-completion/completions" test -n "$dir"
check "... as mkfs.img" cmp "$dir/mkfs.img" "$top_srcdir/completion/imgfs.bash"
for p in fsck.img dump.img; do
	check "... and as $p (a link to it)" \
		test "$(readlink "$dir/$p")" = mkfs.img -a -f "$dir/$p"
done
check "the installed file registers the three programs" bash -c \
	". '$dir/dump.img' && complete -p mkfs.img fsck.img dump.img" \
	>/dev/null
finish
