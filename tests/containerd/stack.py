#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Three OCI layers that exercise what a layer stack must get right, and
the OCI image layout holding them (for umoci, the reference extractor).

usage: stack.py OUTDIR
  writes OUTDIR/layer1.tar .. layer3.tar (lowest first) and the image
  layout OUTDIR/oci (tag "stack").

Layer 1 lays out a base tree. Layer 2 deletes a file, a directory and a
hard link of layer 1 (OCI whiteouts), makes a directory opaque, deletes
then recreates a path as another type in the same layer, changes a file's
xattrs, and adds hard links of its own. Layer 3 recreates a path layer 2
deleted, deletes something layer 2 added, and turns a directory into a
file. Hard links stay inside one layer (a layer image cannot link into
another one). Every layer names each parent directory it writes into, with the
same metadata, as image builders do.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "helpers"))
from layertar import Layer, write_layout  # noqa: E402

def layer1():
    t = Layer()
    t.dir("etc")
    t.file("etc/hostname", b"base\n")
    t.file("etc/gone", b"deleted by layer 2\n")
    t.file("etc/secret", b"0600 and owned\n", mode=0o600, uid=1000,
           gid=1000)
    t.dir("usr")
    t.dir("usr/bin")
    t.file("usr/bin/tool", b"#!/bin/sh\necho tool\n", mode=0o755,
           xattrs={"user.origin": "layer1"})
    t.hardlink("usr/bin/tool-link", "usr/bin/tool")
    t.hardlink("usr/bin/tool-gone", "usr/bin/tool")
    t.symlink("usr/bin/sh", "tool")
    t.dir("gonedir")
    t.dir("gonedir/sub")
    t.file("gonedir/sub/f", b"in a deleted directory\n")
    t.dir("opq")
    t.file("opq/old1", b"hidden by the opaque marker\n")
    t.dir("opq/olddir")
    t.file("opq/olddir/x", b"hidden too\n")
    t.file("recreate", b"a file in layer 1, a directory in layer 2\n")
    t.dir("var", xattrs={"trusted.layer": "one"})
    t.file("var/data", bytes(range(256)) * 64)
    return t.bytes()


def layer2():
    t = Layer()
    t.dir("etc")
    t.whiteout("etc/gone")
    t.file("etc/hostname", b"layer two\n")
    t.dir("usr")
    t.dir("usr/bin")
    # the same file, new content and new xattrs; its old links keep layer
    # 1's inode below
    t.file("usr/bin/tool", b"#!/bin/sh\necho tool v2\n", mode=0o755,
           xattrs={"user.origin": "layer2", "user.extra": "x"})
    t.whiteout("usr/bin/tool-gone")
    t.whiteout("gonedir")
    t.dir("opq")
    t.opaque("opq")
    t.file("opq/new", b"only this one is visible\n")
    # deleted, then recreated as a directory, in the same layer
    t.whiteout("recreate")
    t.dir("recreate", mode=0o750)
    t.file("recreate/inside", b"recreated\n")
    t.dir("srv")
    t.file("srv/a", b"hard linked in layer 2\n")
    t.hardlink("srv/b", "srv/a")
    t.file("srv/temp", b"deleted by layer 3\n")
    return t.bytes()


def layer3():
    t = Layer()
    # gone in layer 2, back in layer 3 as a file
    t.file("gonedir", b"was a directory\n", mode=0o640)
    t.dir("srv")
    t.whiteout("srv/temp")
    t.file("srv/c", b"hard linked in layer 3\n", uid=5, gid=6)
    t.hardlink("usr-c", "srv/c")
    t.dir("etc")
    t.file("etc/gone", b"back again\n")
    t.dir("var", xattrs={"trusted.layer": "three"})
    return t.bytes()


def main():
    out = sys.argv[1]
    layers = [layer1(), layer2(), layer3()]
    for i, data in enumerate(layers, 1):
        with open(os.path.join(out, "layer%d.tar" % i), "wb") as f:
            f.write(data)
    write_layout(os.path.join(out, "oci"), layers, "stack")


if __name__ == "__main__":
    main()
