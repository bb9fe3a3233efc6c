# SPDX-License-Identifier: MIT
# Helpers of the tests/zread tests (sourced after tests/lib.sh).
#
# zread_verify NAME IMG TREE [ZREAD OPTIONS]: read every file of IMG with
# the zread driver, compare the result with TREE byte for byte and keep the
# layout/extent statistics in $WORK/NAME.stats for expect_stat.

ZREAD=$top_builddir/tests/zread/zread
MKTREE="$PYTHON $top_srcdir/tests/zread/mktree.py"

require_zread() {
	[ -x "$ZREAD" ] || die "zread not built: $ZREAD (run make check)"
	require_tools diff "$PYTHON"
}

zread_verify() {
	local name=$1 img=$2 tree=$3 out=$WORK/out-$1
	shift 3
	rm -rf "$out"
	if ! "$ZREAD" extract "$@" "$img" "$out" >"$WORK/$name.stats" \
		2>"$WORK/$name.err"; then
		fail "$name: zread extract failed: $(head -n 3 "$WORK/$name.err")"
		return 1
	fi
	if ! diff -r --no-dereference "$tree" "$out" >"$WORK/$name.diff" 2>&1; then
		fail "$name: extracted tree differs: $(head -n 3 "$WORK/$name.diff")"
		return 1
	fi
	rm -rf "$out"
	ok "$name: every file reads back identical, each pcluster decoded once"
}

# stat_of NAME KEY: a value from $WORK/NAME.stats (empty if absent)
stat_of() {
	awk -v k="$2" '$1 == k { print $2 }' "$WORK/$1.stats"
}

# expect_stat NAME KEY TEST VALUE: e.g. expect_stat lz4 ext_big -gt 0
expect_stat() {
	local v
	v=$(stat_of "$1" "$2")
	if [ -n "$v" ] && [ "$v" "$3" "$4" ]; then
		ok "$1: $2 = $v ($3 $4)"
	else
		fail "$1: $2 = '${v}', expected $3 $4"
	fi
}

# expect_all NAME "KEY TEST VALUE,KEY TEST VALUE,...": expect_stat for each
expect_all() {
	local name=$1 rest=$2 one
	while [ -n "$rest" ]; do
		one=${rest%%,*}
		if [ "$one" = "$rest" ]; then
			rest=
		else
			rest=${rest#*,}
		fi
		# shellcheck disable=SC2086 # KEY TEST VALUE
		expect_stat "$name" $one
	done
}
