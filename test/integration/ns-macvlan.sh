#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A container (unshare --net) whose macvlan mv-in (mode bridge, its own MAC,
# 10.75.0.1/24) is on a link outside it, low0, one end of a veth pair whose
# other end low1 holds 10.75.0.9. Dumped (killed); a restore without
# --external macvlan[mv-in]:NAME is refused naming the link, and leaves no
# link behind; restored with --external macvlan[mv-in]:low0: mv-in comes
# back with its ifindex, MAC, mode and address on low0, and a datagram from
# inside reaches a socket on low1's address. Everything runs in a network
# namespace of the test's own: the host's links are never touched.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ns-macvlan: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "ns-macvlan: build first"; exit 1; }
PATH=$PATH:/usr/sbin:/sbin
for t in python3 unshare nsenter ip; do
	command -v $t >/dev/null || { echo "ns-macvlan: $t is not installed"; exit 77; }
done
CRIU_LIKE=$(realpath "$CRIU_LIKE")
unshare --net sh -c 'ip link add mv-p0 type veth peer name mv-p1 &&
	ip link add link mv-p0 name mv-p2 type macvlan mode bridge' 2>/dev/null ||
	{ echo "ns-macvlan: no veth or macvlan in this kernel"; exit 77; }
[ -n "${NS_MACVLAN_INNER:-}" ] || exec env NS_MACVLAN_INNER=1 CRIU_LIKE="$CRIU_LIKE" unshare --net sh "$0"

# ---- from here on, in the test's own network namespace ----
tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.log; do
		[ -f "$f" ] && { echo "---- $f"; grep -i "error\|ns: net" "$f" | tail -n 10; }
	done
	exit 1
}
describe() {
	nsenter -t "$1" -n sh -c 'ip -d -o link show mv-in | sed -E "s/ state [A-Za-z]+//; s/NO-CARRIER,//; s/,LOWER_UP//"; ip -o -4 addr show dev mv-in'
}

ip link set lo up
ip link add low0 type veth peer name low1 || fail "veth low0"
ip addr add 10.75.0.9/24 dev low1
ip link set low0 up && ip link set low1 up
setsid unshare --net sh -c 'while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1 &
pid=$!
i=0
while [ "$(readlink /proc/$pid/ns/net)" = "$(readlink /proc/self/ns/net)" ]; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "the container never got its namespace"; sleep 0.02
done
ip link add link low0 name mv-in address 02:75:00:00:00:01 type macvlan mode bridge || fail "macvlan"
ip link set mv-in netns "$pid" || fail "mv-in into the container"
nsenter -t "$pid" -n sh -c 'ip link set lo up && ip addr add 10.75.0.1/24 dev mv-in && ip link set mv-in up' ||
	fail "configure mv-in"
before=$(describe "$pid")
echo "$before" | grep -q "macvlan mode bridge" || fail "mv-in is not a macvlan in bridge mode: $before"
links_before=$(ip -o link show | wc -l)

"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -v4 -o "$tmp/dump.log" 2>"$tmp/dump.err" || fail "dump"
grep -q "link mv-in is on low0 outside its namespace" "$tmp/dump.log" || fail "the dump did not see low0"
old=$pid
pid=
i=0
while kill -0 "$old" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "the dumped container is still there"; sleep 0.02
done

# without the outside name: refused, naming it, nothing left
"$CRIU_LIKE" restore -D "$tmp/img" -d -v4 -o "$tmp/restore-refused.log" 2>"$tmp/refused.err" &&
	fail "a restore without --external macvlan[mv-in]:NAME succeeded"
grep -q "link mv-in (macvlan) is on a link outside the container (low0 at the dump): give --external macvlan\[mv-in\]:NAME" \
	"$tmp/refused.err" || fail "the refusal does not name mv-in: $(cat "$tmp/refused.err")"
[ "$(ip -o link show | wc -l)" = "$links_before" ] || fail "the refused restore left links behind"
kill -0 "$old" 2>/dev/null && fail "the refused restore left pid $old running"
echo "ok: refused: $(grep -o 'link mv-in (macvlan).*' "$tmp/refused.err")"

"$CRIU_LIKE" restore -D "$tmp/img" -d --external 'macvlan[mv-in]:low0' -v4 \
	-o "$tmp/restore.log" 2>"$tmp/restore.err" || fail "restore with --external macvlan[mv-in]:low0"
pid=$old
kill -0 "$pid" || fail "pid $pid is not back"
after=$(describe "$pid")
[ "$before" = "$after" ] || fail "mv-in changed:
--- before
$before
--- after
$after"
echo "ok: mv-in back on low0: $(echo "$after" | head -n 1 | cut -c1-60)..."

# a datagram from inside reaches low1's address
python3 - "$pid" <<'PYEOF' || fail "no datagram from inside the restored container reached 10.75.0.9"
import os, socket, subprocess, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.75.0.9", 7575))
s.settimeout(10)
subprocess.run(["nsenter", "-t", sys.argv[1], "-n", "python3", "-c",
                "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
                ".sendto(b'mv', ('10.75.0.9', 7575))"], check=True)
data, src = s.recvfrom(16)
sys.exit(0 if data == b"mv" and src[0] == "10.75.0.1" else 1)
PYEOF
echo "ok: a datagram from 10.75.0.1 inside reached 10.75.0.9 outside"
echo "ns-macvlan: a macvlan on a link outside the container, restored with --external macvlan[IN]:OUT"
