#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Small edits and queries on OCI image layouts for tests/oci/corpus.sh.

The layouts themselves are made by umoci and skopeo; this script only does
what neither tool offers: assembling a multi-platform index over images
umoci made, swapping one layer's compression, importing a Docker-format
manifest that skopeo wrote to a dir: destination, and resolving a tag (and
platform) to a manifest and its layers.

usage:
  corpus.py index LAYOUT NEWTAG TAG=OS/ARCH[/VARIANT]...
      add an image index blob listing the manifests of the TAGs with their
      platforms, tagged NEWTAG in index.json
  corpus.py referrer LAYOUT TAG NEWTAG
      add an SBOM of TAG (an artifact manifest: empty config, one
      application/spdx+json layer, subject TAG's descriptor), tagged
      NEWTAG in index.json
  corpus.py recompress LAYOUT SRCTAG NEWTAG N zstd|gzip|none
      NEWTAG = SRCTAG with layer N (0 = bottom) recompressed (the blob is
      made with the zstd/gzip command-line tools)
  corpus.py import-dir LAYOUT DIRDEST NEWTAG
      copy the blobs and the manifest of a skopeo dir: destination into
      LAYOUT, tagged NEWTAG with the manifest's own media type
  corpus.py export-dir LAYOUT TAG OUT
      the reverse (blobs as symbolic links), for skopeo, whose oci:
      transport skips the Docker manifests of an OCI layout's index.json
  corpus.py edit LAYOUT TAG WHAT ARGS...
      damage a layout consistently: rewrite the image TAG names (a
      manifest) so that every digest and size of the documents above the
      change is right again, leaving only the damage WHAT:
        layer-size N DELTA   the size of layer N in the manifest
        diff-id N            diff_ids[N] of the config (another digest)
        no-erofs-feature     "erofs" dropped from the config's os.features
        replace-layer N FILE layer N becomes the blob FILE (digest, size
                             and diff_id updated, annotations kept)
        annotation N KEY VAL layer N's annotation KEY set to VAL ("-":
                             removed)
        no-platform-feature  (TAG names an index) "erofs" dropped from
                             the os.features of its entries' platforms
  corpus.py manifest LAYOUT TAG [OS/ARCH[/VARIANT]]
      print the digest of the manifest TAG resolves to (through nested
      indexes, picking the platform when given)
  corpus.py layers LAYOUT TAG [OS/ARCH[/VARIANT]]
      print "MEDIATYPE DIGEST SIZE" per layer, bottom first
  corpus.py platforms LAYOUT TAG
      print the platforms of the index TAG resolves to, one a line
  corpus.py view LAYOUT TAG OS/ARCH[/VARIANT] OUT VIEWTAG
      make OUT a layout (blobs: symbolic links to LAYOUT's) whose
      index.json holds the manifest (of the platform; "-": the first) as
      VIEWTAG, an OCI manifest of gzip or plain tar layers with the same
      uncompressed layers (for umoci 0.4, which reads nothing else)
"""

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys

REF = "org.opencontainers.image.ref.name"
INDEX_TYPES = ("application/vnd.oci.image.index.v1+json",
               "application/vnd.docker.distribution.manifest.list.v2+json")


def die(msg):
    sys.stderr.write("corpus.py: %s\n" % msg)
    sys.exit(1)


def blob_path(layout, digest):
    alg, hexd = digest.split(":", 1)
    return os.path.join(layout, "blobs", alg, hexd)


def read_json_blob(layout, digest):
    with open(blob_path(layout, digest), "rb") as f:
        return json.loads(f.read())


def put_blob(layout, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    path = blob_path(layout, digest)
    if not os.path.exists(path):
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.rename(tmp, path)
    return digest, len(data)


def put_json_blob(layout, obj):
    return put_blob(layout, json.dumps(obj, separators=(",", ":")).encode())


def load_index(layout):
    with open(os.path.join(layout, "index.json")) as f:
        return json.load(f)


def save_index(layout, index):
    tmp = os.path.join(layout, "index.json.tmp")
    with open(tmp, "w") as f:
        json.dump(index, f, separators=(",", ":"))
    os.rename(tmp, os.path.join(layout, "index.json"))


def tag_descriptor(layout, tag):
    for d in load_index(layout)["manifests"]:
        if d.get("annotations", {}).get(REF) == tag:
            return d
    die("%s: no tag %s" % (layout, tag))


def set_tag(layout, desc, tag):
    index = load_index(layout)
    index["manifests"] = [d for d in index["manifests"]
                          if d.get("annotations", {}).get(REF) != tag]
    desc = dict(desc)
    desc["annotations"] = dict(desc.get("annotations", {}))
    desc["annotations"][REF] = tag
    index["manifests"].append(desc)
    save_index(layout, index)


def parse_platform(text):
    parts = text.split("/")
    if len(parts) not in (2, 3):
        die("bad platform %s" % text)
    p = {"os": parts[0], "architecture": parts[1]}
    if len(parts) == 3:
        p["variant"] = parts[2]
    return p


def platform_text(p):
    t = p.get("os", "") + "/" + p.get("architecture", "")
    if p.get("variant"):
        t += "/" + p["variant"]
    return t


def resolve(layout, desc, platform):
    """The manifest descriptor DESC leads to (nested indexes followed)."""
    while desc["mediaType"] in INDEX_TYPES:
        index = read_json_blob(layout, desc["digest"])
        found = None
        for d in index["manifests"]:
            p = d.get("platform")
            if platform is None or (p and platform_text(p) == platform):
                found = d
                break
        if found is None:
            die("%s: no manifest for %s in %s" % (layout, platform,
                                                  desc["digest"]))
        desc = found
    return desc


def cmd_index(layout, newtag, *pairs):
    manifests = []
    for pair in pairs:
        tag, plat = pair.split("=", 1)
        d = dict(tag_descriptor(layout, tag))
        d.pop("annotations", None)
        d["platform"] = parse_platform(plat)
        manifests.append(d)
    index = {"schemaVersion": 2,
             "mediaType": "application/vnd.oci.image.index.v1+json",
             "manifests": manifests}
    digest, size = put_json_blob(layout, index)
    set_tag(layout, {"mediaType": index["mediaType"], "digest": digest,
                     "size": size}, newtag)


def cmd_referrer(layout, tag, newtag):
    subject = tag_descriptor(layout, tag)
    def desc(mt, data):
        digest, size = put_blob(layout, data)
        return {"mediaType": mt, "digest": digest, "size": size}
    sbom = json.dumps({"spdxVersion": "SPDX-2.3", "name": tag}).encode()
    ref = {"schemaVersion": 2,
           "mediaType": "application/vnd.oci.image.manifest.v1+json",
           "artifactType": "application/spdx+json",
           "config": desc("application/vnd.oci.empty.v1+json", b"{}"),
           "layers": [desc("application/spdx+json", sbom)],
           "subject": {k: subject[k] for k in ("mediaType", "digest",
                                                "size")}}
    digest, size = put_json_blob(layout, ref)
    set_tag(layout, {"mediaType": ref["mediaType"], "digest": digest,
                     "size": size}, newtag)


def uncompressed(layout, layer):
    """The layer's tar, its compression sniffed as Docker's media types
    require."""
    path = blob_path(layout, layer["digest"])
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return subprocess.run(["zstd", "-q", "-dc"], input=data, check=True,
                              stdout=subprocess.PIPE).stdout
    return data


def cmd_recompress(layout, srctag, newtag, n, how):
    desc = resolve(layout, tag_descriptor(layout, srctag), None)
    manifest = read_json_blob(layout, desc["digest"])
    layer = manifest["layers"][int(n)]
    tar = uncompressed(layout, layer)
    base = "application/vnd.oci.image.layer.v1.tar"
    if how == "zstd":
        data = subprocess.run(["zstd", "-q", "-c", "-3"], input=tar,
                              check=True, stdout=subprocess.PIPE).stdout
        mt = base + "+zstd"
    elif how == "gzip":
        data = subprocess.run(["gzip", "-n", "-c"], input=tar, check=True,
                              stdout=subprocess.PIPE).stdout
        mt = base + "+gzip"
    elif how == "none":
        data, mt = tar, base
    else:
        die("unknown compression %s" % how)
    digest, size = put_blob(layout, data)
    manifest["layers"][int(n)] = {"mediaType": mt, "digest": digest,
                                  "size": size}
    mdigest, msize = put_json_blob(layout, manifest)
    set_tag(layout, {"mediaType": desc["mediaType"], "digest": mdigest,
                     "size": msize}, newtag)


def cmd_import_dir(layout, src, newtag):
    with open(os.path.join(src, "manifest.json"), "rb") as f:
        raw = f.read()
    manifest = json.loads(raw)
    for d in [manifest["config"]] + manifest["layers"]:
        hexd = d["digest"].split(":", 1)[1]
        dst = blob_path(layout, d["digest"])
        if not os.path.exists(dst):
            shutil.copyfile(os.path.join(src, hexd), dst)
    digest, size = put_blob(layout, raw)
    set_tag(layout, {"mediaType": manifest["mediaType"], "digest": digest,
                     "size": size}, newtag)


def cmd_export_dir(layout, tag, out):
    desc = tag_descriptor(layout, tag)
    manifest = read_json_blob(layout, desc["digest"])
    os.makedirs(out)
    shutil.copyfile(blob_path(layout, desc["digest"]),
                    os.path.join(out, "manifest.json"))
    with open(os.path.join(out, "version"), "w") as f:
        f.write("Directory Transport Version: 1.1\n")
    for d in [manifest["config"]] + manifest["layers"]:
        os.symlink(os.path.abspath(blob_path(layout, d["digest"])),
                   os.path.join(out, d["digest"].split(":", 1)[1]))


def edit_index(layout, tag):
    desc = tag_descriptor(layout, tag)
    index = read_json_blob(layout, desc["digest"])
    for d in index["manifests"]:
        p = d.get("platform", {})
        p["os.features"] = [f for f in p.get("os.features", [])
                            if f != "erofs"]
        if not p["os.features"]:
            del p["os.features"]
    idigest, isize = put_json_blob(layout, index)
    top = load_index(layout)
    for d in top["manifests"]:
        if d.get("annotations", {}).get(REF) == tag:
            d["digest"], d["size"] = idigest, isize
    save_index(layout, top)


def cmd_edit(layout, tag, what, *args):
    if what == "no-platform-feature":
        return edit_index(layout, tag)
    desc = tag_descriptor(layout, tag)
    manifest = read_json_blob(layout, desc["digest"])
    config = read_json_blob(layout, manifest["config"]["digest"])
    if what == "layer-size":
        manifest["layers"][int(args[0])]["size"] += int(args[1])
    elif what == "diff-id":
        ids = config["rootfs"]["diff_ids"]
        ids[int(args[0])] = "sha256:" + hashlib.sha256(
            ids[int(args[0])].encode()).hexdigest()
    elif what == "annotation":
        ann = manifest["layers"][int(args[0])].setdefault("annotations", {})
        if args[2] == "-":
            ann.pop(args[1], None)
        else:
            ann[args[1]] = args[2]
    elif what == "no-erofs-feature":
        config["os.features"] = [f for f in config.get("os.features", [])
                                 if f != "erofs"]
    elif what == "replace-layer":
        with open(args[1], "rb") as f:
            data = f.read()
        digest, size = put_blob(layout, data)
        layer = manifest["layers"][int(args[0])]
        layer["digest"], layer["size"] = digest, size
        config["rootfs"]["diff_ids"][int(args[0])] = digest
    else:
        die("unknown edit %s" % what)
    cdigest, csize = put_json_blob(layout, config)
    manifest["config"]["digest"], manifest["config"]["size"] = cdigest, csize
    mdigest, msize = put_json_blob(layout, manifest)
    index = load_index(layout)
    for d in index["manifests"]:
        if d.get("annotations", {}).get(REF) == tag:
            d["digest"], d["size"] = mdigest, msize
    save_index(layout, index)


def cmd_manifest(layout, tag, platform=None):
    print(resolve(layout, tag_descriptor(layout, tag), platform)["digest"])


def cmd_layers(layout, tag, platform=None):
    desc = resolve(layout, tag_descriptor(layout, tag), platform)
    for layer in read_json_blob(layout, desc["digest"])["layers"]:
        print(layer["mediaType"], layer["digest"], layer["size"])


def cmd_platforms(layout, tag):
    desc = tag_descriptor(layout, tag)
    while desc["mediaType"] in INDEX_TYPES:
        index = read_json_blob(layout, desc["digest"])
        if all("platform" in d for d in index["manifests"]):
            for d in index["manifests"]:
                print(platform_text(d["platform"]))
            return
        desc = index["manifests"][0]


def cmd_view(layout, tag, platform, out, viewtag):
    if platform == "-":
        platform = None
    desc = resolve(layout, tag_descriptor(layout, tag), platform)
    manifest = read_json_blob(layout, desc["digest"])
    os.makedirs(os.path.join(out, "blobs", "sha256"), exist_ok=True)
    shutil.copyfile(os.path.join(layout, "oci-layout"),
                    os.path.join(out, "oci-layout"))

    def link(d):
        dst = blob_path(out, d["digest"])
        if not os.path.lexists(dst):
            os.symlink(os.path.abspath(blob_path(layout, d["digest"])), dst)

    # umoci 0.4 reads gzip and plain tar layers of OCI manifests only: a
    # zstd or Docker layer becomes a gzip one with the same tar (so the
    # same diff_id and the same tree)
    link(manifest["config"])
    manifest["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
    manifest["config"]["mediaType"] = \
        "application/vnd.oci.image.config.v1+json"
    layers = []
    for layer in manifest["layers"]:
        mt = layer["mediaType"]
        if mt in ("application/vnd.oci.image.layer.v1.tar+gzip",
                  "application/vnd.oci.image.layer.v1.tar"):
            link(layer)
            layers.append(layer)
            continue
        data = subprocess.run(["gzip", "-n", "-c", "-1"],
                              input=uncompressed(layout, layer), check=True,
                              stdout=subprocess.PIPE).stdout
        digest, size = put_blob(out, data)
        layers.append({"mediaType":
                       "application/vnd.oci.image.layer.v1.tar+gzip",
                       "digest": digest, "size": size})
    manifest["layers"] = layers
    digest, size = put_json_blob(out, manifest)
    save_index(out, {"schemaVersion": 2, "manifests": [
        {"mediaType": manifest["mediaType"], "digest": digest, "size": size,
         "annotations": {REF: viewtag}}]})


COMMANDS = {"index": cmd_index, "referrer": cmd_referrer,
            "recompress": cmd_recompress,
            "import-dir": cmd_import_dir, "export-dir": cmd_export_dir,
            "edit": cmd_edit, "manifest": cmd_manifest,
            "layers": cmd_layers, "platforms": cmd_platforms,
            "view": cmd_view}

if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in COMMANDS:
        die("usage: see the top of %s" % sys.argv[0])
    COMMANDS[sys.argv[1]](*sys.argv[2:])
