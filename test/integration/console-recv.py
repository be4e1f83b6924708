#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# A console socket for runc (--console-socket), like runc's recvtty (not
# packaged): listens on SOCKET; for each connection (runc run, runc restore)
# takes the pty master runc sends (SCM_RIGHTS), and copies whatever it reads
# from the latest master to OUT, with a line "master N" (N counting from 1)
# before the output of each new one. Lines appended to IN are written to the
# latest master. Runs until killed.
#
#   console-recv.py SOCKET OUT IN
import os
import select
import socket
import sys

path, out_path, in_path = sys.argv[1:4]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(4)
out = open(out_path, 'ab', buffering=0)
master = None
count = 0
sent = 0
while True:
    fds = [srv] + ([master] if master is not None else [])
    r, _, _ = select.select(fds, [], [], 0.05)
    if srv in r:
        c, _ = srv.accept()
        _, got, _, _ = socket.recv_fds(c, 4096, 1)
        c.close()
        if got:
            if master is not None:
                os.close(master)
            master = got[0]
            count += 1
            out.write(b'master %d\n' % count)
    if master is not None and master in r:
        try:
            data = os.read(master, 4096)
        except OSError:
            data = b''
        if data:
            out.write(data)
        else:
            os.close(master)
            master = None
    if master is not None and os.path.exists(in_path):
        lines = open(in_path, 'rb').read().splitlines(True)
        for line in lines[sent:]:
            os.write(master, line)
        sent = len(lines)
