#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check that dump.img tells the facts an image was built from.

usage: checkfacts.py DUMP TAR IMAGE [--uuid U] [--label L] [--blocksize N]
                     [--build-time T]

TAR is the layer IMAGE was made from (mkfs.img). The tar is read with
Python's tarfile, independently of the library, and every entry is
compared with dump.img --json: superblock (uuid, label, block size, build
time, inode count), and for each path (--ls -R) its type, mode, uid, gid,
size, mtime (seconds and nanoseconds), link count, symlink target and
device numbers. Each inode with xattrs, one of each type and every Nth
path also go through --path (xattr names and values, extents covering the
file) and a few through --nid; one file of each distinct size through
--cat (raw, some base64) for its contents. Spawning dump.img per path
would be slow on big trees, hence the selection.
The statistics view (--stats) is checked against counts made from the tar.
Every difference is printed; the exit status is 1 if there was any.
"""

import argparse
import base64
import decimal
import hashlib
import json
import posixpath
import stat
import subprocess
import sys
import tarfile

FAILS = []
NOTES = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL:", msg)


def expect(what, got, want):
    if got != want:
        fail("%s: got %r, want %r" % (what, got, want))


def raw(s):
    """A JSON byte string back to bytes: UTF-8, with each byte outside
    valid UTF-8 as a lone surrogate U+DC80 + byte (frontend/json_str.h)."""
    return None if s is None else s.encode("utf-8", "surrogateescape")


def dump(args, *opts):
    cmd = [args.dump, "--json"] + list(opts) + [args.image]
    cmd = [c if isinstance(c, bytes) else c.encode() for c in cmd]
    p = subprocess.run(cmd, capture_output=True, timeout=60)
    if p.returncode != 0:
        fail("%r exited %d: %s" % (opts, p.returncode, p.stderr.decode()))
        return None
    return json.loads(p.stdout)


# --- the source tar ---

class ImpliedRoot:
    """The root directory of a tar that has no entry for it."""

    kind = stat.S_IFDIR
    implied = True
    xattrs = {}
    target = None
    rdev = None

    def __init__(self):
        self.paths = [b"/"]
        self.subdirs = 0


class Src:
    """What the tar says one inode is."""

    implied = False

    def __init__(self, ti, tf):
        self.kind = {
            tarfile.REGTYPE: stat.S_IFREG, tarfile.AREGTYPE: stat.S_IFREG,
            tarfile.DIRTYPE: stat.S_IFDIR, tarfile.SYMTYPE: stat.S_IFLNK,
            tarfile.CHRTYPE: stat.S_IFCHR, tarfile.BLKTYPE: stat.S_IFBLK,
            tarfile.FIFOTYPE: stat.S_IFIFO,
        }[ti.type]
        self.mode = self.kind | ti.mode
        self.uid = ti.uid
        self.gid = ti.gid
        self.mtime = mtime_of(ti)
        self.target = None
        self.rdev = None
        self.data = b""
        if ti.issym():
            self.target = ti.linkname.encode("utf-8", "surrogateescape")
        if ti.ischr() or ti.isblk():
            self.rdev = (ti.devmajor, ti.devminor)
        if ti.isreg():
            self.data = tf.extractfile(ti).read()
        self.xattrs = {}
        for k, v in ti.pax_headers.items():
            if k.startswith("SCHILY.xattr."):
                name = k[len("SCHILY.xattr."):]
                self.xattrs[name.encode("utf-8", "surrogateescape")] = \
                    v.encode("utf-8", "surrogateescape")
        self.paths = []
        self.subdirs = 0

    def size(self):
        if self.kind == stat.S_IFLNK:
            return len(self.target)
        return len(self.data)


def mtime_of(ti):
    """(seconds, nanoseconds) of a member, exact for pax mtimes."""
    s = ti.pax_headers.get("mtime")
    if s is None:
        return (int(ti.mtime), 0)
    d = decimal.Decimal(s)
    sec = int(d.to_integral_value(rounding=decimal.ROUND_FLOOR))
    return (sec, int((d - sec) * 1000000000))


def norm(name):
    """Tar member name to an image path (bytes, "/..." form)."""
    p = posixpath.normpath("/" + name.encode("utf-8", "surrogateescape")
                           .decode("latin-1"))
    return p.encode("latin-1")


def read_tar(path):
    """{path: Src}, hard links sharing one Src object."""
    tree = {}
    with tarfile.open(path, errors="surrogateescape") as tf:
        for ti in tf:
            p = norm(ti.name)
            if ti.islnk():
                src = tree[norm(ti.linkname)]
            else:
                src = Src(ti, tf)
            src.paths.append(p)
            tree[p] = src
    if b"/" not in tree:
        tree[b"/"] = ImpliedRoot()
    for p, src in tree.items():
        if src.kind == stat.S_IFDIR and p != b"/":
            parent = tree.get(posixpath.dirname(p))
            if parent is not None:
                parent.subdirs += 1
    return tree


# --- the image as dump.img shows it ---

def listing(args):
    """{path: ls entry} from --ls -R, plus the root's nid."""
    doc = dump(args, "--ls", "-R")
    out = {}
    if doc is None:
        return out
    for d in doc["ls"]:
        base = raw(d["path"])
        for e in d["entries"]:
            p = (base.rstrip(b"/") + b"/" + raw(e["name"]))
            out[p] = e
    return out


