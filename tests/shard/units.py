# SPDX-License-Identifier: MIT
"""The work units of an OCI image layout, worked out here from the layout's
own JSON (independently of mkfs.img), and checks of a converted layout.

  units.py list SRC                 one line per distinct source layer,
                                    sorted by diffID: DIFFID BLOB MEDIATYPE
  units.py shard SRC I N            the diffIDs shard I of N must convert:
                                    first 16 hex digits, as a number, mod N
  units.py blobs DST                every file under DST/blobs/ whose bytes
                                    do not hash to its name (one line each);
                                    nothing printed when all are whole
  units.py layers DST               the blob digests of every layer of every
                                    manifest DST's index.json reaches
  units.py killmid PID BLOB DIR     SIGKILL process PID while it converts the
                                    layer BLOB: once it has BLOB open and an
                                    unnamed file in DIR holding at least one
                                    byte; prints how far it had got
"""
import hashlib
import json
import os
import signal
import sys
import time

INDEX_TYPES = ("application/vnd.oci.image.index.v1+json",
               "application/vnd.docker.distribution.manifest.list.v2+json")


def blob(layout, digest):
    alg, hexd = digest.split(":", 1)
    with open(os.path.join(layout, "blobs", alg, hexd), "rb") as f:
        return json.load(f)


def manifests(layout):
    """Every image manifest reachable from index.json (nested indexes
    followed), once each."""
    seen, todo, out = set(), list(blob_index(layout)), []
    while todo:
        d = todo.pop()
        if d["digest"] in seen:
            continue
        seen.add(d["digest"])
        doc = blob(layout, d["digest"])
        if d.get("mediaType") in INDEX_TYPES or "manifests" in doc:
            todo.extend(doc.get("manifests", []))
        else:
            out.append(doc)
    return out


def blob_index(layout):
    with open(os.path.join(layout, "index.json"), "rb") as f:
        return json.load(f).get("manifests", [])


def units(layout):
    found = {}
    for m in manifests(layout):
        config = blob(layout, m["config"]["digest"])
        diff_ids = config["rootfs"]["diff_ids"]
        for diff_id, layer in zip(diff_ids, m["layers"]):
            found.setdefault(diff_id, (layer["digest"], layer["mediaType"]))
    return sorted((d, b, t) for d, (b, t) in found.items())


def in_shard(diff_id, i, n):
    return int(diff_id.split(":", 1)[1][:16], 16) % n == i


def bad_blobs(layout):
    top = os.path.join(layout, "blobs")
    for alg in sorted(os.listdir(top)):
        for name in sorted(os.listdir(os.path.join(top, alg))):
            path = os.path.join(top, alg, name)
            h = hashlib.new(alg)
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            if h.hexdigest() != name:
                yield f"{alg}/{name}: holds bytes hashing to {h.hexdigest()}"


def open_files(pid):
    fds = f"/proc/{pid}/fd"
    out = []
    for fd in os.listdir(fds):
        try:
            out.append((os.readlink(os.path.join(fds, fd)),
                        os.stat(os.path.join(fds, fd)).st_size))
        except OSError:
            pass
    return out


def kill_mid(pid, blob_path, out_dir):
    """Poll every millisecond; the process must not end first."""
    blob_path = os.path.realpath(blob_path)
    out_dir = os.path.realpath(out_dir) + "/"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            files = open_files(pid)
        except OSError:
            sys.exit(f"units.py: process {pid} ended before it was killed")
        reading = any(p == blob_path for p, _ in files)
        # an O_TMPFILE file shows as "DIR/#INO (deleted)"
        written = [size for p, size in files if p.startswith(out_dir)
                   and p.endswith(" (deleted)") and size > 0]
        if reading and written:
            os.kill(pid, signal.SIGKILL)
            print(f"killed while reading the layer, {max(written)} bytes "
                  f"written to an unnamed file")
            return
        time.sleep(0.001)
    os.kill(pid, signal.SIGKILL)
    sys.exit(f"units.py: process {pid} never wrote the layer; killed anyway")


def main(argv):
    cmd, layout = argv[1], argv[2]
    if cmd == "list":
        for u in units(layout):
            print(*u)
    elif cmd == "shard":
        i, n = int(argv[3]), int(argv[4])
        for d, _, _ in units(layout):
            if in_shard(d, i, n):
                print(d)
    elif cmd == "blobs":
        for line in bad_blobs(layout):
            print(line)
    elif cmd == "layers":
        for m in manifests(layout):
            for layer in m["layers"]:
                print(layer["digest"])
    elif cmd == "killmid":
        kill_mid(int(argv[2]), argv[3], argv[4])
    else:
        sys.exit(f"units.py: unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
