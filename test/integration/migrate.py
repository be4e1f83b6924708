# SPDX-License-Identifier: GPL-2.0
# migrate.sh's work (Documentation/migration.md, "Tests"), on the topology of
# scripts/migrate-topo.sh: a container (pid, mount, UTS, IPC and net
# namespaces of its own, its root a bind of / with its own /proc) whose veth
# vc0 (10.77.0.10/24, fd77::10/64) is on host A's bridge runs a counter
# server; a client in mig-c holds a connection and exchanges numbered
# messages continuously (the server refuses a number that is not the next
# one: lost or duplicated data shows). Then:
#   1. the destination refuses (another protocol version, by fault injection):
#      the source runs on, untouched, nothing is left at B;
#   2. no service at the address: the same;
#   3. B's service killed during the pre-copy: the same, and the next start
#      of B's service removes what the killed one left;
#   4. migrated A -> B: the client's connection survives, the counter goes
#      on, the source container is gone, the destination runs it, its veth's
#      outside end is on B's bridge;
#   5. migrated back B -> A with --lazy-pages: the same, A's lazy-pages
#      daemon puts every page in and its images go.
# Modes: "server" (in the container), "client" (in mig-c), "fail" (the
# failure cases of migrate-fail.sh: migrate.py fail CRIU TMP TOPO), else the
# test: migrate.py CRIU TMP TOPO.
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

MAC = "02:77:00:00:00:10"
OUTSIDE_MAC = "fe:77:00:00:00:10"
UPLINK_MAC = {"a": "fa:77:00:00:00:01", "b": "fa:77:00:00:00:02"}  # migrate-topo.sh's
ADDR = "10.77.0.10"
PORT = 7100
STATE = os.environ.get("STATE", "/run/criu-like-mig")


def sh(cmd, check=True):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if check and r.returncode:
        fail("`%s` failed: %s" % (cmd, r.stderr.strip()))
    return r.stdout


def fail(msg):
    print("FAIL: " + msg, flush=True)
    for h in ("a", "b"):  # the topology goes with the test: keep the services' logs
        if os.path.exists(os.path.join(STATE, h + ".log")):
            subprocess.run(["cp", os.path.join(STATE, h + ".log"), os.path.join(TMP, "service-" + h + ".txt")])
    for p in [os.path.join(STATE, "a.log"), os.path.join(STATE, "b.log")] + \
            [os.path.join(TMP, f) for f in sorted(os.listdir(TMP)) if f.endswith((".log", ".err"))]:
        if os.path.exists(p):
            lines = open(p, errors="replace").read().splitlines()
            errs = [ln for ln in lines if "Error" in ln or "FAIL" in ln]
            print("---- %s\n%s" % (p, "\n".join((errs or lines)[-12:])), flush=True)
    sys.exit(1)