def check_basics(what, e, src):
    if src.implied:
        # mkfs chooses these; only the structure is known
        expect(what + " type", e["type"], "directory")
        expect(what + " nlink", e["nlink"], 2 + src.subdirs)
        return
    expect(what + " mode", e["mode"], src.mode)
    expect(what + " mode_string", e["mode_string"],
           stat.filemode(src.mode))
    expect(what + " permissions", e["permissions"],
           "%04o" % stat.S_IMODE(src.mode))
    expect(what + " uid", e["uid"], src.uid)
    expect(what + " gid", e["gid"], src.gid)
    expect(what + " mtime", (e["mtime"], e["mtime_nsec"]), src.mtime)
    if src.kind == stat.S_IFDIR:
        expect(what + " nlink", e["nlink"], 2 + src.subdirs)
    else:
        expect(what + " nlink", e["nlink"], len(src.paths))
        expect(what + " size", e["size"], src.size())
    if src.rdev:
        expect(what + " rdev", (e["rdev"]["major"], e["rdev"]["minor"]),
               src.rdev)
    else:
        expect(what + " rdev", e["rdev"], None)


def check_entry(what, e, src):
    """Facts every listing entry carries."""
    check_basics(what, e, src)
    expect(what + " target", raw(e["target"]), src.target)


def check_inode(args, path, src, ls_entry):
    what = path.decode("latin-1")
    doc = dump(args, b"--path=" + path)
    if doc is None:
        return
    ino = doc["inode"]
    check_entry(what, ino, src)
    expect(what + " path", raw(ino["path"]), path)
    if ls_entry is not None:
        expect(what + " nid (ls)", ino["nid"], ls_entry["nid"])
    expect(what + " target_error", ino["target_error"], None)
    got = {raw(x["name"]): raw(x["value"]) for x in ino["xattrs"]}
    expect(what + " xattrs", got, src.xattrs)
    for x in ino["xattrs"]:
        expect(what + " xattr value_size", x["value_size"],
               len(raw(x["value"])))
    expect(what + " xattrs_error", ino["xattrs_error"], None)
    if src.kind == stat.S_IFREG and ino["extents_error"] is None:
        covered = sum(x["length"] for x in ino["extents"])
        expect(what + " extents cover the size", covered, len(src.data))
        at = 0
        for x in ino["extents"]:
            expect(what + " extent at %d" % at, x["logical"], at)
            at = x["logical"] + x["length"]


def check_cat(args, path, src, b64):
    what = path.decode("latin-1")
    cmd = [args.dump, b"--cat=" + path, args.image]
    p = subprocess.run(cmd, capture_output=True, timeout=60)
    if p.returncode != 0 and unsupported(args, path, p.stderr):
        NOTES.append(what)
        return
    if p.returncode != 0:
        fail("--cat=%s exited %d: %s" % (what, p.returncode,
                                          p.stderr.decode()))
        return
    expect(what + " contents (sha256)", hashlib.sha256(p.stdout).hexdigest(),
           hashlib.sha256(src.data).hexdigest())
    if b64:
        doc = dump(args, b"--cat=" + path)
        if doc is not None:
            c = doc["cat"]
            expect(what + " cat size", c["size"], len(src.data))
            expect(what + " cat base64", base64.b64decode(c["data"]),
                   src.data)


def unsupported(args, path, stderr):
    """Did --cat fail only because the reader cannot decompress yet?"""
    if b"not supported" not in stderr:
        return False
    doc = dump(args, b"--path=" + path)
    return doc is not None and doc["inode"]["layout"] in (1, 3)


def check_nid(args, path, nid, src):
    what = "nid %d (%s)" % (nid, path.decode("latin-1"))
    doc = dump(args, "--nid=%d" % nid)
    if doc is not None:
        check_basics(what, doc["inode"], src)
        expect(what + " path", doc["inode"]["path"], None)


def check_superblock(args, tree, nr_inodes):
    doc = dump(args)
    if doc is None:
        return None
    sb = doc["superblock"]
    if args.uuid:
        expect("uuid", sb["uuid"], args.uuid)
    if args.label is not None:
        expect("label", raw(sb["label"]), args.label.encode())
    if args.blocksize:
        expect("block_size", sb["block_size"], args.blocksize)
        expect("blkszbits", 1 << sb["blkszbits"], args.blocksize)
    if args.build_time is not None:
        expect("epoch + build_time", sb["epoch"] + sb["build_time"],
               args.build_time)
    # the packed inode (fragments) counts too, though no path leads to it
    expect("inodes", sb["inodes"], nr_inodes + (1 if sb["packed_nid"] else 0))
    expect("checksum", sb["checksum"]["status"] in ("ok", "absent"), True)
    return sb


