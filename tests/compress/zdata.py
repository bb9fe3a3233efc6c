#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the tar layers used by the compression tests.

usage: zdata.py KIND OUT [MB]

KIND:
  mix     incompressible, highly compressible and mixed files around block
          and pcluster boundaries, many small files, xattrs, hard links
  small   the same kinds of data, a tenth of the size (quick checks)
  stream  a tar holding one file "big" of MB (default 300) megabytes of
          mixed data, for the memory bound test (OUT may be /dev/stdout)

The content is generated from fixed seeds, so it is the same every run.
"""

import io
import random
import sys
import tarfile

MTIME = 1600000000


def add(tf, name, data=b"", mode=0o644, xattrs=None, kind=tarfile.REGTYPE,
        link=None):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = mode
    ti.mtime = MTIME
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = ""
    if link is not None:
        ti.linkname = link
    for k, v in (xattrs or {}).items():
        ti.pax_headers["SCHILY.xattr." + k] = v
    if kind == tarfile.REGTYPE:
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
    else:
        tf.addfile(ti)


def text(rng, n):
    words = [b"erofs", b"cluster", b"block", b"layer", b"image", b"inode",
             b"compress", b"0x%04x" % rng.randrange(65536), b"\n"]
    out = bytearray()
    while len(out) < n:
        out += rng.choice(words) + b" "
    return bytes(out[:n])


def mixed(rng, n):
    out = bytearray()
    while len(out) < n:
        k = rng.randrange(4)
        run = rng.randrange(1, 40000)
        if k == 0:
            out += rng.randbytes(run)
        elif k == 1:
            out += bytes([rng.randrange(256)]) * run
        else:
            out += text(rng, run)
    return bytes(out[:n])


def layer(path, scale):
    rng = random.Random(2024)
    tf = tarfile.open(path, "w", format=tarfile.PAX_FORMAT)
    add(tf, "rand", kind=tarfile.DIRTYPE, mode=0o755)
    for n in (1, 511, 512, 513, 4095, 4096, 4097, 65537, 300000 // scale):
        add(tf, "rand/r%d" % n, rng.randbytes(n))
    add(tf, "zero", kind=tarfile.DIRTYPE, mode=0o755)
    for n in (1, 4096, 5000, 9 * 1024 * 1024 // scale):
        add(tf, "zero/z%d" % n, bytes(n))
    add(tf, "text", kind=tarfile.DIRTYPE, mode=0o755)
    for i in range(120 // scale):
        add(tf, "text/t%03d" % i, text(rng, rng.randrange(1, 9000)),
            mode=0o600 if i % 7 == 0 else 0o644)
    add(tf, "text/big", text(rng, 1024 * 1024 // scale))
    add(tf, "mixed", kind=tarfile.DIRTYPE, mode=0o755)
    add(tf, "mixed/m1", mixed(rng, 1000000 // scale))
    add(tf, "mixed/m2", rng.randbytes(70000) + bytes(70000) +
        text(rng, 70001))
    # xattrs in front of the index leave less room for an inline tail
    add(tf, "mixed/xattrs", text(rng, 20000),
        xattrs={"user.one": "1" * 300, "user.two": "x" * 1500,
                "trusted.t": "value"})
    add(tf, "mixed/hardlink", kind=tarfile.LNKTYPE, link="mixed/m2")
    add(tf, "mixed/empty", b"")
    add(tf, "mixed/symlink", kind=tarfile.SYMTYPE, link="m1", mode=0o777)
    add(tf, "mixed/exec", text(rng, 12345), mode=0o755)
    tf.close()


def stream(path, mb):
    """One large file, generated a MiB at a time."""
    rng = random.Random(7)
    size = mb * 1024 * 1024
    chunk = mixed(rng, 1 << 20)
    with open(path, "wb") as f:
        ti = tarfile.TarInfo("big")
        ti.size = size
        ti.mtime = MTIME
        f.write(ti.tobuf(format=tarfile.PAX_FORMAT))
        for i in range(size // len(chunk)):
            # vary each MiB a little so that it is not one repeated block
            f.write(chunk[i % 4096:] + chunk[:i % 4096])
        f.write(bytes(-size % 512))
        f.write(bytes(1024))


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    kind, out = sys.argv[1], sys.argv[2]
    if kind == "mix":
        layer(out, 1)
    elif kind == "small":
        layer(out, 10)
    elif kind == "stream":
        stream(out, int(sys.argv[3]) if len(sys.argv) == 4 else 300)
    else:
        sys.exit("unknown kind " + kind)


if __name__ == "__main__":
    main()
