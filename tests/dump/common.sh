# SPDX-License-Identifier: MIT
# Shared by the dump.img tests (sourced after tests/lib.sh).
#
# DUMP runs dump.img. With a libtool build the program in dump/ is a shell
# wrapper costing a few hundred milliseconds per run, and the tests run it
# hundreds of times, so the real binary is used when it is there.

dump_setup() {
	local real=$top_builddir/dump/.libs/dump.img
	local libs=$top_builddir/lib/.libs

	DUMP=$DUMP_IMG
	if [ -x "$real" ] && [ -d "$libs" ]; then
		DUMP=$real
		LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
		export LD_LIBRARY_PATH
	fi
	[ -x "$DUMP" ] || die "dump.img not built: $DUMP"
	CHECKFACTS="$PYTHON $top_srcdir/tests/dump/checkfacts.py"
}

# make_src_tree DIR: files for mkfs.erofs (a directory source), made
# without root: sizes around block edges, a hard link, symlinks, a FIFO,
# xattrs (user.* only, which need no privilege), odd names.
make_src_tree() {
	local d=$1
	mkdir -p "$d/dir/sub" "$d/empty" "$d/sp ace"
	printf 'hello\n' >"$d/a.txt"
	: >"$d/dir/empty"
	head -c 4095 /dev/urandom >"$d/dir/b4095"
	head -c 4096 /dev/urandom >"$d/dir/b4096"
	head -c 4097 /dev/urandom >"$d/dir/b4097"
	head -c 70000 /dev/urandom >"$d/dir/sub/r70000"
	yes 'compressible line of text' | head -c 300000 >"$d/dir/sub/text"
	# compressible by half: several pclusters with -C16384
	seq 100000 120000 >"$d/dir/sub/seq"
	ln "$d/a.txt" "$d/dir/hard"
	ln -s a.txt "$d/link"
	ln -s "$(printf 'x%.0s' $(seq 300))" "$d/sp ace/long-link"
	mkfifo "$d/dir/fifo"
	printf 'u' >"$d/sp ace/$(printf 'caf\303\251')"
	chmod 0640 "$d/dir/b4095"
	chmod 4755 "$d/dir/b4096"
	setfattr -n user.text -v 'some text' "$d/a.txt"
	setfattr -n user.bin -v 0x00ff5c22410a "$d/a.txt"
	setfattr -n user.dir -v yes "$d/dir"
	setfattr -n user.big -v "$(printf 'v%.0s' $(seq 1000))" "$d/dir/b4097"
	touch -d @1600000000.123456789 "$d/a.txt" "$d/dir/b4095"
	touch -h -d @1500000000 "$d/link"
	find "$d" -type d -exec touch -d @1400000000 {} +
}