def check_stats(args, tree, inodes):
    doc = dump(args, "--stats")
    if doc is None:
        return
    st = doc["stats"]
    expect("stats inodes", st["inodes"], len(inodes))
    expect("stats paths", st["paths"], len(tree))
    expect("stats hardlinks", st["hardlinks"],
           sum(len(s.paths) - 1 for s in inodes))
    names = {stat.S_IFREG: "regular", stat.S_IFDIR: "directory",
             stat.S_IFLNK: "symlink", stat.S_IFCHR: "chardev",
             stat.S_IFBLK: "blockdev", stat.S_IFIFO: "fifo"}
    for kind, name in names.items():
        expect("stats types." + name, st["types"][name],
               sum(1 for s in inodes if s.kind == kind))
    regs = [s for s in inodes if s.kind == stat.S_IFREG]
    expect("stats file_bytes", st["file_bytes"],
           sum(len(s.data) for s in regs))
    expect("stats max_file_size", st["max_file_size"],
           max((len(s.data) for s in regs), default=0))
    hist = {}
    for s in regs:
        hist[len(s.data).bit_length()] = hist.get(len(s.data).bit_length(),
                                                  0) + 1
    for k, b in enumerate(st["size_histogram"]):
        lo = 0 if k == 0 else 1 << (k - 1)
        hi = 0 if k == 0 else (1 << k) - 1
        expect("stats histogram bounds %d" % k, (b["min"], b["max"]),
               (lo, hi))
        expect("stats histogram count %d" % k, b["count"], hist.get(k, 0))
    expect("stats histogram length", len(st["size_histogram"]),
           max(hist) + 1 if hist else 1)
    expect("stats data+metadata+other", st["data_bytes"] +
           st["metadata_bytes"] + st["other_bytes"] >= st["image_bytes"],
           True)
    # Entries per directory, from the tar.
    entries = {p: 0 for p, s in tree.items() if s.kind == stat.S_IFDIR}
    for p in tree:
        if p != b"/":
            d = posixpath.dirname(p)
            entries[d] = entries.get(d, 0) + 1
    want = sorted(entries.values(), reverse=True)[:10]
    expect("stats largest_dirs counts",
           [d["entries"] for d in st["largest_dirs"]], want)
    for d in st["largest_dirs"]:
        expect("stats largest_dirs %s" % d["path"],
               entries.get(raw(d["path"]), 0), d["entries"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("tar")
    ap.add_argument("image")
    ap.add_argument("--uuid")
    ap.add_argument("--label")
    ap.add_argument("--blocksize", type=int)
    ap.add_argument("--build-time", type=int)
    ap.add_argument("--every", type=int, default=10,
                    help="show every Nth path with --path too")
    args = ap.parse_args()
    args.dump = args.dump.encode()
    args.image = args.image.encode()

    tree = read_tar(args.tar)
    # Parents the tar implies but never lists (the root aside).
    for p in list(tree):
        if posixpath.dirname(p) not in tree:
            fail("the tar implies %r: use tars that list every directory"
                 % posixpath.dirname(p))
    inodes = list({id(s): s for s in tree.values()}.values())
    check_superblock(args, tree, len(inodes))
    # Every path through one listing; the costlier views for a selection
    # that covers every type, every xattr and every distinct file size.
    ls = listing(args)
    expect("paths listed", sorted(ls), sorted(p for p in tree if p != b"/"))
    for p, e in sorted(ls.items()):
        if p in tree:
            check_entry(p.decode("latin-1"), e, tree[p])
    kinds, sizes, nids = set(), set(), {}
    for i, (p, src) in enumerate(sorted(tree.items())):
        pick = src.xattrs or src.kind not in kinds or i % args.every == 0
        kinds.add(src.kind)
        if pick:
            check_inode(args, p, src, ls.get(p))
        if src.kind == stat.S_IFREG and len(src.data) not in sizes:
            sizes.add(len(src.data))
            check_cat(args, p, src, len(sizes) % 4 == 1)
        if p in ls:
            if id(src) in nids:
                expect("%r: nid shared by hard links" % p, ls[p]["nid"],
                       nids[id(src)])
            nids[id(src)] = ls[p]["nid"]
    for p, src in sorted(tree.items())[:: max(1, len(tree) // 4)]:
        if id(src) in nids:
            check_nid(args, p, nids[id(src)], src)
    check_stats(args, tree, inodes)
    if NOTES:
        print("note: contents of %d compressed files not compared (the "
              "reader cannot decompress yet)" % len(NOTES))
    print("%d paths, %d inodes checked, %d differences" %
          (len(tree), len(inodes), len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
