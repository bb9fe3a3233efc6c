#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpus of tests/fuzz/fuzz_oci.c: small OCI layouts in
its encoding (one byte of kind, two of length, the bytes; kinds: 0
oci-layout, 1 index.json, 2 blob named by its SHA-256, 3 blob named by
its first 32 bytes, 4 unit record).

usage: mkseed_oci.py DIR
"""
import gzip
import hashlib
import io
import json
import os
import struct
import sys
import tarfile


def tar(files):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in files:
            i = tarfile.TarInfo(name)
            if data is None:
                i.type = tarfile.DIRTYPE
                i.mode = 0o755
                t.addfile(i)
            else:
                i.size = len(data)
                t.addfile(i, io.BytesIO(data))
    return b.getvalue()


def rec(kind, data):
    return struct.pack("<BH", kind, len(data)) + data


def dig(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def image(layers, docker=False, layer_mt=None, lie=False):
    """records of one image and its manifest descriptor"""
    out, descs, ids = [], [], []
    for t in layers:
        z = gzip.compress(t, mtime=0)
        out.append(rec(2, z))
        mt = layer_mt or ("application/vnd.docker.image.rootfs.diff.tar.gzip"
                          if docker else
                          "application/vnd.oci.image.layer.v1.tar+gzip")
        descs.append({"mediaType": mt, "digest": dig(z), "size": len(z)})
        ids.append(dig(b"lie" if lie else t))
    cfg = json.dumps({"architecture": "amd64", "os": "linux",
                      "rootfs": {"type": "layers", "diff_ids": ids}}).encode()
    out.append(rec(2, cfg))
    mmt = ("application/vnd.docker.distribution.manifest.v2+json" if docker
           else "application/vnd.oci.image.manifest.v1+json")
    m = json.dumps({"schemaVersion": 2, "mediaType": mmt,
                    "config": {"mediaType":
                               "application/vnd.oci.image.config.v1+json",
                               "digest": dig(cfg), "size": len(cfg)},
                    "layers": descs}).encode()
    out.append(rec(2, m))
    return out, {"mediaType": mmt, "digest": dig(m), "size": len(m),
                 "platform": {"os": "linux", "architecture": "amd64"}}


def layout(recs, entries):
    ix = json.dumps({"schemaVersion": 2, "manifests": entries}).encode()
    return (rec(0, b'{"imageLayoutVersion":"1.0.0"}') + rec(1, ix) +
            b"".join(recs))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    l1 = tar([("d", None), ("d/f", b"one\n"), ("g", b"two\n")])
    l2 = tar([(".wh.g", b""), ("d/.wh..wh..opq", b""), ("d/h", b"three\n")])
    seeds = {}
    r, d = image([l1, l2])
    seeds["two-layers"] = layout(r, [d])
    r, d = image([l1], docker=True)
    seeds["docker"] = layout(r, [d])
    r, d = image([l1], lie=True)
    seeds["lying-diffid"] = layout(r, [d])
    r, d = image([l1])
    ix = json.dumps({"schemaVersion": 2, "mediaType":
                     "application/vnd.oci.image.index.v1+json",
                     "manifests": [d, d, d]}).encode()
    r.append(rec(2, ix))
    seeds["nested"] = layout(r, [{"mediaType":
                                  "application/vnd.oci.image.index.v1+json",
                                  "digest": dig(ix), "size": len(ix)}])
    r, d = image([l1], layer_mt="application/vnd.erofs.layer.v1")
    seeds["erofs-type"] = layout(r, [d])
    r, d = image([])
    seeds["no-layers"] = layout(r, [d])
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
