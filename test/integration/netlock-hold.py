# SPDX-License-Identifier: GPL-2.0
# Packets held by the network lock (net/nfq-hold*.c, nfq-holder.c), run by netlock-hold.sh in
# a network namespace of its own whose minimum retransmission timeout is 3 s
# (net.ipv4.tcp_rto_min_us): a client whose data waited for a retransmission
# counts it in TCP_INFO's tcpi_total_retrans, one whose data was held and
# given to the restored server does not. argv: CRIU_LIKE TMPDIR KIND...
#
# For each kind of lock:
#   - kill-mode dump and restore: data sent while the tree is frozen (the
#     post-dump hook) and while it is gone (between dump and restore) is
#     answered by the restored server with no retransmission;
#   - the same with --no-packet-hold: the client retransmits (the test fails
#     if the lock did not drop: it can tell the two apart);
#   - dump -R: data sent while frozen is answered after the dump, no
#     retransmission;
#   - the holder killed (SIGKILL) after a kill-mode dump: what the client
#     sends then reaches no socket (no reset: the queue without a listener
#     drops), the restore still works (the data comes again after the
#     client's retransmission) and leaves no rule of the dead holder behind.
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time

CRIU, TMP, KINDS = sys.argv[1], sys.argv[2], sys.argv[3:]
failed = False
SERVER = r"""
import socket, sys
srv = socket.socket()
srv.bind(("127.0.0.1", 0)); srv.listen(1)
print(srv.getsockname()[1], flush=True)
c, _ = srv.accept(); srv.close()
while True:
    d = c.recv(4096)
    if not d:
        break
    c.sendall(d.upper())
"""
# the post-dump hook: the tree is frozen and locked; the client sends, then the dump goes on
HOOK = """#!/bin/sh
[ "$CRTOOLS_SCRIPT_ACTION" = post-dump ] || exit 0
touch "$0.go"
while [ ! -e "$0.sent" ]; do sleep 0.01; done
"""


def fail(msg):
    global failed
    print("FAIL: " + msg, flush=True)
    failed = True


def tcp_info(s):
    """tcpi_state (byte 0) and tcpi_total_retrans (struct tcp_info, offset 100)."""
    i = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    return i[0], struct.unpack_from("I", i, 100)[0]


def criu(*args):
    return subprocess.run([CRIU] + list(args), capture_output=True, text=True)


def holder_rules():
    out = "".join(
        subprocess.run([t, "-w", "-t", "raw", "-S"], capture_output=True, text=True).stdout
        for t in ("iptables", "ip6tables")
    )
    return sorted({w for w in out.split() if w.startswith("CRLH_")})


def holders():
    """The packet holders of this network namespace."""
    me = os.readlink("/proc/self/ns/net")
    found = []
    for p in os.listdir("/proc"):
        try:
            with open("/proc/%s/comm" % p) as f:
                if f.read().strip() != "criu-like-hold":
                    continue
            if os.readlink("/proc/%s/ns/net" % p) == me:
                found.append(int(p))
        except (OSError, ValueError):
            pass
    return found


