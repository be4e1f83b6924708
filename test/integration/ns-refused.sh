#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A tree that lives in a namespace other than criu-like's own, of a kind
# criu-like does not dump yet, must be refused at dump, naming the pid, the
# kind and the namespace inode, and go on running untouched; never
# "restored" into the host's namespaces. The cases: the container of the
# issue (unshare --fork --pid --mount-proc --mount --uts --ipc --net, dumped
# from unshare and from its shell), each kind alone that is not dumped yet
# (cgroup; net alone is dumped, but a vxlan inside it, a port of a link
# that is not a bridge, an arptables-nft rule no tool saves, a classful qdisc, a child
# qdisc, a tc filter, a conntrack helper, a tap's socket filter, are refused naming them; a
# tun fd whose device is in a namespace not dumped is refused naming it; a user namespace without a pid
# namespace, owning not every namespace of the tree, nested, or with a task
# of the tree in another one), a pid_for_children unshared with no child
# forked yet, a child that joined another time namespace (setns; a
# time_for_children of its own is dumped), one thread of a
# process in a UTS namespace of its own, and a task left in its root's UTS
# namespace when its parent made another after forking it (UTS, mount, IPC,
# time, pid and network namespaces are dumped: ns-uts.sh, ns-mnt.sh,
# ns-pid.sh, ns-net.sh, zdtm; UTS ones nested in the tree's: zdtm uts_nested),
# a tree rooted below the init of its pid namespace. Each runs in a session
# of its own, so nothing else stands in the way of its dump.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ns-refused: needs root"; exit 77; }
command -v unshare >/dev/null || { echo "ns-refused: unshare (util-linux) is not installed"; exit 77; }
PY=$(command -v python3 2>/dev/null) && "$PY" -c 'pass' 2>/dev/null ||
	{ echo "ns-refused: python3 is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "ns-refused: build first ($CRIU_LIKE)"; exit 1; }

tmp=$(mktemp -d)
trap 'pkill -KILL -f "loop.sh $tmp/" 2>/dev/null; rm -rf "$tmp"' EXIT
checks=0

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.err; do
		[ -s "$f" ] && { echo "---- $f"; tail -5 "$f"; }
	done
	exit 1
}

# The loop every case runs: its round count in COUNT, every 20 ms (renamed
# into place: a reader never sees it half-written).
cat >"$tmp/loop.sh" <<'EOF'
n=0
while :; do n=$((n + 1)); echo $n >"$1.new"; mv "$1.new" "$1"; sleep 0.02; done
EOF

# wait_file F: until F exists (5 s).
wait_file() {
	i=0
	while ! [ -s "$1" ]; do
		i=$((i + 1))
		[ $i -gt 250 ] && fail "$1 never appeared"
		sleep 0.02
	done
}

# pid_of_loop NAME: the pid of the shell running NAME's loop (unshare's child with --fork).
pid_of_loop() {
	u=$(cat "$tmp/$1.unshare")
	if grep -q -- --fork "$tmp/$1.args"; then
		pgrep -P "$u" -f "loop.sh" | head -n 1
	else
		echo "$u"
	fi
}

