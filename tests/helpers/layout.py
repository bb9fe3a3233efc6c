#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check where a mounted image keeps its regular files' data.

usage: layout.py MOUNT IMAGE BLOCKSIZE aligned|inline

MOUNT is IMAGE mounted through a loop device. For every non-empty regular
file the extents reported by FIEMAP are checked against the image bytes:
the data at each extent's physical offset must be the file's data. Mapped
extents must start on a block boundary. In "aligned" mode no extent may be
inline (tail-packed in the metadata); in "inline" mode at least one must.
Every file is also read with O_DIRECT (which the kernel allows for
uncompressed files on a block device) and compared with a buffered read.
Prints every problem; exit 1 if there was any.
"""

import fcntl
import mmap
import os
import stat
import struct
import sys

FS_IOC_FIEMAP = 0xC020660B
FIEMAP_EXTENT_LAST = 0x1
FIEMAP_EXTENT_ENCODED = 0x8
FIEMAP_EXTENT_DATA_INLINE = 0x200
HDR = struct.Struct("=QQIIII")
EXT = struct.Struct("=QQQQQI12x")
MAX_EXTENTS = 256


def fiemap(fd):
    """Yield (logical, physical, length, flags) for the whole file."""
    start = 0
    while True:
        buf = bytearray(HDR.size + EXT.size * MAX_EXTENTS)
        HDR.pack_into(buf, 0, start, 2**64 - 1 - start, 0, 0,
                      MAX_EXTENTS, 0)
        fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
        mapped = HDR.unpack_from(buf, 0)[3]
        if mapped == 0:
            return
        for i in range(mapped):
            lo, ph, ln, _, _, fl = EXT.unpack_from(buf, HDR.size +
                                                   i * EXT.size)
            yield lo, ph, ln, fl
            if fl & FIEMAP_EXTENT_LAST:
                return
            start = lo + ln


def read_direct(path, size, bs):
    """Read PATH with O_DIRECT in aligned chunks; None if refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError:
        return None
    chunk = 1 << 20
    buf = mmap.mmap(-1, chunk)
    out = bytearray()
    try:
        while len(out) < size:
            n = os.preadv(fd, [buf], len(out))
            if n <= 0:
                break
            out += buf[:n]
    except OSError as e:
        return e
    finally:
        os.close(fd)
        buf.close()
    return bytes(out)


def main():
    mnt, img, bs, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
        sys.argv[4]
    problems = []
    nfiles = ninline = nextents = 0
    with open(img, "rb") as imgf:
        for root, _, names in os.walk(mnt):
            for n in sorted(names):
                p = os.path.join(root, n)
                st = os.lstat(p)
                if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
                    continue
                nfiles += 1
                rel = os.path.relpath(p, mnt)
                with open(p, "rb") as f:
                    data = f.read()
                    exts = list(fiemap(f.fileno()))
                for lo, ph, ln, fl in exts:
                    nextents += 1
                    want = data[lo:lo + ln]
                    if fl & FIEMAP_EXTENT_ENCODED:
                        problems.append("%s: encoded extent at %d" %
                                        (rel, lo))
                        continue
                    if fl & FIEMAP_EXTENT_DATA_INLINE:
                        ninline += 1
                        if mode == "aligned":
                            problems.append("%s: inline extent at %d "
                                            "(%d bytes)" % (rel, lo, ln))
                    elif ph % bs or lo % bs:
                        problems.append("%s: extent %d at byte %d is not "
                                        "block aligned" % (rel, lo, ph))
                    imgf.seek(ph)
                    if imgf.read(len(want)) != want:
                        problems.append("%s: image bytes at %d are not the "
                                        "file's bytes %d..%d" %
                                        (rel, ph, lo, lo + len(want)))
                if sum(e[2] for e in exts) < st.st_size and \
                        any(data):
                    # holes are fine, but only where the data is zero
                    covered = bytearray(len(data))
                    for lo, _, ln, _ in exts:
                        covered[lo:lo + ln] = b"\1" * len(data[lo:lo + ln])
                    if any(d and not c for d, c in zip(data, covered)):
                        problems.append("%s: non-zero data outside every "
                                        "extent" % rel)
                direct = read_direct(p, st.st_size, bs)
                if isinstance(direct, OSError):
                    problems.append("%s: O_DIRECT read failed: %s" %
                                    (rel, direct))
                elif direct is None:
                    problems.append("%s: O_DIRECT open refused" % rel)
                elif direct != data:
                    problems.append("%s: O_DIRECT read differs" % rel)
    if mode == "inline" and ninline == 0:
        problems.append("no file has an inline tail")
    for p in problems:
        print(p)
    print("layout: %d files, %d extents, %d inline, %d problem(s)" %
          (nfiles, nextents, ninline, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
