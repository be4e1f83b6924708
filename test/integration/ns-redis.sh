#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# redis-server in a container (issue 14, item 4 (a)): the init of its own
# pid, mount, UTS, IPC and network namespaces, its root a bind of / pivoted
# into, a veth whose outside end is on a bridge of the "host", 100,000 keys
# (DEBUG POPULATE) in database 0. 10 clients outside the container
# (redis-clients.py) work on their own keys in database 1 over one
# connection each, through the bridge. Dumped with --tcp-established while
# they talk (the network lock holds the whole namespace), restored with
# --external veth[rd0]:ve-rd0 under them: the container is back as the init
# of a new pid namespace with its hostname, its veth on the bridge, the same
# 10 connections go on (no error, no reconnect, the same ports, seen by the
# server), every client's earlier writes are there, and database 0 is
# intact (DBSIZE and DEBUG DIGEST). Everything runs in a network namespace
# of the test's own, the "host": the machine's interfaces are never touched.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ns-redis: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "ns-redis: build first ($CRIU_LIKE)"; exit 1; }
PATH=$PATH:/usr/sbin:/sbin
command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
	sh scripts/install-deps.sh >/dev/null 2>&1
command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
	{ echo "ns-redis: redis-server and redis-cli cannot be installed"; exit 77; }
for t in python3 unshare nsenter pivot_root ip; do
	command -v $t >/dev/null || { echo "ns-redis: $t is not installed"; exit 77; }
done
if [ -z "${NS_REDIS_HOST:-}" ]; then
	# the "host": a network namespace of the test's own
	NS_REDIS_HOST=1 CRIU_LIKE=$(realpath "$CRIU_LIKE") exec unshare --net sh "$0" "$@"
fi
PY=$(command -v python3)
CLIENTS=$(realpath test/integration/redis-clients.py)
NCLIENTS=10
KEYS=100000
ADDR=10.78.0.2

tmp=$(mktemp -d)
pid=
cpid=
cleanup() {
	[ -n "$cpid" ] && kill -KILL $cpid 2>/dev/null
	[ -n "$pid" ] && kill -KILL $pid 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp/dump.out" "$tmp/restore.out" "$tmp/cl/result" "$tmp/clients.out" \
		"$tmp/container.out"; do
		[ -s "$f" ] && { echo "---- $f"; tail -12 "$f"; }
	done
	for f in "$tmp/img/dump.log" "$tmp/img/restore.log"; do
		[ -s "$f" ] && { echo "---- $f"; grep -E 'Error|error|warn' "$f" | tail -10; }
	done
	exit 1
}

. test/integration/redis.inc
cli() { redis-cli -h $ADDR -p 6379 "$@"; }
gone() { # PID: it has left (not our child: unshare's)
	_i=0
	while kill -0 "$1" 2>/dev/null; do
		_i=$((_i + 1)); [ $_i -le 500 ] || return 1; sleep 0.02
	done
}

ip link set lo up && ip link add br-rd type bridge && ip addr add 10.78.0.1/24 dev br-rd &&
	ip link set br-rd up || fail "cannot make the bridge"

# the container: redis-server its init, in a root of its own
root=$tmp/root
mkdir -p "$root"
inner="mount --make-rprivate / && mount --bind / $root && mount -t proc proc $root/proc &&
	mount -t devtmpfs devtmpfs $root/dev && cd $root && pivot_root . mnt && umount -l /mnt &&
	cd / && hostname redis-ct &&
	while ! ip link show rd0 >/dev/null 2>&1; do sleep 0.01; done &&
	ip link set lo up && ip addr add $ADDR/24 dev rd0 && ip link set rd0 up &&
	ip route add default via 10.78.0.1 &&
	exec setsid redis-server --bind 0.0.0.0 --port 6379 --save '' --appendonly no --dir / \
		--protected-mode no --enable-debug-command yes --logfile '' </dev/null >/dev/null 2>&1"
setsid unshare --fork --pid --mount --uts --ipc --net sh -c "$inner" \
	</dev/null >/dev/null 2>"$tmp/container.out" &
