"""
Names that differ only in their Unicode form, for tests/e2e/names.sh:
NFC next to NFD, U+00C5 next to U+212B and "A" + U+030A, precomposed
Hangul next to conjoining jamo, in names, a directory name, a symlink
target, a hard link target and xattr names.

  nametars.py make DIR     pax.tar, gnu.tar, ustar.tar (Python's writer)
                           and go.tar (pax records for every non-ASCII
                           name and link, ASCII-only ustar fields, as Go's
                           archive/tar writes them)
  nametars.py tar TAR      listing of TAR as Python's tarfile reads it
  nametars.py tree DIR     listing of the mounted tree DIR

A listing is one line per path, its bytes in hex: type, link target or
content digest, xattr names; implied parent directories are listed.
"""
import hashlib
import io
import os
import sys
import tarfile

NAMES = ["caf\u00e9", "cafe\u0301", "\u00c5", "\u212b", "A\u030a",
         "\uac00", "\u1100\u1161"]
DIRS = ["r\u00e9p", "re\u0301p"]
XATTRS = {"user.caf\u00e9": "1", "user.cafe\u0301": "2"}
MTIME = 1700000000


def entries():
    """(name, type, data or link target, xattrs) in archive order."""
    out = [("d/", tarfile.DIRTYPE, None, None)]
    for i, n in enumerate(NAMES):
        out.append(("d/" + n, tarfile.REGTYPE, ("%d %s\n" % (i, n)).encode(),
                    XATTRS if i == 0 else None))
    for i, d in enumerate(DIRS):
        out.append(("d/" + d + "/", tarfile.DIRTYPE, None, None))
        out.append(("d/" + d + "/x", tarfile.REGTYPE, b"dir %d\n" % i, None))
    out.append(("d/sym", tarfile.SYMTYPE, "cafe\u0301", None))
    out.append(("d/hard", tarfile.LNKTYPE, "d/cafe\u0301", None))
    return out


def python_tar(path, fmt):
    with tarfile.open(path, "w", format=fmt, encoding="utf-8") as t:
        for name, kind, data, xattrs in entries():
            ti = tarfile.TarInfo(name)
            ti.type, ti.mtime = kind, MTIME
            ti.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
            if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                ti.linkname = data
                data = None
            if xattrs and fmt == tarfile.PAX_FORMAT:
                ti.pax_headers = {"SCHILY.xattr." + k: v
                                  for k, v in xattrs.items()}
            ti.size = len(data) if data else 0
            t.addfile(ti, io.BytesIO(data) if data else None)


def go_block(name, kind, size, link=b"", mode=0o644, mtime=MTIME):
    b = bytearray(512)

    def put(off, width, value):
        b[off:off + len(value[:width])] = value[:width]
    put(0, 100, name)
    put(100, 8, b"%07o\0" % mode)
    put(108, 8, b"%07o\0" % 0)
    put(116, 8, b"%07o\0" % 0)
    put(124, 12, b"%011o\0" % size)
    put(136, 12, b"%011o\0" % mtime)
    b[156] = ord(kind)
    put(157, 100, link)
    put(257, 8, b"ustar\x0000")
    b[148:156] = b" " * 8
    put(148, 8, b"%06o\0 " % sum(b))
    return bytes(b)


def pad(data):
    return data + b"\0" * (-len(data) % 512)


def pax_record(key, value):
    rec = b" " + key + b"=" + value + b"\n"
    n = len(rec)
    while len(b"%d" % n) + len(rec) != n:
        n = len(b"%d" % n) + len(rec)
    return b"%d" % n + rec


def go_tar(path):
    """As Go's tar.Writer: a pax header whenever a name or link target
    is not ASCII, ASCII-only (non-ASCII dropped) ustar fields."""
    out = []
    kinds = {tarfile.DIRTYPE: b"5", tarfile.REGTYPE: b"0",
             tarfile.SYMTYPE: b"2", tarfile.LNKTYPE: b"1"}
    for name, kind, data, xattrs in entries():
        bname = name.encode()
        link = data.encode() if kind in (tarfile.SYMTYPE,
                                         tarfile.LNKTYPE) else b""
        body = b"" if link or data is None else data
        recs = b""
        if not bname.isascii():
            recs += pax_record(b"path", bname)
        if not link.isascii():
            recs += pax_record(b"linkpath", link)
        for k, v in (xattrs or {}).items():
            recs += pax_record(b"SCHILY.xattr." + k.encode(), v.encode())
        if recs:
            d, _, f = bname.rstrip(b"/").rpartition(b"/")
            xname = (d + b"/" if d else b"") + b"PaxHeaders.0/" + f
            out.append(go_block(xname, "x", len(recs), mode=0, mtime=0))
            out.append(pad(recs))
        ascii_ = bytes(c for c in bname if c < 0x80)
        mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
        out.append(go_block(ascii_, kinds[kind].decode(), len(body),
                            bytes(c for c in link if c < 0x80), mode))
        out.append(pad(body))
    out.append(b"\0" * 1024)
    with open(path, "wb") as f:
        f.write(b"".join(out))


def line(path, kind, what, xattrs=()):
    x = ",".join(sorted(n.hex() for n in xattrs))
    return "%s %s %s %s" % (path.hex(), kind, what, x)


def tar_listing(path):
    out = {}
    with tarfile.open(path, encoding="utf-8",
                      errors="surrogateescape") as t:
        members = t.getmembers()
        for m in members:
            p = os.fsencode(m.name).rstrip(b"/")
            parts = p.split(b"/")
            for i in range(1, len(parts)):
                out.setdefault(b"/".join(parts[:i]), line(
                    b"/".join(parts[:i]), "d", "-"))
            xattrs = [os.fsencode(k[13:]) for k in m.pax_headers
                      if k.startswith("SCHILY.xattr.")]
            if m.isdir():
                out[p] = line(p, "d", "-", xattrs)
            elif m.issym():
                out[p] = line(p, "l", os.fsencode(m.linkname).hex())
            else:
                data = t.extractfile(m).read()
                out[p] = line(p, "f", hashlib.sha256(data).hexdigest(),
                              xattrs)
    return sorted(out.values())


def tree_listing(root):
    root = os.fsencode(root)
    out = []
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            full = os.path.join(d, n)
            p = os.path.relpath(full, root)
            xattrs = [os.fsencode(x) for x in os.listxattr(full,
                                                            follow_symlinks=False)
                      if x.startswith("user.")]
            if os.path.islink(full):
                out.append(line(p, "l", os.readlink(full).hex()))
            elif os.path.isdir(full):
                out.append(line(p, "d", "-", xattrs))
            else:
                with open(full, "rb") as f:
                    out.append(line(p, "f",
                                    hashlib.sha256(f.read()).hexdigest(),
                                    xattrs))
    return sorted(out)


def main():
    cmd, arg = sys.argv[1:3]
    if cmd == "make":
        python_tar(os.path.join(arg, "pax.tar"), tarfile.PAX_FORMAT)
        python_tar(os.path.join(arg, "gnu.tar"), tarfile.GNU_FORMAT)
        python_tar(os.path.join(arg, "ustar.tar"), tarfile.USTAR_FORMAT)
        go_tar(os.path.join(arg, "go.tar"))
        return
    lines = tar_listing(arg) if cmd == "tar" else tree_listing(arg)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
