#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare random slices of every regular file of two trees.

usage: randread.py EXPECTED ACTUAL [READS_PER_FILE]

Reads start anywhere (last byte, block and cluster boundaries, random
offsets) and are done in random order, so that a compressed file's map is
looked up from every kind of position, not only front to back. The seed is
fixed. Exit status 1 on the first difference.
"""

import os
import random
import sys


def offsets(rng, size, n):
    fixed = [0, size - 1, size // 2, 4095, 4096, 65535, 65536, 131071,
             131072, 1048575, 1048576]
    out = [o for o in fixed if 0 <= o < size]
    out += [rng.randrange(size) for _ in range(n)]
    rng.shuffle(out)
    return out


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    exp, act = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) == 4 else 20
    rng = random.Random(1234)
    files = reads = 0
    for root, _, names in os.walk(exp):
        for name in sorted(names):
            e = os.path.join(root, name)
            if os.path.islink(e) or not os.path.isfile(e):
                continue
            size = os.path.getsize(e)
            if not size:
                continue
            a = os.path.join(act, os.path.relpath(e, exp))
            with open(e, "rb") as fe, open(a, "rb") as fa:
                for off in offsets(rng, size, n):
                    length = rng.choice([1, 100, 4096, 70000])
                    fe.seek(off)
                    fa.seek(off)
                    if fe.read(length) != fa.read(length):
                        print("%s: differs at %d (+%d)" % (a, off, length))
                        sys.exit(1)
                    reads += 1
            files += 1
    print("randread: %d files, %d reads identical" % (files, reads))


if __name__ == "__main__":
    main()
