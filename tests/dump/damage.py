#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run dump.img on damaged copies of an image: it must never crash or hang.

usage: damage.py DUMP IMAGE WORKDIR SEED FLIPS

From the intact IMAGE (read with dump.img itself to find its metadata:
superblock, inodes, directory blocks) this makes damaged copies:
truncations at many lengths, a zeroed superblock, a zeroed root inode,
directory entries pointing back at an ancestor (a cycle) or at a
directory where a file was, and FLIPS copies with random bytes changed in
the metadata (seeded by SEED). Every view of dump.img runs on each copy
under a time limit. Allowed outcomes: exit 0, or exit 1 with a message on
standard error. Anything else (a signal, a sanitizer report, a timeout,
exit 2, silence on failure) is printed and makes the exit status 1.
The damaged copies are never mounted.
"""

import json
import os
import random
import struct
import subprocess
import sys

TIMEOUT = 20
FAILS = []
OUTCOMES = {0: 0, 1: 0}


def run(dump, img, opts):
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "exitcode=86:" + env.get("ASAN_OPTIONS", "")
    env["UBSAN_OPTIONS"] = "halt_on_error=1:exitcode=87:" + \
        env.get("UBSAN_OPTIONS", "")
    try:
        p = subprocess.run([dump] + opts + [img], capture_output=True,
                           timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return None, b"", b"timeout"
    return p.returncode, p.stdout, p.stderr


def views(paths):
    v = [[], ["--json", "--stats"], ["--ls", "-R"],
         ["--json", "--ls", "-R"]]
    for p in paths:
        v.append(["--path=" + p])
        v.append(["--json", "--path=" + p])
        v.append(["--cat=" + p])
    return v


def check(dump, img, what, paths):
    for opts in views(paths):
        rc, out, err = run(dump, img, opts)
        bad = None
        if rc in OUTCOMES:
            OUTCOMES[rc] += 1
        if rc is None:
            bad = "timeout (%d s)" % TIMEOUT
        elif rc < 0:
            bad = "killed by signal %d" % -rc
        elif rc not in (0, 1):
            bad = "exit %d" % rc
        elif b"Sanitizer" in err or b"runtime error" in err:
            bad = "sanitizer report"
        elif rc == 1 and not err.strip():
            bad = "exit 1 without a message"
        if bad:
            FAILS.append("%s %s: %s\n%s" % (what, " ".join(opts), bad,
                                            err.decode("utf-8", "replace")
                                            [-2000:]))
            print("FAIL:", FAILS[-1])


def meta_of(dump, img):
    """Byte ranges of metadata, some paths, directory entry slots."""
    doc = json.loads(subprocess.run([dump, "--json", "--ls", "-R", img],
                                    capture_output=True, check=True).stdout)
    sb = json.loads(subprocess.run([dump, "--json", img], capture_output=True,
                                   check=True).stdout)["superblock"]
    base = sb["meta_blkaddr"] * sb["block_size"]
    ranges = [(1024, 1024 + sb["sb_size"])]
    files, dirs = [], []
    nids = {"/": sb["root_nid"]}
    for d in doc["ls"]:
        dirs.append(d["path"])
        for e in d["entries"]:
            p = d["path"].rstrip("/") + "/" + e["name"]
            nids[p] = e["nid"]
            if e["type"] == "regular" and e["size"] and p.isascii():
                files.append(p)
    for p, nid in nids.items():
        pos = base + nid * 32
        ranges.append((pos, pos + 64))
    # Directory blocks: where their entries are.
    dirblocks = []
    for p in dirs:
        ino = json.loads(subprocess.run(
            [dump, "--json", b"--path=" + p.encode("utf-8", "surrogateescape"),
             img],
            capture_output=True, check=True).stdout)["inode"]
        for x in ino["extents"]:
            if x["pos"] is not None:
                ranges.append((x["pos"], x["pos"] + x["plen"]))
                dirblocks.append((p, x["pos"], x["plen"]))
    return sb, ranges, files, dirblocks, nids


def dirents(data, pos, plen):
    """(slot offset, name, nid, file_type) of one directory block."""
    out = []
    blk = data[pos:pos + plen]
    if len(blk) < 12:
        return out
    n = struct.unpack_from("<H", blk, 8)[0] // 12
    for i in range(n):
        nid, off, ft = struct.unpack_from("<QHB", blk, i * 12)
        end = struct.unpack_from("<H", blk, (i + 1) * 12 + 8)[0] \
            if i + 1 < n else len(blk)
        name = blk[off:end].split(b"\0")[0]
        out.append((pos + i * 12, name, nid, ft))
    return out


def save(work, name, data):
    path = os.path.join(work, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def main():
    dump, img, work, seed, flips = sys.argv[1:6]
    rng = random.Random(int(seed))
    with open(img, "rb") as f:
        good = f.read()
    sb, ranges, files, dirblocks, nids = meta_of(dump, img)
    paths = files[:1]
    tag = os.path.basename(img)

    # Truncations, inside the superblock, the metadata and the data.
    cuts = {0, 1, 1023, 1024 + 64, 1024 + 127, 4096, len(good) // 2,
            len(good) - 1}
    for lo, hi in rng.sample(ranges, min(4, len(ranges))):
        cuts.add((lo + hi) // 2)
    for n in sorted(cuts):
        if n < len(good):
            check(dump, save(work, "cut.img", good[:n]),
                  "%s truncated to %d:" % (tag, n), paths)

    data = bytearray(good)
    data[1024:1024 + sb["sb_size"]] = bytes(sb["sb_size"])
    check(dump, save(work, "nosb.img", data), tag + " zeroed sb:", paths)

    base = sb["meta_blkaddr"] * sb["block_size"]
    data = bytearray(good)
    root = base + sb["root_nid"] * 32
    data[root:root + 64] = bytes(64)
    check(dump, save(work, "noroot.img", data), tag + " zeroed root:", paths)

    # A subdirectory entry pointing at its own parent: a cycle.
    for p, pos, plen in dirblocks:
        for slot, name, nid, ft in dirents(good, pos, plen):
            if ft == 2 and name not in (b".", b".."):
                data = bytearray(good)
                struct.pack_into("<Q", data, slot, nids.get(p, 0))
                check(dump, save(work, "cycle.img", data),
                      "%s cycle at %s:" % (tag, os.path.join(
                          p, name.decode("latin-1"))), paths)
                break
        else:
            continue
        break
    # A file entry pointing at the root directory.
    for p, pos, plen in dirblocks:
        ents = [e for e in dirents(good, pos, plen) if e[3] == 1]
        if ents:
            data = bytearray(good)
            struct.pack_into("<Q", data, ents[0][0], sb["root_nid"])
            check(dump, save(work, "ftype.img", data),
                  "%s file entry -> root in %s:" % (tag, p), paths)
            break

    # Random changes in the metadata.
    for i in range(int(flips)):
        data = bytearray(good)
        for _ in range(rng.randint(1, 8)):
            lo, hi = rng.choice(ranges)
            at = rng.randrange(lo, min(hi, len(data)))
            data[at] = rng.choice((0, 0xff, rng.randrange(256),
                                   data[at] ^ (1 << rng.randrange(8))))
        check(dump, save(work, "flip.img", data),
              "%s flips #%d (seed %s):" % (tag, i, seed), paths)

    print("%s: %d runs exited 0, %d exited 1 with a message, %d problems"
          % (tag, OUTCOMES[0], OUTCOMES[1], len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
