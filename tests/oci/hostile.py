#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile changes to OCI image layouts and destinations (tests only).

usage: hostile.py COMMAND ARGS...

  record DST KEY=JSON...     set KEY to the JSON value in every unit
                             record of DST/.imgfs/units
  cache-forge CACHE IMAGE    put IMAGE (any EROFS image) in every cache
                             entry of CACHE, records made to agree with it
  lying-dup SRC REF TAR      add an image REF whose one layer is TAR
                             (gzip) but whose config gives the diffID of
                             the first layer of the first image: its blob
                             digest sorts after the honest blob's
  nested SRC FAN DEPTH       index.json names an index that names the next
                             one FAN times, DEPTH levels, down to the
                             manifest of the first entry
  manifest SRC KEY=JSON      set KEY in the first image's manifest
  config SRC KEY=JSON        set KEY in the first image's config ("a.b"
                             is key b of object a)
  layer-mt SRC MEDIATYPE     the media type of the first image's first layer
"""
import gzip
import hashlib
import json
import os
import sys


def blob(root, data):
    d = hashlib.sha256(data).hexdigest()
    with open(os.path.join(root, "blobs", "sha256", d), "wb") as f:
        f.write(data)
    return "sha256:" + d, len(data)


def load(root, digest):
    with open(os.path.join(root, "blobs", "sha256", digest.split(":")[1]),
              "rb") as f:
        return json.loads(f.read())


def index(root):
    with open(os.path.join(root, "index.json")) as f:
        return json.load(f)


def save_index(root, ix):
    with open(os.path.join(root, "index.json"), "w") as f:
        json.dump(ix, f)


def set_key(doc, key, value):
    parts = key.split(".")
    for p in parts[:-1]:
        doc = doc[p]
    doc[parts[-1]] = value


def first_manifest(root):
    ix = index(root)
    return ix, ix["manifests"][0], load(root, ix["manifests"][0]["digest"])


def rewrite_manifest(root, ix, desc, m):
    desc["digest"], desc["size"] = blob(root, json.dumps(m).encode())
    save_index(root, ix)


def cmd_record(dst, *kvs):
    d = os.path.join(dst, ".imgfs", "units")
    for name in os.listdir(d):
        path = os.path.join(d, name)
        with open(path) as f:
            r = json.load(f)
        for kv in kvs:
            k, v = kv.split("=", 1)
            r[k] = json.loads(v)
        with open(path, "w") as f:
            json.dump(r, f)


def cmd_cache_forge(cache, image):
    with open(image, "rb") as f:
        data = f.read()
    dig = "sha256:" + hashlib.sha256(data).hexdigest()
    units = os.path.join(cache, ".imgfs", "units")
    for name in os.listdir(units):
        path = os.path.join(units, name)
        with open(path) as f:
            r = json.load(f)
        hexd = r["diffID"].split(":")[1]
        img = os.path.join(cache, "sha256", hexd[:2], hexd + ".erofs")
        os.unlink(img)
        with open(img, "wb") as f:
            f.write(data)
        r.update(digest=dig, uncompressedDigest=dig, size=len(data))
        with open(path, "w") as f:
            json.dump(r, f)


def cmd_lying_dup(src, ref, tarpath):
    ix, _, m = first_manifest(src)
    honest = m["layers"][0]["digest"]
    cfg = load(src, m["config"]["digest"])
    with open(tarpath, "rb") as f:
        tar = f.read()
    for mtime in range(1000):
        data = gzip.compress(tar, mtime=mtime)
        if "sha256:" + hashlib.sha256(data).hexdigest() > honest:
            break
    ld, ln = blob(src, data)
    config = {"architecture": "amd64", "os": "linux", "config": {},
              "rootfs": {"type": "layers",
                         "diff_ids": [cfg["rootfs"]["diff_ids"][0]]}}
    cd, cn = blob(src, json.dumps(config).encode())
    mt = "application/vnd.oci.image.manifest.v1+json"
    man = {"schemaVersion": 2, "mediaType": mt,
           "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                      "digest": cd, "size": cn},
           "layers": [{"mediaType":
                       "application/vnd.oci.image.layer.v1.tar+gzip",
                       "digest": ld, "size": ln}]}
    md, mn = blob(src, json.dumps(man).encode())
    ix["manifests"].append({
        "mediaType": mt, "digest": md, "size": mn,
        "annotations": {"org.opencontainers.image.ref.name": ref}})
    save_index(src, ix)


def cmd_nested(src, fan, depth):
    ix = index(src)
    child = dict(ix["manifests"][0])
    child.pop("annotations", None)
    imt = "application/vnd.oci.image.index.v1+json"
    for _ in range(int(depth)):
        doc = {"schemaVersion": 2, "mediaType": imt,
               "manifests": [child] * int(fan)}
        d, n = blob(src, json.dumps(doc).encode())
        child = {"mediaType": imt, "digest": d, "size": n}
    child["annotations"] = {"org.opencontainers.image.ref.name": "nested"}
    ix["manifests"] = [child]
    save_index(src, ix)


def cmd_manifest(src, kv):
    ix, desc, m = first_manifest(src)
    k, v = kv.split("=", 1)
    set_key(m, k, json.loads(v))
    rewrite_manifest(src, ix, desc, m)


def cmd_config(src, kv):
    ix, desc, m = first_manifest(src)
    cfg = load(src, m["config"]["digest"])
    k, v = kv.split("=", 1)
    set_key(cfg, k, json.loads(v))
    m["config"]["digest"], m["config"]["size"] = blob(
        src, json.dumps(cfg).encode())
    rewrite_manifest(src, ix, desc, m)


def cmd_layer_mt(src, mt):
    ix, desc, m = first_manifest(src)
    m["layers"][0]["mediaType"] = mt
    rewrite_manifest(src, ix, desc, m)


def main():
    cmds = {"record": cmd_record, "cache-forge": cmd_cache_forge,
            "lying-dup": cmd_lying_dup, "nested": cmd_nested,
            "manifest": cmd_manifest, "config": cmd_config,
            "layer-mt": cmd_layer_mt}
    cmds[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
