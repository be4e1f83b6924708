# SPDX-License-Identifier: GPL-2.0
# The network lock on real loopback TCP connections, run by netlock.sh in a
# network namespace of its own. argv: CRIU_LIKE TMPDIR KIND...
#
# A connection counts as locked when data sent both ways stays unacknowledged
# (SIOCOUTQ > 0) and unread a while after the send: on loopback an ACK takes
# microseconds. It counts as unlocked when the same data then arrives and is
# acknowledged (the kernel retransmits it): no timing is measured.
import fcntl
import json
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time

SIOCOUTQ = 0x5411  # TIOCOUTQ
CRIU, TMP, KINDS = sys.argv[1], sys.argv[2], sys.argv[3:]
failed = False


def fail(msg):
    global failed
    print("FAIL: " + msg, flush=True)
    failed = True


def outq(s):
    return struct.unpack("i", fcntl.ioctl(s.fileno(), SIOCOUTQ, b"\0" * 4))[0]


def endpoint(addr):
    return ("[%s]:%d" if ":" in addr[0] else "%s:%d") % (addr[0], addr[1])


def conn_pair(family):
    host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    srv = socket.socket(family, socket.SOCK_STREAM)
    srv.bind((host, 0))
    srv.listen(1)
    cli = socket.socket(family, socket.SOCK_STREAM)
    cli.connect(srv.getsockname()[:2])
    conn, _ = srv.accept()
    srv.close()
    return cli, conn


def tuple_of(s):
    """LOCAL,REMOTE as the net-lock command takes it, seen from socket s."""
    return endpoint(s.getsockname()) + "," + endpoint(s.getpeername())


def send_both(a, b, tag):
    a.sendall(tag + b"a" * 1000)
    b.sendall(tag + b"b" * 1000)


def stalled(a, b, what):
    """Data just sent both ways must be neither acknowledged nor readable."""
    time.sleep(1.0)
    for s, name in ((a, "client"), (b, "server")):
        if outq(s) == 0:
            fail("%s: the %s's data was acknowledged through the lock" % (what, name))
            return False
        try:
            s.recv(4096, socket.MSG_DONTWAIT)
            fail("%s: the %s received data through the lock" % (what, name))
            return False
        except BlockingIOError:
            pass
    return True


def recv_exact(s, n):
    s.settimeout(60)
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    s.settimeout(None)
    return data


