#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The library's layer rule, checked on the sources and the built objects.

lib/ is one folder per layer; a folder may use its own folder and the
folders ranked below it, never one beside or above it (docs/architecture.md
draws them). Checked here:

  includes  every #include "..." of lib/**/*.[ch] names a header of an
            allowed folder; every #include "..." of the programs (mkfs/,
            fsck/, dump/) names a public header ("imgfs/...") or one of
            the program's own folder.
  calls     from the library's objects (nm): a file may only call into
            (or reference data of) an allowed folder, and no call cycle
            may span files of different folders. A cycle inside one
            folder is reported as a warning.

Tests (tests/) are not checked: they may test internals.

usage: layers.py SRCDIR BUILDDIR    exit 0 clean, 1 violations, 77 not built
"""
import collections
import glob
import os
import re
import subprocess
import sys

# Ranks of the library's folders. A new folder must be added here.
RANK = {
    "util": 0, "format": 0,
    "codec": 1, "source": 1, "verity": 1,
    "writer": 2, "reader": 2,
    "check": 3, "inspect": 3, "compare": 3,
    "extract": 3,
    "stack": 3,
    "oci": 4,
}
# Same rank, one direction allowed: the format layer may use the error and
# container helpers of util; util knows nothing of the on-disk format.
SIDEWAYS = {("format", "util")}

PROGRAMS = ("mkfs", "fsck", "dump")

# Violations known on this branch and removed by other work of issue 10;
# each is tolerated for exactly the pair named, reported as XFAIL, and
# reported as stale once it no longer occurs (then delete the entry).
KNOWN_INCLUDES = {
}
KNOWN_CALLS = {
}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def allowed(src, dst):
    """May folder @src use folder @dst?"""
    return src == dst or RANK[dst] < RANK[src] or (src, dst) in SIDEWAYS


def why_not(src, dst):
    if RANK[dst] > RANK[src]:
        return "calls up"
    return "beside it"


class Report:
    def __init__(self):
        self.fails = 0
        self.known_seen = set()

    def fail(self, msg):
        self.fails += 1
        print("FAIL: " + msg)

    def warn(self, msg):
        print("WARNING: " + msg)

    def known(self, key, msg, reason):
        self.known_seen.add(key)
        print("XFAIL: %s [known: %s]" % (msg, reason))


def header_folder(path, inc):
    """Folder a quoted include of file @path refers to (None: not lib/)."""
    if inc.startswith("imgfs/"):
        return None
    if "/" not in inc:
        return path.split("/")[1] if path.startswith("lib/") else None
    return inc.split("/")[0]


def check_lib_includes(srcdir, rep):
    for f in sorted(glob.glob(os.path.join(srcdir, "lib", "**", "*.[ch]"),
                              recursive=True)):
        rel = os.path.relpath(f, srcdir)
        parts = rel.split(os.sep)
        if len(parts) != 3:
            rep.fail("%s: library sources live in lib/FOLDER/" % rel)
            continue
        src = parts[1]
        if src not in RANK:
            rep.fail("%s: folder lib/%s has no rank in %s" %
                     (rel, src, os.path.basename(__file__)))
            continue
        with open(f, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for inc in INCLUDE_RE.findall(text):
            if inc.startswith("imgfs/"):
                continue
            if ".." in inc.split("/"):
                rep.fail('%s includes "%s": no relative paths' % (rel, inc))
                continue
            dst = header_folder("lib/%s/x" % src, inc)
            if dst not in RANK:
                rep.fail('%s includes "%s": not a library folder' %
                         (rel, inc))
            elif not allowed(src, dst):
                rep.fail('%s includes "%s": %s (rank %d) may not use %s '
                         '(rank %d, %s)' % (rel, inc, src, RANK[src], dst,
                                             RANK[dst], why_not(src, dst)))


def check_program_includes(srcdir, rep):
    for prog in PROGRAMS:
        for f in sorted(glob.glob(os.path.join(srcdir, prog, "*.[ch]"))):
            rel = os.path.relpath(f, srcdir)
            with open(f, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            for inc in INCLUDE_RE.findall(text):
                own = "/" not in inc and os.path.exists(
                    os.path.join(srcdir, prog, inc))
                # frontend/: the helpers the programs share (not lib/)
                if inc.startswith(("imgfs/", "frontend/")) or own:
                    continue
                msg = ('%s includes "%s": a program sees only "imgfs/..." '
                       'and its own folder' % (rel, inc))
                key = (rel, inc)
                if key in KNOWN_INCLUDES:
                    rep.known(key, msg, KNOWN_INCLUDES[key])
                else:
                    rep.fail(msg)


OBJ_RE = re.compile(r"^lib/([^/]+)/(?:\.libs/)?([A-Za-z0-9_]+_la)-(.+)\.o$")


def library_objects(srcdir, builddir):
    """{lib/FOLDER/NAME.c: object} for the sources that exist, one object
    each (PIC when libtool made both), from one library's objects."""
    found = collections.defaultdict(dict)
    objects = [os.path.join(d, f)
               for d, _, files in os.walk(os.path.join(builddir, "lib"))
               for f in files if f.endswith(".o")]
    for o in objects:
        m = OBJ_RE.match(os.path.relpath(o, builddir))
        if not m:
            continue
        folder, prefix, name = m.groups()
        src = "lib/%s/%s.c" % (folder, name)
        # an object left over from a source moved away is not the library
        if not os.path.exists(os.path.join(srcdir, src)):
            continue
        if src not in found[prefix] or "/.libs/" in o:
            found[prefix][src] = o
    want = os.environ.get("LAYERS_LIBRARY", "libimgfs_la")
    if want in found:
        return found[want]
    return found[sorted(found)[0]] if found else {}


