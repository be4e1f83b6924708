#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Without --tcp-established a dump that finds an established TCP connection
# is refused: a non-zero exit, an error naming the connection and the option,
# no network lock left behind, and the program running on as before (not
# stopped, not traced, its connection still echoing). A program whose inet
# sockets are only a listener and a bound UDP socket is not refused for
# them: dump -R succeeds without the option and the program goes on.
# With --tcp-established, what is not supported (Documentation/network.md) is
# refused the same way, after the lock and repair mode were already taken for
# the program's working connection: that connection must come out of repair
# mode unchanged and its lock be removed. The cases: a connection reset by
# its peer with data still unread, urgent data not read, a connection in a
# backlog that received data before accept(), one in a backlog whose
# client is outside the tree, and a listener that a process outside the tree
# holds too (a daemonized child: the restore could not bind its port again).
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "tcp-refused: needs root"; exit 77; }
PY=$(command -v python3 2>/dev/null) && "$PY" -c 'pass' 2>/dev/null ||
	{ echo "tcp-refused: python3 is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "tcp-refused: build first ($CRIU_LIKE)"; exit 1; }
PY=$("$PY" -c 'import sys; print(sys.executable)')

tmp=$(mktemp -d)
pids=
trap '[ -n "$pids" ] && kill -KILL $pids 2>/dev/null; rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.out "$tmp"/img*/dump.log "$tmp"/*.err; do
		[ -s "$f" ] && { echo "---- $f"; tail -15 "$f"; }
	done
	exit 1
}

# The program: every MODE but "listen" holds an established connection (both
# ends) and echoes a line through it every 10 ms; "listen" holds a listener
# and a bound UDP socket and checks them every 10 ms. "reset" adds a
# connection reset by its peer after sending data, "urgent" one with an
# urgent byte unread, "backlog-data" a connection in the backlog that sent
# data, "backlog-ext" writes its listener's port to COUNT.port for a client
# outside, "listen-ext" leaves its listener to a daemonized grandchild (its pid
# in COUNT.ext), outside the tree. It writes its round count to COUNT; any error ends it
# with a Traceback in its .err file.
cat >"$tmp/prog.py" <<'PYTHON'
import os, socket, struct, sys, time

mode, count = sys.argv[1], sys.argv[2]
ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
ls.bind(("127.0.0.1", 0))
ls.listen(4)
if mode != "listen":
    cl = socket.create_connection(ls.getsockname())
    sv, _ = ls.accept()
if mode == "listen":
    us = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    us.bind(("127.0.0.1", 0))
elif mode == "reset":
    c2 = socket.create_connection(ls.getsockname())
    s2, _ = ls.accept()
    s2.sendall(b"unread")
    s2.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s2.close()  # a reset: c2 is closed with 6 bytes unread
    time.sleep(0.1)
elif mode == "urgent":
    c2 = socket.create_connection(ls.getsockname())
    s2, _ = ls.accept()
    c2.send(b"!", socket.MSG_OOB)  # never read by s2
    time.sleep(0.1)
elif mode == "backlog-data":
    c3 = socket.create_connection(ls.getsockname())
    c3.sendall(b"early")  # never accepted
elif mode == "backlog-ext":
    with open(count + ".port", "w") as f:
        f.write("%d\n" % ls.getsockname()[1])
elif mode == "listen-ext":
    r, w = os.pipe()
    if os.fork() == 0:
        if os.fork() == 0:
            os.setsid()
            os.write(w, b"%d" % os.getpid())
            time.sleep(300)
        os._exit(0)
    os.wait()
    os.close(w)
    ext = os.read(r, 32).decode()
    with open(count + ".ext", "w") as f:
        f.write(ext + "\n")
n = 0
while True:
    n += 1
    if mode != "listen":
        line = b"round %d\n" % n
        cl.sendall(line)
        got = b""
        while len(got) < len(line):
            got += sv.recv(len(line) - len(got))
        assert got == line, (got, line)
    else:
        us.sendto(b"x%d" % n, us.getsockname())
        assert us.recv(64) == b"x%d" % n
    with open(count + ".tmp", "w") as f:
        f.write("%d\n" % n)
    os.rename(count + ".tmp", count)
    time.sleep(0.01)
PYTHON

