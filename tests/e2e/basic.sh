#!/bin/bash
# Every entry type through one pax layer: file sizes around block edges,
# modes with setuid/setgid/sticky, owners beyond 16 and 31 bits, mtimes with
# nanoseconds, before 1970 and past 2106, symlinks up to 4000 bytes, hard
# links, devices, FIFOs, odd names, a deep path, the root entry itself.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup

pymk mktar.py basic "$WORK/basic.tar" || die "mktar basic"
convert_and_compare "$WORK/basic.tar"
convert_and_compare "$WORK/basic.tar" -T 1600000000 -U 6d2f1b1e-5a1e-4c1e-9f00-0123456789ab

pymk mktar.py hardlink-forward "$WORK/fwd.tar" || die "mktar hardlink-forward"
REF_TAR=$WORK/fwd.tar.expected.tar convert_and_compare "$WORK/fwd.tar"

finish
