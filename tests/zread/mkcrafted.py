#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a hand-built compressed EROFS image and the tree it must read as.

usage: mkcrafted.py IMAGE EXPECTED_DIR [bad]

The image holds the compressed layouts no available writer produces (see
docs/format.md §9): tail fragments in a packed inode (full and compact
indexes), a whole-file fragment, an interlaced PLAIN pcluster that wraps
around its block, HEAD2 lclusters (a second algorithm, DEFLATE), partial
references to a shared pcluster (LZ4 and DEFLATE), and 8 KiB lclusters on
4 KiB blocks. LZ4 streams are built by hand (a literal run repeated by one
long match), DEFLATE streams come from zlib. 4 KiB blocks, no checksum.
With "bad", the image also holds raw_past_eof, a file the kernel cannot
read (it is not written to EXPECTED_DIR).
"""
import os
import struct
import sys
import zlib

BS = 4096
ISLOT = 32

# feature_incompat: ZERO_PADDING | COMPR_CFGS | COMPR_HEAD2 | FRAGMENTS
INCOMPAT = 0x01 | 0x02 | 0x08 | 0x20
ALGS = (1 << 0) | (1 << 2)  # LZ4, DEFLATE
PLAIN, HEAD1, NONHEAD, HEAD2 = 0, 1, 2, 3
PARTIAL_REF = 0x8000
ADV_INTERLACED, ADV_FRAGMENT = 0x10, 0x20

TEXT = (b"every layer of an image is a tar stream; "
        b"blocks, clusters and extents map it. ")


def periodic(unit, n):
    return (unit * (n // len(unit) + 1))[:n]


def lz4_repeat(unit, n):
    """LZ4 block decoding to periodic(unit, n): literals, one match, 5
    literals (the format wants the last five bytes to be literals)."""
    u = len(unit)
    m = n - u - 5
    assert u >= 1 and m >= 4

    def ext(v):
        out = b""
        while v >= 255:
            out += b"\xff"
            v -= 255
        return out + bytes([v])

    token = (min(u, 15) << 4) | min(m - 4, 15)
    s = bytes([token])
    if u >= 15:
        s += ext(u - 15)
    s += unit + struct.pack("<H", u)
    if m - 4 >= 15:
        s += ext(m - 4 - 15)
    return s + bytes([5 << 4]) + periodic(unit, n)[n - 5:]


def deflate(data):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


class Image:
    def __init__(self):
        self.meta = bytearray(BS)  # block 0
        self.blocks = []  # data blocks, from block 1
        self.ipos = 0

    def block(self, data=b"", right=False):
        """Add one data block holding data (right-aligned: zero padding)."""
        assert len(data) <= BS
        pad = bytes(BS - len(data))
        self.blocks.append(pad + data if right else data + pad)
        return len(self.blocks)

    def put(self, pos, data):
        self.meta[pos:pos + len(data)] = data

    def inode(self, layout, mode, size, i_u, extra=b"", nlink=1):
        """Compact inode followed by @extra (map header and indexes, or
        inline data); returns its nid."""
        pos = (self.ipos + ISLOT - 1) // ISLOT * ISLOT
        ino = struct.pack("<HHHHIIIIHHI", layout << 1, 0, mode, nlink, size,
                          0, i_u, pos // ISLOT, 0, 0, 0)
        self.put(pos, ino + extra)
        self.ipos = pos + len(ino) + len(extra)
        assert self.ipos <= BS
        return pos // ISLOT


def full_index(header, records):
    out = header + bytes(8)
    for r in records:
        out += r
    return out


def head(type_, ofs, blk, partial=False):
    return struct.pack("<HHI", type_ | (PARTIAL_REF if partial else 0), ofs,
                       blk)


def nonhead(d0, d1):
    return struct.pack("<HHHH", NONHEAD, 0, d0, d1)


def header(fragoff=0, advise=0, algs=0x20, cbits=0):
    return struct.pack("<IHBB", fragoff, advise, algs, cbits)


def compact_4b(entries, base):
    """One 4-byte-entry pack: two 16-bit entries (lo | type << 12), base."""
    e = entries + [0] * (2 - len(entries))
    return struct.pack("<HHI", e[0], e[1], base)


def build(img_path, out, bad):
    img = Image()
    files = {}

    # Superblock and the two config records (LZ4, DEFLATE) follow below;
    # the first inode goes after them.
    cfg = struct.pack("<H", 14) + struct.pack("<HH", 0xFFFF, 1) + bytes(10)
    cfg += struct.pack("<H", 6) + bytes([15]) + bytes(5)
    img.put(1024 + 128, cfg)
    img.ipos = 1024 + 128 + len(cfg)

    # Root directory first (its nid must be known); entries filled later.
    names = ["frag_tail", "frag_whole", "frag_compact", "interlaced",
             "head2", "partial_lz4", "partial_deflate", "lcl8k"]
    if bad:
        names.append("raw_past_eof")
    dir_size = 12 * (len(names) + 2) + 3 + sum(len(n) for n in names)
    root_pos = (img.ipos + ISLOT - 1) // ISLOT * ISLOT
    root_nid = img.inode(2, 0o40755, dir_size, 0, bytes(dir_size), nlink=2)

    # Packed inode: the fragments, stored FLAT_PLAIN.
    tail1 = periodic(TEXT[::-1], 1500)
    whole = periodic(TEXT[5:], 3000)
    tail3 = periodic(TEXT[9:], 700)
    packed = tail1 + whole + tail3
    pblk = img.block(packed[:BS])
    img.block(packed[BS:])
    packed_nid = img.inode(0, 0o100644, len(packed), pblk)

    nids = {}
    # frag_tail: a raw 4096-byte extent, then a 1500-byte tail fragment
    head_data = periodic(TEXT, BS)
    b = img.block(head_data)
    nids["frag_tail"] = img.inode(1, 0o100644, BS + 1500, 1, full_index(
        header(0, ADV_FRAGMENT), [head(PLAIN, 0, b), head(HEAD1, 0, 0)]))
    files["frag_tail"] = head_data + tail1

    # frag_whole: the whole content in the packed inode (header bit 63)
    nids["frag_whole"] = img.inode(1, 0o100644, len(whole), 0, struct.pack(
        "<Q", 1500 | 1 << 63) + bytes(8))
    files["frag_whole"] = whole

    # frag_compact: compact index, 2 lclusters of LZ4 then a fragment tail
    data = periodic(TEXT[3:40], 2 * BS)
    b = img.block(lz4_repeat(TEXT[3:40], 2 * BS), right=True)
    idx = header(4500, ADV_FRAGMENT)
    idx += compact_4b([HEAD1 << 12, NONHEAD << 12 | 1], b - 1)
    idx += compact_4b([HEAD1 << 12], b)
    nids["frag_compact"] = img.inode(3, 0o100644, 2 * BS + 700, 1, idx)
    files["frag_compact"] = data + tail3

    # interlaced: [0, 5000) LZ4, [5000, 9000) PLAIN interlaced: byte j at
    # in-block offset (904 + j) mod 4096, wrapping after 3192 bytes; then
    # [9000, 12000) LZ4. (The kernel measures a PLAIN extent that no head
    # ends to the end of its last lcluster: it must end at a head here.)
    unit = TEXT[:100]
    part1 = periodic(unit, 5000)
    b1 = lz4_blk = img.block(lz4_repeat(unit, 5000), right=True)
    part2 = periodic(TEXT[7:77], 4000)
    c = 5000 % BS
    raw = bytearray(BS)
    for j, v in enumerate(part2):
        raw[(c + j) % BS] = v
    b2 = img.block(bytes(raw))
    part3 = periodic(TEXT[20:], 3000)
    b3 = img.block(lz4_repeat(TEXT[20:], 3000), right=True)
    nids["interlaced"] = img.inode(1, 0o100644, 12000, 3, full_index(
        header(0, ADV_INTERLACED),
        [head(HEAD1, 0, b1), head(PLAIN, c, b2),
         head(HEAD1, 9000 - 2 * BS, b3)]))
    files["interlaced"] = part1 + part2 + part3

    if bad:
        # raw_past_eof: a PLAIN extent [5000, 9000) ending at EOF inside
        # lcluster 2: the kernel measures it to 12288 (7288 bytes, more
        # than its block) and fails the read with EFSCORRUPTED; so must we.
        b = img.block(periodic(TEXT[4:], BS))
        nids["raw_past_eof"] = img.inode(1, 0o100644, 9000, 2, full_index(
            header(), [head(HEAD1, 0, lz4_blk), head(PLAIN, c, b),
                       nonhead(1, 1)]))

    # head2: [0, 6000) DEFLATE (HEAD2), [6000, 10000) LZ4 (HEAD1)
    d1 = periodic(TEXT[11:], 6000)
    b1 = deflate_blk = img.block(deflate(d1), right=True)
    d2 = periodic(TEXT[2:60], 4000)
    b2 = img.block(lz4_repeat(TEXT[2:60], 4000), right=True)
    nids["head2"] = img.inode(1, 0o100644, 10000, 2, full_index(
        header(), [head(HEAD2, 0, b1), head(HEAD1, 6000 - BS, b2),
                   nonhead(1, 1)]))
    files["head2"] = d1 + d2

    # partial references to the pclusters above (DEDUPE)
    nids["partial_lz4"] = img.inode(1, 0o100644, 3000, 0, full_index(
        header(), [head(HEAD1, 0, lz4_blk, partial=True)]))
    files["partial_lz4"] = part1[:3000]
    nids["partial_deflate"] = img.inode(1, 0o100644, 2500, 0, full_index(
        header(), [head(HEAD2, 0, deflate_blk, partial=True)]))
    files["partial_deflate"] = d1[:2500]

    # lcl8k: lclusters of 8 KiB (cluster_bits 1), one LZ4 extent
    data = periodic(TEXT[1:31], 12000)
    b = img.block(lz4_repeat(TEXT[1:31], 12000), right=True)
    nids["lcl8k"] = img.inode(1, 0o100644, 12000, 1, full_index(
        header(cbits=1), [head(HEAD1, 0, b), nonhead(1, 1)]))
    files["lcl8k"] = data

    # Root directory entries, inline after the root inode.
    ents = [(".", root_nid, 2), ("..", root_nid, 2)]
    ents += [(n, nids[n], 1) for n in names]
    ents.sort(key=lambda e: e[0].encode())
    d = b""
    nameoff = 12 * len(ents)
    for name, nid, ft in ents:
        d += struct.pack("<QHBB", nid, nameoff, ft, 0)
        nameoff += len(name)
    d += b"".join(e[0].encode() for e in ents)
    assert len(d) == dir_size
    img.put(root_pos + 32, d)

    nblocks = 1 + len(img.blocks)
    sb = struct.pack("<IIIBBHQQIIII16s16sIHHHBBIQBBHIQQ",
                     0xE0F5E1E2, 0, 0, 12, 0, root_nid, 1 + len(names),
                     0, 0, nblocks, 0, 0, b"\x11" * 16, b"crafted",
                     INCOMPAT, ALGS, 0, 0, 0, 0, 0, packed_nid, 0, 0, 0, 0,
                     0, 0)
    assert len(sb) == 128
    img.put(1024, sb)

    with open(img_path, "wb") as f:
        f.write(bytes(img.meta))
        for blk in img.blocks:
            f.write(blk)
    os.makedirs(out, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2], len(sys.argv) > 3 and sys.argv[3] == "bad")