# refused NAME PID KIND [LOOP]: dump -R of PID fails naming PID, KIND and the
# inode; PID is neither stopped nor traced, the loop LOOP (default NAME) goes
# on, nothing is a checkpoint.
refused() {
	name=$1 pid=$2 kind=$3 loop=${4:-$1}
	ino=$(stat -L -c %i "/proc/$pid/ns/$kind" 2>/dev/null)
	rm -rf "$tmp/img"
	if "$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -R >"$tmp/$name.out" 2>"$tmp/$name.err"; then
		fail "$name: dump of $pid in its own $kind namespace succeeded"
	fi
	grep -q "pid $pid.*its $kind namespace .*\[${ino:-}.*is not criu-like's" "$tmp/$name.err" ||
		fail "$name: no refusal naming pid $pid, the $kind namespace and inode ${ino:-?}"
	"$CRIU_LIKE" restore -D "$tmp/img" -d >"$tmp/$name.rst" 2>&1 &&
		fail "$name: a restore of the refused dump worked"
	st=$(awk '/^State:/ { print $2 } /^TracerPid:/ { print $2 }' /proc/$pid/status | tr '\n' ' ')
	case "$st" in
	"S 0 " | "R 0 " | "D 0 ") ;;
	*) fail "$name: pid $pid is not running free after the refusal (state/tracer: $st)" ;;
	esac
	before=$(cat "$tmp/$loop.count")
	i=0
	while [ "$(cat "$tmp/$loop.count")" -le $((before + 3)) ]; do
		i=$((i + 1))
		[ $i -gt 250 ] && fail "$name: its loop stopped at round $before"
		sleep 0.02
	done
	checks=$((checks + 1))
	echo "ok: $name: $(grep -o 'pid [0-9].*is not criu-like.s ([a-z_]*:\[[0-9]*\])' "$tmp/$name.err" | head -n 1)"
}

# start NAME UNSHARE-OPTIONS...: the loop under unshare, in the background.
start() {
	name=$1
	shift
	echo "$@" >"$tmp/$name.args"
	setsid unshare "$@" sh "$tmp/loop.sh" "$tmp/$name.count" >/dev/null 2>"$tmp/$name.unshare.err" &
	echo $! >"$tmp/$name.unshare"
	wait_file "$tmp/$name.count"
}

# The container of the issue: refused from unshare (pid_for_children); from its init, every
# namespace kind is dumped and so are the host's cgroup v1 mounts its mount namespace copied
# (made again at restore: Documentation/cgroups.md), but its session leader, unshare, is
# outside the tree: refused naming it.
start container --fork --pid --mount-proc --mount --uts --ipc --net
host=$(hostname)
nsenter -t "$(pid_of_loop container)" -u hostname inside || fail "cannot set the container's hostname"
refused container-unshare "$(cat "$tmp/container.unshare")" pid_for_children container
ci=$(pid_of_loop container)
# namespace files bound on the host by other programs (`ip netns add`), and the tracefs or
# debugfs a tool mounted there (perf mounts /sys/kernel/tracing), came with the copy of its
# mounts and would be refused first: left out of the container
nsenter -t "$ci" -m -p sh -c \
	'findmnt -n -l -t nsfs,tracefs,debugfs -o TARGET | sort -r | xargs -r -n1 umount -l' 2>/dev/null
rm -rf "$tmp/img"
"$CRIU_LIKE" dump -t "$ci" -D "$tmp/img" -R >"$tmp/ci.out" 2>"$tmp/ci.err" &&
	fail "container-init: the container whose session leader is outside it was dumped"
grep -q "pid $ci: its session leader [0-9]* is outside the dumped tree" "$tmp/ci.err" ||
	fail "container-init: no refusal naming its session leader"
grep -q "cgroup filesystems are not supported" "$tmp/ci.err" &&
	fail "container-init: its cgroup mounts were refused"
kill -0 "$ci" || fail "container-init: pid $ci died"
checks=$((checks + 1))
echo "ok: container-init: $(grep -o "pid $ci: its session leader [^:]*" "$tmp/ci.err" | head -n 1)"
[ "$(hostname)" = "$host" ] || fail "the host's hostname changed"
[ "$(nsenter -t "$(pid_of_loop container)" -u hostname)" = inside ] || fail "the container's hostname changed"

# A cgroup namespace alone is dumped (Documentation/cgroups.md), its root recorded.
start cgroup --cgroup
rm -rf "$tmp/img"
"$CRIU_LIKE" dump -t "$(pid_of_loop cgroup)" -D "$tmp/img" -R >"$tmp/cgroup.out" 2>"$tmp/cgroup.err" ||
	fail "cgroup: dump -R of a tree with a cgroup namespace of its own failed"
"$CRIU_LIKE" decode "$tmp/img/cgroup.img" | tr -d ' \n' | grep -q '"namespaces":\[{' ||
	fail "cgroup: no cgroup namespace in cgroup.img"
