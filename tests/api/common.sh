# SPDX-License-Identifier: MIT
# Shared by the tests of tests/api (sourced after tests/lib.sh).

# make_layer TAR: a few directories, an empty file, a file of several
# blocks with a tail, a symlink and a hard link.
make_layer() {
	"$PYTHON" - "$1" <<'PY'
import io, sys, tarfile
def add(t, name, data=None, **kw):
    ti = tarfile.TarInfo(name)
    ti.mtime = 1500000000
    for k, v in kw.items():
        setattr(ti, k, v)
    if data is not None:
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
    else:
        t.addfile(ti)
big = bytes((i * 7 + i // 4096) % 251 for i in range(3 * 4096 + 1234))
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    add(t, "etc", type=tarfile.DIRTYPE, mode=0o755)
    add(t, "etc/hostname", b"example\n", mode=0o644)
    add(t, "usr/share/data.bin", big, mode=0o600, uid=1000, gid=1000)
    add(t, "empty", b"", mode=0o644)
    add(t, "link", type=tarfile.SYMTYPE, linkname="usr/share/data.bin")
    add(t, "hard", type=tarfile.LNKTYPE, linkname="etc/hostname")
PY
}

# layer_files TAR DIR: the regular files make_layer writes, as DIR/a_b_c
# for a/b/c, read back from TAR.
layer_files() {
	"$PYTHON" - "$1" "$2" <<'PY'
import sys, tarfile
t = tarfile.open(sys.argv[1])
for name in ("usr/share/data.bin", "etc/hostname", "empty"):
    with open(sys.argv[2] + "/" + name.replace("/", "_"), "wb") as f:
        f.write(t.extractfile(name).read())
PY
}