# start MODE: run the program in its own session, wait for its first rounds; sets $pid.
start() {
	setsid "$PY" "$tmp/prog.py" "$1" "$tmp/$1.count" </dev/null >"$tmp/$1.out" \
		2>"$tmp/$1.err" &
	pid=$!
	pids="$pids $pid"
	wait_rounds "$1" 3 || fail "$1: the program did not start"
}

# wait_rounds MODE N: until the program's count passes N (10 s at most).
wait_rounds() {
	i=0
	while [ "$(cat "$tmp/$1.count" 2>/dev/null || echo 0)" -le "$2" ]; do
		i=$((i + 1))
		[ $i -le 1000 ] || return 1
		sleep 0.01
	done
}

# running MODE: not stopped, not traced, and its rounds go on.
running() {
	st=$(awk '/^State:/ { print $2 } /^TracerPid:/ { print $2 }' /proc/$pid/status | tr '\n' ' ')
	case "$st" in
	"S 0 " | "R 0 " | "D 0 ") ;; # D: a free task waiting on I/O, as under load
	*) fail "$1: pid $pid is not running free after the dump (state/tracer: $st)" ;;
	esac
	n=$(cat "$tmp/$1.count")
	wait_rounds "$1" $((n + 5)) || fail "$1: the program stopped at round $n"
}

# No nftables table or iptables chain of that dump's network lock may remain.
no_lock_left() {
	if command -v nft >/dev/null && nft list tables 2>/dev/null | grep -q "criu_like_$1_"; then
		fail "a network lock table of dump $1 is still installed: $(nft list tables)"
	fi
	if command -v iptables >/dev/null && iptables -S 2>/dev/null | grep -q "CRLK_$1"; then
		fail "a network lock chain of dump $1 is still installed"
	fi
}

# 1. An established connection, no --tcp-established: refused.
start conn
"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -v4 -o dump.log >"$tmp/dump.out" 2>&1 &
dpid=$!
wait $dpid && fail "the dump of an established connection succeeded without --tcp-established"
grep -q 'established' "$tmp/dump.out" && grep -q -- '--tcp-established' "$tmp/dump.out" ||
	fail "the refusal does not name the established connection and --tcp-established"
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$tmp/dump.out" | head -1)
[ -n "$port" ] || fail "the refusal does not name the connection's addresses"
running conn
no_lock_left $dpid
echo "refused: $(grep -m1 -- '--tcp-established' "$tmp/dump.out")"

# 2. A listener and a UDP socket only: not refused without the option.
start listen
"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img2" -R -v4 -o dump.log >"$tmp/dump2.out" 2>&1 ||
	fail "dump -R of a listener and a UDP socket failed without --tcp-established"
running listen
echo "listener and UDP socket: dumped without --tcp-established, still running"

# refused MODE PATTERN: dump --tcp-established fails with PATTERN, the
# working connection goes on, no lock is left.
refused() {
	"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img-$1" --tcp-established -v4 -o dump.log \
		>"$tmp/dump-$1.out" 2>&1 &
	dpid=$!
	wait $dpid && fail "$1: the dump succeeded, a refusal was expected"
	grep -q -E "$2" "$tmp/dump-$1.out" || fail "$1: the refusal does not say /$2/"
	running "$1"
	no_lock_left $dpid
	echo "$1: $(grep -m1 -E "$2" "$tmp/dump-$1.out" | sed 's/^.*): //')"
}

# 3. A connection reset by its peer with data unread, next to a working one.
start reset
refused reset 'closed now.*bytes not read: not supported'

# 4. Urgent data not read.
start urgent
refused urgent 'urgent data waiting to be read: not supported'

# 5. A connection in the backlog that received data before accept().
start backlog-data
refused backlog-data 'before accept\(\).*not supported'

# 6. A connection in the backlog whose client is outside the tree.
start backlog-ext
lport=$(cat "$tmp/backlog-ext.count.port")
"$PY" -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
time.sleep(300)' "$lport" &
pids="$pids $!"
i=0
until [ "$(ss -Htln "sport = :$lport" | awk '{ print $2 }')" = 1 ]; do
	i=$((i + 1))
	[ $i -le 500 ] || fail "the outside client is not in the backlog"
	sleep 0.01
done
refused backlog-ext 'outside the dumped tree.*not supported'

# 7. A listener of the tree that a process outside it holds too.
start listen-ext
pids="$pids $(cat "$tmp/listen-ext.count.ext")"
refused listen-ext 'is also open in pid [0-9]+ .*outside the dumped tree'
echo "PASS"
