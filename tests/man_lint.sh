#!/bin/bash
# SPDX-License-Identifier: MIT
# The manual pages format without a warning from groff (what lintian's
# groff-message reports): a text line must not start with "." or "'",
# every macro must exist.
. "$top_srcdir/tests/lib.sh"
require_tools groff
setup_tmp

for f in "$top_srcdir"/man/*.1; do
	LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$f" >"$WORK/out" 2>&1
	check "$(basename "$f"): groff gives no warning" test ! -s "$WORK/out"
	sed 's/^/  /' "$WORK/out"
done
finish