checks=$((checks + 1))
echo "ok: cgroup: dumped with its cgroup namespace"

# net alone is dumped (ns-net.sh); what its namespace holds that is not, is refused
# by name: a link of a kind not dumped (vxlan: bridges, macvlans and tun/tap
# devices are dumped, zdtm net_bridge, net_macvlan, tun_tap), a netfilter rule
# no tool can save (nftables, iptables and conntrack are dumped: zdtm
# netfilter_rules, conntrack_state, netfilter.sh).
start net --net
rm -rf "$tmp/img"
"$CRIU_LIKE" dump -t "$(pid_of_loop net)" -D "$tmp/img" -R >"$tmp/net.out" 2>"$tmp/net.err" ||
	fail "net: dump -R of a tree with a network namespace of its own failed"
ls "$tmp/img"/netns-*.img >/dev/null 2>&1 || fail "net: no netns image"
checks=$((checks + 1))
echo "ok: net: dumped with its network namespace"
# net_refused NAME SETUP PATTERN: a net namespace set up by SETUP is refused, naming PATTERN
net_refused() {
	name=$1 setup=$2 pattern=$3
	echo "" >"$tmp/$name.args"
	setsid unshare --net sh -c "$setup && exec sh \"\$0\" \"\$1\"" "$tmp/loop.sh" \
		"$tmp/$name.count" >/dev/null 2>"$tmp/$name.unshare.err" &
	echo $! >"$tmp/$name.unshare"
	wait_file "$tmp/$name.count"
	pid=$(cat "$tmp/$name.unshare")
	rm -rf "$tmp/img"
	"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -R >"$tmp/$name.out" 2>"$tmp/$name.err" &&
		fail "$name: dump of $pid succeeded"
	grep -q "pid $pid: $pattern" "$tmp/$name.err" || fail "$name: no refusal naming pid $pid and $pattern"
	kill -0 "$pid" || fail "$name: pid $pid died"
	before=$(cat "$tmp/$name.count")
	i=0
	while [ "$(cat "$tmp/$name.count")" -le $((before + 3)) ]; do
		i=$((i + 1))
		[ $i -gt 250 ] && fail "$name: its loop stopped at round $before"
		sleep 0.02
	done
	checks=$((checks + 1))
	echo "ok: $name: $(grep -o "pid $pid: $pattern.*" "$tmp/$name.err" | head -n 1)"
	kill -KILL "$pid"
}
if command -v ip >/dev/null; then
	unshare --net ip link add vx-in type vxlan id 42 dstport 4789 2>/dev/null &&
		net_refused net-vxlan "ip link add vx-in type vxlan id 42 dstport 4789" \
			"link vx-in of its network namespace is of kind vxlan: not dumped"
	# a bond is the master of a veth end: refused by its kind first where the kernel has it
	unshare --net ip link add bo-in type bond 2>/dev/null &&
		net_refused net-bond "ip link add bo-in type bond" "link bo-in of its network namespace is of kind bond"
fi
# A tun fd of a task in criu-like's namespace whose device is in another namespace,
# not the tree's: refused naming it (it would come back in the wrong namespace).
if [ -c /dev/net/tun ]; then
	cat >"$tmp/tun.py" <<'PYEOF'
import ctypes, fcntl, os, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
host = os.open("/proc/self/ns/net", os.O_RDONLY)
if libc.unshare(0x40000000):
    sys.exit("unshare(CLONE_NEWNET) failed")
fd = os.open("/dev/net/tun", os.O_RDWR)
fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", b"tun-away", 0x0001 | 0x1000))
if libc.setns(host, 0x40000000):
    sys.exit("setns back failed")
