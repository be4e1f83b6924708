# SPDX-License-Identifier: GPL-2.0
# netfilter.sh's work, in a network namespace of the test's own: bridge
# br-nf0 10.79.0.1/24 with a server on :9000; the container gets veth vc0
# 10.79.0.2/24 (outside end ve-nf0 on the bridge) and 10.80.0.1 on lo, which
# nobody outside routes back to. Its netfilter: DNAT tcp :80 -> :8080,
# MASQUERADE out of vc0, and, once its connections exist, `ct state
# established,related accept; ct state new drop` on input. Both connections
# exchange lines across a dump and a restore; the ruleset and the conntrack
# table (but for timeouts) are the same after it.
import os
import select
import signal
import socket
import subprocess
import sys
import time

RULES = """
table ip nat {
	chain pre { type nat hook prerouting priority dstnat; tcp dport 80 dnat to 10.79.0.2:8080; }
	chain post { type nat hook postrouting priority srcnat; oifname "vc0" masquerade; }
}
"""
FIREWALL = """
table inet fw {
	chain in { type filter hook input priority 0; policy accept;
		ct state established,related accept; ct state new drop; }
}
"""
CT = ("conntrack -L 2>/dev/null | sed -E 's/^([a-z0-9]+ +[0-9]+) +[0-9]+/\\1/; "
      "s/ (use|id)=[0-9]+//g' | sort")


def sh(cmd, check=True, inp=None):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True, input=inp)
    if check and r.returncode:
        fail("`%s` failed: %s" % (cmd, r.stderr.strip()))
    return r.stdout


def fail(msg):
    print("FAIL: " + msg, flush=True)
    for d, _, files in os.walk(TMP) if "TMP" in globals() else []:
        for f in sorted(x for x in files if x.endswith(".log")):
            lines = open(os.path.join(d, f), errors="replace").read().splitlines()
            errs = [ln for ln in lines if "rror (" in ln or "netfilter" in ln or "conntrack" in ln]
            print("---- %s\n%s" % (f, "\n".join((errs or lines)[-10:])))
    sys.exit(1)


def serve(conns):
    files = {c: c.makefile("rwb", buffering=0) for c in conns}
    while files:
        ready, _, _ = select.select(list(files), [], [])
        for c in ready:
            line = files[c].readline()
            if not line:
                del files[c]
                continue
            files[c].write(line.strip() + b" back\n")


def container():
    for _ in range(500):
        try:
            socket.if_nametoindex("vc0")
            break
        except OSError:
            time.sleep(0.01)
    for c in ("ip link set lo up", "ip addr add 10.80.0.1/32 dev lo",
              "ip addr add 10.79.0.2/24 dev vc0", "ip link set vc0 up",
              "ip route add default via 10.79.0.1"):
        sh(c)
    sh("nft -f -", inp=RULES)
    lst = socket.socket()
    lst.bind(("10.79.0.2", 8080))
    lst.listen(4)
    print("ready", flush=True)
    conn, _ = lst.accept()
    # out through the MASQUERADE: the server outside sees 10.79.0.2
    out = socket.create_connection(("10.79.0.1", 9000), source_address=("10.80.0.1", 0))
    sh("nft -f -", inp=FIREWALL)
    conn.sendall(b"firewall up\n")
    serve([conn, out])


def exchange(f, n, what):
    f.write(b"%s %d\n" % (what, n))
    line = f.readline()
    if line != b"%s %d back\n" % (what, n):
        fail("%s exchange %d: got %r (a reset or a closed connection)" % (what.decode(), n, line))


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as st:
            return st.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def state(pid):
    # the container's tables (the packet holder leaves empty raw base chains behind)
    return (sh("nsenter -t %d -n sh -c 'nft list table ip nat; nft list table inet fw'" % pid),
            sh("nsenter -t %d -n sh -c \"%s\"" % (pid, CT.replace('"', '\\"'))))


