# SPDX-License-Identifier: GPL-2.0
# ns-net.sh's work, run in a network namespace of the test's own (never the
# host's interfaces): a bridge br-nt0 holds 10.77.0.1/24; a "container"
# (unshare --net) gets veth vc0 (10.77.0.2/24, a MAC, an MTU) whose outside
# end ve-nt0 is on the bridge, a route table, a policy rule and sysctls. Its
# program is this file in server mode: an echo server with a client outside
# connected over the veth (IPv4 and IPv6), a TCP connection over lo inside its namespace and
# a unix socket bound to an abstract name. Dumped with --tcp-established:
# the client's connection is held (no reset); a restore without the outside
# name of the veth is refused naming it; restored with --external
# veth[vc0]:ve-nt0: the same links, addresses, routes, rules, sysctls (vc0's
# ipv6 MTU too, which its carrier coming back resets), the veth back on the
# bridge, and the client's connection goes on. Then a second
# cycle from the restored tree, with --veth-pair vc0=ve-nt0. Last, --empty-ns
# net: a tree with a namespace of its own and one without come back in a new
# namespace with lo only.
import os
import select
import signal
import socket
import subprocess
import sys
import time

MAC = "02:11:22:33:44:55"


def sh(cmd, check=True):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if check and r.returncode:
        fail("`%s` failed: %s" % (cmd, r.stderr.strip()))
    return r.stdout


def fail(msg):
    print("FAIL: " + msg, flush=True)
    logs = []
    for d, _, files in os.walk(TMP) if "TMP" in globals() else []:
        logs += [os.path.join(d, f) for f in files if f.endswith(".log")]
    for p in sorted(logs):
        if True:
            lines = open(p, errors="replace").read().splitlines()
            errs = [ln for ln in lines if "Error" in ln or "rror (" in ln or "ns: net" in ln]
            print("---- %s\n%s" % (p, "\n".join((errs or lines)[-10:])))
    sys.exit(1)


def server():
    # in the container: wait for vc0, configure, serve
    for _ in range(500):
        try:
            socket.if_nametoindex("vc0")
            break
        except OSError:
            time.sleep(0.01)
    for c in ("ip link set lo up",
              "ip link set vc0 address %s mtu 1400" % MAC,
              "ip addr add 10.77.0.2/24 dev vc0",
              "ip -6 addr add fd77::2/64 dev vc0",
              "ip link set vc0 up",
              "ip addr add 10.78.0.1/32 dev lo",
              "ip route add default via 10.77.0.1",
              "ip route add 10.99.0.0/16 via 10.77.0.1 table 77",
              "ip rule add from 10.78.0.1 table 77 pref 777",
              "sysctl -q -w net.ipv4.ip_local_port_range='31000 32000'",
              "sysctl -q -w net.ipv4.conf.vc0.rp_filter=2"):
        sh(c)
    # an ipv6 MTU of its own, below the link's: written once vc0's carrier
    # (ve-nt0 up outside) is passed on, which resets it to the link's MTU.
    # `ip link show vc0` (one RTM_GETLINK) passes on a pending change first.
    for _ in range(500):
        if " state UP " in sh("ip link show vc0"):
            break
        time.sleep(0.01)
    else:
        fail("vc0 has no carrier")
    sh("sysctl -q -w net.ipv6.conf.vc0.mtu=1300")
    lst = socket.socket()
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind(("10.77.0.2", 7000))
    lst.listen(4)
    for _ in range(500):  # DAD of fd77::2 (the bridge side is up)
        if not sh("ip addr show tentative").strip():
            break
        time.sleep(0.01)
    lst6 = socket.socket(socket.AF_INET6)
    lst6.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst6.bind(("fd77::2", 7001))
    lst6.listen(4)
    # a connection over lo inside the namespace, and an abstract unix socket
    inner_l = socket.socket()
    inner_l.bind(("10.78.0.1", 0))
    inner_l.listen(1)
    inner_c = socket.create_connection(inner_l.getsockname())
    inner_s, _ = inner_l.accept()
    ux = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ux.bind(b"\0ns-net-test")
    print("ready", flush=True)
    conn, _ = lst.accept()
    conn6, _ = lst6.accept()
    files = {conn: conn.makefile("rwb", buffering=0), conn6: conn6.makefile("rwb", buffering=0)}
    while True:
        ready, _, _ = select.select(list(files), [], [])
        for c in ready:
            f = files[c]
            line = f.readline()
            if not line:
                return
            line = line.strip()
            if line == b"check":
                ok = True
                try:
                    inner_c.sendall(b"x")
                    ok = inner_s.recv(1) == b"x"
                    u = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                    u.sendto(b"y", b"\0ns-net-test")
                    ok = ok and ux.recv(1) == b"y"
                except OSError as e:
                    ok = False
                    print("check: %s" % e, flush=True)
                f.write(b"ok\n" if ok else b"bad\n")
            else:
                f.write(line + b" back\n")