def server(mem_mib, rate_mib, ready):
    # pid 1 of the container: wait for vc0, configure it, serve one client
    for _ in range(500):
        try:
            socket.if_nametoindex("vc0")
            break
        except OSError:
            time.sleep(0.01)
    for c in ("ip link set lo up", "ip link set vc0 address %s" % MAC,
              "ip addr add %s/24 dev vc0" % ADDR, "ip -6 addr add fd77::10/64 dev vc0 nodad",
              "ip link set vc0 up"):
        subprocess.run(c, shell=True, check=True)
    mem = bytearray(mem_mib << 20)
    for i in range(0, len(mem), 4096):
        mem[i] = 1
    lst = socket.socket()
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind((ADDR, PORT))
    lst.listen(4)
    open(ready, "w").write("ready\n")
    conn, _ = lst.accept()
    conn.settimeout(0.005)
    expect, buf, off = 1, b"", 0
    # pages written at a steady rate while serving
    per_tick = max(1, (rate_mib << 20) // 4096 // 200)
    last = time.monotonic()
    while True:
        try:
            data = conn.recv(4096)
            if not data:
                return
            buf += data
        except socket.timeout:
            pass
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            n = int(line)
            if n != expect:
                conn.sendall(b"bad %d expected %d\n" % (n, expect))
            else:
                conn.sendall(b"ok %d\n" % n)
                expect += 1
        now = time.monotonic()
        if now - last >= 0.005 and rate_mib:
            for _ in range(per_tick):
                mem[off] = (mem[off] + 1) & 255
                off = (off + 4096) % len(mem)
            last = now


def client(status):
    # in mig-c: numbered messages, up to 100 not answered yet, one every 3 ms (so that some
    # are on the way during a freeze); the longest wait of one for its answer
    s = socket.create_connection((ADDR, PORT), timeout=60)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # each message a segment at once
    sent_at, state = {}, {"sent": 0, "n": 0, "err": ""}
    lock = threading.Lock()

    def sender():
        while not state["err"]:
            with lock:
                go = state["sent"] - state["n"] < 100
                if go:
                    state["sent"] += 1
                    sent_at[state["sent"]] = time.monotonic()
                    msg = b"%d\n" % state["sent"]
            if go:
                try:
                    s.sendall(msg)
                except OSError as e:
                    state["err"] = "connection error at %d: %s" % (state["sent"], e)
            time.sleep(0.003)

    threading.Thread(target=sender, daemon=True).start()
    f = s.makefile("rb", buffering=0)
    worst, t_last = 0.0, time.monotonic()
    while True:
        try:
            line = f.readline()
        except OSError as e:
            state["err"] = "connection error after %d: %s" % (state["n"], e)
            line = b""
        now = time.monotonic()
        with lock:
            n = state["n"] + 1
            if not state["err"] and line != b"ok %d\n" % n:
                state["err"] = "message %d answered %r" % (n, line)
            if not state["err"]:
                state["n"] = n
                worst = max(worst, now - sent_at.pop(n))
        if state["err"] or now - t_last > 0.05:
            with open(status + ".new", "w") as o:
                o.write("%d %.4f %d %s\n" % (state["n"], worst, total_retrans(s), state["err"]))
            os.rename(status + ".new", status)
            t_last = now
        if state["err"]:
            return


def read_status(path):
    # n, the longest wait, the client's retransmissions so far, the error
    try:
        n, worst, retrans, err = open(path).read().rstrip("\n").split(" ", 3)
        return int(n), float(worst), err, int(retrans)
    except (OSError, ValueError):
        return 0, 0.0, "", 0


def total_retrans(s):
    # struct tcp_info's tcpi_total_retrans (8 bytes of u8 fields, then u32s)
    return struct.unpack_from("I", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104), 100)[0]


def note_pid(pid):
    # for migrate.sh's cleanup, whatever happens
    with open(os.path.join(TMP, "pids"), "a") as f:
        f.write("%d\n" % pid)


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as st:
            return st.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Container:
    def __init__(self, criu, tmp, mem_mib=16, rate_mib=0):
        self.root = os.path.join(tmp, "root")
        os.makedirs(self.root, exist_ok=True)
        me = os.path.abspath(__file__)
        ready = os.path.join(tmp, "ready")
        # its root a bind of / alone, its own /proc and /dev; stdin and stdout its own
        # /dev/null, stderr a file of the test's (why the server ended, shown by fail())
        inner = ("mount --make-rprivate / && mount --bind / {r} && mount -t proc proc {r}/proc && "
                 "mount -t devtmpfs devtmpfs {r}/dev && "
                 "cd {r} && pivot_root . mnt && umount -l /mnt && cd / && "
                 "exec setsid python3 -u {me} server {m} {rate} {ready} </dev/null >/dev/null "
                 "2>{err}").format(r=self.root, me=me, m=mem_mib, rate=rate_mib, ready=ready,
                                   err=os.path.join(tmp, "server-inner.err"))
        self.unshare = subprocess.Popen(
            ["setsid", "nsenter", "--net=/run/netns/mig-a", "unshare", "--fork", "--pid",
             "--mount", "--uts", "--ipc", "--net", "sh", "-c", inner],
            stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            stderr=open(os.path.join(tmp, "server.err"), "w"))
        self.pid = 0
        for _ in range(500):
            kids = sh("pgrep -P %d" % self.unshare.pid, check=False).split()
            if kids:
                self.pid = int(kids[0])
                break
            time.sleep(0.01)
        if not self.pid:
            fail("the container did not start")
        note_pid(self.pid)
        # its outside end's MAC above the bridge's, as the restore gives it (bridge_kept())
        sh("ip netns exec mig-a ip link add ve-mig0 address %s type veth peer name vc0 && "
           "ip netns exec mig-a ip link set vc0 netns %d && "
           "ip netns exec mig-a ip link set ve-mig0 master br-mig up" % (OUTSIDE_MAC, self.pid))
        for _ in range(1000):
            if os.path.exists(ready):
                break
            time.sleep(0.01)
        else:
            fail("the container's server did not start")


