#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a deterministic tree of files that exercises compressed layouts.

usage: mktree.py DIR [SCALE]

Compressible text, random data, mixtures of both (PLAIN and compressed
pclusters in one file), empty, 1-byte and block-size-edge files, a few
multi-megabyte files (SCALE multiplies their size; 0 leaves them out for a
tree of about 2.5 MB), small files whose tails
can be inlined, nested directories and a symlink.
"""
import os
import random
import sys

WORDS = ("layer image block cluster index extent inode root kernel tar "
         "mount read write data file path name value size offset zero "
         "compress decode stream window table entry header super").split()


def text(rng, n):
    out = []
    total = 0
    while total < n:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 14)))
        line += " %d\n" % rng.randint(0, 99999)
        out.append(line)
        total += len(line)
    return "".join(out).encode()[:n]


def put(root, rel, data):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def main():
    root = sys.argv[1]
    scale = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    rng = random.Random(20240521)
    os.makedirs(root, exist_ok=True)
    base = text(rng, 1 << 20)

    put(root, "empty", b"")
    put(root, "one_byte", b"x")
    for n in (511, 512, 513, 4095, 4096, 4097, 8192, 12288 + 7):
        put(root, "edge/text_%d" % n, base[1000:1000 + n])
        put(root, "edge/random_%d" % n, rng.randbytes(n))
    put(root, "text_300", base[:300])
    put(root, "text_200k", text(rng, 200 * 1024))
    put(root, "random_100k", rng.randbytes(100 * 1024))
    mixed = bytearray()
    while len(mixed) < (1 << 20):
        mixed += base[len(mixed) % 500000:][:8192]
        mixed += rng.randbytes(8192)
    put(root, "mixed_1m", bytes(mixed) + b"tail" * 31)
    # period not a power of two: matches cross every lcluster boundary
    put(root, "pattern", (text(rng, 4093) * 300)[:1200000])
    put(root, "zeros_3m", bytes(3 * 1024 * 1024 * scale + 5))
    big = bytearray()
    for i in range(5 * scale):
        big += base[i * 1000:] + base[:i * 1000]
    put(root, "multi/text_5m", bytes(big) + b"end\n")
    for i in range(24):
        n = rng.randint(1, 6000)
        put(root, "small/f%02d" % i, text(rng, n))
    put(root, "deep/a/b/c/d/e/file", text(rng, 20000))
    os.symlink("../text_300", os.path.join(root, "deep/link"))


if __name__ == "__main__":
    main()