class Case:
    def __init__(self, name, kind):
        self.what = "%s %s" % (kind, name)
        self.kind = kind
        self.dir = os.path.join(TMP, "%s-%s" % (kind, name.replace(" ", "-")))
        os.makedirs(self.dir)
        self.hook = os.path.join(self.dir, "hook.sh")
        with open(self.hook, "w") as f:
            f.write(HOOK)
        os.chmod(self.hook, 0o755)
        self.srv = subprocess.Popen(
            [sys.executable, "-c", SERVER], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, text=True, start_new_session=True,
        )
        port = int(self.srv.stdout.readline())
        self.pid = self.srv.pid
        self.c = socket.create_connection(("127.0.0.1", port))
        self.c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sent = b""
        self.send(b"before")
        self.answer()

    def send(self, data):
        self.c.sendall(data)
        self.sent += data

    def answer(self):
        """Everything sent so far comes back upper-cased."""
        self.c.settimeout(60)
        got = b""
        try:
            while len(got) < len(self.sent):
                chunk = self.c.recv(4096)
                if not chunk:
                    break
                got += chunk
        except OSError as e:
            fail("%s: the client got %s" % (self.what, e))
            return False
        if got != self.sent.upper():
            fail("%s: the server answered %r to %r" % (self.what, got, self.sent))
            return False
        self.sent = b""
        return True

    def dump(self, frozen_data, *extra):
        """Dump; @frozen_data sent from the post-dump hook, the tree frozen and locked."""
        p = subprocess.Popen(
            [CRIU, "dump", "-t", str(self.pid), "-D", self.dir, "--tcp-established",
             "--network-lock", self.kind, "--action-script", self.hook, "-v4", "-o",
             "dump.log", *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        while not os.path.exists(self.hook + ".go") and p.poll() is None:
            time.sleep(0.01)
        if p.poll() is None:
            self.send(frozen_data)
        open(self.hook + ".sent", "w").close()
        err = p.communicate()[1]
        if "-R" not in extra:
            self.srv.wait()
        if p.returncode:
            fail("%s: dump failed:\n%s" % (self.what, err[-3000:]))
        return p.returncode == 0

    def restore(self, *extra):
        r = criu("restore", "-D", self.dir, "-d", "--tcp-established", "--network-lock",
                 self.kind, "-v4", "-o", "restore.log", *extra)
        if r.returncode:
            fail("%s: restore failed:\n%s" % (self.what, r.stderr[-3000:]))
        return r.returncode == 0

    def retrans(self):
        return tcp_info(self.c)[1]

    def let_go(self, log):
        """How many packets the holder let go, from the restore's (or dump's) log."""
        try:
            with open(os.path.join(self.dir, log)) as f:
                m = re.findall(r"packet holder \S+: (\d+) held packets? let go", f.read())
        except OSError:
            return 0
        return sum(int(n) for n in m)

    def end(self):
        self.c.close()
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        if holder_rules():
            fail("%s: rules of a packet holder left behind: %s" % (self.what, holder_rules()))
        if holders():
            fail("%s: packet holders left running: %s" % (self.what, holders()))


def held(kind):
    c = Case("held", kind)
    ok = c.dump(b"frozen")
    if ok:
        c.send(b" gone")
    if ok and c.restore() and c.answer():
        n = c.retrans()
        if not c.let_go("restore.log"):
            fail("%s: the restore let no held packet go" % c.what)
        elif n:
            fail("%s: %d retransmissions: the held data waited for the client's timer"
                 % (c.what, n))
        else:
            print("ok: %s: data sent while frozen and while the tree was gone answered after "
                  "the restore, no retransmission" % c.what, flush=True)
    c.end()


def dropped(kind):
    c = Case("dropped", kind)
    if c.dump(b"frozen", "--no-packet-hold") and c.restore("--no-packet-hold") and c.answer():
        # the iptables lock drops a loopback client's packet at its OUTPUT: the
        # kernel sends it later as new, not counted as a retransmission
        if c.let_go("restore.log") or holder_rules():
            fail("%s: packets held although --no-packet-hold" % c.what)
        elif kind == "nftables" and not c.retrans():
            fail("%s: no retransmission although the lock drops" % c.what)
        else:
            print("ok: %s: --no-packet-hold drops, the client retransmits" % c.what, flush=True)
    c.end()


def leave_running(kind):
    c = Case("leave-running", kind)
    if c.dump(b"frozen", "-R") and c.answer():
        n = c.retrans()
        if not c.let_go("dump.log"):
            fail("%s: the dump let no held packet go" % c.what)
        elif n:
            fail("%s: %d retransmissions after dump -R" % (c.what, n))
        else:
            print("ok: %s: data sent while frozen answered after the dump, no retransmission"
                  % c.what, flush=True)
    c.end()


def holder_killed(kind):
    c = Case("holder killed", kind)
    if not c.dump(b"frozen"):
        return c.end()
    pids = holders()
    if len(pids) != 1:
        fail("%s: %d packet holders after the dump, not 1" % (c.what, len(pids)))
        return c.end()
    os.kill(pids[0], signal.SIGKILL)
    while holders():
        time.sleep(0.01)
    c.send(b" after")
    # a packet let through to no socket would bring a reset back at once
    time.sleep(0.5)
    state = tcp_info(c.c)[0]
    if state != 1:  # TCP_ESTABLISHED
        fail("%s: the client's connection is in state %d: a packet reached no socket"
             % (c.what, state))
    elif c.restore() and c.answer():
        print("ok: %s: nothing reached the dead tree, the restored server answers after "
              "the client's retransmission" % c.what, flush=True)
    c.end()


for k in KINDS:
    held(k)
    dropped(k)
    leave_running(k)
    holder_killed(k)
print("FAIL" if failed else "PASS")
sys.exit(1 if failed else 0)