def migrate(criu, tmp, pid, to, log, extra=(), env=None, root=None, src="a"):
    d = os.path.join(tmp, log + ".img")
    cmd = ["nsenter", "--net=/run/netns/mig-" + src, criu, "migrate", "--online", "-t", str(pid),
           "--to", to, "-D", d, "-v4", "-o", os.path.join(tmp, log + ".log")] + list(extra)
    if root:
        cmd += ["--root", root]
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def client_ok(status, what, min_more=20, timeout=10):
    n0 = read_status(status)[0]
    t = time.time()
    while time.time() - t < timeout:
        n, worst, err, _ = read_status(status)
        if err:
            fail("%s: the client saw: %s" % (what, err))
        if n >= n0 + min_more:
            return n, worst
        time.sleep(0.05)
    fail("%s: the client's counter stopped at %d" % (what, read_status(status)[0]))


def forwarded(log, what):
    # the client keeps messages on the way: some reached the source after its lock
    text = open(os.path.join(TMP, log + ".log"), errors="replace").read()
    m = re.search(r"(\d+) packets the source's lock held forwarded to the destination, "
                  r"(\d+) lost", text)
    if not m:
        fail("%s: the source forwarded nothing its lock held" % what)
    if int(m.group(1)) == 0 or int(m.group(2)):
        fail("%s: %s packets forwarded, %s lost" % (what, m.group(1), m.group(2)))
    return int(m.group(1))


def ahead(log, what):
    # read while the tree ran, not in the freeze (Documentation/migration.md, "Cut next")
    text = open(os.path.join(TMP, log + ".log"), errors="replace").read()
    if "smaps as read before the freeze, unchanged" not in text:
        fail("%s: no round used the smaps read before its freeze" % what)
    if not re.search(r"processes outside the tree: \d+ socket fds, read before the freeze\n",
                     text):
        fail("%s: the final dump did not read the fds outside the tree before the freeze" % what)


def no_retrans(status, before, what):
    # a message lost waits for the retransmission timeout, 3 s (rto_min); one that arrives
    # out of order (forwarded from the source after newer ones) is retransmitted at once
    _, worst, _, now = read_status(status)
    if worst >= 3.0:
        fail("a message waited %.1f s during %s (%d retransmissions): one the source's lock "
             "held was lost" % (worst, what, now - before))


def stat_field(pid, i):
    try:
        return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[i]
    except (OSError, IndexError):
        return None


def comm(pid):
    try:
        return open("/proc/%d/comm" % pid).read().strip()
    except OSError:
        return None


def our_holders():
    # packet holders reparented to this test's subreaper (zdtm-run exec): those of the
    # services' children; another test's on this machine have another
    p, reaper = os.getpid(), None
    while p > 1 and reaper is None:
        if comm(p) == "zdtm-run":
            reaper = p
        p = int(stat_field(p, 1) or 1)
    if reaper is None:
        return []
    return [int(d) for d in os.listdir("/proc") if d.isdigit() and
            stat_field(int(d), 1) == str(reaper) and comm(int(d)) == "criu-like-hold"]


def nothing_at_b(what):
    # the restore B forked ahead (its network namespace and packet holder) went too
    t = time.time()
    while our_holders() and time.time() - t < 5:
        time.sleep(0.05)
    if our_holders():
        fail("%s: a packet holder is left at host B: %s" % (what, our_holders()))
    # a veth made ahead by a restore SIGKILLed with its service goes with its namespace,
    # which the kernel frees in the background
    t = time.time()
    while sh("ip netns exec mig-b ip -o link show ve-mig0", check=False).strip() and \
            time.time() - t < 5:
        time.sleep(0.05)
    if sh("ip netns exec mig-b ip -o link show ve-mig0", check=False).strip():
        fail("%s: a veth ve-mig0 is left at host B" % what)
    left = [d for d in os.listdir(os.path.join(STATE, "b")) if d.startswith("incoming-")] \
        if os.path.isdir(os.path.join(STATE, "b")) else []
    if left:
        fail("%s: images left at host B: %s" % (what, left))