def nm_symbols(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) < 2:
            continue
        name, kind = p[0], p[1]
        if kind == "U":
            undefined.add(name)
        elif kind in "TDRBCVWGS":
            defined.add(name)
    return defined, undefined


def strongly_connected(nodes, edges):
    """Tarjan's algorithm, iterative: lists of nodes, one per component."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def check_calls(srcdir, builddir, rep):
    objs = library_objects(srcdir, builddir)
    if not objs:
        return False
    missing = [s for s in sorted(glob.glob(os.path.join(srcdir, "lib", "*",
                                                        "*.c")))
               if os.path.relpath(s, srcdir) not in objs]
    for s in missing:
        rep.fail("%s: no object built from it" % os.path.relpath(s, srcdir))
    owner, needs = {}, {}
    for src, obj in objs.items():
        defined, undefined = nm_symbols(obj)
        for sym in defined:
            owner[sym] = src
        needs[src] = undefined
    edges = collections.defaultdict(set)
    syms = collections.defaultdict(set)
    for src, undefined in needs.items():
        for sym in undefined:
            dst = owner.get(sym)
            if dst and dst != src:
                edges[src].add(dst)
                syms[(src, dst)].add(sym)
    folder = {s: s.split("/")[1] for s in objs}
    fedges = collections.defaultdict(set)
    for src in sorted(edges):
        for dst in sorted(edges[src]):
            a, b = folder[src], folder[dst]
            if a != b:
                fedges[a].add(b)
            if a not in RANK or b not in RANK or allowed(a, b):
                continue
            msg = "%s -> %s (%s): %s may not call %s (%s)" % (
                src, dst, ", ".join(sorted(syms[(src, dst)])), a, b,
                why_not(a, b))
            if (src, dst) in KNOWN_CALLS:
                rep.known((src, dst), msg, KNOWN_CALLS[(src, dst)])
            else:
                rep.fail(msg)
    for comp in strongly_connected(set(objs), edges):
        if len(comp) < 2:
            continue
        folders = sorted({folder[s] for s in comp})
        if len(folders) > 1:
            rep.fail("call cycle across folders %s: %s" %
                     (", ".join(folders), " ".join(comp)))
        else:
            rep.warn("call cycle within lib/%s: %s" %
                     (folders[0], " ".join(os.path.basename(s)
                                           for s in comp)))
    print("folder calls: " + "; ".join(
        "%s -> %s" % (a, " ".join(sorted(fedges[a]))) for a in sorted(fedges)))
    return True


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    srcdir, builddir = sys.argv[1], sys.argv[2]
    rep = Report()
    check_lib_includes(srcdir, rep)
    check_program_includes(srcdir, rep)
    built = check_calls(srcdir, builddir, rep)
    for key, reason in sorted(list(KNOWN_INCLUDES.items()) +
                              list(KNOWN_CALLS.items())):
        if key not in rep.known_seen and (built or key in KNOWN_INCLUDES):
            rep.warn("known violation %s -> %s no longer occurs: delete "
                     "its entry in %s" % (key[0], key[1],
                                          os.path.basename(__file__)))
    if rep.fails:
        print("layers: %d violation(s)" % rep.fails)
        return 1
    if not built:
        print("layers: no library objects under %s/lib: build first" %
              builddir)
        return 77
    print("layers: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