n = 0
while True:
    n += 1
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(n))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(0.01)
PYEOF
	setsid "$PY" "$tmp/tun.py" "$tmp/tun-away.count" >/dev/null 2>"$tmp/tun-away.py.err" &
	pid=$!
	wait_file "$tmp/tun-away.count"
	rm -rf "$tmp/img"
	"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -R >"$tmp/tun-away.out" 2>"$tmp/tun-away.err" &&
		fail "tun-away: dump of $pid succeeded"
	pattern="pid $pid fd [0-9]*: tun device tun-away is in a network namespace that is neither the tree's nor criu-like's"
	grep -q "$pattern" "$tmp/tun-away.err" || fail "tun-away: no refusal naming pid $pid and its tun device"
	before=$(cat "$tmp/tun-away.count")
	i=0
	while [ "$(cat "$tmp/tun-away.count")" -le $((before + 3)) ]; do
		i=$((i + 1))
		[ $i -gt 250 ] && fail "tun-away: its loop stopped at round $before"
		sleep 0.02
	done
	checks=$((checks + 1))
	echo "ok: tun-away: $(grep -o "$pattern.*" "$tmp/tun-away.err" | head -n 1)"
	kill -KILL "$pid"
fi
# a rule no tool gives back: arptables-nft's mangle target is an xt expression
# in table arp filter, which no save tool handles.
if command -v nft >/dev/null && command -v arptables-nft >/dev/null &&
	unshare --net arptables-nft -A INPUT -j mangle --mangle-ip-s 10.0.0.1 2>/dev/null; then
	net_refused net-arptables "arptables-nft -A INPUT -j mangle --mangle-ip-s 10.0.0.1" \
		"its network namespace has nftables table arp filter with xt expressions (arptables-nft rules)"
fi
# a conntrack entry whose protocol state is not dumped (SCTP's vtags)
if command -v conntrack >/dev/null; then
	net_refused net-ct-sctp "conntrack -I -p sctp -s 10.1.1.1 -d 10.2.2.2 --sport 1 --dport 2 --state ESTABLISHED --orig-vtag 1 --reply-vtag 2 -t 100 2>/dev/null" \
		"conntrack entry sctp 10.1.1.1:1 -> 10.2.2.2:2 of its network namespace: its protocol's state is not dumped"
fi
# Queueing disciplines and filters that are not made again: a classful root qdisc, a
# child qdisc of a class, a tc filter (net_qdisc has those that are).
if command -v tc >/dev/null; then
	net_refused net-qdisc-htb "ip link add va type veth peer name vb && tc qdisc add dev va root handle 1: htb" \
		"link va of its network namespace has qdisc htb 1: (parent ffff:ffff): its kind is not one that is dumped"
	net_refused net-qdisc-child "ip link add va type veth peer name vb && tc qdisc add dev va root handle 1: tbf rate 1mbit burst 32k latency 400ms && tc qdisc add dev va parent 1:1 handle 10: pfifo" \
		"link va of its network namespace has qdisc pfifo 10: (parent 1:1): only a link's root and ingress qdiscs are dumped"
	net_refused net-tc-filter "ip link add va type veth peer name vb && tc qdisc add dev va ingress && tc filter add dev va parent ffff: protocol all prio 1 u32 match u32 0 0" \
		"link va of its network namespace has a tc filter (u32, parent ffff:[0-9a-f]*): filters are not dumped"
fi
# A conntrack entry bound to a helper (an nft ct helper object on port 21, a connection
# made and closed over lo: its entry stays): refused naming it.
if command -v nft >/dev/null && command -v conntrack >/dev/null; then
	cat >"$tmp/helper.nft" <<'NFTEOF'
table inet t {
	ct helper ftp-std { type "ftp" protocol tcp; }
	chain out { type filter hook output priority 0; tcp dport 21 ct helper set "ftp-std"; }
}
NFTEOF
	cat >"$tmp/helper.py" <<'PYEOF'
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 21))
s.listen()
c = socket.create_connection(("127.0.0.1", 21))
a, _ = s.accept()
a.close(); c.close(); s.close()
PYEOF
	if unshare --net nft -f "$tmp/helper.nft" 2>/dev/null; then
		net_refused net-ct-helper "ip link set lo up && nft -f $tmp/helper.nft && $PY $tmp/helper.py" \
			"conntrack entry .* of its network namespace uses helper ftp: conntrack helpers are not dumped"
	fi
