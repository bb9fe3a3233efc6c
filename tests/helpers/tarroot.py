#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Give DIR the mtime of TAR's entry for the root directory ("./", "/", ".").

usage: tarroot.py TAR DIR

bsdtar sets the root directory's mtime when it meets the entry, and the
files extracted after it change it again, so a reference extraction needs
this fix-up. TAR may be compressed (it is read through bsdtar). Exit 1 if
TAR has no root entry.
"""

import os
import subprocess
import sys
import tarfile
from decimal import Decimal


def is_root(name):
    return name.strip("/") in ("", ".")


def root_mtime(tf):
    mtime = None
    for ti in tf:
        if is_root(ti.name) and ti.isdir():
            mtime = ti.pax_headers.get("mtime", str(ti.mtime))
    return mtime


def main():
    tar, d = sys.argv[1:3]
    try:
        # plain, gzip, bzip2, xz
        with tarfile.open(tar, "r:*") as tf:
            mtime = root_mtime(tf)
    except tarfile.ReadError:
        # zstd, lz4...: let bsdtar decompress and rewrite it as pax
        p = subprocess.Popen(["bsdtar", "-cf", "-", "--format=pax",
                              "@" + tar], stdout=subprocess.PIPE)
        with tarfile.open(fileobj=p.stdout, mode="r|") as tf:
            mtime = root_mtime(tf)
        if p.wait() != 0:
            return 2
    if mtime is None:
        return 1
    ns = int(Decimal(mtime) * 10**9)
    os.utime(d, ns=(ns, ns), follow_symlinks=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