def bridge_kept(h, what):
    # A bridge whose MAC no one set has its ports' lowest: a veth's outside end with a lower
    # one would become host h's MAC, and a neighbour that learned it could not reach h once
    # that veth went (a failed migration): the restore gives an outside end a MAC above.
    link = sh("ip netns exec mig-%s ip -o link show br-mig" % h)
    got = link.split("link/ether ")[1].split()[0] if "link/ether " in link else link
    if got != UPLINK_MAC[h]:
        ports = sh("ip netns exec mig-%s ip -o link show master br-mig" % h, check=False)
        fail("%s: host %s's bridge has the MAC %s, not its uplink's %s: %s" %
             (what, h, got, UPLINK_MAC[h], ports.strip()))


def untouched_at_a(c, status, what):
    if not alive(c.pid):
        fail("%s: the source container %d is gone (the client: %r)" %
             (what, c.pid, read_status(status)))
    if sh("pgrep -x criu-like-track", check=False).strip():
        fail("%s: a write-tracking keeper is left" % what)
    n, _ = client_ok(status, what)
    print("ok: %s: the source runs on, the client's counter at %d, nothing at B" % (what, n),
          flush=True)


def service_pid(h):
    return int(open(os.path.join(STATE, h + ".pid")).read())


def main():
    global TMP
    criu, TMP, topo = sys.argv[1], sys.argv[2], sys.argv[3]
    c = Container(criu, TMP, mem_mib=64, rate_mib=4)
    status = os.path.join(TMP, "client.status")
    # A message lost on the way would come again only after 3 s: the migrations below
    # must lose none (what the source's lock held is forwarded to the destination).
    sh("ip netns exec mig-c ip route replace %s/32 dev eth0 rto_min 3s" % ADDR)
    cl = subprocess.Popen(["ip", "netns", "exec", "mig-c", sys.executable, "-u",
                           os.path.abspath(__file__), "client", status],
                          stderr=open(os.path.join(TMP, "client.err"), "w"))
    client_ok(status, "before any migration")

    # 1. refused: another protocol version (fault injection at HELLO)
    env = dict(os.environ, CRIU_LIKE_FAULT="1")
    r = migrate(criu, TMP, c.pid, "10.77.0.2", "refused", env=env, root="/")
    if r.returncode == 0:
        fail("a migration with protocol version 0 worked")
    if "migration protocol 0" not in r.stderr:
        fail("the refusal does not say why: %s" % r.stderr.strip())
    nothing_at_b("refused")
    untouched_at_a(c, status, "refused (protocol version)")

    # 2. no service listening there
    r = migrate(criu, TMP, c.pid, "10.77.0.2:27199", "noservice", root="/")
    if r.returncode == 0 or "cannot reach the destination" not in r.stderr:
        fail("a migration to no service: %d %s" % (r.returncode, r.stderr.strip()))
    nothing_at_b("no service")
    untouched_at_a(c, status, "no service at the destination")

    # 3. B's service and its workers killed during the pre-copy
    bdir = os.path.join(STATE, "b")
    p = subprocess.Popen(["nsenter", "--net=/run/netns/mig-a", criu, "migrate", "--online",
                          "-t", str(c.pid), "--to", "10.77.0.2", "-D",
                          os.path.join(TMP, "killed.img"), "--root", "/", "-v4", "-o",
                          os.path.join(TMP, "killed.log")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = False
    for _ in range(3000):
        if any(os.path.isdir(os.path.join(bdir, d, "1")) for d in os.listdir(bdir)
               if d.startswith("incoming-")):
            os.killpg(service_pid("b"), signal.SIGKILL)  # the service, its workers, their page servers
            killed = True
            break
        time.sleep(0.002)
    out, errout = p.communicate(timeout=120)
    if not killed:
        fail("the pre-copy never began at B")
    if p.returncode == 0:
        fail("the migration worked although B was killed during its pre-copy (too late?)")
    # SIGKILLed processes leave the namespace once they have exited: give them a moment
    for _ in range(250):
        left = sh("ip netns pids mig-b", check=False).split()
        if not left:
            break
        time.sleep(0.02)
    if left:
        fail("processes are left in mig-b after its service was killed: %s" % left)
    if not [d for d in os.listdir(bdir) if d.startswith("incoming-")]:
        fail("the killed service left nothing to clean up: the test did not kill it mid-copy")
    sh("%s up --criu %s -v4" % (topo, criu))  # B's service again: it removes the leftovers
    nothing_at_b("destination killed")
    untouched_at_a(c, status, "destination killed during the pre-copy")

    # 4. the migration A -> B
    before, _, _, retrans = read_status(status)
    r = migrate(criu, TMP, c.pid, "10.77.0.2", "migrate", root="/")
    if r.returncode:
        fail("the migration failed: %s" % r.stderr.strip())
    print(r.stdout.strip(), flush=True)
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("migrated")]
    newpid = int(line[0].split("pid ")[1].split()[0])
    note_pid(newpid)
    for _ in range(250):
        if not alive(c.pid):
            break
        time.sleep(0.02)
    if alive(c.pid):
        fail("the source container %d still runs after the migration" % c.pid)
    if not alive(newpid):
        fail("the migrated container %d does not run at B" % newpid)
    n, worst = client_ok(status, "after the migration", min_more=50)
    no_retrans(status, retrans, "the migration")
    fwd = forwarded("migrate", "the migration")
    ahead("migrate", "the migration")
    if os.readlink("/proc/%d/ns/net" % newpid) == os.readlink("/proc/self/ns/net"):
        fail("the migrated container is in the host's network namespace")
    link = sh("ip netns exec mig-b ip -o link show ve-mig0", check=False)
    if "master br-mig" not in link:
        fail("the veth's outside end is not on B's bridge: %r" % link)
    if sh("ip netns exec mig-a ip -o link show ve-mig0", check=False).strip():
        fail("the veth's outside end is still at A")
    bridge_kept("b", "after the migration")
    # made during the pre-copy from the first round's image, the same as the final one's
    if "veth vc0 made ahead is the final image's" not in \
            open(os.path.join(STATE, "b.log"), errors="replace").read():
        fail("B did not make the container's veth ahead, or made it again")
    print("ok: migrated A -> B: pid %d there, the client's counter %d -> %d, no reset, "
          "longest wait for an answer %.1f ms, %d packets held at A forwarded" %
          (newpid, before, n, worst * 1000, fwd), flush=True)

    # 5. back B -> A with --lazy-pages: A runs it before its memory is in, then gets every page
    before, retrans = n, read_status(status)[3]
    # the veth sent ahead with another MTU than the final image's: A makes it again
    mtu = sh("nsenter --net=/proc/%d/ns/net ip -o link show vc0" % newpid).split(" mtu ")[1].split()[0]
    env = dict(os.environ, CRIU_LIKE_MIGRATE_AHEAD_MTU=str(int(mtu) - 100))
    r = migrate(criu, TMP, newpid, "10.77.0.1", "lazy", extra=["--lazy-pages"], root="/", src="b",
                env=env)
    if r.returncode:
        fail("the lazy migration failed: %s" % r.stderr.strip())
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("migrated")]
    backpid = int(line[0].split("pid ")[1].split()[0])
    note_pid(backpid)
    for _ in range(250):
        if not alive(newpid):
            break
        time.sleep(0.02)
    if alive(newpid) or not alive(backpid):
        fail("after the lazy migration: B's copy %s, A's %s" %
             ("runs" if alive(newpid) else "gone", "runs" if alive(backpid) else "gone"))
    n, worst = client_ok(status, "after the lazy migration", min_more=50)
    no_retrans(status, retrans, "the lazy migration")
    fwd = forwarded("lazy", "the lazy migration")
    adir = os.path.join(STATE, "a")
    for _ in range(500):
        log = open(os.path.join(STATE, "a.log"), errors="replace").read()
        if "every page of the migrated tree is in" in log and \
                not [d for d in os.listdir(adir) if d.startswith("incoming-")]:
            break
        time.sleep(0.02)
    else:
        fail("A's lazy-pages daemon did not finish, or its images stayed")
    if "lazy-pages daemon" not in log:
        fail("A's restore was not lazy")
    if "master br-mig" not in sh("ip netns exec mig-a ip -o link show ve-mig0", check=False):
        fail("the veth's outside end is not back on A's bridge")
    bridge_kept("a", "after the lazy migration")
    if "veth vc0 changed since the first round: made again" not in log:
        fail("A kept a veth made ahead that differs from the final image's")
    back = sh("nsenter --net=/proc/%d/ns/net ip -o link show vc0" % backpid)
    if " mtu %s " % mtu not in back:
        fail("the veth made again at A has not the final image's MTU %s: %r" % (mtu, back))
    print("ok: migrated back B -> A with --lazy-pages: pid %d, every page in, the client's "
          "counter %d -> %d, no reset, longest wait %.1f ms, %d packets held at B forwarded" %
          (backpid, before, n, worst * 1000, fwd), flush=True)
    newpid = backpid
    cl.kill()
    cl.wait()
    os.kill(newpid, signal.SIGKILL)
    c.unshare.kill()
    c.unshare.wait()


