#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate the tar layers used by the end-to-end tests.

usage: mktar.py SCENARIO OUT [ARGS...]

Some scenarios write a second tar, OUT.expected.tar, holding what the image
must contain (the reference extraction is made from it): paths already
normalised, implied directories spelt out, duplicates resolved.
Run with no arguments for the list of scenarios.
"""

import io
import random
import sys
import tarfile

BUILD_TIME = 1600000000  # the tests pass -T with this value


class Tar:
    """A thin writer with one method per entry type."""

    def __init__(self, path, fmt=tarfile.PAX_FORMAT):
        self.tf = tarfile.open(path, "w", format=fmt, encoding="utf-8",
                               errors="surrogateescape")

    def close(self):
        self.tf.close()

    def _info(self, name, kind, mode, uid, gid, mtime, xattrs):
        ti = tarfile.TarInfo(name)
        ti.type = kind
        ti.mode = mode
        ti.uid = uid
        ti.gid = gid
        ti.uname = ti.gname = ""
        if isinstance(mtime, tuple):
            sec, nsec = mtime
            ti.mtime = sec if sec >= 0 else 0
            ti.pax_headers["mtime"] = "%d.%09d" % (sec, nsec)
        else:
            ti.mtime = mtime
            if mtime < 0:
                ti.pax_headers["mtime"] = str(mtime)
        for k, v in (xattrs or {}).items():
            if isinstance(v, bytes):
                v = v.decode("utf-8", "surrogateescape")
            ti.pax_headers["SCHILY.xattr." + k] = v
        return ti

    def dir(self, name, mode=0o755, uid=0, gid=0, mtime=BUILD_TIME,
            xattrs=None):
        self.tf.addfile(self._info(name, tarfile.DIRTYPE, mode, uid, gid,
                                   mtime, xattrs))

    def file(self, name, data=b"", mode=0o644, uid=0, gid=0,
             mtime=BUILD_TIME, xattrs=None):
        ti = self._info(name, tarfile.REGTYPE, mode, uid, gid, mtime, xattrs)
        ti.size = len(data)
        self.tf.addfile(ti, io.BytesIO(data))

    def symlink(self, name, target, uid=0, gid=0, mtime=BUILD_TIME,
                xattrs=None):
        ti = self._info(name, tarfile.SYMTYPE, 0o777, uid, gid, mtime,
                        xattrs)
        ti.linkname = target
        self.tf.addfile(ti)

    def link(self, name, target, mode=0o644, uid=0, gid=0,
             mtime=BUILD_TIME):
        ti = self._info(name, tarfile.LNKTYPE, mode, uid, gid, mtime, None)
        ti.linkname = target
        self.tf.addfile(ti)

    def dev(self, name, kind, major, minor, mode=0o600, uid=0, gid=0,
            mtime=BUILD_TIME):
        ti = self._info(name, kind, mode, uid, gid, mtime, None)
        ti.devmajor = major
        ti.devminor = minor
        self.tf.addfile(ti)

    def fifo(self, name, mode=0o644, uid=0, gid=0, mtime=BUILD_TIME):
        self.tf.addfile(self._info(name, tarfile.FIFOTYPE, mode, uid, gid,
                                   mtime, None))


def rnd(n, seed=1):
    return random.Random(seed * 7919 + n).randbytes(n)


def basic(out):
    """Every entry type, edge sizes, modes, owners and times (pax)."""
    t = Tar(out)
    t.dir("./", 0o750, 1, 2, (1500000000, 5))
    t.dir("files", 0o755, 0, 0, (1600000000, 123456789))
    for n in (0, 1, 511, 512, 4095, 4096, 4097, 8192, 12289,
              3 * 1048576 + 17):
        t.file("files/size-%d" % n, rnd(n), 0o644, 0, 0,
               (1600000000 + n, n % 1000000000))
    t.file("files/zeros-64k", bytes(65536))
    t.dir("modes", 0o700, 1000, 1000, 1234567890)
    for m in (0o000, 0o400, 0o600, 0o755, 0o4755, 0o2755, 0o6755,
              0o1755, 0o7777, 0o4000, 0o2070):
        t.file("modes/m%04o" % m, b"mode %o\n" % m, m)
    t.dir("modes/sticky", 0o1777, 0, 0)
    t.dir("modes/setgid", 0o2775, 0, 50)
    t.dir("modes/closed", 0o000, 0, 0)
    t.file("modes/closed/inside", b"x")
    t.dir("owners")
    for uid, gid in ((0, 0), (1, 1), (1000, 100), (65534, 65534),
                     (65535, 65535), (65536, 65536), (70000, 80000),
                     (2097151, 2097152), (4000000000, 4294967294)):
        t.file("owners/u%d-g%d" % (uid, gid), b"", 0o640, uid, gid)
    t.dir("owners/dir70000", 0o755, 70000, 70001)
    t.symlink("owners/link70000", "u0-g0", 70000, 70001)
    t.dir("times")
    for i, mt in enumerate((0, 1, 86399, (1700000000, 999999999),
                            (1700000000, 1), 4294967295, 4294967296,
                            8589934592, -1, -86400 * 365 * 20,
                            (2000000000, 500))):
        t.file("times/t%d" % i, b"t", 0o644, 0, 0, mt)
    t.dir("times/dir-ns", 0o755, 0, 0, (1234567890, 987654321))
    t.symlink("times/link-old", "t0", 0, 0, 100000)
    t.dir("links")
    t.symlink("links/short", "target")
    t.symlink("links/to-dir", "../files")
    t.symlink("links/dangling", "does/not/exist")
    t.symlink("links/absolute", "/etc/passwd")
    t.symlink("links/long-4000", "L" * 3000 + "/" + "m" * 999)
    t.symlink("links/one", "x")
    t.file("links/hard-a", rnd(5000, 2), 0o640, 5, 6, (1650000000, 42))
    t.link("links/hard-b", "links/hard-a")
    t.link("files/hard-c", "links/hard-a")
    t.file("links/empty-a", b"", 0o600)
    t.link("links/empty-b", "links/empty-a")
    t.dir("dev")
    t.dev("dev/null", tarfile.CHRTYPE, 1, 3, 0o666)
    t.dev("dev/sda1", tarfile.BLKTYPE, 8, 1, 0o660, 0, 6)
    t.dev("dev/big-minor", tarfile.CHRTYPE, 259, 300000, 0o600)
    t.dev("dev/max", tarfile.BLKTYPE, 4095, 1048575, 0o600)
    t.fifo("dev/fifo", 0o620, 1, 2, (1600000001, 77))
    t.dir("names")
    t.file("names/" + "n" * 255, b"longest name")
    t.file("names/with space", b"s")
    t.file("names/\u00fcml\u00e4ut-\u65e5\u672c", b"u")
    t.file("names/bad-utf8-\udcff\udcfe", b"b")
    t.file("names/-dash", b"d")
    t.file("names/.hidden", b"h")
    deep = "deep/" + "/".join("d%02d" % i for i in range(40))
    path = ""
    for part in deep.split("/"):
        path = path + part + "/"
        t.dir(path)
    t.file(deep + "/bottom", b"bottom")
    t.dir("empty-dir", 0o711, 3, 4, (1400000000, 1))
    t.close()


def hardlink_forward(out):
    """A hard link listed before its target (only a crafted tar does that)."""
    t = Tar(out)
    t.dir("d")
    t.link("d/early-link", "d/late-target")
    t.link("early-2", "d/late-target")
    t.file("d/late-target", b"arrives late\n", 0o600, 10, 20,
           (1600000100, 5))
    t.close()
    e = Tar(out + ".expected.tar")
    e.dir("d")
    e.file("d/late-target", b"arrives late\n", 0o600, 10, 20,
           (1600000100, 5))
    e.link("d/early-link", "d/late-target")
    e.link("early-2", "d/late-target")
    e.close()


def semantics(out):
    """Duplicates, a dir after its children, implied parents, path clean-up.

    The expected tar spells out what the image must hold: the later of two
    entries for a path, a directory's final metadata with its children kept,
    implied directories as 0755 root:root with the build time, leading "/"
    and "./" stripped, ".." resolved and clamped at the root.
    """
    t = Tar(out)
    e = Tar(out + ".expected.tar")
    e.dir("./", 0o755, 0, 0, BUILD_TIME)
    # duplicates: the later entry wins
    t.dir("dup", 0o700, 1, 1, 1000)
    t.file("dup/file", b"first version, longer than the second")
    t.file("dup/file", b"second", 0o600, 5, 5, 2000)
    t.file("dup/file2link", b"was a file")
    t.symlink("dup/file2link", "now-a-link")
    t.symlink("dup/link2file", "was-a-link")
    t.file("dup/link2file", b"now a file")
    t.file("dup/file2dir", b"was a file")
    t.dir("dup/file2dir", 0o750)
    t.file("dup/file2dir/child", b"c")
    t.dir("dup", 0o755, 2, 3, (3000, 7))  # again, after children
    e.dir("dup", 0o755, 2, 3, (3000, 7))
    e.file("dup/file", b"second", 0o600, 5, 5, 2000)
    e.symlink("dup/file2link", "now-a-link")
    e.file("dup/link2file", b"now a file")
    e.dir("dup/file2dir", 0o750)
    e.file("dup/file2dir/child", b"c")
    # a directory entry after its children updates it, children stay
    t.dir("late")
    t.file("late/a/b/c", b"deep")
    t.dir("late/a/b", 0o700, 7, 7, (4000, 9))
    t.dir("late/a", 0o710, 8, 8, (5000, 1))
    e.dir("late")
    e.dir("late/a", 0o710, 8, 8, (5000, 1))
    e.dir("late/a/b", 0o700, 7, 7, (4000, 9))
    e.file("late/a/b/c", b"deep")
    # implied parents: 0755 root:root, build time
    t.file("implied/x/y/z", b"z", 0o600, 9, 9, 123)
    e.dir("implied")
    e.dir("implied/x")
    e.dir("implied/x/y")
    e.file("implied/x/y/z", b"z", 0o600, 9, 9, 123)
    # path clean-up
    t.dir("/abs", 0o700)
    t.file("/abs/file", b"absolute")
    t.file("./dot/file", b"dot")
    t.file("a/../b/./file", b"dotdot")
    t.file("../../escape/file", b"clamped")
    t.file("//double//slash", b"slashes")
    t.file("c/d/../../../../top", b"top")
    e.dir("abs", 0o700)
    e.file("abs/file", b"absolute")
    e.dir("dot")
    e.file("dot/file", b"dot")
    e.dir("b")
    e.file("b/file", b"dotdot")
    e.dir("escape")
    e.file("escape/file", b"clamped")
    e.dir("double")
    e.file("double/slash", b"slashes")
    e.file("top", b"top")
    t.close()
    e.close()


def whiteouts(out):
    """An OCI layer with whiteouts and an opaque directory."""
    t = Tar(out)
    t.dir("etc", 0o755, 0, 0, (1600000200, 3))
    t.file("etc/.wh.removed.conf", b"", 0o600, 0, 0, 1600000201)
    t.file("etc/kept.conf", b"kept\n")
    t.dir("var", 0o755, 0, 0, 1600000300)
    t.dir("var/cache", 0o700, 0, 0, (1600000400, 8))
    t.file("var/cache/.wh..wh..opq", b"", 0o600)
    t.file("var/cache/new", b"fresh cache\n")
    t.dir("opaque-only", 0o755, 0, 0, 1600000500)
    t.file("opaque-only/.wh..wh..opq", b"")
    t.dir("mixed", 0o755, 0, 0, 1600000600)
    t.file("mixed/.wh..wh..opq", b"")
    t.file("mixed/.wh.gone-dir", b"")
    t.file("mixed/.wh.gone-file", b"")
    t.file("mixed/present", b"p")
    t.file(".wh.top-level", b"")
    t.file("plain", b"no whiteouts here")
    t.close()


def bigdir(out, count=100000):
    """One directory with COUNT empty files."""
    t = Tar(out, tarfile.GNU_FORMAT)
    t.dir("big", 0o755, 0, 0, BUILD_TIME)
    ti = tarfile.TarInfo()
    ti.mode = 0o644
    ti.mtime = BUILD_TIME
    buf = t.tf.fileobj
    # tobuf() per entry is the slow part; reuse one TarInfo
    for i in range(int(count)):
        ti.name = "big/f%07d" % i
        buf.write(ti.tobuf(tarfile.GNU_FORMAT, "utf-8", "strict"))
    t.tf.offset = buf.tell()
    t.close()


def xattrs(out):
    """SCHILY.xattr records with text, binary and large values."""
    t = Tar(out)
    t.dir("x", 0o755, 0, 0, BUILD_TIME,
          {"user.dir": "on a directory", "trusted.overlay.opaque": "y"})
    t.file("x/user", b"u", xattrs={"user.a": "1", "user.b": "",
                                   "user.comment": "hello world"})
    t.file("x/binary", b"b", xattrs={
        "user.bin": bytes(range(256)),
        "user.nul": b"\x00\x00\x01\x00",
        "trusted.bin": b"\xff\xfe\x00\x80",
        "security.capability":
            b"\x01\x00\x00\x02\x00\x20\x00\x00\x00\x00\x00\x00\x00\x00"
            b"\x00\x00\x00\x00\x00\x00",
    })
    t.file("x/big-value", b"v", xattrs={"user.big": "V" * 3000})
    t.file("x/many", b"m", xattrs={"user.k%03d" % i: "value %d" % i
                                   for i in range(100)})
    t.file("x/long-name", b"n", xattrs={"user." + "k" * 200: "long name"})
    for i in range(20):
        # the same pair on many inodes: a candidate for shared xattrs
        t.file("x/shared-%02d" % i, b"s",
               xattrs={"user.shared": "same for all",
                       "trusted.overlay.origin": "",
                       "user.own": "own %d" % i})
    t.symlink("x/link-with-xattr", "user",
              xattrs={"trusted.symlink": "on a symlink"})
    t.dev("x/chr", tarfile.CHRTYPE, 5, 1)
    t.close()


def missing_link(out):
    t = Tar(out)
    t.dir("d")
    t.file("d/ok", b"ok")
    t.link("d/broken-link", "d/no-such-target")
    t.close()


def long_component(out, length=256):
    t = Tar(out)
    t.dir("d")
    t.file("d/" + "x" * int(length), b"too long")
    t.close()


def big_tree(out, nfiles=2000, total=200 << 20):
    """Generated files of mixed sizes summing to about TOTAL bytes."""
    t = Tar(out, tarfile.GNU_FORMAT)
    r = random.Random(5)
    ndirs = max(1, int(nfiles) // 50)
    for d in range(ndirs):
        t.dir("gen/d%03d" % d)
    big = int(total) // 2 // 10
    block = r.randbytes(1 << 20)
    for i in range(int(nfiles)):
        n = big if i % (int(nfiles) // 10 or 1) == 0 else \
            r.randrange(0, (int(total) // 2) // int(nfiles) * 2)
        data = (block * (n // len(block) + 1))[i % 4096:i % 4096 + n]
        t.file("gen/d%03d/f%05d" % (i % ndirs, i), data)
    t.close()


def owners(out):
    """Varied owners, plus the expected result of each ownership option.

    Writes OUT and OUT.all-root.tar (--all-root), OUT.force.tar
    (--force-uid=123 --force-gid=456), OUT.offset.tar (--uid-offset=100000
    --gid-offset=200000), OUT.force-offset.tar (--force-uid=5 --uid-offset=10).
    """
    variants = {
        "": lambda u, g: (u, g),
        ".all-root.tar": lambda u, g: (0, 0),
        ".force.tar": lambda u, g: (123, 456),
        ".offset.tar": lambda u, g: (u + 100000, g + 200000),
        ".force-offset.tar": lambda u, g: (15, g),
    }
    for suffix, m in variants.items():
        t = Tar(out + suffix)
        t.dir("./", 0o755, *m(7, 8), mtime=1500000000)
        t.dir("d", 0o750, *m(1000, 1001))
        t.file("d/root", b"r", 0o644, *m(0, 0))
        t.file("d/user", b"u", 0o600, *m(1000, 100))
        t.file("d/big", b"b", 0o4755, *m(70000, 65536))
        t.symlink("d/link", "user", *m(33, 33))
        t.dev("d/dev", tarfile.CHRTYPE, 4, 64, 0o620, *m(0, 5))
        t.fifo("d/fifo", 0o600, *m(99, 99))
        t.file("d/hard", b"h", 0o644, *m(42, 43))
        t.link("d/hard2", "d/hard")
        t.close()


def long_symlink(out):
    """A symlink whose target (4096 bytes) no kernel reads back."""
    t = Tar(out)
    t.dir("d")
    t.symlink("d/too-long", "s" * 4096)
    t.close()


def hardlink_to_dir(out):
    """A hard link entry naming a directory."""
    t = Tar(out)
    t.dir("d")
    t.dir("d/sub")
    t.link("d/dirlink", "d/sub")
    t.close()


def one_big_file(out, size=1 << 20):
    """One file of SIZE bytes (to truncate inside its data)."""
    t = Tar(out)
    t.dir("d")
    t.file("d/first", b"first")
    t.file("d/big-file", rnd(int(size), 3))
    t.close()


def bad_xattr(out):
    """An xattr outside the user/trusted/security/ACL namespaces."""
    t = Tar(out)
    t.dir("d")
    t.file("d/odd-xattr", b"x", xattrs={"foo.bar": "1"})
    t.close()


def bad_whiteout(out):
    """A .wh..wh. name that is neither a whiteout nor the opaque marker."""
    t = Tar(out)
    t.dir("d")
    t.file("d/.wh..wh.plnk", b"")
    t.close()


def bad_device(out):
    """A device number beyond what the on-disk encoding holds (4095:...)."""
    t = Tar(out)
    t.dir("d")
    t.dev("d/huge-major", tarfile.CHRTYPE, 4096, 1)
    t.close()


def file_flags(out):
    """Entries carrying file flags (pax SCHILY.fflags), which EROFS cannot
    store: a file and a directory marked nodump (harmless when bsdtar
    extracts the reference)."""
    t = Tar(out)
    t.dir("d")
    ti = t._info("d/flagged", tarfile.REGTYPE, 0o644, 0, 0, BUILD_TIME, None)
    ti.pax_headers["SCHILY.fflags"] = "nodump"
    ti.size = 5
    t.tf.addfile(ti, io.BytesIO(b"flags"))
    ti = t._info("d/sub", tarfile.DIRTYPE, 0o755, 0, 0, BUILD_TIME, None)
    ti.pax_headers["SCHILY.fflags"] = "nodump"
    t.tf.addfile(ti)
    t.file("d/sub/plain", b"plain")
    t.close()


SCENARIOS = {
    "basic": basic,
    "hardlink-forward": hardlink_forward,
    "semantics": semantics,
    "whiteouts": whiteouts,
    "bigdir": bigdir,
    "xattrs": xattrs,
    "missing-link": missing_link,
    "long-component": long_component,
    "big-tree": big_tree,
    "owners": owners,
    "long-symlink": long_symlink,
    "hardlink-to-dir": hardlink_to_dir,
    "one-big-file": one_big_file,
    "bad-xattr": bad_xattr,
    "bad-whiteout": bad_whiteout,
    "bad-device": bad_device,
    "file-flags": file_flags,
}


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in SCENARIOS:
        print(__doc__)
        for k, f in SCENARIOS.items():
            print("  %-18s %s" % (k, f.__doc__.split("\n")[0]
                                  if f.__doc__ else ""))
        return 2
    SCENARIOS[sys.argv[1]](*sys.argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
