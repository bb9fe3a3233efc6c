#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Layers for the flatten tests, and the OCI image layout holding them.

usage: layers.py OUTDIR [forward]
  writes OUTDIR/layer1.tar .. layerN.tar (lowest first) and, without
  "forward", the image layout OUTDIR/oci (tag "flat") for umoci, the
  reference extractor.

The default stack (three layers) covers: deleted files and directories
(whiteouts), an opaque directory, a directory replaced by a file (with
and without a whiteout) and, a layer later, by a directory again, a file
replaced by a directory, xattrs changed on a file and a directory, hard
links inside a layer, and hard links whose target a layer above deletes
or replaces (directly, through a chain of links, and to a symlink): the
links must keep the target's data. Every layer names each parent
directory it writes into, with the same metadata, as image builders do,
but for "meta", which layer 2 writes into without naming it: the
directory keeps layer 1's metadata (the layer image of layer 2 has an
implied directory there, which overlayfs shows instead).

"forward" writes two layers whose hard links name their target before it
comes in the stream (umoci cannot extract those: the test checks the
result itself).
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
    t.file("etc/keep", b"untouched\n", mode=0o600, uid=1000, gid=1000)
    t.dir("usr")
    t.dir("usr/bin")
    t.file("usr/bin/tool", b"#!/bin/sh\necho tool\n", mode=0o755,
           xattrs={"user.origin": "layer1"})
    t.hardlink("usr/bin/tool-link", "usr/bin/tool")
    t.hardlink("usr/bin/tool-gone", "usr/bin/tool")
    t.symlink("usr/bin/sh", "tool")
    # hidden targets: the links below outlive what they point at
    t.dir("data")
    t.file("data/orig", b"data of a deleted target\n" * 300, mode=0o640,
           uid=42, gid=43, xattrs={"user.kept": "with the link"})
    t.dir("keep")
    t.hardlink("keep/link", "data/orig")
    t.hardlink("keep/link2", "data/orig")
    t.file("data/replaced", b"old content, still behind a link\n")
    t.hardlink("keep/old", "data/replaced")
    t.file("data/chain-a", b"reached through a chain of links\n")
    t.hardlink("data/chain-b", "data/chain-a")
    t.hardlink("keep/chain-c", "data/chain-b")
    t.symlink("data/sym", "../etc/hostname")
    t.hardlink("keep/symlink", "data/sym")
    t.dir("gonedir")
    t.dir("gonedir/sub")
    t.file("gonedir/sub/f", b"in a deleted directory\n")
    t.dir("opq")
    t.file("opq/old1", b"hidden by the opaque marker\n")
    t.dir("opq/olddir")
    t.file("opq/olddir/x", b"hidden too\n")
    # a directory replaced by a file, with and without a whiteout
    t.dir("d2f")
    t.file("d2f/child", b"gone with its directory\n")
    t.dir("d2f-wh")
    t.file("d2f-wh/child", b"gone with its directory\n")
    # a directory, then a file (layer 2), then a directory again (3)
    t.dir("back", mode=0o700)
    t.file("back/a", b"from the first directory\n")
    t.file("f2d", b"a file in layer 1, a directory in layer 2\n")
    t.dir("var", xattrs={"trusted.layer": "one"})
    t.file("var/data", bytes(range(256)) * 64)
    # layer 2 writes into it without an entry of its own: it stays as is
    t.dir("meta", mode=0o700, uid=7, gid=8, mtime=1600000000)
    t.file("meta/old", b"from layer 1\n")
    return t.bytes()


def layer2():
    t = Layer()
    t.dir("etc")
    t.whiteout("etc/gone")
    t.file("etc/hostname", b"layer two\n")
    t.dir("usr")
    t.dir("usr/bin")
    # the same file, new content and xattrs: its old links keep layer 1's
    t.file("usr/bin/tool", b"#!/bin/sh\necho tool v2\n", mode=0o755,
           xattrs={"user.origin": "layer2", "user.extra": "x"})
    t.whiteout("usr/bin/tool-gone")
    t.dir("data")
    t.whiteout("data/orig")
    t.file("data/replaced", b"new content\n")
    t.whiteout("data/chain-a")
    t.whiteout("data/chain-b")
    t.whiteout("data/sym")
    t.whiteout("gonedir")
    t.dir("opq")
    t.opaque("opq")
    t.file("opq/new", b"only this one is visible\n")
    t.file("d2f", b"was a directory\n")
    t.whiteout("d2f-wh")
    t.file("d2f-wh", b"was a directory too\n")
    t.file("back", b"a file for one layer\n")
    t.dir("f2d", mode=0o750)
    t.file("f2d/inside", b"a directory now\n")
    t.dir("srv")
    t.file("srv/a", b"hard linked in layer 2\n")
    t.hardlink("srv/b", "srv/a")
    t.file("srv/temp", b"deleted by layer 3\n")
    t.file("meta/new", b"from layer 2, no entry for meta\n")
    return t.bytes()


def layer3():
    t = Layer()
    # gone in layer 2, back in layer 3 as a file
    t.file("gonedir", b"was a directory\n", mode=0o640)
    t.dir("back", mode=0o755)
    t.file("back/b", b"the second directory\n")
    t.dir("srv")
    t.whiteout("srv/temp")
    t.file("srv/c", b"hard linked in layer 3\n", uid=5, gid=6)
    t.hardlink("usr-c", "srv/c")
    t.dir("etc")
    t.file("etc/gone", b"back again\n")
    t.dir("var", xattrs={"trusted.layer": "three"})
    return t.bytes()


def forward1():
    t = Layer()
    t.dir("f")
    # each link comes before its target
    t.hardlink("f/link", "f/target")
    t.hardlink("f/link2", "f/target")
    t.file("f/target", b"named before it came\n" * 100, mode=0o604,
           uid=7, gid=8)
    t.hardlink("f/vis-link", "f/vis-target")
    t.file("f/vis-target", b"both visible\n")
    return t.bytes()


def forward2():
    t = Layer()
    t.dir("f")
    t.whiteout("f/target")
    return t.bytes()


def main():
    out = sys.argv[1]
    forward = len(sys.argv) > 2 and sys.argv[2] == "forward"
    layers = [forward1(), forward2()] if forward else \
        [layer1(), layer2(), layer3()]
    for i, data in enumerate(layers, 1):
        with open(os.path.join(out, "layer%d.tar" % i), "wb") as f:
            f.write(data)
    if not forward:
        write_layout(os.path.join(out, "oci"), layers, "flat")


if __name__ == "__main__":
    main()
