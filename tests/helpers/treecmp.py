#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare two directory trees entry by entry.

usage: treecmp.py [--whiteouts] [--skip-root] EXPECTED ACTUAL [ACTUAL...]

EXPECTED is usually a bsdtar extraction of a tar layer, ACTUAL the same
layer converted to an image and mounted (several ACTUAL trees, e.g. the
same image mounted in different ways, are each compared with EXPECTED,
which is read once). For every path both trees must
agree on: file type, permission bits (with setuid/setgid/sticky), uid, gid,
size, mtime (seconds and nanoseconds), content, symlink target, device
numbers, every xattr (name and value, trusted.* and system.posix_acl_*
included), link count and hard-link grouping. Directories are compared
without their size, which depends on the filesystem.

--whiteouts  EXPECTED holds the layer's OCI whiteouts verbatim; compare
             as if converted for overlayfs: "D/.wh.NAME" becomes the char
             device 0:0 "D/NAME" and D gets trusted.overlay.origin = "";
             "D/.wh..wh..opq" disappears and D gets trusted.overlay.opaque
             = "y". For the whiteout devices only type, device number, size
             and xattrs are compared.
--skip-root  do not compare the root directory's mode, owner and mtime
             (the tar had no entry for it); its xattrs are still compared.

Every difference is printed; the exit status is 1 if there was any, 2 on
usage errors.
"""

import argparse
import errno
import os
import stat
import sys

WH_PREFIX = b".wh."
WH_OPAQUE = b".wh..wh..opq"
OPAQUE_XATTR = b"trusted.overlay.opaque"
ORIGIN_XATTR = b"trusted.overlay.origin"
CHUNK = 1 << 20


class Entry:
    __slots__ = ("path", "src", "kind", "perm", "uid", "gid", "size",
                 "mtime_ns", "rdev", "target", "xattrs", "nlink", "ino",
                 "whiteout")

    def __init__(self, rel, src, st):
        self.path = rel
        self.src = src
        self.kind = stat.S_IFMT(st.st_mode)
        self.perm = stat.S_IMODE(st.st_mode)
        self.uid = st.st_uid
        self.gid = st.st_gid
        self.size = st.st_size
        self.mtime_ns = st.st_mtime_ns
        self.rdev = (os.major(st.st_rdev), os.minor(st.st_rdev))
        self.nlink = st.st_nlink
        self.ino = (st.st_dev, st.st_ino)
        self.target = os.readlink(src) if self.kind == stat.S_IFLNK else None
        self.xattrs = read_xattrs(src)
        self.whiteout = False


def read_xattrs(path):
    out = {}
    for name in os.listxattr(path, follow_symlinks=False):
        key = os.fsencode(name)
        out[key] = os.getxattr(path, name, follow_symlinks=False)
    return out


def scan(root):
    """Return {relative path (bytes): Entry}; the root is b"."."""
    root = os.fsencode(root)
    tree = {b".": Entry(b".", root, os.lstat(root))}
    stack = [(root, b"")]
    while stack:
        absdir, reldir = stack.pop()
        with os.scandir(absdir) as it:
            for de in it:
                rel = reldir + de.name if not reldir else \
                    reldir + b"/" + de.name
                st = de.stat(follow_symlinks=False)
                tree[rel] = Entry(rel, de.path, st)
                if stat.S_ISDIR(st.st_mode):
                    stack.append((de.path, rel))
    return tree


def parent_of(rel):
    i = rel.rfind(b"/")
    return b"." if i < 0 else rel[:i]


def base_of(rel):
    return rel[rel.rfind(b"/") + 1:]


def apply_whiteouts(tree):
    """Rewrite an extracted layer the way overlay whiteout conversion does."""
    for rel in sorted(tree):
        name = base_of(rel)
        if not name.startswith(WH_PREFIX):
            continue
        e = tree.pop(rel)
        parent = tree[parent_of(rel)]
        if name == WH_OPAQUE:
            parent.xattrs[OPAQUE_XATTR] = b"y"
            continue
        parent.xattrs[ORIGIN_XATTR] = b""
        target = name[len(WH_PREFIX):]
        newrel = target if parent.path == b"." else \
            parent.path + b"/" + target
        e.path = newrel
        e.kind = stat.S_IFCHR
        e.rdev = (0, 0)
        e.size = 0
        e.nlink = 1
        e.ino = ("whiteout", newrel)
        e.xattrs = {}
        e.whiteout = True
        tree[newrel] = e


def link_groups(tree):
    groups = {}
    for e in tree.values():
        if e.kind != stat.S_IFDIR:
            groups.setdefault(e.ino, []).append(e.path)
    return {p: frozenset(g) for g in groups.values() for p in g}


def show(v):
    if isinstance(v, bytes):
        try:
            s = v.decode()
            if s.isprintable():
                return repr(s)
        except UnicodeDecodeError:
            pass
        return "0x" + v.hex() if len(v) <= 64 else \
            "0x%s... (%d bytes)" % (v[:32].hex(), len(v))
    return str(v)


KIND_NAMES = {
    stat.S_IFREG: "file", stat.S_IFDIR: "dir", stat.S_IFLNK: "symlink",
    stat.S_IFCHR: "chardev", stat.S_IFBLK: "blockdev",
    stat.S_IFIFO: "fifo", stat.S_IFSOCK: "socket",
}


def data_segments(fd, size):
    """[(start, end)] that may hold data; holes (SEEK_HOLE) read as zeros."""
    segs = []
    off = 0
    try:
        while off < size:
            start = os.lseek(fd, off, os.SEEK_DATA)
            end = min(os.lseek(fd, start, os.SEEK_HOLE), size)
            segs.append((start, end))
            off = end
    except OSError as e:
        if e.errno != errno.ENXIO:  # ENXIO: no data past off
            return [(0, size)]
    return segs


def union(a, b):
    out = []
    for start, end in sorted(a + b):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def compare_content(exp, act, bufs):
    """Return None if both files hold the same bytes, else a description.

    Ranges that are holes in both files are skipped: both read as zeros.
    Everything else is read from both and compared.
    """
    ba, bb = bufs
    va, vb = memoryview(ba), memoryview(bb)
    with open(exp.src, "rb", buffering=0) as fe, \
            open(act.src, "rb", buffering=0) as fa:
        segs = union(data_segments(fe.fileno(), exp.size),
                     data_segments(fa.fileno(), act.size))
        for start, end in segs:
            fe.seek(start)
            fa.seek(start)
            off = start
            while off < end:
                # reused buffers: fresh 1 MiB objects per read cost more
                # than the reads themselves
                n = min(CHUNK, end - off)
                na = fe.readinto(va[:n])
                nb = fa.readinto(vb[:n])
                if na != n or nb != n or (ba != bb if n == CHUNK else
                                          ba[:n] != bb[:n]):
                    m = min(na, nb)
                    i = next((k for k in range(m) if ba[k] != bb[k]), m)
                    return "content differs at offset %d" % (off + i)
                off += n
    return None


class Comparer:
    def __init__(self, skip_root):
        self.skip_root = skip_root
        self.diffs = 0
        self.bufs = (bytearray(CHUNK), bytearray(CHUNK))

    def diff(self, path, what):
        self.diffs += 1
        print("%s: %s" % (show(path), what))

    def field(self, path, name, exp, act):
        if exp != act:
            self.diff(path, "%s: expected %s, actual %s" %
                      (name, show(exp), show(act)))

    def xattrs(self, e, a):
        for k in sorted(set(e.xattrs) | set(a.xattrs)):
            if k not in a.xattrs:
                self.diff(e.path, "xattr %s missing" % show(k))
            elif k not in e.xattrs:
                self.diff(e.path, "unexpected xattr %s = %s" %
                          (show(k), show(a.xattrs[k])))
            else:
                self.field(e.path, "xattr " + show(k), e.xattrs[k],
                           a.xattrs[k])

    def entry(self, e, a, egroups, agroups):
        p = e.path
        if e.kind != a.kind:
            self.diff(p, "type: expected %s, actual %s" %
                      (KIND_NAMES.get(e.kind, e.kind),
                       KIND_NAMES.get(a.kind, a.kind)))
            return
        self.xattrs(e, a)
        if e.kind in (stat.S_IFCHR, stat.S_IFBLK):
            self.field(p, "device", e.rdev, a.rdev)
        if e.whiteout:
            self.field(p, "size", 0, a.size)
            return
        if p != b"." or not self.skip_root:
            self.field(p, "mode", oct(e.perm), oct(a.perm))
            self.field(p, "uid", e.uid, a.uid)
            self.field(p, "gid", e.gid, a.gid)
            self.field(p, "mtime", e.mtime_ns // 10**9, a.mtime_ns // 10**9)
            self.field(p, "mtime nsec", e.mtime_ns % 10**9,
                       a.mtime_ns % 10**9)
        if e.kind == stat.S_IFDIR:
            # ext4 reports 1 once a directory has too many subdirectories
            if e.nlink >= 2:
                self.field(p, "nlink", e.nlink, a.nlink)
            return
        self.field(p, "nlink", e.nlink, a.nlink)
        self.field(p, "hard links", sorted(egroups[p]), sorted(agroups[p]))
        self.field(p, "size", e.size, a.size)
        if e.kind == stat.S_IFLNK:
            self.field(p, "symlink target", e.target, a.target)
        elif e.kind == stat.S_IFREG and e.size == a.size:
            why = compare_content(e, a, self.bufs)
            if why:
                self.diff(p, why)

    def trees(self, exp, act):
        egroups = link_groups(exp)
        agroups = link_groups(act)
        for p in sorted(set(exp) | set(act)):
            if p not in act:
                self.diff(p, "missing in image (%s)" %
                          KIND_NAMES.get(exp[p].kind, "?"))
            elif p not in exp:
                self.diff(p, "unexpected in image (%s)" %
                          KIND_NAMES.get(act[p].kind, "?"))
            else:
                self.entry(exp[p], act[p], egroups, agroups)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--whiteouts", action="store_true")
    ap.add_argument("--skip-root", action="store_true")
    ap.add_argument("expected")
    ap.add_argument("actual", nargs="+")
    args = ap.parse_args()

    exp = scan(args.expected)
    if args.whiteouts:
        apply_whiteouts(exp)
    failed = False
    for actual in args.actual:
        if len(args.actual) > 1:
            print("== %s" % actual)
        act = scan(actual)
        c = Comparer(args.skip_root)
        c.trees(exp, act)
        print("treecmp: %d entries expected, %d in %s, %d difference(s)" %
              (len(exp), len(act), actual, c.diffs))
        failed = failed or c.diffs > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
