#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare dump.img with erofs-utils' dump.erofs on one image.

usage: vs_erofs.py DUMP IMAGE [EVERY]

With EVERY, only every EVERY-th path that is not a directory is compared
inode by inode (directories always are): one dump.erofs run per path adds
up on big trees.

dump.erofs (erofs-utils 1.5, 4 KiB blocks only) is an independent reader.
Both must agree on the superblock (magic, blocks, metadata and xattr start
blocks, root nid, inode count, epoch (its "created"), the feature names it
knows, UUID), and for every path (by --path, some by --nid) on size, nid,
link count, layout, inode size, xattr area size, owner, permission bits,
type and mtime; on directory entries (name, nid, type, "." and ".."); on
the block mapping of uncompressed data (-e) and the pcluster positions of
compressed data once the reader maps it; and on the counts of -S. Every
difference is printed; exit status 1 if any.
"""

import json
import os
import re
import subprocess
import sys
import time

FAILS = []
NOTES = []
PCLUSTERS = []

# dump.erofs 1.5 feature names -> ours. It does not name the features that
# came later (xattr_filter, 48bit, metabox, ...), so those are left out of
# the comparison.
FEATURES = {
    "sb_csum": "sb_chksum", "mtime": "mtime", "0padding": "zero_padding",
    "big_pcluster": "compr_cfgs", "compr_cfgs": "compr_cfgs",
    "chunked_file": "chunked_file", "device_table": "device_table",
    "ztailpacking": "ztailpacking", "fragments": "fragments",
    "dedupe": "fragments", "xattr_prefixes": "xattr_prefixes",
}

TYPES = {
    "regular file": "regular", "directory": "directory",
    "symlink file": "symlink", "char dev": "chardev",
    "block dev": "blockdev", "FIFO file": "fifo", "socket file": "socket",
}

FT = {1: "regular", 2: "directory", 3: "chardev", 4: "blockdev", 5: "fifo",
      6: "socket", 7: "symlink"}


def fail(msg):
    FAILS.append(msg)
    print("FAIL:", msg)


def expect(what, got, want):
    if got != want:
        fail("%s: dump.img %r, dump.erofs %r" % (what, got, want))


def run(cmd):
    env = dict(os.environ, TZ="UTC")
    p = subprocess.run(cmd, capture_output=True, timeout=60, env=env)
    return p.returncode, p.stdout.decode("utf-8", "surrogateescape"), \
        p.stderr.decode("utf-8", "replace")


def ours(dump, img, *opts):
    cmd = [dump, b"--json"] + [o if isinstance(o, bytes) else o.encode()
                               for o in opts] + [img]
    rc, out, err = run(cmd)
    if rc:
        fail("dump.img %r: exit %d: %s" % (opts, rc, err))
        return None
    return json.loads(out)


def theirs(img, *opts):
    rc, out, err = run([b"dump.erofs"] + list(opts) + [img])
    if rc or "<E>" in err:
        fail("dump.erofs %r: exit %d: %s" % (opts, rc, err))
    return out


def raw(s):
    """A JSON byte string back to bytes (frontend/json_str.h)."""
    return s.encode("utf-8", "surrogateescape")


def fields(text):
    """"Key: value" pairs of dump.erofs output (several per line too)."""
    out = {}
    for line in text.splitlines():
        if line.startswith("Filesystem "):
            k, _, v = line.partition(":")
            out[k.strip()] = v.strip()
            continue
        for m in re.finditer(r"([A-Za-z][A-Za-z -]*?):\s+(\S+)", line):
            out[m.group(1).strip()] = m.group(2)
    return out


def check_sb(dump, img):
    sb = ours(dump, img)["superblock"]
    f = fields(theirs(img, b"-s"))
    expect("magic", sb["magic"], int(f["Filesystem magic number"], 16))
    expect("blocks", sb["blocks"], int(f["Filesystem blocks"]))
    expect("meta_blkaddr", sb["meta_blkaddr"],
           int(f["Filesystem inode metadata start block"]))
    expect("xattr_blkaddr", sb["xattr_blkaddr"],
           int(f["Filesystem shared xattr metadata start block"]))
    expect("root_nid", sb["root_nid"], int(f["Filesystem root nid"]))
    expect("inodes", sb["inodes"], int(f["Filesystem inode count"]))
    # dump.erofs 1.5 shows the epoch field as the creation time (it
    # predates the separate build_time field).
    created = time.strptime(f["Filesystem created"], "%a %b %d %H:%M:%S %Y")
    expect("epoch", time.strftime("%Y-%m-%d %H:%M:%S",
                                  time.gmtime(sb["epoch"])),
           time.strftime("%Y-%m-%d %H:%M:%S", created))
    expect("uuid", sb["uuid"], f["Filesystem UUID"])
    want = sorted(FEATURES.get(n, "?" + n)
                  for n in f["Filesystem features"].split())
    known = set(FEATURES.values())
    expect("features", sorted(n for n in sb["features_compat"] +
                              sb["features_incompat"] if n in known), want)
    expect("block_size", sb["block_size"], 4096)
    return sb


def rwx(mode):
    return "".join(c if mode & (1 << (8 - i)) else "-"
                   for i, c in enumerate("rwxrwxrwx"))


def check_inode(dump, img, path, opt, arg):
    """Compare one inode; return our JSON inode."""
    doc = ours(dump, img, opt + arg)
    if doc is None:
        return None
    ino = doc["inode"]
    text = theirs(img, opt + arg)
    f = fields(text)
    what = path.decode("latin-1")
    m = re.search(r"^Size: \d+\s+On-disk size: \d+\s+(.*)$", text, re.M)
    expect(what + " type", ino["type"], TYPES.get(m.group(1)) if m else None)
    expect(what + " size", ino["size"], int(f.get("Size", -1)))
    expect(what + " nid", ino["nid"], int(f.get("NID", -1)))
    expect(what + " nlink", ino["nlink"], int(f.get("Links", -1)))
    expect(what + " layout", ino["layout"], int(f.get("Layout", -1)))
    expect(what + " inode size", ino["inode_size"],
           int(f.get("Inode size", -1)))
    expect(what + " xattr size", ino["xattr_size"],
           int(f.get("Xattr size", -1)))
    expect(what + " uid", ino["uid"], int(f.get("Uid", -1)))
    expect(what + " gid", ino["gid"], int(f.get("Gid", -1)))
    # dump.erofs 1.5 leaves out setuid, setgid and sticky.
    expect(what + " access", "%04o/%s" % (ino["mode"] & 0o777,
                                          rwx(ino["mode"])),
           f.get("Access"))
    m = re.search(r"^Timestamp: (\S+ \S+)$", text, re.M)
    iso = ino["mtime_iso"].replace("T", " ").rstrip("Z")
    expect(what + " mtime", iso, m.group(1) if m else None)
    return ino


def check_dir(dump, img, path, ino, parent_nid, ls):
    text = theirs(img, b"--path=" + path, b"--ls")
    got = {}
    for line in text.splitlines():
        m = re.match(r"^\s+(\d+)\s+(\d+)\s+(.*)$", line)
        if m:
            name = m.group(3).encode("utf-8", "surrogateescape")
            got[name] = (int(m.group(1)),
                                    FT.get(int(m.group(2))))
    what = path.decode("latin-1")
    expect(what + " '.'", got.pop(b".", None), (ino["nid"], "directory"))
    expect(what + " '..'", got.pop(b"..", None), (parent_nid, "directory"))
    want = {raw(e["name"]): (e["nid"], e["type"]) for e in ls}
    expect(what + " entries", want, got)


def erofs_extents(text):
    """(logical start, logical end, physical start) of dump.erofs -e."""
    out = []
    for m in re.finditer(r"^\s*\d+:\s+(\d+)\.\.\s*(\d+) \|\s*\d+ :\s+"
                         r"(\d+)\.\.", text, re.M):
        out.append(tuple(int(x) for x in m.groups()))
    return out


def check_extents(dump, img, path, ino, bs):
    what = path.decode("latin-1")
    theirs_ = erofs_extents(theirs(img, b"-e", b"--path=" + path))
    if ino["extents_error"] is not None:
        if ino["layout"] in (1, 3) and "not supported" in \
                ino["extents_error"]:
            NOTES.append(what)
            return
        fail(what + " extents: " + ino["extents_error"])
        return
    compressed = [x for x in ino["extents"] if x["kind"] == "compressed"]
    if compressed:
        PCLUSTERS.append(len(compressed))
        expect(what + " pclusters",
               [(x["logical"], x["pos"]) for x in compressed],
               [(lo, p) for lo, _, p in theirs_])
        return
    # Where each block (or the inline tail) of the file lives.
    def where(exts, size):
        out = {}
        for lo, hi, p in exts:
            for off in range(lo, min(hi, size), bs):
                out[off] = p + off - lo
        return out

    mine = [(x["logical"], x["logical"] + x["length"], x["pos"])
            for x in ino["extents"] if x["kind"] != "hole"]
    expect(what + " block map", where(mine, ino["size"]),
           where(theirs_, ino["size"]))


def check_stats(dump, img, types, compressed):
    st = ours(dump, img, "--stats")["stats"]
    f = fields(theirs(img, b"-S"))
    expect("total file count", st["paths"],
           int(f["Filesystem total file count"]))
    for name, key in (("regular file", "regular"), ("directory", "directory"),
                      ("char dev", "chardev"), ("block dev", "blockdev"),
                      ("FIFO file", "fifo"), ("SOCK file", "socket"),
                      ("symlink file", "symlink")):
        expect("paths of type " + key, types.get(key, 0),
               int(f["Filesystem %s count" % name]))
    expect("compressed files", compressed,
           int(f["Filesystem compressed files"]))


def main():
    dump, img = (a.encode() for a in sys.argv[1:3])
    every = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    count = 0
    sb = check_sb(dump, img)
    root = check_inode(dump, img, b"/", b"--path=", b"/")
    listing = ours(dump, img, "--ls", "-R")["ls"]
    nids = {b"/": sb["root_nid"]}
    types = {"directory": 1}
    compressed = 0
    for d in listing:
        base = raw(d["path"])
        parent = nids.get(os.path.dirname(base.rstrip(b"/")) or b"/",
                          sb["root_nid"])
        ino = root if base == b"/" else \
            check_inode(dump, img, base, b"--path=", base)
        if ino is not None:
            check_dir(dump, img, base, ino, parent if base != b"/" else
                      sb["root_nid"], d["entries"])
        for e in d["entries"]:
            p = base.rstrip(b"/") + b"/" + raw(e["name"])
            nids[p] = e["nid"]
            types[e["type"]] = types.get(e["type"], 0) + 1
            if e["type"] == "directory":
                continue
            count += 1
            if count % every:
                continue
            ino = check_inode(dump, img, p, b"--path=", p)
            if ino is None:
                continue
            if ino["layout"] in (1, 3):
                compressed += 1
            if e["type"] == "regular" and ino["size"]:
                check_extents(dump, img, p, ino, 4096)
    # By nid: every NID resolves to the same inode in both.
    for p, nid in list(nids.items())[::4 * every]:
        check_inode(dump, img, p, b"--nid=", b"%d" % nid)
    check_stats(dump, img, types, compressed)
    if NOTES:
        print("note: extents of %d compressed files not compared (the "
              "reader cannot map them yet)" % len(NOTES))
    print("%d paths compared (%d pclusters of %d compressed files), "
          "%d differences" % (len(nids), sum(PCLUSTERS), len(PCLUSTERS),
                              len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