def copies_at_b(c):
    # the container's server restored anywhere but as the source's pid: B's copy (the
    # cmdline only of a python3: reading one takes the process's mmap lock, and another
    # test's process may hold it, or fault on a page a lazy restore has not put in yet)
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == c.pid:
            continue
        try:
            if open("/proc/%s/comm" % d).read().strip() != "python3":
                continue
            cmd = open("/proc/%s/cmdline" % d, "rb").read().split(b"\0")
        except OSError:
            continue
        if b"server" in cmd and any(a.endswith(b"migrate.py") for a in cmd):
            found.append(int(d))
    return found


def one_copy(c, status, what, timeout=30):
    # exactly one copy runs: A's, answering its client; nothing of it at B
    t = time.time()
    while time.time() - t < timeout:
        left = [d for d in os.listdir(os.path.join(STATE, "b")) if d.startswith("incoming-")] \
            if os.path.isdir(os.path.join(STATE, "b")) else []
        if not copies_at_b(c) and not left:
            break
        time.sleep(0.1)
    b = copies_at_b(c)
    if b:
        for pid in b:
            os.kill(pid, signal.SIGKILL)
        fail("%s: a copy of the container runs besides the source: %s" % (what, b))
    nothing_at_b(what)
    untouched_at_a(c, status, what)


