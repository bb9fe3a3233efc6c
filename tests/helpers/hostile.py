#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write hostile tar layers for tests/e2e/hostile.sh.

usage: hostile.py OUTDIR

Writes OUTDIR/NAME.tar for every case and prints one line per case:
NAME<TAB>PATTERN, where PATTERN (grep -E) must appear in mkfs.img's error
message if it refuses the layer: the entry at fault. Headers are built
byte by byte, so that records tarfile would never write (duplicate pax
keys, raw binary names, odd type flags) can be made.
"""

import base64
import os
import struct
import sys
import urllib.parse

T = 1600000000  # mtime of most entries
U = 0xFFFFFFFF  # ACL_UNDEFINED_ID


def octal(n, width):
    return ("%0*o" % (width - 1, n)).encode() + b"\0"


def header(name, typeflag=b"0", size=0, mode=0o644, uid=0, gid=0, mtime=T,
           linkname=b"", devmajor=0, devminor=0):
    """One 512-byte ustar header; over-long fields are left to pax."""
    if isinstance(name, str):
        name = name.encode("utf-8", "surrogateescape")
    if isinstance(linkname, str):
        linkname = linkname.encode("utf-8", "surrogateescape")
    h = bytearray(512)
    h[0:100] = name[:100].ljust(100, b"\0")
    h[100:108] = octal(mode & 0o7777777, 8)
    h[108:116] = octal(min(uid, 0o7777777), 8)
    h[116:124] = octal(min(gid, 0o7777777), 8)
    h[124:136] = octal(size, 12)
    h[136:148] = octal(max(0, min(mtime, 0o77777777777)), 12)
    h[148:156] = b" " * 8
    h[156:157] = typeflag
    h[157:257] = linkname[:100].ljust(100, b"\0")
    h[257:265] = b"ustar\x0000"
    h[329:337] = octal(devmajor & 0o7777777, 8)
    h[337:345] = octal(devminor & 0o7777777, 8)
    h[148:156] = ("%06o\0 " % sum(h)).encode()
    return bytes(h)


def pad(data):
    return data + b"\0" * (-len(data) % 512)


def record(key, value):
    """One pax record "LEN KEY=VALUE\\n"; keys and values are raw bytes."""
    if isinstance(key, str):
        key = key.encode("utf-8", "surrogateescape")
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogateescape")
    body = b" " + key + b"=" + value + b"\n"
    n = len(body) + 1
    while len(str(n).encode()) + len(body) != n:
        n = len(str(n).encode()) + len(body)
    return str(n).encode() + body


class Tar:
    def __init__(self):
        self.out = bytearray()

    def entry(self, name, typeflag=b"0", data=b"", pax=(), **kw):
        """pax: (key, value) pairs, in order, duplicates allowed."""
        if pax:
            recs = b"".join(record(k, v) for k, v in pax)
            self.out += header(b"PaxHeaders/x", b"x", len(recs))
            self.out += pad(recs)
        self.out += header(name, typeflag, len(data), **kw)
        self.out += pad(data)

    def gnu_long(self, kind, value):
        if isinstance(value, str):
            value = value.encode("utf-8", "surrogateescape")
        value += b"\0"
        self.out += header(b"././@LongLink", kind, len(value), mode=0)
        self.out += pad(value)

    def raw(self, data):
        self.out += data

    def write(self, path):
        with open(path, "wb") as f:
            f.write(bytes(self.out) + b"\0" * 1024)


def xa(name, value):
    if isinstance(name, str):
        name = name.encode("utf-8", "surrogateescape")
    return (b"SCHILY.xattr." + name, value)


def acl(*ents, version=2):
    return struct.pack("<I", version) + b"".join(
        struct.pack("<HHI", t, p, i) for t, p, i in ents)


UO, US, GO, GR, MA, OT = 1, 2, 4, 8, 0x10, 0x20
ACL_MIN = acl((UO, 6, U), (GO, 4, U), (OT, 4, U))

CASES = []


def case(pattern, mount=False):
    """mount: also compare the accepted image, mounted, with a bsdtar
    extraction (the case then starts with an explicit d/, so that no
    directory is implied with differing times)."""
    def reg(fn):
        CASES.append((fn.__name__.replace("_", "-"), pattern, fn, mount))
        return fn
    return reg


# --- xattrs -------------------------------------------------------------

@case("d/(f|dir|sym)", mount=True)
def xattr_empty_values(t):
    t.entry("d/", b"5", mode=0o755, pax=[xa("user.e", "")])
    t.entry("d/f", pax=[xa("user.e", ""), xa("trusted.e", ""),
                        xa("security.e", "")])
    t.entry("d/sym", b"2", mode=0o777, linkname="f", pax=[xa("trusted.e", "")])


@case("d/(sym|fifo|dev)")
def xattr_user_on_symlink(t):
    t.entry("d/f")
    t.entry("d/sym", b"2", mode=0o777, linkname="f", pax=[xa("user.e", "")])


@case("d/f")
def xattr_value_65535(t):
    t.entry("d/f", pax=[xa("user.big", b"\xff" * 65535)])


@case("d/f")
def xattr_value_65536(t):
    t.entry("d/f", pax=[xa("user.big", b"v" * 65536)])


@case("d/f")
def xattr_many_names(t):
    t.entry("d/f", pax=[xa("user.n%05d" % i, "%d" % i) for i in range(3000)])


@case("d/f", mount=True)
def xattr_many_big_values(t):
    # 6 x 60 KB: over the inline limit, some must go to the shared area
    t.entry("d/f", pax=[xa("user.v%d" % i, bytes([65 + i]) * 60000)
                        for i in range(6)])


@case("d/f")
def xattr_prefix_only_user(t):
    t.entry("d/f", pax=[xa("user.", "v")])


@case("d/f")
def xattr_prefix_only_trusted(t):
    t.entry("d/f", pax=[xa("trusted.", "")])


@case("d/f")
def xattr_system_other(t):
    t.entry("d/f", pax=[xa("system.posix_acl_accessx", ACL_MIN)])


@case("d/f")
def xattr_no_namespace(t):
    t.entry("d/f", pax=[xa("plain", "v")])


@case("d/f")
def xattr_duplicate_names(t):
    t.entry("d/f", pax=[xa("user.d", "first"), xa("user.d", "second"),
                        xa("user.d", "")])


@case("d/f", mount=True)
def xattr_binary_names(t):
    t.entry("d/f", pax=[xa(b"user.\xff\xfe\x01\x7f", "bin"),
                        xa(b"user.\xc3\xa9t\xc3\xa9", "utf8"),
                        xa(b"user.sp ace\ttab", "ws")])


@case("d/f")
def xattr_libarchive_encoded(t):
    # LIBARCHIVE.xattr.NAME: URL-encoded name, base64 value
    nm = urllib.parse.quote(b"user.has\x01ctl=eq%", safe="")
    t.entry("d/f", pax=[("LIBARCHIVE.xattr." + nm,
                         base64.b64encode(b"\0\1\2binary").decode())])


@case("d/f")
def xattr_libarchive_nul_name(t):
    t.entry("d/f", pax=[("LIBARCHIVE.xattr.user.a%00b",
                         base64.b64encode(b"v").decode())])


@case("d/f")
def xattr_name_256(t):
    t.entry("d/f", pax=[xa("user." + "n" * 251, "v")])


@case("d/f")
def xattr_list_over_64k(t):
    t.entry("d/f", pax=[xa("user.%04d" % i + "x" * 240, "")
                        for i in range(300)])


@case("d/f")
def acl_raw_bad_version(t):
    t.entry("d/f", pax=[xa("system.posix_acl_access",
                           acl((UO, 6, U), (GO, 4, U), (OT, 4, U),
                               version=1))])


@case("d/f")
def acl_raw_truncated(t):
    t.entry("d/f", pax=[xa("system.posix_acl_access", ACL_MIN[:-3])])


@case("d/f")
def acl_raw_unsorted(t):
    t.entry("d/f", pax=[xa("system.posix_acl_access",
                           acl((OT, 4, U), (UO, 6, U), (GO, 4, U)))])


@case("d/f")
def acl_raw_default_on_file(t):
    t.entry("d/f", pax=[xa("system.posix_acl_default", ACL_MIN)])


@case("d/")
def acl_raw_valid_dir(t):
    t.entry("d/", b"5", mode=0o755,
            pax=[xa("system.posix_acl_access",
                    acl((UO, 7, U), (US, 5, 1000), (GO, 5, U), (MA, 5, U),
                        (OT, 5, U))),
                 xa("system.posix_acl_default", ACL_MIN)])


@case("d/f")
def acl_text_name_without_id(t):
    t.entry("d/f", pax=[("SCHILY.acl.access",
                         "user::rw-,user:nobody-here:rw-,group::r--,"
                         "mask::rw-,other::r--")])


@case("d/")
def acl_text_default_incomplete(t):
    t.entry("d/", b"5", mode=0o755,
            pax=[("SCHILY.acl.default", "user:1000:rwx:1000")])


@case("d/f")
def acl_text_garbage(t):
    t.entry("d/f", pax=[("SCHILY.acl.access", "this is not an acl")])


@case("d/f")
def acl_text_duplicate_named(t):
    t.entry("d/f", pax=[("SCHILY.acl.access",
                         "user::rw-,user:a:r--:1000,user:b:rw-:1000,"
                         "group::r--,mask::rw-,other::r--")])


@case("d/f")
def acl_text_nfs4(t):
    t.entry("d/f", pax=[("SCHILY.acl.ace",
                         "owner@:rwxp--aARWcCos:-------:allow")])


@case("d/sym")
def acl_on_symlink(t):
    t.entry("d/f")
    t.entry("d/sym", b"2", linkname="f",
            pax=[xa("system.posix_acl_access",
                    acl((UO, 7, U), (GO, 5, U), (OT, 5, U)))])


# --- paths --------------------------------------------------------------

@case("etc|abs|x")
def path_dots_and_slashes(t):
    t.entry("../../etc/x1")
    t.entry("/abs//x2")
    t.entry("./././x3")
    t.entry("a/../../b/./x4")


@case("x", mount=True)
def path_odd_bytes(t):
    t.entry(b"d/new\nline")
    t.entry(b"d/back\\slash")
    t.entry(b"d/\xff\xfe-not-utf8")
    t.entry(b"d/tab\there")
    t.entry(b"d/" + b"\x01\x02\x1b[31m")


@case("d/")
def path_long_component_255(t):
    t.entry("d/" + "n" * 255, pax=[("path", "d/" + "n" * 255)])


@case("nnnnnnnn")
def path_long_component_256(t):
    t.entry("d/x", pax=[("path", "d/" + "n" * 256)])


@case("d/")
def path_very_deep(t):
    p = "/".join("d%03d" % i for i in range(900))  # 4499 bytes
    t.entry("x", pax=[("path", p + "/leaf")])


@case("d/")
def path_gnu_longname(t):
    t.gnu_long(b"L", "d/" + "q" * 200 + "/" + "r" * 200)
    t.entry("d/short")
    t.entry("d/longlink", b"2", linkname="short",
            pax=[("linkpath", "../" * 40 + "target")])


@case("d/longlink")
def path_linkpath_without_linkname(t):
    # libarchive takes a pax linkpath only when the header has a linkname
    t.entry("d/longlink", b"2", pax=[("linkpath", "target")])


@case(".")
def path_only_dots(t):
    t.entry(".", b"5", mode=0o700)
    t.entry("./", b"5", mode=0o750)
    t.entry("..", b"5", mode=0o755)
    t.entry("d/.", b"5", mode=0o711)
    t.entry("d/..", b"5", mode=0o755)


@case("d/x")
def path_file_then_dir_then_file(t):
    t.entry("d/x", data=b"file")
    t.entry("d/x", b"5", mode=0o755)
    t.entry("d/x/child", data=b"c")
    t.entry("d/x", data=b"file again")


@case("d/x")
def path_dir_replaced_by_symlink(t):
    t.entry("d/x/", b"5", mode=0o755)
    t.entry("d/x/child", data=b"c")
    t.entry("d/x", b"2", linkname="elsewhere")
    t.entry("d/x/child2", data=b"d")


# --- types, modes, ids, times --------------------------------------------

@case("d/")
def type_odd_flags(t):
    t.entry("d/contig", b"7", data=b"contiguous")
    t.entry("d/old", b"\0", data=b"old regular")


@case("d/unknown")
def type_unknown_flag(t):
    t.entry("d/unknown", b"Z", data=b"??")


@case("d/vol")
def type_volume_header(t):
    t.entry("d/vol", b"V")
    t.entry("d/f")


@case("d/", mount=True)
def type_devices_and_fifos(t):
    t.entry("d/c", b"3", devmajor=4095, devminor=1048575)
    t.entry("d/b", b"4", devmajor=0, devminor=0)
    t.entry("d/p", b"6", mode=0o600)


@case("d/big-major")
def type_device_too_big(t):
    t.entry("d/big-major", b"3", pax=[("SCHILY.devmajor", "4096"),
                                      ("SCHILY.devminor", "1")])


@case("d/empty-link")
def type_symlink_empty(t):
    t.entry("d/empty-link", b"2", linkname="")


@case("d/")
def type_regular_with_dir_mode(t):
    t.entry("d/f", data=b"x", mode=0o40755)
    t.entry("d/g", b"5", mode=0o100644)


@case("d/", mount=True)
def mode_extremes(t):
    t.entry("d/zero", mode=0)
    t.entry("d/all", mode=0o7777)
    t.entry("d/dir0", b"5", mode=0)
    t.entry("d/sticky-file", mode=0o1644)


@case("d/")
def ids_extremes(t):
    # 2^32 - 1 is no id to the kernel (it shows the overflow id 65534)
    t.entry("d/u32", pax=[("uid", "4294967295"), ("gid", "4294967295")])
    t.entry("d/u16", uid=65535, gid=65536)
    t.entry("d/zero", uid=0, gid=0)


@case("d/", mount=True)
def ids_large(t):
    t.entry("d/u32", pax=[("uid", "4294967294"), ("gid", "4000000000")])
    t.entry("d/u16", uid=65535, gid=65536)


@case("d/(neg|huge)")
def ids_out_of_range(t):
    t.entry("d/huge", pax=[("uid", "4294967296")])
    t.entry("d/neg", pax=[("gid", "-5")])


@case("d/")
def times_odd(t):
    t.entry("d/zero", mtime=0)
    t.entry("d/far", pax=[("mtime", "99999999999.999999999")])
    t.entry("d/ns", pax=[("mtime", "1600000000.123456789123")])
    t.entry("d/frac", pax=[("mtime", "1600000000.5")])
    t.entry("d/max-octal", mtime=0o77777777777)


# --- hard links ---------------------------------------------------------

@case("d/", mount=True)
def link_to_odd_targets(t):
    t.entry("d/sym", b"2", mode=0o777, linkname="nowhere")
    t.entry("d/fifo", b"6")
    t.entry("d/dev", b"3", devmajor=1, devminor=3)
    t.entry("d/l-sym", b"1", linkname="d/sym")
    t.entry("d/l-fifo", b"1", linkname="d/fifo")
    t.entry("d/l-dev", b"1", linkname="d/dev")


@case("d/")
def link_chain_and_forward(t):
    t.entry("d/a", b"1", linkname="d/c")
    t.entry("d/b", b"1", linkname="d/a")
    t.entry("d/c", data=b"target after its links")


@case("d/self")
def link_to_itself(t):
    t.entry("d/self", b"1", linkname="d/self")


@case("d/(l|dir)")
def link_to_directory(t):
    t.entry("d/dir/", b"5", mode=0o755)
    t.entry("d/l", b"1", linkname="d/dir")


@case("d/")
def link_with_dotdot_target(t):
    t.entry("d/f", data=b"x")
    t.entry("d/l", b"1", linkname="../../d/./f")


@case("d/l")
def link_with_xattrs(t):
    t.entry("d/f", data=b"x", pax=[xa("user.a", "on the file")])
    t.entry("d/l", b"1", linkname="d/f", pax=[xa("user.b", "on the link")])


@case("d/l")
def link_target_replaced_by_dir(t):
    t.entry("d/f", data=b"x")
    t.entry("d/l", b"1", linkname="d/f")
    t.entry("d/f", b"5", mode=0o755)


@case("d/l")
def link_to_whiteout(t):
    t.entry("d/.wh.gone")
    t.entry("d/l", b"1", linkname="d/.wh.gone")


# --- whiteouts ----------------------------------------------------------

@case("d/")
def whiteout_plain_and_opaque(t):
    t.entry("d/", b"5", mode=0o755)
    t.entry("d/.wh.gone")
    t.entry("e/.wh..wh..opq")
    t.entry(".wh.top")


@case("d/")
def whiteout_then_same_name(t):
    t.entry("d/.wh.x")
    t.entry("d/x", data=b"back again")


@case("d/")
def whiteout_with_xattrs(t):
    t.entry("d/.wh.gone", pax=[xa("user.w", "on a whiteout")])


@case("d/")
def whiteout_opaque_and_user_overlay_xattr(t):
    t.entry("d/", b"5", mode=0o755, pax=[xa("trusted.overlay.opaque", "n")])
    t.entry("d/.wh..wh..opq")


@case("d/e: [0-9]+ xattr names")
def whiteout_near_limits(t):
    # a directory whose xattrs (65500 bytes of names) leave no room in the
    # name list for the converter's trusted.overlay.* xattrs: refused
    t.entry("d/e/", b"5", mode=0o755,
            pax=[xa("user.%04d" % i + "x" * 240, "") for i in range(262)])
    t.entry("d/e/.wh.gone")
    t.entry("d/e/.wh..wh..opq")


@case("d/")
def whiteout_dir_entry(t):
    t.entry("d/.wh.subdir/", b"5", mode=0o755)


# --- areas changed on other branches (see SKIP_CASES in hostile.sh) -------

@case("d/")
def times_negative(t):
    t.entry("d/minus-half", pax=[("mtime", "-1.5")])
    t.entry("d/long-ago", pax=[("mtime", "-99999999999")])
    t.entry("d/minus-ns", pax=[("mtime", "-0.000000001")])


@case("d/")
def whiteout_of_dot(t):
    t.entry("d/", b"5", mode=0o755)
    t.entry("d/.wh..")


@case("d/")
def whiteout_of_dotdot(t):
    t.entry("d/", b"5", mode=0o755)
    t.entry("d/.wh...")


@case("d/")
def whiteout_meta_empty(t):
    t.entry("d/", b"5", mode=0o755)
    t.entry("d/.wh..wh..")


def sparse10(t, name, realsize, extents, data):
    """GNU sparse 1.0: the map, in decimal lines, starts the data."""
    m = "%d\n" % len(extents) + "".join("%d\n%d\n" % e for e in extents)
    body = pad(m.encode()) + data
    t.entry("d/GNUSparseFile.0/" + name.split("/")[-1], data=body,
            pax=[("GNU.sparse.major", "1"), ("GNU.sparse.minor", "0"),
                 ("GNU.sparse.name", name),
                 ("GNU.sparse.realsize", str(realsize))])


@case("d/sparse")
def sparse_overlapping_map(t):
    sparse10(t, "d/sparse", 100, [(0, 10), (5, 10)], b"a" * 20)


@case("d/sparse")
def sparse_map_past_size(t):
    sparse10(t, "d/sparse", 10, [(0, 4), (100, 4)], b"b" * 8)


@case("d/sparse")
def sparse_unsorted_map(t):
    sparse10(t, "d/sparse", 8192, [(4096, 4), (0, 4)], b"c" * 8)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    only = set(sys.argv[2:])
    for name, pattern, fn, mount in CASES:
        if only and name not in only:
            continue
        t = Tar()
        if mount:
            t.entry("d/", b"5", mode=0o755)
        fn(t)
        t.write(os.path.join(out, name + ".tar"))
        print("%s\t%s\t%s" % (name, pattern, "mount" if mount else "-"))


if __name__ == "__main__":
    main()
