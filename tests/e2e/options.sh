#!/bin/bash
# Command-line options: ownership rewriting (--all-root, --force-uid/gid,
# --uid/gid-offset), -T (superblock epoch, root and implied directories),
# -U and -L (superblock bytes), -q (silent), --immutable (lsattr shows 'i'),
# --ignore-file-flags (deprecated), --verify, and refusal of bad option values.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup

pymk mktar.py owners "$WORK/own.tar" || die "mktar owners"
o=$WORK/own.tar
REF_TAR=$o.all-root.tar convert_and_compare "$o" --all-root
REF_TAR=$o.force.tar convert_and_compare "$o" --force-uid=123 --force-gid=456
REF_TAR=$o.offset.tar convert_and_compare "$o" --uid-offset=100000 --gid-offset=200000
REF_TAR=$o.force-offset.tar convert_and_compare "$o" --force-uid=5 --uid-offset=10

# Negative offsets undo positive ones; going below 0 is an error.
REF_TAR=$o convert_and_compare "$o.offset.tar" --uid-offset=-100000 --gid-offset=-200000
rm -f "$WORK/neg.img"
if mkfs_img --uid-offset=-1 "$o" "$WORK/neg.img" 2>"$WORK/neg.err"; then
	fail "--uid-offset=-1 on uid 0 accepted"
else
	check "--uid-offset=-1 on uid 0 refused, no image" test ! -e "$WORK/neg.img"
	log "message: $(head -n 1 "$WORK/neg.err")"
fi

# File flags cannot be stored: the deprecated --ignore-file-flags still
# drops them silently (the policy itself is tested in fflags.sh), and
# fsck --compare lists them as refused with --file-flags=error.
pymk mktar.py file-flags "$WORK/flags.tar" || die "mktar file-flags"
convert_and_compare "$WORK/flags.tar" --ignore-file-flags
rc=0
"$FSCK_IMG" --compare="$WORK/flags.tar" --file-flags=error "$IMG" \
	>"$WORK/flags.cmp" 2>&1 || rc=$?
check "fsck --compare --file-flags=error exits 4" test $rc -eq 4
check "fsck --compare names the flagged entries" \
	grep -q "d/flagged: unrepresentable: file flags (nodump)" "$WORK/flags.cmp"

# sb_hex IMG OFFSET LEN: superblock bytes (offset relative to byte 1024)
sb_hex() {
	od -An -tx1 -v -j $((1024 + $2)) -N "$3" "$1" | tr -d ' \n'
}

printf 'x' >"$WORK/f"
bsdtar -C "$WORK" -cf "$WORK/small.tar" f

img=$WORK/sb.img
uuid=6d2f1b1e-5a1e-4c1e-9f00-0123456789ab
if mkfs_img -T 1234567890 -U "$uuid" -L imgfs-label-16b "$WORK/small.tar" "$img"; then
	check "-U stored in the superblock" \
		test "$(sb_hex "$img" 48 16)" = "${uuid//-/}"
	check "-L stored in the superblock" \
		test "$(sb_hex "$img" 64 16)" = "$(printf imgfs-label-16b | od -An -tx1 | tr -d ' \n')00"
	mount_file "$img" "$WORK/m"
	check "-T gives the implicit root its mtime" \
		test "$(stat -c %Y "$WORK/m")" = 1234567890
	check "implicit root is 0755 root:root" \
		test "$(stat -c '%a %u %g' "$WORK/m")" = "755 0 0"
	unmount "$WORK/m"
	if command -v blkid >/dev/null && blkid -p "$img" | grep -q erofs; then
		check "blkid reads the label" \
			test "$(blkid -p -o value -s LABEL "$img")" = imgfs-label-16b
		check "blkid reads the uuid" \
			test "$(blkid -p -o value -s UUID "$img")" = "$uuid"
	fi
else
	fail "mkfs -T -U -L"
fi

rm -f "$img"
out=$(mkfs_img -q "$WORK/small.tar" "$img" 2>&1)
check "-q succeeds" test -f "$img"
check "-q prints nothing" test -z "$out"
rm -f "$img"
out=$(mkfs_img --quiet "$WORK/small.tar" "$img" 2>&1)
check "--quiet prints nothing" test -z "$out"

rm -f "$img"
if mkfs_img --immutable "$WORK/small.tar" "$img"; then
	check "--immutable sets the immutable flag" \
		sh -c "lsattr '$img' | cut -d' ' -f1 | grep -q i"
	check "an immutable image cannot be removed" \
		sh -c "! rm -f '$img' 2>/dev/null"
	chattr -i "$img"
	verify_image "$img" "$WORK/small.tar" --immutable
else
	fail "mkfs --immutable"
fi

rm -f "$img"
check "--verify on a good image" mkfs_img --verify "$WORK/small.tar" "$img"

for bad in "-b 8192" "-b 1000" "-b 256" "--force-uid=-1" "--uid-offset=x" \
	"--no-such-option" "-U not-a-uuid" "-L 12345678901234567"; do
	rm -f "$img"
	# shellcheck disable=SC2086
	if mkfs_img $bad "$WORK/small.tar" "$img" 2>"$WORK/err"; then
		fail "mkfs accepted $bad"
	elif [ -e "$img" ]; then
		fail "mkfs $bad failed but left $img"
	elif [ ! -s "$WORK/err" ]; then
		fail "mkfs $bad failed silently"
	else
		ok "mkfs refuses $bad: $(head -n 1 "$WORK/err")"
	fi
done

finish
