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
import hashlib
import io
import json
import os
import sys
import tarfile

MTIME = 1700000000


def entry(name, kind=tarfile.REGTYPE, mode=0o644, uid=0, gid=0,
          xattrs=None, link=""):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = mode
    ti.uid = uid
    ti.gid = gid
    ti.mtime = MTIME
    ti.linkname = link
    if xattrs:
        ti.pax_headers = {"SCHILY.xattr." + k: v for k, v in xattrs.items()}
    return ti


class Layer:
    def __init__(self):
        self.buf = io.BytesIO()
        self.tar = tarfile.open(fileobj=self.buf, mode="w",
                                format=tarfile.PAX_FORMAT)

    def dir(self, name, mode=0o755, **kw):
        self.tar.addfile(entry(name, tarfile.DIRTYPE, mode, **kw))

    def file(self, name, data, mode=0o644, **kw):
        ti = entry(name, mode=mode, **kw)
        ti.size = len(data)
        self.tar.addfile(ti, io.BytesIO(data))

    def symlink(self, name, target):
        self.tar.addfile(entry(name, tarfile.SYMTYPE, 0o777, link=target))

    def hardlink(self, name, target):
        self.tar.addfile(entry(name, tarfile.LNKTYPE, link=target))

    def whiteout(self, name):
        d, _, base = name.rpartition("/")
        self.file((d + "/" if d else "") + ".wh." + base, b"")

    def opaque(self, d):
        self.file(d + "/.wh..wh..opq", b"")

    def bytes(self):
        self.tar.close()
        return self.buf.getvalue()


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


def blob(root, data):
    digest = hashlib.sha256(data).hexdigest()
    with open(os.path.join(root, "blobs", "sha256", digest), "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + digest, "size": len(data)}


def main():
    out = sys.argv[1]
    layers = [layer1(), layer2(), layer3()]
    for i, data in enumerate(layers, 1):
        with open(os.path.join(out, "layer%d.tar" % i), "wb") as f:
            f.write(data)
    root = os.path.join(out, "oci")
    os.makedirs(os.path.join(root, "blobs", "sha256"), exist_ok=True)
    with open(os.path.join(root, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    descs = [dict(blob(root, d),
                  mediaType="application/vnd.oci.image.layer.v1.tar")
             for d in layers]
    config = {
        "architecture": "amd64", "os": "linux", "config": {},
        "rootfs": {"type": "layers",
                   "diff_ids": [d["digest"] for d in descs]},
    }
    cdesc = dict(blob(root, json.dumps(config).encode()),
                 mediaType="application/vnd.oci.image.config.v1+json")
    manifest = {"schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": cdesc, "layers": descs}
    mdesc = dict(blob(root, json.dumps(manifest).encode()),
                 mediaType="application/vnd.oci.image.manifest.v1+json",
                 annotations={"org.opencontainers.image.ref.name": "stack"})
    with open(os.path.join(root, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [mdesc]}, f)


if __name__ == "__main__":
    main()