ushare=$!
i=0
until pid=$(pgrep -P $ushare); do
	i=$((i + 1)); [ $i -le 500 ] || fail "the container did not start"; sleep 0.01
done
ip link add ve-rd0 type veth peer name rd0 && ip link set rd0 netns $pid &&
	ip link set ve-rd0 master br-rd up || fail "cannot give the container its veth"
i=0
until [ "$(cli ping 2>/dev/null)" = PONG ]; do
	i=$((i + 1)); [ $i -le 300 ] || fail "redis-server in the container does not answer"
	sleep 0.05
done
[ "$(awk '/^NSpid/ { print $NF }' /proc/$pid/status)" = 1 ] || fail "redis-server is not pid 1"
[ "$(readlink /proc/$pid/exe)" = "$(readlink -f "$(command -v redis-server)")" ] ||
	fail "pid $pid is not redis-server"
cli DEBUG POPULATE $KEYS key 64 >/dev/null
[ "$(cli DBSIZE)" = $KEYS ] || fail "DEBUG POPULATE: DBSIZE $(cli DBSIZE)"
digest=$(cli DEBUG DIGEST)

mkdir "$tmp/cl"
"$PY" "$CLIENTS" 6379 $NCLIENTS "$tmp/cl" 2 $ADDR >"$tmp/clients.out" 2>&1 &
cpid=$!
progress_past 100 || fail "the clients do not get answers"

"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" --tcp-established -v4 -o dump.log \
	>"$tmp/dump.out" 2>&1 || fail "dump of the container (init $pid)"
gone $pid || fail "the container's init $pid still runs after the dump"
before=$(cat "$tmp/cl/progress")
# the dumped namespace, and the outside end of its veth, go away asynchronously
i=0
while ip link show ve-rd0 >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -le 250 ] || fail "ve-rd0 is still there after the dump"; sleep 0.02
done
"$CRIU_LIKE" restore -D "$tmp/img" -d --tcp-established --root / \
	--external 'veth[rd0]:ve-rd0' --pidfile "$tmp/rpid" -v4 -o restore.log \
	>"$tmp/restore.out" 2>&1 || fail "restore of the container"
pid=$(cat "$tmp/rpid")
[ "$(readlink /proc/$pid/exe)" = "$(readlink -f "$(command -v redis-server)")" ] ||
	fail "the restored pid $pid is not redis-server"
[ "$(awk '/^NSpid/ { print $NF }' /proc/$pid/status)" = 1 ] ||
	fail "restored redis-server is not pid 1 of its namespace: $(grep NSpid /proc/$pid/status)"
for ns in pid mnt uts ipc net; do
	[ "$(readlink /proc/$pid/ns/$ns)" != "$(readlink /proc/self/ns/$ns)" ] ||
		fail "restored into the test's $ns namespace"
done
[ "$(nsenter -t $pid -u hostname)" = redis-ct ] || fail "hostname $(nsenter -t $pid -u hostname)"
ip -o link show ve-rd0 | grep -q "master br-rd" || fail "ve-rd0 is not on the bridge"
# the packet holder's tables raw (made for its rules, the container had none) are gone again
grep -q "raw, made for the held packets' rules, removed" "$tmp/img/restore.log" ||
	fail "the restore did not say it removed the holder's tables raw"
tables=$(nsenter -t $pid -n nft list tables 2>&1)
case "$tables" in *" raw"*) fail "the container's namespace keeps a table raw: $tables" ;; esac
progress_past $((before + 100)) || fail "the clients stopped after the restore (at $before rounds)"

clients_verdict 10.78.0.1
[ "$(cli DBSIZE)" = $KEYS ] || fail "DBSIZE $(cli DBSIZE) after the restore, expected $KEYS"
cli -n 1 FLUSHDB >/dev/null
[ "$(cli DEBUG DIGEST)" = "$digest" ] || fail "database 0 changed"
echo "rounds per client: at least $before before the dump, $(cat "$tmp/cl/progress") at the end"
sed 's/^/  /' "$tmp/cl/result"
echo "ns-redis: redis-server in its own pid, mount, UTS, IPC and net namespaces kept its $NCLIENTS clients across a dump and restore"