def describe(pid):
    # the link-local address of vc0 is not tentative any more (DAD done)
    for _ in range(400):
        if not sh("nsenter -t %d -n ip addr show tentative" % pid).strip():
            break
        time.sleep(0.01)
    return sh("nsenter -t %d -n sh -c '"
              "ip -o link show | sed \"s/ state [A-Z]*//; s/qdisc [a-z_]*//; s/@if[0-9]*//\"; "
              "ip -o addr show | sed \"s/valid_lft.*//\"; "
              "ip route show table all; ip -6 route show table all | grep -v \"^local\\|^multicast\\|proto kernel\"; "
              "ip rule; ip link show vc0 >/dev/null; "
              "sysctl net.ipv4.ip_local_port_range net.ipv4.conf.vc0.rp_filter "
              "net.ipv6.conf.vc0.mtu'" % pid)


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as st:
            return st.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_ready(p):
    line = p.stdout.readline()
    if line.strip() != b"ready":
        fail("the server did not start: %r" % line)


def exchange(f, n, timeout=20):
    f.write(b"ping %d\n" % n)
    t = time.time()
    line = f.readline()
    if line != b"ping %d back\n" % n:
        fail("exchange %d: got %r after %.1f s (a reset or a closed connection)"
             % (n, line, time.time() - t))


