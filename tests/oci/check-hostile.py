#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile edits of an OCI image layout, for tests/oci/check-hostile.sh.

Each edit leaves every digest and size of the documents right (blobs are
added under their own digest, the documents above them rewritten), so
that only what the edit is about can be wrong.

usage: check-hostile.py LAYOUT WHAT ARGS...
  swap-other N FILE    layer N of the first image becomes the blob FILE
                       (its diff_id updated), and index.json names that
                       blob first, as application/octet-stream
  swap-config N FILE   the same, but named first as the config of another
                       manifest listed before the image
  config-bytes FILE    the first image's config becomes the blob FILE
  reverse              the first image's layers (and diff_ids) reversed
  zstd-layer N FILE    layer N of the first image becomes FILE, a zstd
                       stream, as an application/vnd.erofs.layer.v1+zstd
                       layer whose org.erofs.uncompressed-digest is
                       the next argument
"""
import hashlib
import json
import os
import sys


def blob_path(root, digest):
    return os.path.join(root, "blobs", "sha256", digest.split(":", 1)[1])


def load(root, digest):
    with open(blob_path(root, digest), "rb") as f:
        return json.loads(f.read())


def put(root, data):
    d = "sha256:" + hashlib.sha256(data).hexdigest()
    with open(blob_path(root, d), "wb") as f:
        f.write(data)
    return d, len(data)


def put_json(root, obj):
    return put(root, json.dumps(obj, separators=(",", ":")).encode())


class Image:
    """The first manifest of index.json, to be rewritten."""

    def __init__(self, root):
        self.root = root
        with open(os.path.join(root, "index.json")) as f:
            self.index = json.load(f)
        self.desc = self.index["manifests"][0]
        self.manifest = load(root, self.desc["digest"])
        self.config = load(root, self.manifest["config"]["digest"])

    def save(self, config_bytes=None):
        if config_bytes is None:
            config_bytes = json.dumps(self.config).encode()
        d, n = put(self.root, config_bytes)
        self.manifest["config"].update(digest=d, size=n)
        d, n = put_json(self.root, self.manifest)
        self.desc.update(digest=d, size=n)
        with open(os.path.join(self.root, "index.json"), "w") as f:
            json.dump(self.index, f)

    def replace_layer(self, n, data, diff_id=None):
        d, size = put(self.root, data)
        self.manifest["layers"][n].update(digest=d, size=size)
        self.config["rootfs"]["diff_ids"][n] = (
            diff_id or "sha256:" + hashlib.sha256(data).hexdigest())
        return d, size


def main():
    root, what, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    img = Image(root)
    if what in ("swap-other", "swap-config"):
        with open(args[1], "rb") as f:
            d, n = img.replace_layer(int(args[0]), f.read())
        if what == "swap-other":
            first = {"mediaType": "application/octet-stream",
                     "digest": d, "size": n}
        else:
            other = {"schemaVersion": 2,
                     "mediaType": "application/vnd.oci.image.manifest.v1+json",
                     "config": {"mediaType":
                                "application/vnd.oci.image.config.v1+json",
                                "digest": d, "size": n},
                     "layers": []}
            md, mn = put_json(root, other)
            first = {"mediaType": other["mediaType"], "digest": md,
                     "size": mn}
        img.save()
        img.index["manifests"].insert(0, first)
        with open(os.path.join(root, "index.json"), "w") as f:
            json.dump(img.index, f)
    elif what == "config-bytes":
        with open(args[0], "rb") as f:
            img.save(f.read())
    elif what == "reverse":
        img.manifest["layers"].reverse()
        img.config["rootfs"]["diff_ids"].reverse()
        img.save()
    elif what == "zstd-layer":
        with open(args[1], "rb") as f:
            img.replace_layer(int(args[0]), f.read(), args[2])
        layer = img.manifest["layers"][int(args[0])]
        layer["mediaType"] = "application/vnd.erofs.layer.v1+zstd"
        layer.setdefault("annotations", {})[
            "org.erofs.uncompressed-digest"] = args[2]
        img.save()
    else:
        sys.exit("check-hostile.py: unknown edit " + what)


if __name__ == "__main__":
    main()
