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
  units.py watch DIR STOP            until the file STOP exists, look at DIR
                                    every few milliseconds: each file that
                                    appears under a final name in blobs/ must
                                    hash to its name, each unit record must
                                    be whole JSON naming a blob present then;
                                    prints what it saw, exits 1 on a fault
  units.py killmid BLOB DIR MIN CMD...
                                    run CMD and SIGKILL it while it converts
                                    the layer BLOB: once an unnamed file in
                                    DIR that it had open while it read BLOB
                                    (the layer's image, written from BLOB,
                                    then verified) holds at least MIN bytes;
                                    prints how far it had got and exits 0
                                    only if it was killed so
"""
import hashlib
import json
import os
import signal
import subprocess
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


def kill_mid(blob_path, out_dir, least, cmd):
    """Start cmd ourselves and poll its open files every millisecond from
    then on: a layer takes a few tens of milliseconds. The layer's image is
    the unnamed file open while the blob is read; it stays unnamed until
    it is verified (the blob is read once, so it may be closed by then)."""
    blob_path = os.path.realpath(blob_path)
    out_dir = os.path.realpath(out_dir) + "/"
    child = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    ours = set()
    while time.monotonic() < deadline and child.poll() is None:
        try:
            files = open_files(child.pid)
        except OSError:
            continue
        # an O_TMPFILE file shows as "DIR/#INO (deleted)"
        unnamed = [(p, size) for p, size in files
                   if p.startswith(out_dir) and p.endswith(" (deleted)")]
        if any(p == blob_path for p, _ in files):
            ours.update(p for p, _ in unnamed)
        written = [size for p, size in unnamed if p in ours and size >= least]
        if written:
            child.send_signal(signal.SIGKILL)
            child.wait()
            print(f"killed while converting the layer, {max(written)} bytes "
                  f"in its unnamed image")
            return 0
        time.sleep(0.001)
    if child.poll() is None:
        child.send_signal(signal.SIGKILL)
    rc = child.wait()
    print(f"not caught in the middle of the layer (exit {rc})")
    return 1


def whole(path, alg, name):
    h = hashlib.new(alg)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest() == name


def watch(layout, stop):
    """Each final name is looked at once, as soon as it is seen: a writer
    that published a partial file would be caught in the act."""
    seen, faults, hidden = set(), [], set()
    blobs = os.path.join(layout, "blobs", "sha256")
    units_dir = os.path.join(layout, ".imgfs", "units")
    while True:
        last = os.path.exists(stop)
        for d, kind in ((blobs, "blob"), (units_dir, "record")):
            try:
                names = os.listdir(d)
            except FileNotFoundError:
                continue
            for name in names:
                if name.startswith("."):
                    hidden.add((d, name))
                    continue
                if (d, name) in seen:
                    continue
                seen.add((d, name))
                path = os.path.join(d, name)
                if kind == "blob" and not whole(path, "sha256", name):
                    faults.append(f"blob {name}: partial or foreign bytes")
                elif kind == "record":
                    try:
                        with open(path, "rb") as f:
                            rec = json.load(f)
                        digest = rec["digest"].split(":", 1)[1]
                        if not os.path.exists(os.path.join(blobs, digest)):
                            faults.append(f"record {name}: names a blob "
                                          "not there yet")
                    except (ValueError, KeyError) as e:
                        faults.append(f"record {name}: not whole ({e})")
        if last:
            break
        time.sleep(0.002)
    blobs_seen = sum(1 for d, _ in seen if d == blobs)
    print(f"{blobs_seen} blobs and {len(seen) - blobs_seen} records watched "
          f"as they appeared, {len(faults)} fault(s), "
          f"{len(hidden)} temporary names seen")
    for f in faults:
        print(f)
    return 1 if faults else 0


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
    elif cmd == "watch":
        sys.exit(watch(argv[2], argv[3]))
    elif cmd == "killmid":
        sys.exit(kill_mid(argv[2], argv[3], max(1, int(argv[4])), argv[5:]))
    else:
        sys.exit(f"units.py: unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