fi
# A tap whose queue got a socket filter (TUNATTACHFILTER): the kernel does not give its
# instructions back, refused naming it.
if [ -c /dev/net/tun ]; then
	cat >"$tmp/tapf.py" <<'PYEOF'
import ctypes, fcntl, os, struct, sys, time
fd = os.open("/dev/net/tun", os.O_RDWR)
fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", b"tapf0", 0x0002 | 0x1000))
insn = ctypes.create_string_buffer(struct.pack("HBBI", 0x06, 0, 0, 0xffffffff))  # ret #-1
fcntl.ioctl(fd, 0x401054d5, struct.pack("HxxxxxxQ", 1, ctypes.addressof(insn)))
n = 0
while True:
    n += 1
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(n))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(0.01)
PYEOF
	echo "" >"$tmp/net-tapf.args"
	setsid unshare --net "$PY" "$tmp/tapf.py" "$tmp/net-tapf.count" >/dev/null 2>"$tmp/net-tapf.py.err" &
	pid=$!
	wait_file "$tmp/net-tapf.count"
	rm -rf "$tmp/img"
	"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -R >"$tmp/net-tapf.out" 2>"$tmp/net-tapf.err" &&
		fail "net-tapf: dump of $pid succeeded"
	pattern="pid $pid fd [0-9]*: tap device tapf0 had a socket filter attached (TUNATTACHFILTER, 1 instructions)"
	grep -q "$pattern" "$tmp/net-tapf.err" || fail "net-tapf: no refusal naming pid $pid and its tap's filter"
	before=$(cat "$tmp/net-tapf.count")
	i=0
	while [ "$(cat "$tmp/net-tapf.count")" -le $((before + 3)) ]; do
		i=$((i + 1))
		[ $i -gt 250 ] && fail "net-tapf: its loop stopped at round $before"
		sleep 0.02
	done
	checks=$((checks + 1))
	echo "ok: net-tapf: $(grep -o "$pattern.*" "$tmp/net-tapf.err" | head -n 1)"
	kill -KILL "$pid"
fi
# User namespaces are dumped (ns-user.sh, zdtm user_ns), but not: one without a pid
# namespace of its own, a namespace of the tree owned by another user namespace than
# the tree's, a user namespace nested in another below criu-like's, a task of the
# container in a user namespace of its own.
# user_refused NAME PID PATTERN: dump -R of PID fails with "pid ...: PATTERN", the loop
# NAME goes on, PID is neither stopped nor traced.
user_refused() {
	name=$1 pid=$2 pattern=$3
	rm -rf "$tmp/img"
	"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -R >"$tmp/$name.out" 2>"$tmp/$name.err" &&
		fail "$name: dump of $pid succeeded"
	grep -q "pid [0-9]*: $pattern" "$tmp/$name.err" || fail "$name: no refusal: $pattern"
	st=$(awk '/^State:/ { print $2 } /^TracerPid:/ { print $2 }' /proc/$pid/status | tr '\n' ' ')
	case "$st" in
	"S 0 " | "R 0 " | "D 0 ") ;;
	*) fail "$name: pid $pid is not running free after the refusal (state/tracer: $st)" ;;
	esac
	before=$(cat "$tmp/$name.count")
	i=0
	while [ "$(cat "$tmp/$name.count")" -le $((before + 3)) ]; do
		i=$((i + 1))
		[ $i -gt 250 ] && fail "$name: its loop stopped at round $before"
		sleep 0.02
	done
	checks=$((checks + 1))
	echo "ok: $name: $(grep -o "pid [0-9]*: $pattern.*" "$tmp/$name.err" | head -n 1)"
}
# loop_pid NAME: the shell running NAME's loop (the newest: unshare's forked child).
loop_pid() {
	pgrep -n -f "loop.sh $tmp/$1.count\$"
}
start user --user --map-root-user
user_refused user "$(pid_of_loop user)" \
	"it is in a user namespace of its own, user:\[[0-9]*\], but in criu-like's pid namespace"
