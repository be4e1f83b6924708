# SPDX-License-Identifier: GPL-2.0
# The network lock through real dumps and restores, run by netlock-dump.sh in
# a network namespace of its own. argv: CRIU_LIKE TMPDIR KIND...
#
# The tree is an echo server (one python3 process) with one client connection
# from this script, outside the tree. Locked means: what the client sends
# stays unacknowledged (SIOCOUTQ > 0) and gets no reset; unlocked means the
# restored server answers it.
import fcntl
import glob
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time

CRIU, TMP, KINDS = sys.argv[1], sys.argv[2], sys.argv[3:]
# net-lock.c's debug line, for one connection (netlock_dump_conn()) or several at once
LOCKED = re.compile(r": \d+ connections? locked")
failed = False
SERVER = r"""
import socket, sys
srv = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
srv.bind((sys.argv[1], 0)); srv.listen(1)
print(srv.getsockname()[1], flush=True)
c, _ = srv.accept(); srv.close()
while True:
    d = c.recv(4096)
    if not d:
        break
    c.sendall(d.upper())
"""



def corrupt(path):
    """Flip 64 bytes in the middle of the pages image @path: a page run no longer
    matches its crc32c, which the restore finds only while reading it."""
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        data = f.read(64)
        f.seek(os.path.getsize(path) // 2)
        f.write(bytes(b ^ 0xFF for b in data))

def fail(msg):
    global failed
    print("FAIL: " + msg, flush=True)
    failed = True


def outq(s):
    return struct.unpack("i", fcntl.ioctl(s.fileno(), 0x5411, b"\0" * 4))[0]  # SIOCOUTQ


def ours(kind):
    if kind == "nftables":
        out = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
        return [w for w in out.split() if w.startswith("criu_like_")]
    out = "".join(
        subprocess.run([t, "-w", "-S"], capture_output=True, text=True).stdout
        for t in ("iptables", "ip6tables")
    )
    return sorted({w for w in out.split() if w.startswith("CRLK_")})


def criu(*args):
    return subprocess.run([CRIU] + list(args), capture_output=True, text=True)


def inventory_lock(d):
    r = criu("decode", os.path.join(d, "inventory.img"))
    try:
        return json.loads(r.stdout)["records"][0].get("network_lock")
    except (ValueError, KeyError, IndexError):
        fail("cannot decode %s/inventory.img: %s" % (d, r.stderr))
        return None


class Case:
    def __init__(self, name, kind, host="127.0.0.1"):
        self.what = "%s %s" % (kind, name)
        self.kind = kind
        self.dir = os.path.join(TMP, "%s-%s" % (kind, name.replace(" ", "-")))
        os.makedirs(self.dir)
        self.srv = subprocess.Popen(
            [sys.executable, "-c", SERVER, host],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            # not our stderr: a log file that grows between dump and restore is refused
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        port = int(self.srv.stdout.readline())
        self.pid = self.srv.pid
        self.c = socket.create_connection((host, port))
        self.restored = False
        self.echo(b"before")

    def echo(self, data):
        self.c.sendall(data)
        return self.answer(data)

    def answer(self, data):
        self.c.settimeout(60)
        got = b""
        try:
            while len(got) < len(data):
                chunk = self.c.recv(len(data) - len(got))
                if not chunk:
                    break
                got += chunk
        except OSError as e:
            fail("%s: the client got %s" % (self.what, e))
            return False
        if got != data.upper():
            fail("%s: the server answered %r to %r" % (self.what, got, data))
            return False
        return True

    def dump(self, *extra):
        r = criu(
            "dump", "-t", str(self.pid), "-D", self.dir, "--tcp-established",
            "--network-lock", self.kind, "-v4", "-o", "dump.log", *extra
        )
        if "-R" not in extra:
            self.srv.wait()
        if r.returncode:
            fail("%s: dump failed:\n%s" % (self.what, r.stderr[-3000:]))
        return r.returncode == 0

    def restore(self, *extra):
        r = criu(
            "restore", "-D", self.dir, "-d", "--tcp-established", "--network-lock", self.kind,
            "-v4", "-o", "restore.log", *extra
        )
        self.restored = self.restored or r.returncode == 0
        return r

    def stalled(self, data):
        """Sent now, not acknowledged a while later: dropped, and no reset either."""
        self.c.sendall(data)
        time.sleep(1.0)
        if outq(self.c) == 0:
            fail("%s: %r was acknowledged while the tree was dumped" % (self.what, data))
            return False
        return True

    def log(self, name):
        try:
            with open(os.path.join(self.dir, name)) as f:
                return f.read()
        except OSError:
            return ""

    def close(self):
        self.c.close()
        if self.restored:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        elif self.srv.poll() is None:
            self.srv.kill()
            self.srv.wait()


def same_machine(kind, host):
    """Dump kills the tree: the lock stays, recorded; restore reuses it, then removes it."""
    t = Case("same machine " + host, kind, host)
    try:
        if not t.dump():
            return
        name = inventory_lock(t.dir)
        if not name or ours(kind) != [name] or "_kept_" not in name and "CRLK_K" not in name:
            fail("%s: inventory says %s, the system has %s" % (t.what, name, ours(kind)))
            return
        if not t.stalled(b"while dumped"):
            return
        # its images record it: cleanups (every dump and restore runs one) leave it
        criu("net-lock", "--network-lock", kind, "cleanup")
        if ours(kind) != [name] or "%s %s kept" % (kind, name) not in criu("net-lock", "list").stdout:
            fail("%s: %s not kept through a cleanup (%s)" % (t.what, name, ours(kind)))
            return
        r = t.restore()
        if r.returncode:
            fail("%s: restore failed:\n%s" % (t.what, r.stderr[-3000:]))
            return
        if ours(kind):
            fail("%s: %s left after the restore" % (t.what, ours(kind)))
        elif "of the dump is in place: reused" not in t.log("restore.log"):
            fail("%s: the restore did not reuse %s" % (t.what, name))
        elif t.answer(b"while dumped") and t.echo(b"after"):
            print("ok: %s: %s kept, held the client, reused and removed" % (t.what, name))
    finally:
        t.close()


def migration(kind):
    """No lock of the dump here: restore installs its own, a failed restore keeps it."""
    t = Case("migration", kind)
    try:
        if not t.dump():
            return
        name = inventory_lock(t.dir)
        # as on another machine: the dump's lock is not there (the client stays quiet)
        if criu("net-lock", "unlock", name).returncode or ours(kind):
            fail("%s: cannot remove %s by hand" % (t.what, name))
            return
        # a page run altered (same size: the image list passes it): the restore
        # fails reading it, after its sockets were locked
        pages = sorted(glob.glob(os.path.join(t.dir, "pages-*.img")))
        shutil.copy(pages[0], pages[0] + ".orig")
        corrupt(pages[0])
        r = t.restore()
        if r.returncode == 0:
            fail("%s: the restore with an altered %s succeeded" % (t.what, pages[0]))
            return
        if ours(kind) != [name]:
            fail("%s: after a failed restore %s, not %s:\n%s" % (t.what, ours(kind), name,
                                                               r.stderr[-2000:]))
            return
        if not t.stalled(b"between restores"):
            return
        os.replace(pages[0] + ".orig", pages[0])
        r = t.restore()
        if r.returncode:
            fail("%s: the second restore failed:\n%s" % (t.what, r.stderr[-3000:]))
        elif ours(kind):
            fail("%s: %s left after the restore" % (t.what, ours(kind)))
        elif t.answer(b"between restores") and t.echo(b"after"):
            print("ok: %s: restore locked anew, kept it as %s when it failed, the next "
                  "one reused and removed it" % (t.what, name))
    finally:
        t.close()


def images_gone(kind):
    """A kept lock whose images are deleted is removed by the next cleanup."""
    t = Case("images gone", kind)
    try:
        if not t.dump():
            return
        name = inventory_lock(t.dir)
        shutil.rmtree(t.dir)
        r = criu("net-lock", "--network-lock", kind, "cleanup")
        if ours(kind):
            fail("%s: %s left after its images were deleted:\n%s" % (t.what, ours(kind), r.stderr))
        elif "no longer record it" not in r.stderr:
            fail("%s: the cleanup did not say why it removed %s:\n%s" % (t.what, name, r.stderr))
        else:
            print("ok: %s: %s removed by the next cleanup" % (t.what, name))
    finally:
        t.close()


def leave_running(kind):
    """dump -R: the lock goes away with the dump, nothing recorded; restoring those images
    and failing removes the restore's own lock."""
    t = Case("leave running", kind)
    try:
        if not t.dump("-R"):
            return
        if ours(kind) or inventory_lock(t.dir):
            fail("%s: lock left (%s) or recorded (%s)" % (t.what, ours(kind),
                                                         inventory_lock(t.dir)))
        elif not LOCKED.search(t.log("dump.log")):
            fail("%s: the dump did not lock the connection" % t.what)
        elif t.echo(b"still running"):
            print("ok: %s: locked during the dump, removed after, the server answers" % t.what)
        else:
            return
        # these images record no lock: a restore that fails after locking removes its own
        t.srv.kill()
        t.srv.wait()
        pages = sorted(glob.glob(os.path.join(t.dir, "pages-*.img")))
        corrupt(pages[0])
        r = t.restore()
        if r.returncode == 0 or not LOCKED.search(t.log("restore.log")):
            fail("%s: the restore did not lock, then fail (%d):\n%s" % (t.what, r.returncode,
                                                                     r.stderr[-2000:]))
        elif ours(kind):
            fail("%s: a failed restore of images without a lock left %s" % (t.what, ours(kind)))
        else:
            print("ok: %s: a failed restore of these images removed its own lock" % t.what)
    finally:
        t.close()


def skip():
    """--network-lock skip: no lock, none recorded; the restore works all the same."""
    t = Case("skip", "skip")
    try:
        if not t.dump():
            return
        left = ours("nftables")
        if left or inventory_lock(t.dir) or LOCKED.search(t.log("dump.log")):
            fail("%s: a lock with --network-lock skip: %s" % (t.what, left))
            return
        r = t.restore()
        if r.returncode:
            fail("%s: restore failed:\n%s" % (t.what, r.stderr[-3000:]))
        elif t.echo(b"after"):
            print("ok: %s: nothing locked, dump and restore work" % t.what)
    finally:
        t.close()


for kind in KINDS:
    same_machine(kind, "127.0.0.1")
    same_machine(kind, "::1")
    migration(kind)
    images_gone(kind)
    leave_running(kind)
skip()
sys.exit(1 if failed else 0)
