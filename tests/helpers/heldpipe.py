#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""heldpipe.py SRC LOG TIMEOUT CMD...: run CMD with SRC waiting whole in a
pipe on its stdin whose writing end stays open until CMD exits, as a
program streaming a layer into mkfs does. Exits with CMD's status, 124
when CMD was still running after TIMEOUT seconds, 125 when the pipe
could not hold SRC (F_SETPIPE_SZ is limited to 1 MiB by default)."""
import fcntl
import os
import subprocess
import sys

F_SETPIPE_SZ = 1031

src, log, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
data = open(src, 'rb').read()
r, w = os.pipe()
try:
    fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
    os.set_blocking(w, False)
    view = memoryview(data)
    while view:
        view = view[os.write(w, view):]
except OSError as e:
    print(f'heldpipe: cannot fill a pipe with {src}: {e}', file=sys.stderr)
    sys.exit(125)
with open(log, 'wb') as out:
    try:
        rc = subprocess.run(sys.argv[4:], stdin=r, stdout=out,
                            stderr=subprocess.STDOUT,
                            timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        rc = 124
os.close(w)
sys.exit(rc)