def main():
    global TMP
    criu, TMP = sys.argv[1], sys.argv[2]
    sh("ip link set lo up")
    sh("ip link add br-nt0 type bridge && ip addr add 10.77.0.1/24 dev br-nt0 && "
       "ip -6 addr add fd77::1/64 dev br-nt0 nodad && ip link set br-nt0 up")
    srv = subprocess.Popen(["setsid", "unshare", "--net", sys.executable, "-u", __file__,
                            "server"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                           stderr=open(os.path.join(TMP, "server.err"), "w"))
    pid = srv.pid
    time.sleep(0.1)
    sh("ip link add ve-nt0 type veth peer name vc0 && ip link set vc0 netns %d && "
       "ip link set ve-nt0 master br-nt0 up" % pid)
    wait_ready(srv)
    cl = socket.create_connection(("10.77.0.2", 7000), timeout=30)
    f = cl.makefile("rwb", buffering=0)
    cl6 = socket.create_connection(("fd77::2", 7001), timeout=30)
    f6 = cl6.makefile("rwb", buffering=0)
    exchange(f, 1)
    exchange(f6, 1)
    f.write(b"check\n")
    if f.readline() != b"ok\n":
        fail("the server's own sockets do not work before the dump")
    before = describe(pid)
    if "net.ipv6.conf.vc0.mtu = 1300" not in before:
        fail("vc0's ipv6 MTU is not 1300 before the dump:\n%s" % before)
    n = 2
    for rnd, opt in ((1, ["--external", "veth[vc0]:ve-nt0"]), (2, ["--veth-pair", "vc0=ve-nt0"])):
        img = os.path.join(TMP, "img%d" % rnd)
        r = subprocess.run([criu, "dump", "-t", str(pid), "-D", img, "--tcp-established",
                            "-v4", "-o", "dump-%d.log" % rnd])
        if r.returncode:
            fail("round %d: dump" % rnd)
        if not os.path.exists(os.path.join(img, "netns-1.img")) and \
                not any(x.startswith("netns-") for x in os.listdir(img)):
            fail("round %d: no netns image" % rnd)
        if alive(pid):
            fail("round %d: %d still runs after the dump" % (rnd, pid))
        srv.poll()
        # the client talks while the tree is away: held, never reset
        f.write(b"ping %d\n" % n)
        f6.write(b"ping %d\n" % n)
        if rnd == 1:
            r = subprocess.run([criu, "restore", "-d", "-D", img, "--tcp-established", "-v4",
                                "-o", "restore-refused.log"], stderr=subprocess.DEVNULL)
            if r.returncode == 0:
                fail("a restore without the outside name of veth vc0 worked")
            log = open(os.path.join(img, "restore-refused.log")).read()
            if "veth[vc0]:NAME" not in log or "ve-nt0 on bridge br-nt0" not in log:
                fail("the refused restore does not name the veth and its outside end")
        # the killed tree's namespace, and its veth pair, go away asynchronously
        for _ in range(200):
            if subprocess.run("ip link show ve-nt0", shell=True,
                              capture_output=True).returncode:
                break
            time.sleep(0.05)
        else:
            fail("round %d: ve-nt0 is still there (the dumped tree's namespace, or the "
                 "refused restore)" % rnd)
        r = subprocess.run([criu, "restore", "-d", "-D", img, "--tcp-established", "-v4",
                            "-o", "restore-%d.log" % rnd] + opt)
        if r.returncode:
            fail("round %d: restore" % rnd)
        if not alive(pid):
            fail("round %d: %d is not running after the restore" % (rnd, pid))
        if os.readlink("/proc/%d/ns/net" % pid) == os.readlink("/proc/self/ns/net"):
            fail("round %d: restored into criu-like's network namespace" % rnd)
        after = describe(pid)
        if after != before:
            fail("round %d: the namespace differs:\n--- before\n%s--- after\n%s"
                 % (rnd, before, after))
        if "master br-nt0" not in sh("ip -o link show ve-nt0"):
            fail("round %d: ve-nt0 is not on the bridge" % rnd)
        for name, ff in (("IPv4", f), ("IPv6", f6)):
            line = ff.readline()
            if line != b"ping %d back\n" % n:
                fail("round %d: the held %s request got %r" % (rnd, name, line))
        n += 1
        for _ in range(3):
            exchange(f, n)
            exchange(f6, n)
            n += 1
        f.write(b"check\n")
        if f.readline() != b"ok\n":
            fail("round %d: the server's lo connection or unix socket is broken" % rnd)
        print("round %d: restored, %d exchanges so far" % (rnd, n - 1), flush=True)
    os.kill(pid, signal.SIGKILL)
    empty_ns(criu)
    print("PASS", flush=True)


def empty_ns(criu):
    # --empty-ns net: a tree with a namespace of its own, and one in criu-like's,
    # come back in a new namespace with lo only (up), whatever was dumped
    for own in (True, False):
        pre = ["unshare", "--net", "sh", "-c",
               "ip link set lo up && ip addr add 10.79.0.1/24 dev lo && exec sleep 1000"]
        p = subprocess.Popen(["setsid"] + (pre if own else ["sleep", "1000"]),
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)  # not the test's log: it grows
        for _ in range(200):
            if os.readlink("/proc/%d/exe" % p.pid).endswith("sleep"):
                break
            time.sleep(0.01)
        img = os.path.join(TMP, "img-empty-%d" % own)
        if subprocess.run([criu, "dump", "-t", str(p.pid), "-D", img, "-v4", "-o", "dump.log"]).returncode:
            fail("empty-ns (own %s): dump" % own)
        p.wait()
        if subprocess.run([criu, "restore", "-d", "-D", img, "--empty-ns", "net", "-v4",
                           "-o", "restore.log"]).returncode:
            fail("empty-ns (own %s): restore" % own)
        if os.readlink("/proc/%d/ns/net" % p.pid) == os.readlink("/proc/self/ns/net"):
            fail("empty-ns (own %s): restored into criu-like's network namespace" % own)
        got = sh("nsenter -t %d -n ip -o -4 addr show" % p.pid)
        links = sh("nsenter -t %d -n ip -o link show" % p.pid)
        if "10.79.0.1" in got or "127.0.0.1" not in got or len(links.splitlines()) != 1:
            fail("empty-ns (own %s): not a namespace with lo only:\n%s%s" % (own, links, got))
        os.kill(p.pid, signal.SIGKILL)
        print("empty-ns (tree with its own namespace: %s): lo only" % own, flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "server":
        server()
    else:
        main()
