#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the tar layers of the --compare test.

usage: cmptar.py VARIANT OUT.tar

VARIANT is "base" or a deliberate change of it: "content" (same size,
other bytes), "drop" (the symlink is left out), "mode" (a file's mode),
"longlink" (the symlink's target is 5000 bytes: mkfs.img refuses it).
The base layer exercises the transformations mkfs.img applies: root
entry, implied parents, "/", "./" and ".." in paths, duplicates (later
wins), hard links (also forward), OCI whiteouts and opaque markers, pax
xattrs, nanosecond mtimes, large ids, devices and FIFOs.
"""
import io
import sys
import tarfile

MARK = b'UNIQUE-CONTENT-MARKER-0123456789'


def add(tf, name, kind=tarfile.REGTYPE, data=b'', mode=0o644, uid=1000,
        gid=1000, mtime='1600000000.123456789', **kw):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = mode
    ti.uid, ti.gid = uid, gid
    ti.uname = ti.gname = ''
    ti.pax_headers = {'mtime': mtime}
    for k, v in kw.items():
        if k == 'xattrs':
            for n, val in v.items():
                ti.pax_headers['SCHILY.xattr.' + n] = val
        else:
            setattr(ti, k, v)
    if kind == tarfile.REGTYPE:
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
    else:
        tf.addfile(ti)


def main(variant, out):
    content = MARK * 200
    if variant == 'content':
        content = content[:-1] + b'!'
    with tarfile.open(out, 'w', format=tarfile.PAX_FORMAT) as tf:
        add(tf, './', tarfile.DIRTYPE, mode=0o755, uid=0, gid=0,
            mtime='1500000000')
        add(tf, 'dir/', tarfile.DIRTYPE, mode=0o750, uid=70000, gid=70001)
        add(tf, 'dir/file', data=content,
            mode=0o600 if variant == 'mode' else 0o644,
            xattrs={'user.k': 'v', 'trusted.t': 'x'})
        add(tf, 'dir/.wh.gone', data=b'')
        add(tf, 'opq/', tarfile.DIRTYPE, mode=0o755)
        add(tf, 'opq/.wh..wh..opq', data=b'')
        add(tf, 'opq/kept', data=b'kept')
        add(tf, 'implied/sub/file', data=b'deep')
        add(tf, '/abs/x', data=b'abs')
        add(tf, './dot/./y', data=b'dot')
        add(tf, 'a/../../b', data=b'b')
        add(tf, 'dup', data=b'first version')
        add(tf, 'dup', data=b'second', mode=0o640)
        add(tf, 'hl', tarfile.LNKTYPE, linkname='dir/file')
        add(tf, 'fwd', tarfile.LNKTYPE, linkname='later')
        add(tf, 'later', data=b'later target')
        if variant != 'drop':
            add(tf, 'sym', tarfile.SYMTYPE,
                linkname='x' * 5000 if variant == 'longlink' else 'dir/file',
                mode=0o777)
        add(tf, 'fifo', tarfile.FIFOTYPE)
        add(tf, 'cdev', tarfile.CHRTYPE, devmajor=1, devminor=3)
        add(tf, 'bdev', tarfile.BLKTYPE, devmajor=259, devminor=300000)
        add(tf, 'old', data=b'old', mtime='-86400.5')
        add(tf, 'replaced/', tarfile.DIRTYPE)
        add(tf, 'replaced/child', data=b'gone with its dir')
        add(tf, 'replaced', data=b'now a file')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2])