def main():
    global TMP
    criu, TMP = sys.argv[1], sys.argv[2]
    sh("ip link set lo up")
    sh("ip link add br-nf0 type bridge && ip addr add 10.79.0.1/24 dev br-nf0 && "
       "ip link set br-nf0 up")
    out_l = socket.socket()
    out_l.bind(("10.79.0.1", 9000))
    out_l.listen(1)
    srv = subprocess.Popen(["setsid", "unshare", "--net", sys.executable, "-u", __file__,
                            "container"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                           stderr=open(os.path.join(TMP, "container.err"), "w"))
    pid = srv.pid
    time.sleep(0.1)
    sh("ip link add ve-nf0 type veth peer name vc0 && ip link set vc0 netns %d && "
       "ip link set ve-nf0 master br-nf0 up" % pid)
    if srv.stdout.readline().strip() != b"ready":
        fail("the container did not start")
    cl = socket.create_connection(("10.79.0.2", 80), timeout=30)
    f = cl.makefile("rwb", buffering=0)
    out_l.settimeout(30)
    back, peer = out_l.accept()
    back.settimeout(30)
    if peer[0] != "10.79.0.2":
        fail("the container's connection was not masqueraded: it comes from %s" % peer[0])
    fb = back.makefile("rwb", buffering=0)
    if f.readline() != b"firewall up\n":
        fail("the container's firewall did not come up")
    # the firewall drops new connections now
    probe = socket.socket()
    probe.settimeout(1)
    if probe.connect_ex(("10.79.0.2", 80)) == 0:
        fail("a new connection got through the container's firewall")
    probe.close()
    exchange(f, 1, b"dnat")
    exchange(fb, 1, b"masq")
    before = state(pid)
    if "dport=80 src=10.79.0.2 dst=10.79.0.1 sport=8080" not in before[1]:
        fail("no DNATed entry in the container's conntrack table:\n" + before[1])
    img = os.path.join(TMP, "img")
    if subprocess.run([criu, "dump", "-t", str(pid), "-D", img, "--tcp-established", "-v4",
                       "-o", "dump.log"]).returncode:
        fail("dump")
    if alive(pid):
        fail("%d still runs after the dump" % pid)
    srv.poll()
    for name in ("nfrules-1.img", "conntrack-1.img"):
        if not os.path.exists(os.path.join(img, name)):
            fail("no %s" % name)
    # the clients talk while the container is away: held, never reset
    f.write(b"dnat 2\n")
    fb.write(b"masq 2\n")
    for _ in range(200):
        if subprocess.run("ip link show ve-nf0", shell=True, capture_output=True).returncode:
            break
        time.sleep(0.05)
    if subprocess.run([criu, "restore", "-d", "-D", img, "--tcp-established", "-v4", "-o",
                       "restore.log", "--external", "veth[vc0]:ve-nf0"]).returncode:
        fail("restore")
    if not alive(pid):
        fail("%d is not running after the restore" % pid)
    for name, ff, what in (("DNAT", f, b"dnat"), ("MASQUERADE", fb, b"masq")):
        line = ff.readline()
        if line != b"%s 2 back\n" % what:
            fail("the %s connection's held request got %r" % (name, line))
    for n in range(3, 6):
        exchange(f, n, b"dnat")
        exchange(fb, n, b"masq")
    after = state(pid)
    if after[0] != before[0]:
        fail("the ruleset changed:\n--- before\n%s--- after\n%s" % (before[0], after[0]))
    if after[1] != before[1]:
        fail("the conntrack table changed:\n--- before\n%s--- after\n%s" % (before[1], after[1]))
    ours = sh("nsenter -t %d -n nft list ruleset" % pid)
    if "criu_like" in ours or "criu-like" in ours or "CRLK_" in ours or "CRLH_" in ours:
        fail("criu-like's own rules are left in the container:\n" + ours)
    probe = socket.socket()
    probe.settimeout(1)
    if probe.connect_ex(("10.79.0.2", 80)) == 0:
        fail("a new connection got through the restored firewall")
    os.kill(pid, signal.SIGKILL)
    print("PASS: DNAT and MASQUERADE connections went on through the restore, "
          "ruleset and conntrack table the same", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "container":
        container()
    else:
        main()