def wait_at_b(pred, what, timeout=60):
    bdir = os.path.join(STATE, "b")
    t = time.time()
    while time.time() - t < timeout:
        for d in os.listdir(bdir):
            if d.startswith("incoming-") and pred(os.path.join(bdir, d)):
                return True
        time.sleep(0.002)
    fail("%s: never seen at B" % what)


def start_migrate(criu, pid, log, extra=()):
    return subprocess.Popen(["nsenter", "--net=/run/netns/mig-a", criu, "migrate", "--online",
                             "-t", str(pid), "--to", "10.77.0.2", "-D",
                             os.path.join(TMP, log + ".img"), "--root", "/", "-v4", "-o",
                             os.path.join(TMP, log + ".log")] + list(extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# takes fd argv[2] of pid argv[1] (pidfd_getfd, syscall 438) and holds it until killed
HOLD = r'''
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(438, os.pidfd_open(int(sys.argv[1])), int(sys.argv[2]), 0)
print("held" if fd >= 0 else "failed", flush=True)
time.sleep(600)
'''


def fail_main():
    # migrate-fail.sh: each failure of Documentation/migration.md's table that
    # migrate.sh does not cover; after each, exactly one copy runs (A's)
    global TMP
    criu, TMP, topo = sys.argv[2], sys.argv[3], sys.argv[4]
    c = Container(criu, TMP, mem_mib=64, rate_mib=4)
    status = os.path.join(TMP, "client.status")
    cl = subprocess.Popen(["ip", "netns", "exec", "mig-c", sys.executable, "-u",
                           os.path.abspath(__file__), "client", status],
                          stderr=open(os.path.join(TMP, "client.err"), "w"))
    client_ok(status, "before any migration")

    # 1. the restore fails at B: the veth's outside name is taken there
    sh("ip netns exec mig-b ip link add ve-mig0 type veth peer name squat0")
    r = migrate(criu, TMP, c.pid, "10.77.0.2", "taken", root="/")
    sh("ip netns exec mig-b ip link del ve-mig0")
    if r.returncode == 0:
        fail("a migration whose restore cannot make its veth at B worked")
    if "ve-mig0" not in r.stderr:
        fail("the failed restore at B does not say why: %s" % r.stderr.strip()[-600:])
    one_copy(c, status, "the restore failed at B (veth name taken)")

    # 2. the link between the hosts cut during the pre-copy
    p = start_migrate(criu, c.pid, "cut")
    wait_at_b(lambda d: os.path.isdir(os.path.join(d, "1")), "the first round")
    sh("ip netns exec mig-b ip link set up-b down")
    t0 = time.time()
    out, errout = p.communicate(timeout=120)
    took = time.time() - t0
    sh("ip netns exec mig-b ip link set up-b up")
    if p.returncode == 0:
        fail("the migration worked although the link was cut during its pre-copy")
    print("ok: the cut link noticed by the source after %.1f s: %s" %
          (took, errout.strip().splitlines()[-1]), flush=True)
    one_copy(c, status, "the link cut during the pre-copy")

    # 3. B's service killed after the final freeze (the final round's images arriving)
    p = start_migrate(criu, c.pid, "final-kill", ["--rounds", "1"])
    wait_at_b(lambda d: any(f.startswith("core-") for f in os.listdir(os.path.join(d, "2")))
              if os.path.isdir(os.path.join(d, "2")) else False, "the final round's images")
    os.killpg(service_pid("b"), signal.SIGKILL)
    out, errout = p.communicate(timeout=120)
    if p.returncode == 0:
        fail("the migration worked although B was killed after the final freeze")
    sh("%s up --criu %s -v4" % (topo, criu))  # B's service again: it removes the leftovers
    one_copy(c, status, "the destination killed after the final freeze")

    # 4. B's service killed with the restored tree made there, held before GO (the source
    # holds GO until B closes the connection, 60 s at most: CRIU_LIKE_MIGRATE_GO_DELAY_MS;
    # a fixed delay let a slow look at B below reach past GO: both copies ran)
    log = os.path.join(TMP, "held-kill.log")
    os.environ["CRIU_LIKE_MIGRATE_GO_DELAY_MS"] = "60000"
    p = start_migrate(criu, c.pid, "held-kill", ["--rounds", "1"])
    del os.environ["CRIU_LIKE_MIGRATE_GO_DELAY_MS"]
    t = time.time()
    while time.time() - t < 60 and p.poll() is None:
        if os.path.exists(log) and "GO in 60000 ms" in open(log, errors="replace").read():
            break
        time.sleep(0.005)
    if not copies_at_b(c):
        fail("no restored copy seen at B before GO (%s)" % (p.poll(),))
    bridge_kept("b", "the copy held at B before GO")
    os.killpg(service_pid("b"), signal.SIGKILL)
    out, errout = p.communicate(timeout=120)
    if p.returncode == 0:
        fail("the migration worked although B was killed before GO")
    if "the destination closed the connection before GO" not in errout:
        fail("the source sent GO to a destination killed before it: %s" % errout.strip()[-600:])
    sh("%s up --criu %s -v4" % (topo, criu))
    one_copy(c, status, "the destination killed with its copy held before GO")

    # 5. a socket of the container held by a process outside it too (pidfd_getfd): the
    # final dump refuses it (the fds outside read before its freeze), the source runs on
    fd = next(int(f) for f in os.listdir("/proc/%d/fd" % c.pid)
              if os.readlink("/proc/%d/fd/%s" % (c.pid, f)).startswith("socket:"))
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(c.pid), str(fd)],
                              stdout=subprocess.PIPE, text=True)
    if holder.stdout.readline().strip() != "held":
        fail("cannot hold the container's socket %d outside it" % fd)
    r = migrate(criu, TMP, c.pid, "10.77.0.2", "held-outside", root="/")
    holder.kill()
    holder.wait()
    if r.returncode == 0:
        fail("a migration worked although a process outside held the container's socket")
    if "is also open in pid %d" % holder.pid not in r.stderr:
        fail("the refused migration does not name the holder: %s" % r.stderr.strip()[-600:])
    one_copy(c, status, "a socket held outside the container")

    n, worst = client_ok(status, "at the end", min_more=20)
    print("ok: after 5 failed migrations the client's counter is at %d, no reset, "
          "longest wait %.1f ms" % (n, worst * 1000), flush=True)
    cl.kill()
    cl.wait()
    c.unshare.kill()
    c.unshare.wait()


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "client":
        client(sys.argv[2])
    elif sys.argv[1] == "fail":
        fail_main()
    else:
        main()