kill -KILL "$(pid_of_loop user)"
setsid unshare --uts unshare --user --map-root-user --pid --fork sh "$tmp/loop.sh" \
	"$tmp/userowner.count" >/dev/null 2>&1 &
wait_file "$tmp/userowner.count"
uo=$(loop_pid userowner)
user_refused userowner "$uo" \
	"its uts namespace uts:\[[0-9]*\] is owned by user namespace user:\[[0-9]*\], not by the tree's user:\[$(stat -L -c %i /proc/$uo/ns/user)\]"
kill -KILL "$uo"
setsid unshare --user --map-root-user unshare --user --map-root-user --pid --fork sh \
	"$tmp/loop.sh" "$tmp/usernest.count" >/dev/null 2>&1 &
wait_file "$tmp/usernest.count"
un=$(loop_pid usernest)
user_refused usernest "$un" \
	"its user namespace user:\[[0-9]*\] is not a child of criu-like's user:\[[0-9]*\]"
kill -KILL "$un"
setsid unshare --user --map-root-user --pid --fork sh -c \
	'unshare --user sh "$0" "$1.in" & exec sh "$0" "$1"' "$tmp/loop.sh" "$tmp/userchild.count" \
	>/dev/null 2>&1 &
wait_file "$tmp/userchild.count"
wait_file "$tmp/userchild.count.in"
uc=$(loop_pid userchild)
user_refused userchild "$uc" \
	"its user namespace user:\[[0-9]*\] is not the one of the tree's root (user:\[$(stat -L -c %i /proc/$uc/ns/user)\])"
pkill -KILL -f "loop.sh $tmp/userchild.count"
if unshare --time true 2>/dev/null; then
	# time namespaces are dumped (zdtm time_ns), and one unshared for the
	# children only (zdtm time_ns_children): this one is dumped (-R); a child
	# that joined another time namespace (setns) is refused
	setsid unshare --time --fork sleep 1000 >/dev/null 2>&1 &
	holder=$!
	i=0
	until ts=$(pgrep -P $holder sleep) && [ -n "$ts" ]; do
		i=$((i + 1))
		[ $i -gt 250 ] && fail "tfc: no sleep under unshare --time --fork"
		sleep 0.02
	done
	setsid "$PY" - "$tmp/tfc.count" "$ts" >/dev/null 2>&1 <<'PYTHON' &
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x80) != 0:  # CLONE_NEWTIME
    sys.exit(1)
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the child, killed below, goes at once
if os.fork() == 0:
    # the child joins the holder's time namespace: neither its parent's nor its parent's children's
    fd = os.open("/proc/%s/ns/time" % sys.argv[2], os.O_RDONLY)
    if libc.setns(fd, 0x80) != 0:
        sys.exit(1)
    while True:
        time.sleep(1)
n = 0
while True:
    n += 1
    with open(sys.argv[1] + ".new", "w") as f:
        f.write("%d\n" % n)
    os.rename(sys.argv[1] + ".new", sys.argv[1])
    time.sleep(0.02)
