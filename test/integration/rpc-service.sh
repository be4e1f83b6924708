#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `criu-like service`: the daemon started with --daemon --pidfile on its own
# --address answers VERSION; malformed, truncated and oversized messages and
# an unknown request type each get an error naming the problem, and the
# daemon still serves; a peer that is not root (setpriv to nobody) is
# refused by SO_PEERCRED; a DUMP and a RESTORE of a ticking victim through
# it, the counter going on; a worker killed mid-dump leaves the tree running
# and the daemon serving; SIGTERM stops it and removes its socket. Then the
# same socket handed over by systemd's socket activation (LISTEN_FDS), when
# systemd-socket-activate is installed.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/dump-victim
C=$B/test/integration/rpc-client
[ "$(id -u)" = 0 ] || { echo "rpc-service: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$C" ] && [ -x "$CRIU_LIKE" ] || { echo "rpc-service: build first"; exit 1; }
command -v setpriv >/dev/null || { echo "rpc-service: setpriv is not installed"; exit 77; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
C=$(realpath "$C")

tmp=$(mktemp -d)
chmod 755 "$tmp" # nobody must reach the socket to be refused by the daemon itself
vp=
dp=
ap=
trap '[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null; [ -n "$dp" ] && kill -KILL "$dp" 2>/dev/null;
	[ -n "$ap" ] && kill -KILL "$ap" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	for f in "$tmp/svc.log" "$tmp"/img/*.log; do
		[ -s "$f" ] && { echo "---- $f"; grep -E 'Error|Warn' "$f" | tail -10; }
	done
	exit 1
}
S="unix:$tmp/s.sock"
rpc() { # rpc OUT REQUEST ARGS...
	out=$1
	shift
	"$C" "$S" "$@" >"$tmp/$out" 2>&1
	rc=$?
}
expect() {
	grep -q -- "$2" "$tmp/$1" || { echo "---- $1:"; cat "$tmp/$1"; fail "$1: no '$2'"; }
}
last_tick() { grep '^tick' "$tmp/v" | tail -1 | cut -d' ' -f2; }

"$CRIU_LIKE" service --address "$tmp/s.sock" --daemon --pidfile "$tmp/pid" -o "$tmp/svc.log" ||
	fail "service --daemon failed"
dp=$(cat "$tmp/pid")
[ -S "$tmp/s.sock" ] && kill -0 "$dp" || fail "no daemon (pid '$dp') or no socket"

rpc v1 version
expect v1 "resp VERSION success=1 version=3"
# bad input: each answered with what is wrong; the daemon goes on
rpc garbage garbage
expect garbage "success=0.*malformed or truncated message"
rpc trunc truncated
expect trunc "success=0.*malformed or truncated message"
rpc big oversized
expect big "success=0.*over the limit"
rpc type badtype
expect type "success=0.*unknown request type 99"
rpc nfy notify
expect nfy "success=0.*NOTIFY is the answer to a notification"
rpc v2 version
expect v2 "resp VERSION success=1"
kill -0 "$dp" || fail "the daemon died of bad input"
# not root: refused by the daemon, with an answer
setpriv --reuid=65534 --regid=65534 --clear-groups "$C" "$S" version >"$tmp/nobody" 2>&1
expect nobody "success=0 errno=1 .*serves root only.*uid 65534"
# PAGE_SERVER through the daemon: a server of its own, answered with its pid and port;
# a ps.fd is refused (the daemon holds none of the caller's fds, as inherit_fd)
mkdir "$tmp/psdir"
rpc ps page-server dir="$tmp/psdir" ps_address=127.0.0.1 ps_port=0
expect ps "resp PAGE_SERVER success=1 ps_pid=[1-9][0-9]* ps_port=[1-9]"
port=$(sed -n 's/.*ps_port=\([0-9]*\).*/\1/p' "$tmp/ps")
pspid=$(sed -n 's/.*ps_pid=\([0-9]*\).*/\1/p' "$tmp/ps")
ss -ltnH "( sport = :$port )" | grep -q . || fail "nothing listens on the page server's port $port"
rpc psfd dump dir="$tmp/psdir" pid=1 ps_connect=127.0.0.1:$port
expect psfd "success=0.*criu_opts.ps.fd: the daemon holds none"
n=0
while [ -d /proc/$pspid ] && [ "$(awk '/^State:/ { print $2 }' /proc/$pspid/status 2>/dev/null)" != Z ]; do
	n=$((n + 1))
	[ $n -le 500 ] || { kill $pspid; fail "the page server $pspid did not end with its client"; }
	sleep 0.02
done

# dump and restore through the daemon
setsid "$V" mem 4 >"$tmp/v" 2>&1 </dev/null &
vp=$!
n=0
until grep -q '^ready' "$tmp/v" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 1000 ] || fail "victim did not start"
	sleep 0.01
done
mkdir "$tmp/img"
rpc dump dump dir="$tmp/img" pid=$vp
[ $rc = 0 ] || fail "DUMP failed: $(cat "$tmp/dump")"
wait $vp 2>/dev/null
dumped=$(last_tick)
rpc restore restore dir="$tmp/img"
[ $rc = 0 ] || fail "RESTORE failed: $(cat "$tmp/restore")"
expect restore "success=1 pid=$vp"
n=0
while [ "$(last_tick)" -le "$dumped" ]; do
	n=$((n + 1))
	[ $n -le 200 ] || fail "the restored victim does not tick past $dumped"
	sleep 0.05
done
[ "$(grep -c '^tick 1 ' "$tmp/v")" = 1 ] || fail "the counter started again from 1"
kill -0 "$dp" || fail "the daemon is gone after the restore"

# a worker killed in the middle of a dump (the tree frozen, its images
# written): the tree goes on as after a killed dumper, the daemon serves on
mkdir "$tmp/img2"
"$C" "$S" dump dir="$tmp/img2" pid=$vp pause_at=post-dump >"$tmp/paused" 2>&1 &
cp=$!
n=0
until grep -q "notify post-dump" "$tmp/paused"; do
	n=$((n + 1))
	[ $n -le 200 ] || fail "no post-dump notification"
	sleep 0.05
done
wp=$(pgrep -P "$dp")
[ -n "$wp" ] || fail "no worker under the daemon"
kill -KILL $wp
wait $cp
t=$(last_tick)
n=0
while [ "$(last_tick)" -le "$t" ]; do
	n=$((n + 1))
	[ $n -le 200 ] || fail "the tree does not go on after its dumper was killed"
	sleep 0.05
done
grep -q '^TracerPid:.0' /proc/$vp/status || fail "the tree is still traced"
rpc v5 version
expect v5 "resp VERSION success=1"

kill -TERM "$dp"
n=0
while kill -0 "$dp" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 100 ] || fail "the daemon did not stop on SIGTERM"
	sleep 0.05
done
dp=
[ -e "$tmp/s.sock" ] && fail "the socket is left behind"

# socket activation
if command -v systemd-socket-activate >/dev/null; then
	systemd-socket-activate --seqpacket -l "$tmp/s.sock" "$CRIU_LIKE" service \
		-o "$tmp/act.log" >/dev/null 2>&1 &
	ap=$!
	n=0
	until [ -S "$tmp/s.sock" ]; do
		n=$((n + 1))
		[ $n -le 100 ] || fail "systemd-socket-activate did not listen"
		sleep 0.05
	done
	rpc v3 version
	expect v3 "resp VERSION success=1"
	rpc v4 check
	expect v4 "resp CHECK success=1"
else
	echo "(systemd-socket-activate is not installed: socket activation not tested)"
fi
echo "rpc-service: ok"
