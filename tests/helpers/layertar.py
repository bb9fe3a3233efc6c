"""
Layer tars and small OCI image layouts for tests, built with Python's
tarfile: entries of every kind with owners, modes and xattrs, OCI
whiteouts and opaque markers, and a one-image layout over such layers.
"""
import hashlib
import io
import json
import os
import tarfile

MTIME = 1700000000


def entry(name, kind=tarfile.REGTYPE, mode=0o644, uid=0, gid=0,
          xattrs=None, link="", mtime=MTIME):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = mode
    ti.uid = uid
    ti.gid = gid
    ti.mtime = mtime
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


def blob(root, data):
    digest = hashlib.sha256(data).hexdigest()
    with open(os.path.join(root, "blobs", "sha256", digest), "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + digest, "size": len(data)}


def write_layout(root, layers, tag):
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
                 annotations={"org.opencontainers.image.ref.name": tag})
    with open(os.path.join(root, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [mdesc]}, f)