def flows(a, b, tag, what):
    """The data sent by send_both arrives complete and is acknowledged."""
    ok = recv_exact(b, 1004) == tag + b"a" * 1000 and recv_exact(a, 1004) == tag + b"b" * 1000
    if not ok:
        fail("%s: the data did not arrive after the unlock" % what)
        return False
    deadline = time.monotonic() + 60
    while (outq(a) or outq(b)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if outq(a) or outq(b):
        fail("%s: data still unacknowledged after the unlock" % what)
        return False
    return True


def rules_text(kind):
    if kind == "nftables":
        return subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
    return "".join(
        subprocess.run([t, "-w", "-S"], capture_output=True, text=True).stdout
        for t in ("iptables", "ip6tables")
    )


def ours_left(kind):
    prefix = "criu_like_" if kind == "nftables" else "CRLK_"
    return [w for w in rules_text(kind).split() if w.startswith(prefix)]


def lock_holder(kind, tuples, action="lock"):
    p = subprocess.Popen(
        [CRIU, "net-lock", "--network-lock", kind, action] + tuples,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    name = p.stdout.readline().strip()
    return p, name


def criu(*args):
    return subprocess.run([CRIU] + list(args), capture_output=True, text=True)


def verdict(name):
    for line in criu("net-lock", "list").stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] == name:
            return f[2]
    return "absent"


def lock_unlock(kind, family, side):
    """Lock one end's tuple (the client's: output chain; the server's: input chain)."""
    what = "%s %s %s tuple" % (kind, "IPv6" if family == socket.AF_INET6 else "IPv4", side)
    cli, srv = conn_pair(family)
    p, name = lock_holder(kind, [tuple_of(cli if side == "client" else srv)])
    if not name:
        fail("%s: no lock installed" % what)
        p.kill()
        return
    send_both(cli, srv, b"lock")
    ok = stalled(cli, srv, what)
    if verdict(name) != "live":
        fail("%s: %s is %s, not live, while its criu-like runs" % (what, name, verdict(name)))
    # a cleanup meanwhile leaves a running criu-like's lock alone
    criu("net-lock", "--network-lock", kind, "cleanup")
    if name not in ours_left(kind):
        fail("%s: the cleanup removed the lock of a running criu-like" % what)
    p.stdin.close()
    if p.wait(timeout=60) != 0:
        fail("%s: the lock holder exited with %d" % (what, p.returncode))
    if ours_left(kind):
        fail("%s: left behind after the unlock: %s" % (what, ours_left(kind)))
    if ok and flows(cli, srv, b"lock", what):
        print("ok: %s: locked both ways, flows again after the unlock" % what, flush=True)
    cli.close()
    srv.close()


def batch(kind):
    """Connections of both families locked in one transaction (netlock_dump_conns())."""
    what = "%s batch of IPv4 and IPv6" % kind
    pairs = [conn_pair(socket.AF_INET), conn_pair(socket.AF_INET6), conn_pair(socket.AF_INET)]
    p, name = lock_holder(kind, [tuple_of(c) for c, _ in pairs], "lock-batch")
    if not name:
        fail("%s: no lock installed" % what)
        p.kill()
        return
    for c, s in pairs:
        send_both(c, s, b"bat!")
    ok = all(stalled(c, s, what) for c, s in pairs)
    p.stdin.close()
    if p.wait(timeout=60) != 0 or ours_left(kind):
        fail("%s: unlock failed (%d) or left %s" % (what, p.returncode, ours_left(kind)))
        return
    if ok and all(flows(c, s, b"bat!", what) for c, s in pairs):
        print("ok: %s: all locked both ways, all flow again after the unlock" % what, flush=True)


def crash(kind, command):
    """A criu-like killed with its lock installed; the next run of @command removes it."""
    cli, srv = conn_pair(socket.AF_INET)
    p, name = lock_holder(kind, [tuple_of(cli)])
    p.kill()
    p.wait()
    what = "%s crash, then %s" % (kind, command[0])
    if name not in ours_left(kind) or verdict(name) != "stale":
        fail("%s: the killed run's lock %s is not there as stale (%s)" % (what, name, verdict(name)))
        return
    r = criu(*command, "--network-lock", kind)
    if name in ours_left(kind):
        fail("%s: the stale lock %s is still there; stderr:\n%s" % (what, name, r.stderr))
        return
    print("ok: %s: the stale lock %s was removed" % (what, name), flush=True)
    cli.close()
    srv.close()


def write_inventory(d, lock, completed=True):
    """An inventory.img in @d recording @lock, as a complete dump writes it."""
    inv = {
        "kind": "inventory", "magic": "0xd9714b40", "version": 1, "flags": 0,
        "records": [{
            "img_version": 1, "root_pid": 1, "tool_version": "0.1.0", "kernel_release": "x",
            "completed": completed, "xfeatures_mask": 0, "network_lock": lock,
        }],
    }
    with open(os.path.join(d, "inventory.json"), "w") as f:
        json.dump(inv, f)
    r = criu("encode", os.path.join(d, "inventory.json"), "-O", os.path.join(d, "inventory.img"))
    if r.returncode:
        fail("encode of an inventory failed:\n" + r.stderr)


def kept(kind):
    """A kept lock (as a dump that killed its tree leaves it) lives as long as the images
    it names record it: cleanups leave it while they do, remove it once they do not."""
    what = "%s kept lock" % kind
    cli, srv = conn_pair(socket.AF_INET6)
    d = tempfile.mkdtemp(prefix="kept-", dir=TMP)
    r = criu("net-lock", "--network-lock", kind, "-D", d, "keep", tuple_of(cli))
    name = r.stdout.strip()
    if r.returncode or not name:
        fail("%s: keep failed (%d):\n%s" % (what, r.returncode, r.stderr))
        return
    # no dump in d records it yet (nor a complete one): a cleanup removes it
    write_inventory(d, name, completed=False)
    if verdict(name) != "stale":
        fail("%s: %s is %s with no complete dump recording it" % (what, name, verdict(name)))
        return
    criu("net-lock", "--network-lock", kind, "cleanup")
    if ours_left(kind):
        fail("%s: the cleanup left %s, kept for nothing" % (what, ours_left(kind)))
        return
    print("ok: %s: removed by a cleanup while its images do not record it" % what, flush=True)

    r = criu("net-lock", "--network-lock", kind, "-D", d, "keep", tuple_of(cli))
    name = r.stdout.strip()
    write_inventory(d, name)
    if r.returncode or verdict(name) != "kept":
        fail("%s: keep failed (%d) or %s is not kept:\n%s" % (what, r.returncode, name, r.stderr))
        return
    criu("net-lock", "--network-lock", kind, "cleanup")
    send_both(cli, srv, b"kept")
    ok = stalled(cli, srv, what)
    # other images recorded there now (a dump again into the same directory)
    write_inventory(d, name + "0")
    if verdict(name) != "stale":
        fail("%s: %s is %s once its images record another lock" % (what, name, verdict(name)))
    write_inventory(d, name)
    r = criu("net-lock", "unlock", name)
    if r.returncode or ours_left(kind):
        fail("%s: unlock %s failed or left %s:\n%s" % (what, name, ours_left(kind), r.stderr))
        return
    if ok and flows(cli, srv, b"kept", what):
        print("ok: %s: held the connection through a cleanup while its images record it, "
              "removed by unlock" % what, flush=True)


VICTIM = r"""
import os, socket, sys
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
cli = socket.socket(); cli.connect(srv.getsockname())
conn, _ = srv.accept(); srv.close()
junk = os.urandom(4 << 20)  # more memory than the image directory can take
print("ready", flush=True)
for line in sys.stdin:
    cli.sendall(b"ping"); conn.sendall(b"pong")
    print(conn.recv(4).decode(), cli.recv(4).decode(), flush=True)
"""


def failed_dump(kind):
    """A dump that fails after locking the sockets (a full image directory while memory
    is written) leaves no lock; the connection works."""
    what = "%s failed dump" % kind
    d = tempfile.mkdtemp(prefix="dump-", dir=TMP)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "netlock", d], check=True)
    v = subprocess.Popen(
        [sys.executable, "-c", VICTIM],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        if v.stdout.readline().split() != ["ready"]:
            fail("%s: the victim did not start" % what)
            return
        log = d + ".log"
        r = criu("dump", "-t", str(v.pid), "-D", d, "--network-lock", kind,
                 "--tcp-established", "-v4", "-o", log)
        if r.returncode == 0:
            fail("%s: the dump into a 1 MiB directory succeeded" % what)
            return
        with open(log) as f:
            text = f.read()
        # both ends of the connection are in the tree: both locked before the failure,
        # one at a time (netlock_dump_conn()) or at once (netlock_dump_conns())
        locked = sum(int(n) for n in re.findall(r": (\d+) connections? locked", text))
        if locked != 2:
            fail("%s: the dump did not lock both ends before failing:\n%s" % (what, text[-3000:]))
            return
        # the lock of the kind asked; nftables through libnftables unless told the tool (the
        # packet holder may look at table raw with nftables whatever the lock: nfq-hold-rules.c)
        lib = kind == "nftables" and os.environ.get("CRIU_LIKE_NFT") != "cli"
        if kind == "iptables" and not re.search(r"net-lock: iptables \S+: \d+ connections? locked",
                                                text):
            fail("%s: not locked with iptables:\n%s" % (what, text[-2000:]))
            return
        if kind == "nftables" and ("nftables through libnftables" in text) != lib:
            fail("%s: libnftables %sexpected:\n%s" % (what, "" if lib else "not ", text[-2000:]))
            return
        if ours_left(kind):
            fail("%s: the failed dump left %s" % (what, ours_left(kind)))
            return
        v.stdin.write("x\n")
        v.stdin.flush()
        if v.stdout.readline().split() != ["ping", "pong"]:
            fail("%s: the connection does not work after the failed dump" % what)
            return
        print("ok: %s: both ends locked, then no lock left, the connection works" % what,
              flush=True)
    finally:
        v.kill()
        v.wait()
        subprocess.run(["umount", d])


for spec in KINDS:
    # nftables-cli: the nft tool instead of libnftables (net-lock-run.c)
    kind = spec.split("-")[0]
    if spec.endswith("-cli"):
        os.environ["CRIU_LIKE_NFT"] = "cli"
    else:
        os.environ.pop("CRIU_LIKE_NFT", None)
    print("== %s" % spec, flush=True)
    for family in (socket.AF_INET, socket.AF_INET6):
        for side in ("client", "server"):
            lock_unlock(kind, family, side)
    batch(kind)
    empty = os.path.join(TMP, "empty")
    os.makedirs(empty, exist_ok=True)
    crash(kind, ["dump", "-t", "999999", "-D", empty])
    crash(kind, ["restore", "-D", empty])
    kept(kind)
    failed_dump(kind)

sys.exit(1 if failed else 0)
