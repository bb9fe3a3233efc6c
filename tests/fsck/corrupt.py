#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Corrupt images in many places and run fsck.img on every mutant.

usage: corrupt.py FSCK_BATCH FSCK WORKDIR SEED IMAGE...

FSCK_BATCH checks many files, each in a child process with a time limit
(tests/fsck/fsck_batch); FSCK (fsck.img) is run on the targeted cases.

For each image, the regions superblock / inodes / directories / xattrs /
data are located with a small independent parser, then:
- random mutations (bit flips, 0x00, 0xFF, random bytes) at random
  positions of each region, with the superblock checksum recomputed so
  that only the structural checks can notice them; fsck.img must exit 0 or
  4 within the time limit (never crash, hang or fail operationally); the
  detection rate (exit 4) is printed per region;
- targeted structural corruptions (bad magic, block size, checksum,
  impossible inode format, layout, mode, directory name offsets, xattr
  header and entry sizes, shared ids, data beyond the image), each of
  which must be detected.
Exit status 1 if any check fails.
"""
import os
import random
import struct
import subprocess
import sys

TIMEOUT = 20


def crc32c(data, crc=0xFFFFFFFF):
    table = crc32c.table
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def _table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


crc32c.table = _table()


class Image:
    """Just enough of the format to find where each structure lives."""

    def __init__(self, data):
        self.d = bytearray(data)
        sb = self.d[1024:1024 + 128]
        self.bits = sb[12]
        self.bs = 1 << self.bits
        self.compat = struct.unpack_from('<I', sb, 8)[0]
        self.root = struct.unpack_from('<H', sb, 14)[0]
        self.meta = struct.unpack_from('<I', sb, 40)[0] << self.bits
        self.xattr = struct.unpack_from('<I', sb, 44)[0] << self.bits
        self.regions = {'superblock': [(1024, 1024 + 128)], 'inodes': [],
                        'directories': [], 'xattrs': [], 'data': []}
        # inline xattr areas (header first), apart from shared entries: the
        # shared area may start right where the last inode ends
        self.inline_xattrs = []
        self.dirblocks = []  # (pos, len)
        self.walk()

    def inode(self, nid):
        pos = self.meta + nid * 32
        fmt, icount, mode = struct.unpack_from('<HHH', self.d, pos)
        ext = fmt & 1
        layout = (fmt >> 1) & 7
        if ext:
            size, = struct.unpack_from('<Q', self.d, pos + 8)
            isz = 64
        else:
            size, = struct.unpack_from('<I', self.d, pos + 8)
            isz = 32
        u, = struct.unpack_from('<I', self.d, pos + 16)
        xsz = 12 + 4 * (icount - 1) if icount else 0
        return pos, isz, mode, layout, size, u, xsz

    def data_ranges(self, nid):
        """(pos, len) pieces of the inode's data (flat and chunk layouts)."""
        pos, isz, mode, layout, size, u, xsz = self.inode(nid)
        tail = pos + isz + xsz
        out = []
        if layout in (0, 2) and size:
            full = size if layout == 0 else (size - 1) // self.bs * self.bs
            if full and u != 0xFFFFFFFF:
                out.append((u << self.bits, full))
            if layout == 2:
                out.append((tail, size - full))
        elif layout == 4 and size:
            chunkbits = self.bits + (u & 31)
            rec = 8 if u & 0x20 else 4
            base = (tail + rec - 1) // rec * rec
            n = (size + (1 << chunkbits) - 1) >> chunkbits
            for i in range(n):
                blk, = struct.unpack_from('<I', self.d, base + i * rec +
                                          (4 if rec == 8 else 0))
                ln = min(1 << chunkbits, size - (i << chunkbits))
                if blk != 0xFFFFFFFF:
                    out.append((blk << self.bits, ln))
        return out

    def walk(self):
        todo = [self.root]
        seen = set()
        while todo:
            nid = todo.pop()
            if nid in seen:
                continue
            seen.add(nid)
            pos, isz, mode, layout, size, u, xsz = self.inode(nid)
            self.regions['inodes'].append((pos, pos + isz))
            if xsz:
                self.regions['xattrs'].append((pos + isz, pos + isz + xsz))
                self.inline_xattrs.append((pos + isz, pos + isz + xsz))
                self.shared_xattrs(pos + isz, xsz)
            ranges = self.data_ranges(nid)
            if mode & 0o170000 == 0o040000:
                data = b''.join(bytes(self.d[p:p + n]) for p, n in ranges)
                for p, n in ranges:
                    self.regions['directories'].append((p, p + n))
                for off in range(0, len(data), self.bs):
                    blk = data[off:off + self.bs]
                    for child in self.dirents(blk):
                        todo.append(child)
                self.dirblocks += ranges
            elif mode & 0o170000 == 0o100000:
                for p, n in ranges:
                    self.regions['data'].append((p, p + n))

    def dirents(self, blk):
        n = struct.unpack_from('<H', blk, 8)[0] // 12
        out = []
        for i in range(n):
            nid, = struct.unpack_from('<Q', blk, i * 12)
            start = struct.unpack_from('<H', blk, i * 12 + 8)[0]
            end = (struct.unpack_from('<H', blk, i * 12 + 20)[0]
                   if i + 1 < n else len(blk))
            name = blk[start:end].split(b'\0')[0]
            if name not in (b'.', b'..'):
                out.append(nid)
        return out

    def shared_xattrs(self, pos, xsz):
        count = self.d[pos + 4]
        for i in range(count):
            xid, = struct.unpack_from('<I', self.d, pos + 12 + 4 * i)
            p = self.xattr + 4 * xid
            nl, _, vs = struct.unpack_from('<BBH', self.d, p)
            self.regions['xattrs'].append((p, p + (4 + nl + vs + 3) // 4 * 4))

    def fix_checksum(self, d):
        if not self.compat & 1:
            return
        ln = self.bs - 1024 if self.bs > 1024 else self.bs
        blk = bytearray(d[1024:1024 + ln])
        blk[4:8] = b'\0\0\0\0'
        struct.pack_into('<I', d, 1028, crc32c(bytes(blk)))


class Runner:
    def __init__(self, batch, fsck, work):
        self.batch = batch
        self.fsck = fsck
        self.work = work
        self.failures = 0
        self.runs = 0

    def run_many(self, cases):
        """cases: [(what, bytes)] -> [True (detected), False, None (failed)]"""
        paths = []
        for i, (_, data) in enumerate(cases):
            path = os.path.join(self.work, 'mutant-%d.img' % i)
            with open(path, 'wb') as f:
                f.write(data)
            paths.append(path)
        out = subprocess.run([self.batch] + paths, stdout=subprocess.PIPE,
                             universal_newlines=True).stdout.splitlines()
        status = {}
        for line in out:
            word, rest = line.split(' ', 1)
            if word == 'exit':
                code, path = rest.split(' ', 1)
                status[path] = int(code)
            else:
                status[rest.split(' ', 1)[-1]] = line
        res = []
        for (what, data), path in zip(cases, paths):
            self.runs += 1
            st = status.get(path, 'no result')
            if st in (0, 4):
                res.append(st == 4)
            else:
                self.fail('%s: %s' % (what, st), data)
                res.append(None)
            os.unlink(path)
        return res

    def run_fsck(self, data, what):
        """The front end itself: exit 0 or 4, within the time limit."""
        path = os.path.join(self.work, 'mutant.img')
        with open(path, 'wb') as f:
            f.write(data)
        self.runs += 1
        try:
            p = subprocess.run([self.fsck, '-q', path],
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.fail('%s: fsck.img did not finish in %d s' % (what, TIMEOUT),
                      data)
            return None
        if p.returncode not in (0, 4):
            self.fail('%s: fsck.img exit status %d' % (what, p.returncode),
                      data)
            return None
        return p.returncode == 4

    def fail(self, msg, data):
        self.failures += 1
        keep = os.path.join(self.work, 'failure-%d.img' % self.failures)
        with open(keep, 'wb') as f:
            f.write(data)
        print('FAIL: %s (kept as %s)' % (msg, keep))


def mutate(rng, d, lo, hi):
    pos = rng.randrange(lo, hi)
    kind = rng.randrange(4)
    if kind == 0:
        d[pos] ^= 1 << rng.randrange(8)
    elif kind == 1:
        d[pos] = 0
    elif kind == 2:
        d[pos] = 0xFF
    else:
        d[pos] = rng.randrange(256)
    return pos


def random_mutants(img, runner, rng, name, per_region, totals):
    for region, ranges in img.regions.items():
        ranges = [r for r in ranges if r[1] > r[0]]
        if not ranges:
            continue
        weights = [r[1] - r[0] for r in ranges]
        cases = []
        for _ in range(per_region):
            lo, hi = rng.choices(ranges, weights)[0]
            d = bytearray(img.d)
            nmut = rng.choice((1, 1, 2, 4))
            for _ in range(nmut):
                mutate(rng, d, lo, hi)
            if d == img.d:
                continue
            img.fix_checksum(d)
            cases.append(('%s/%s' % (name, region), bytes(d)))
        res = [r for r in runner.run_many(cases) if r is not None]
        done, hit = len(res), sum(res)
        t = totals.setdefault(region, [0, 0])
        t[0] += done
        t[1] += hit
        print('  %-16s %-12s %4d mutants, %4d detected (%3d%%)' %
              (name, region, done, hit, 100 * hit // max(done, 1)))


def targeted(img, runner, name):
    """Structural corruptions that must all be reported."""
    cases = []

    def case(what, fn, fix=True):
        d = bytearray(img.d)
        fn(d)
        if fix:
            img.fix_checksum(d)
        cases.append((what, bytes(d)))

    case('bad magic', lambda d: d.__setitem__(1024, d[1024] ^ 0x10))
    case('blkszbits 20', lambda d: d.__setitem__(1024 + 12, 20))
    case('dirblkbits 1', lambda d: d.__setitem__(1024 + 90, 1))
    case('unknown incompat feature',
         lambda d: struct.pack_into('<I', d, 1024 + 80, 0x8000))
    if len(img.d) < img.meta + 0xFFFF * 32:
        case('root nid beyond the image',
             lambda d: struct.pack_into('<H', d, 1024 + 14, 0xFFFF))
    if img.compat & 1:
        case('bad superblock checksum',
             lambda d: d.__setitem__(1024 + 60, d[1024 + 60] ^ 1), False)
    for pos, end in img.regions['inodes'][:6]:
        case('i_format reserved bit at %d' % pos,
             lambda d, p=pos: d.__setitem__(p + 1, d[p + 1] | 0x80))
        case('data layout 6 at %d' % pos,
             lambda d, p=pos: d.__setitem__(p, (d[p] & 0xF1) | (6 << 1)))
        case('i_mode type 0 at %d' % pos,
             lambda d, p=pos: d.__setitem__(p + 5, d[p + 5] & 0x0F))
    for pos, end in img.regions['directories'][:6]:
        if end - pos < 12:
            continue
        case('dir nameoff0 = 1 at %d' % pos,
             lambda d, p=pos: struct.pack_into('<H', d, p + 8, 1))
        case('dir nameoff0 = 0xFFFF at %d' % pos,
             lambda d, p=pos: struct.pack_into('<H', d, p + 8, 0xFFFF))
        case('dirent nid far away at %d' % pos,
             lambda d, p=pos: struct.pack_into('<Q', d, p + 24, 1 << 40)
             if struct.unpack_from('<H', d, p + 8)[0] > 24 else
             struct.pack_into('<Q', d, p, 1 << 40))
    for pos, end in img.inline_xattrs[:6]:
        case('xattr shared count 255 at %d' % pos,
             lambda d, p=pos: d.__setitem__(p + 4, 255))
        first = pos + 12 + 4 * img.d[pos + 4]
        if first + 4 <= end:
            case('xattr entry value size 0xFFFF at %d' % first,
                 lambda d, p=first: struct.pack_into('<H', d, p + 2, 0xFFFF))
        if img.d[pos + 4]:
            case('shared xattr id beyond the image at %d' % pos,
                 lambda d, p=pos: struct.pack_into('<I', d, p + 12,
                                                   0x3FFFFFFF))
    for pos, end in img.regions['inodes'][:20]:
        nid = (pos - img.meta) // 32
        p0, isz, mode, layout, size, u, xsz = img.inode(nid)
        if mode & 0o170000 == 0o100000 and layout == 0 and size:
            case('file data beyond the image at %d' % pos,
                 lambda d, p=pos: struct.pack_into('<I', d, p + 16,
                                                   0x0FFFFFFF))
    res = runner.run_many(cases)
    for (what, _), r in zip(cases, res):
        if r is False:
            runner.failures += 1
            print('FAIL: %s: %s not detected' % (name, what))
    # the front end on a few of them: same verdict, exit 4
    for (what, data), r in list(zip(cases, res))[::8]:
        if r and runner.run_fsck(data, what) is False:
            runner.failures += 1
            print('FAIL: %s: fsck.img did not report %s' % (name, what))
    hit = sum(bool(r) for r in res)
    print('  %-16s targeted     %4d cases, %4d detected' %
          (name, len(cases), hit))
    return len(cases), hit


def main(argv):
    if len(argv) < 6:
        print(__doc__)
        return 2
    batch, fsck, work, seed = argv[1], argv[2], argv[3], int(argv[4])
    per_region = int(os.environ.get('CORRUPT_PER_REGION', '120'))
    runner = Runner(batch, fsck, work)
    rng = random.Random(seed)
    totals = {}
    tcases = thit = 0
    for path in argv[5:]:
        with open(path, 'rb') as f:
            img = Image(f.read())
        name = os.path.basename(path)
        print('%s: %d inodes, block size %d' %
              (name, len(img.regions['inodes']), img.bs))
        if runner.run_fsck(bytes(img.d), name + '/original') is not False:
            print('FAIL: %s: the original image is not clean' % name)
            runner.failures += 1
        random_mutants(img, runner, rng, name, per_region, totals)
        n, h = targeted(img, runner, name)
        tcases += n
        thit += h
    print('detection rate per region (random mutations, checksum fixed):')
    for region, (done, hit) in totals.items():
        print('  %-12s %5d mutants, %5d detected (%3d%%)' %
              (region, done, hit, 100 * hit // max(done, 1)))
    print('targeted structural corruptions: %d/%d detected' % (thit, tcases))
    print('%d fsck.img runs, %d failures' % (runner.runs, runner.failures))
    return 1 if runner.failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