PYTHON
	tfc=$!
	wait_file "$tmp/tfc.count"
	i=0
	until jc=$(pgrep -P $tfc) && [ -n "$jc" ] &&
		[ "$(readlink /proc/$jc/ns/time)" = "$(readlink /proc/$ts/ns/time)" ]; do
		i=$((i + 1))
		[ $i -gt 250 ] && fail "tfc: the child never joined the time namespace"
		sleep 0.02
	done
	rm -rf "$tmp/img"
	"$CRIU_LIKE" dump -t $tfc -D "$tmp/img" -R >"$tmp/tfc.out" 2>"$tmp/tfc.err" &&
		fail "tfc: dump of $tfc, whose child $jc joined another time namespace, succeeded"
	grep -q "pid $jc: its time namespace time:\[[0-9]*\] is neither its parent's" "$tmp/tfc.err" ||
		fail "tfc: no refusal naming pid $jc and its time namespace"
	kill -0 $tfc && kill -0 $jc || fail "tfc: the tree died"
	checks=$((checks + 1))
	echo "ok: tfc: $(grep -o "pid $jc: its time namespace.*parent's" "$tmp/tfc.err")"
	# without that child: its time_for_children of its own is dumped
	kill -KILL $jc
	wait_file "$tmp/tfc.count"
	i=0
	while [ -d /proc/$jc ]; do
		i=$((i + 1))
		[ $i -gt 250 ] && fail "tfc: the child $jc is still there"
		sleep 0.02
	done
	rm -rf "$tmp/img"
	"$CRIU_LIKE" dump -t $tfc -D "$tmp/img" -R >"$tmp/tfc2.out" 2>"$tmp/tfc2.err" ||
		fail "tfc: pid $tfc with a time_for_children of its own not dumped: $(tail -1 "$tmp/tfc2.err")"
	ls "$tmp/img"/timens-*.img >/dev/null 2>&1 || fail "tfc: no timens image for its children"
	kill -0 $tfc || fail "tfc: pid $tfc died"
	checks=$((checks + 1))
	echo "ok: tfc: pid $tfc with a time_for_children of its own dumped"
	kill -KILL $tfc $holder 2>/dev/null
	pkill -KILL -P $holder 2>/dev/null
fi

# A tree rooted below the init of its pid namespace: a pid namespace is dumped from its init only.
setsid unshare --fork --pid sh -c 'sh "$0" "$1" & wait' "$tmp/loop.sh" "$tmp/notinit.count" \
	>/dev/null 2>&1 &
wait_file "$tmp/notinit.count"
ni=$(pgrep -f "loop.sh $tmp/notinit.count" | while read -r p; do
	grep -q "^NSpid:.*	2$" /proc/$p/status && echo $p; done | head -n 1)
[ -n "$ni" ] || fail "notinit: no pid 2 in the namespace"
rm -rf "$tmp/img"
"$CRIU_LIKE" dump -t $ni -D "$tmp/img" -R >"$tmp/notinit.out" 2>"$tmp/notinit.err" &&
	fail "notinit: dump of $ni, pid 2 of its pid namespace, succeeded"
grep -q "pid $ni: the root of the tree is pid 2 of its pid namespace, not its init" \
	"$tmp/notinit.err" || fail "notinit: no refusal naming pid $ni as not the init"
kill -0 $ni || fail "notinit: pid $ni died"
checks=$((checks + 1))
echo "ok: notinit: $(grep -o 'pid [0-9]*: the root of the tree is pid 2.*(1)' "$tmp/notinit.err")"

# pid_for_children unshared, no child forked yet: no link to compare, refused all the same.
setsid "$PY" - "$tmp/pfc.count" >"$tmp/pfc.out" 2>"$tmp/pfc.err" <<'PYTHON' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x20000000) != 0:  # CLONE_NEWPID
    sys.exit("unshare: %s" % os.strerror(ctypes.get_errno()))
n = 0
while True:
    n += 1
    with open(sys.argv[1] + ".new", "w") as f:
        f.write("%d\n" % n)
    os.rename(sys.argv[1] + ".new", sys.argv[1])
    time.sleep(0.02)
PYTHON
pfc=$!
wait_file "$tmp/pfc.count"
rm -rf "$tmp/img"
"$CRIU_LIKE" dump -t $pfc -D "$tmp/img" -R >"$tmp/pfc.out" 2>"$tmp/pfc.err" &&
	fail "pfc: dump of $pfc with a pid_for_children of its own succeeded"
grep -q "pid $pfc: its pid_for_children namespace a new one" "$tmp/pfc.err" ||
	fail "pfc: no refusal naming pid $pfc and its pid_for_children namespace"
kill -0 $pfc || fail "pfc: pid $pfc died"
checks=$((checks + 1))
echo "ok: pfc: $(grep -o 'pid [0-9]*: its pid_for_children.*criu-like.s ([a-z_]*:\[[0-9]*\])' "$tmp/pfc.err")"
kill -KILL $pfc

