#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare two directory trees entry by entry.

usage: treediff.py [--mtime=SECONDS] [--no-owner] [--no-xattrs] A B

Compares, for every path: file type, permission bits (with setuid/setgid/
sticky), owner, mtime in nanoseconds (every entry, root included; with
--mtime all entries of B must have that time), size, content, symlink
target, device numbers, xattrs (names and values) and hard-link grouping
(paths sharing an inode in A must share one in B and vice versa).
Prints each difference and exits 1 if there is any.
"""
import hashlib
import os
import stat
import sys


def walk(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        rel = '' if rel == '.' else rel
        out[rel] = os.lstat(dirpath)
        for name in filenames + [d for d in dirnames
                                 if os.path.islink(os.path.join(dirpath, d))]:
            p = os.path.join(rel, name)
            out[p] = os.lstat(os.path.join(root, p))
    return out


def xattrs(path):
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return {}
    res = {}
    for n in names:
        try:
            res[n] = os.getxattr(path, n, follow_symlinks=False)
        except OSError as e:
            res[n] = 'error %d' % e.errno
    return res


def digest(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest()


def groups(tree):
    by_ino = {}
    for p, st in tree.items():
        if not stat.S_ISDIR(st.st_mode):
            by_ino.setdefault((st.st_dev, st.st_ino), []).append(p)
    return {p: tuple(sorted(v)) for v in by_ino.values() for p in v}


def main(argv):
    mtime = None
    owner = True
    check_xattrs = True
    args = []
    for a in argv[1:]:
        if a.startswith('--mtime='):
            mtime = int(a.split('=', 1)[1]) * 10**9
        elif a == '--no-owner':
            owner = False
        elif a == '--no-xattrs':
            check_xattrs = False
        else:
            args.append(a)
    if len(args) != 2:
        print(__doc__)
        return 2
    ra, rb = args
    ta, tb = walk(ra), walk(rb)
    ga, gb = groups(ta), groups(tb)
    diffs = []

    def diff(p, what):
        diffs.append('%s: %s' % (p or '/', what))

    for p in sorted(set(ta) | set(tb)):
        if p not in tb:
            diff(p, 'missing from ' + rb)
            continue
        if p not in ta:
            diff(p, 'extra in ' + rb)
            continue
        a, b = ta[p], tb[p]
        pa, pb = os.path.join(ra, p), os.path.join(rb, p)
        if stat.S_IFMT(a.st_mode) != stat.S_IFMT(b.st_mode):
            diff(p, 'type %o != %o' % (stat.S_IFMT(a.st_mode),
                                       stat.S_IFMT(b.st_mode)))
            continue
        if stat.S_IMODE(a.st_mode) != stat.S_IMODE(b.st_mode) and \
                not stat.S_ISLNK(a.st_mode):
            diff(p, 'mode %o != %o' % (stat.S_IMODE(a.st_mode),
                                       stat.S_IMODE(b.st_mode)))
        if owner and (a.st_uid, a.st_gid) != (b.st_uid, b.st_gid):
            diff(p, 'owner %d:%d != %d:%d' % (a.st_uid, a.st_gid,
                                              b.st_uid, b.st_gid))
        want = a.st_mtime_ns if mtime is None else mtime
        if want != b.st_mtime_ns:
            diff(p, 'mtime %d != %d' % (want, b.st_mtime_ns))
        if stat.S_ISREG(a.st_mode):
            if a.st_size != b.st_size:
                diff(p, 'size %d != %d' % (a.st_size, b.st_size))
            elif digest(pa) != digest(pb):
                diff(p, 'content differs')
        if stat.S_ISLNK(a.st_mode) and os.readlink(pa) != os.readlink(pb):
            diff(p, 'symlink %r != %r' % (os.readlink(pa), os.readlink(pb)))
        if (stat.S_ISCHR(a.st_mode) or stat.S_ISBLK(a.st_mode)) and \
                a.st_rdev != b.st_rdev:
            diff(p, 'rdev %x != %x' % (a.st_rdev, b.st_rdev))
        if check_xattrs and xattrs(pa) != xattrs(pb):
            diff(p, 'xattrs %r != %r' % (xattrs(pa), xattrs(pb)))
        if ga.get(p) != gb.get(p):
            diff(p, 'hard links %r != %r' % (ga.get(p), gb.get(p)))
    for d in diffs:
        print(d)
    print('treediff: %d entries, %d differences' % (len(ta), len(diffs)))
    return 1 if diffs else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
