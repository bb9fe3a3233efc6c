#!/bin/bash
# How tar entries map onto the tree (see README "Path rules"):
#   - a later entry for the same path replaces the earlier one (file, link,
#     directory); a directory entry after its children updates the
#     directory and keeps the children;
#   - missing parents are created 0755 root:root with the build time (-T);
#     so is the root directory when the tar has no entry for it;
#   - leading "/" and "./" are stripped, "." dropped, ".." resolved
#     lexically and clamped at the root ("../../x" is "x");
#   - a directory entry spelt "a/." or "a/b/.." is the directory a;
#   - a hard link may precede its target (crafted tars do this).
# Each crafted tar comes with an expected tar spelling out the result.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"
setup

T=1600000000
pymk mktar.py semantics "$WORK/sem.tar" || die "mktar semantics"
REF_TAR=$WORK/sem.tar.expected.tar convert_and_compare "$WORK/sem.tar" -T $T
REF_TAR=$WORK/sem.tar.expected.tar convert_and_compare "$WORK/sem.tar" -T $T -b 1024

# Directory entries whose path ends in "/", "." or "..": the directory the
# path rules arrive at ("d/sub/." is d/sub, "d/sub/x/.." is d/sub again,
# "g/h/../" is g, "." the root). Non-directories spelt so are errors
# (errors.sh).
"$PYTHON" - "$WORK/dirform.tar" <<'EOF' || die "writing dirform.tar"
import io, sys, tarfile
class Literal(tarfile.TarInfo):
    """Names stored as given (tarfile adds a "/" to directories')."""
    def get_info(self):
        info = super().get_info()
        info["name"] = self.name
        return info
def add(t, name, kind, mode, mtime, data=b""):
    ti = Literal(name)
    ti.type = kind
    ti.mode = mode
    ti.mtime = mtime
    ti.size = len(data)
    t.addfile(ti, io.BytesIO(data))
D, R = tarfile.DIRTYPE, tarfile.REGTYPE
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t, \
        tarfile.open(sys.argv[1] + ".expected.tar", "w",
                     format=tarfile.PAX_FORMAT) as e:
    add(t, "d", D, 0o700, 1000)
    add(t, "d/sub/.", D, 0o750, 2000)
    add(t, "d/f", R, 0o644, 2500, b"f")
    add(t, "d/sub/x/..", D, 0o711, 3000)
    add(t, ".", D, 0o755, 4000)
    add(t, "e/.", D, 0o705, 5000)
    add(t, "g/h/../", D, 0o701, 6000)
    for n, k, m, mt, data in (("./", D, 0o755, 4000, b""),
                              ("d", D, 0o700, 1000, b""),
                              ("d/sub", D, 0o711, 3000, b""),
                              ("d/f", R, 0o644, 2500, b"f"),
                              ("e", D, 0o705, 5000, b""),
                              ("g", D, 0o701, 6000, b"")):
        add(e, n, k, m, mt, data)
EOF
REF_TAR=$WORK/dirform.tar.expected.tar convert_and_compare "$WORK/dirform.tar" -T $T

pymk mktar.py hardlink-forward "$WORK/fwd.tar" || die "mktar hardlink-forward"
REF_TAR=$WORK/fwd.tar.expected.tar convert_and_compare "$WORK/fwd.tar"

finish