# One thread in a UTS namespace of its own: refused naming the thread.
setsid "$PY" - "$tmp/thread.count" >"$tmp/thread.out" 2>"$tmp/thread.err" <<'PYTHON' &
import ctypes, os, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
tid = []
def apart():
    if libc.unshare(0x04000000) != 0:  # CLONE_NEWUTS
        os._exit(1)
    tid.append(threading.get_native_id())
    while True:
        time.sleep(1)
threading.Thread(target=apart, daemon=True).start()
while not tid:
    time.sleep(0.01)
n = 0
while True:
    n += 1
    with open(sys.argv[1] + ".new", "w") as f:
        f.write("%d %d\n" % (n, tid[0]))
    os.rename(sys.argv[1] + ".new", sys.argv[1])
    time.sleep(0.02)
PYTHON
tp=$!
wait_file "$tmp/thread.count"
tt=$(awk '{ print $2 }' "$tmp/thread.count")
rm -rf "$tmp/img"
"$CRIU_LIKE" dump -t $tp -D "$tmp/img" -R >"$tmp/thread.out" 2>"$tmp/thread.err" &&
	fail "thread: dump of $tp with thread $tt in a UTS namespace of its own succeeded"
grep -q "pid $tp (thread $tt): its uts namespace uts:\[" "$tmp/thread.err" ||
	fail "thread: no refusal naming pid $tp, thread $tt and the uts namespace"
kill -0 $tp || fail "thread: pid $tp died"
checks=$((checks + 1))
echo "ok: thread: $(grep -o 'pid [0-9]* (thread [0-9]*): its uts.*leader.s (uts:\[[0-9]*\])' "$tmp/thread.err")"
kill -KILL $tp

# A root with a UTS namespace of its own (dumped), a child that made another one after it
# forked a grandchild, left in the root's: refused naming the grandchild (a UTS namespace
# a task made, its descendants born in it, is dumped: zdtm uts_nested).
setsid unshare --uts sh -c 'sh -c "sh \"\$1\" \"\$2\" & exec unshare --uts sh \"\$1\" \"\$3\"" sh "$1" "$2" "$3" & exec sh "$1" "$4"' \
	sh "$tmp/loop.sh" "$tmp/inner.count" "$tmp/mid.count" "$tmp/outer.count" >/dev/null 2>&1 &
outer=$!
wait_file "$tmp/inner.count"
wait_file "$tmp/mid.count"
wait_file "$tmp/outer.count"
inner=$(pgrep -f "loop.sh $tmp/inner.count" | head -n 1)
mid=$(pgrep -f "loop.sh $tmp/mid.count" | head -n 1)
[ -n "$inner" ] && [ -n "$mid" ] || fail "apart: no inner or middle loop under $outer"
[ "$(stat -L -c %i /proc/$inner/ns/uts)" = "$(stat -L -c %i /proc/$outer/ns/uts)" ] &&
	[ "$(stat -L -c %i /proc/$mid/ns/uts)" != "$(stat -L -c %i /proc/$outer/ns/uts)" ] ||
	fail "apart: the grandchild is not in the root's uts namespace, or its parent is"
rm -rf "$tmp/img"
"$CRIU_LIKE" dump -t $outer -D "$tmp/img" >"$tmp/apart.out" 2>"$tmp/apart.err" &&
	fail "apart: dump of $outer with $inner left in its uts namespace under $mid succeeded"
grep -q "pid $inner: its uts namespace uts:\[[0-9]*\] is not its parent's" \
	"$tmp/apart.err" || fail "apart: no refusal naming pid $inner and its uts namespace"
kill -0 $outer && kill -0 $mid && kill -0 $inner || fail "apart: the tree died"
checks=$((checks + 1))
echo "ok: apart: $(grep -o "pid $inner: its uts.*made" "$tmp/apart.err")"
kill -KILL $inner $mid $outer

echo "ns-refused: $checks trees refused naming the pid, the namespace and its inode, each left running"
