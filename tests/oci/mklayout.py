#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write an OCI image layout from tar layers, each stored as asked.

usage: mklayout.py OUT [--docker] REF[@OS/ARCH]=LAYER[:COMP],... ...

  OUT      the layout directory (created, or added to: blobs are shared)
  REF      the image's org.opencontainers.image.ref.name in index.json;
           images given with @OS/ARCH under one REF make one image index
           (one manifest per platform)
  LAYER    a tar file (lowest first)
  COMP     how its blob is stored: tar (default), gzip, zstd (zstd CLI),
           nondist (an OCI non-distributable tar layer)
  --docker Docker media types (manifest v2, rootfs.diff.tar[.gzip]) for
           the images that follow

The configs' diff_ids are the SHA-256 of each uncompressed tar, the layer
descriptors those of the stored blobs: what real tools write.
"""
import gzip
import hashlib
import json
import os
import subprocess
import sys

OCI = {
    "tar": "application/vnd.oci.image.layer.v1.tar",
    "gzip": "application/vnd.oci.image.layer.v1.tar+gzip",
    "zstd": "application/vnd.oci.image.layer.v1.tar+zstd",
    "nondist": "application/vnd.oci.image.layer.nondistributable.v1.tar",
}
DOCKER = {
    "tar": "application/vnd.docker.image.rootfs.diff.tar",
    "gzip": "application/vnd.docker.image.rootfs.diff.tar.gzip",
}


def blob(root, data):
    d = hashlib.sha256(data).hexdigest()
    path = os.path.join(root, "blobs", "sha256", d)
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)
    return "sha256:" + d, len(data)


def stored(tar, comp):
    if comp == "gzip":
        return gzip.compress(tar, mtime=0)
    if comp == "zstd":
        return subprocess.run(["zstd", "-q", "-c", "-3"], input=tar,
                              stdout=subprocess.PIPE, check=True).stdout
    return tar


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "blobs", "sha256"), exist_ok=True)
    with open(os.path.join(out, "oci-layout"), "w") as f:
        f.write('{"imageLayoutVersion":"1.0.0"}')
    ipath = os.path.join(out, "index.json")
    index = {"schemaVersion": 2, "manifests": []}
    if os.path.exists(ipath):
        with open(ipath) as f:
            index = json.load(f)
    docker = False
    indexes = {}
    for arg in sys.argv[2:]:
        if arg == "--docker":
            docker = True
            continue
        ref, layers = arg.split("=", 1)
        ref, _, plat = ref.partition("@")
        descs, diff_ids = [], []
        for spec in layers.split(","):
            path, _, comp = spec.partition(":")
            comp = comp or "tar"
            with open(path, "rb") as f:
                tar = f.read()
            diff_ids.append("sha256:" + hashlib.sha256(tar).hexdigest())
            d, n = blob(out, stored(tar, comp))
            mt = (DOCKER if docker else OCI)[comp]
            descs.append({"mediaType": mt, "digest": d, "size": n})
        os_, arch = plat.split("/") if plat else ("linux", "amd64")
        config = {"architecture": arch, "os": os_,
                  "config": {}, "rootfs": {"type": "layers",
                                           "diff_ids": diff_ids}}
        cd, cn = blob(out, json.dumps(config).encode())
        cmt = ("application/vnd.docker.container.image.v1+json" if docker
               else "application/vnd.oci.image.config.v1+json")
        mmt = ("application/vnd.docker.distribution.manifest.v2+json"
               if docker else "application/vnd.oci.image.manifest.v1+json")
        manifest = {"schemaVersion": 2, "mediaType": mmt,
                    "config": {"mediaType": cmt, "digest": cd, "size": cn},
                    "layers": descs}
        md, mn = blob(out, json.dumps(manifest).encode())
        desc = {"mediaType": mmt, "digest": md, "size": mn}
        if plat:
            desc["platform"] = {"architecture": arch, "os": os_}
            indexes.setdefault(ref, []).append(desc)
            continue
        desc["annotations"] = {"org.opencontainers.image.ref.name": ref}
        index["manifests"].append(desc)
    for ref, descs in indexes.items():
        imt = "application/vnd.oci.image.index.v1+json"
        ix = {"schemaVersion": 2, "mediaType": imt, "manifests": descs}
        d, n = blob(out, json.dumps(ix).encode())
        index["manifests"].append({
            "mediaType": imt, "digest": d, "size": n,
            "annotations": {"org.opencontainers.image.ref.name": ref}})
    with open(ipath, "w") as f:
        json.dump(index, f)


if __name__ == "__main__":
    main()
