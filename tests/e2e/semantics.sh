#!/bin/bash
# How tar entries map onto the tree (see README "Path rules"):
#   - a later entry for the same path replaces the earlier one (file, link,
#     directory); a directory entry after its children updates the
#     directory and keeps the children;
#   - missing parents are created 0755 root:root with the build time (-T);
#     so is the root directory when the tar has no entry for it;
#   - leading "/" and "./" are stripped, "." dropped, ".." resolved
#     lexically and clamped at the root ("../../x" is "x");
#   - a hard link may precede its target (crafted tars do this).
# Each crafted tar comes with an expected tar spelling out the result.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup

T=1600000000
pymk mktar.py semantics "$WORK/sem.tar" || die "mktar semantics"
REF_TAR=$WORK/sem.tar.expected.tar convert_and_compare "$WORK/sem.tar" -T $T
REF_TAR=$WORK/sem.tar.expected.tar convert_and_compare "$WORK/sem.tar" -T $T -b 1024

pymk mktar.py hardlink-forward "$WORK/fwd.tar" || die "mktar hardlink-forward"
REF_TAR=$WORK/fwd.tar.expected.tar convert_and_compare "$WORK/fwd.tar"

finish
