#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A restore that cannot have its port back fails cleanly and can be tried
# again. An echo server (python3) with a client outside the dumped tree is
# dumped with --tcp-established; another program then takes the server's
# listening port. The restore must fail with an error naming the address,
# leave the images usable and keep the network lock (the client still sees
# silence, not a reset). Once the port is free again the same images
# restore, and the client goes on over its connection: no error, no
# reconnect, every echo right.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "tcp-port-taken: needs root"; exit 77; }
PY=$(command -v python3 2>/dev/null) && "$PY" -c 'pass' 2>/dev/null ||
	{ echo "tcp-port-taken: python3 is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "tcp-port-taken: build first ($CRIU_LIKE)"; exit 1; }
PY=$("$PY" -c 'import sys; print(sys.executable)')

tmp=$(mktemp -d)
pids=
trap '[ -n "$pids" ] && kill -KILL $pids 2>/dev/null; rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.out "$tmp"/*.err "$tmp/client.result"; do
		[ -s "$f" ] && { echo "---- $f"; tail -8 "$f"; }
	done
	exit 1
}

# The server: listens, echoes every connection (one thread each).
cat >"$tmp/server.py" <<'PYTHON'
import os, socket, sys, threading

def echo(c):
    while True:
        data = c.recv(65536)
        if not data:
            c.close()
            return
        c.sendall(data)

ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(4)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % ls.getsockname()[1])
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = ls.accept()
    threading.Thread(target=echo, args=(c,), daemon=True).start()
PYTHON

# The client: one connection, a numbered line echoed every 5 ms, until DIR/stop.
cat >"$tmp/client.py" <<'PYTHON'
import os, socket, sys, time

port, d = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), timeout=120)
f, n, err = s.makefile("rb"), 0, "none"
try:
    while not os.path.exists(os.path.join(d, "stop")):
        n += 1
        line = b"line %d\n" % n
        s.sendall(line)
        if f.readline() != line:
            raise RuntimeError("wrong echo for line %d" % n)
        with open(os.path.join(d, "count.tmp"), "w") as c:
            c.write("%d\n" % n)
        os.rename(os.path.join(d, "count.tmp"), os.path.join(d, "count"))
        time.sleep(0.005)
except Exception as e:
    err = repr(e).replace(" ", "_")
with open(os.path.join(d, "client.result"), "w") as r:
    r.write("lines %d error %s\n" % (n, err))
PYTHON

# count_past N: until the client echoed more than N lines (20 s at most).
count_past() {
	i=0
	while [ "$(cat "$tmp/count" 2>/dev/null || echo 0)" -le "$1" ]; do
		[ -s "$tmp/client.result" ] && return 1
		i=$((i + 1))
		[ $i -le 400 ] || return 1
		sleep 0.05
	done
}

setsid "$PY" "$tmp/server.py" "$tmp/port" </dev/null >"$tmp/server.out" 2>"$tmp/server.err" &
pid=$!
pids="$pids $pid"
i=0
until [ -s "$tmp/port" ]; do
	i=$((i + 1))
	[ $i -le 200 ] || fail "the server did not start"
	sleep 0.05
done
port=$(cat "$tmp/port")
"$PY" "$tmp/client.py" "$port" "$tmp" >"$tmp/client.out" 2>&1 &
cpid=$!
pids="$pids $cpid"
count_past 20 || fail "the client gets no echo"

"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" --tcp-established -v4 -o dump.log \
	>"$tmp/dump.out" 2>&1 || fail "dump of the server"
wait "$pid" 2>/dev/null
before=$(cat "$tmp/count")

# Another program takes the listening port.
"$PY" -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
open(sys.argv[2], "w").close(); time.sleep(300)' "$port" "$tmp/squatting" \
	>"$tmp/squatter.out" 2>&1 &
spid=$!
pids="$pids $spid"
i=0
until [ -e "$tmp/squatting" ]; do
	i=$((i + 1))
	[ $i -le 200 ] || fail "the squatter did not bind port $port"
	sleep 0.05
done
"$CRIU_LIKE" restore -D "$tmp/img" -d --tcp-established -v4 -o restore.log \
	--pidfile "$tmp/rpid" >"$tmp/restore1.out" 2>&1 &&
	fail "the restore succeeded while port $port was taken"
grep -q "127.0.0.1:$port" "$tmp/restore1.out" ||
	fail "the failed restore does not name 127.0.0.1:$port"
[ -s "$tmp/client.result" ] && fail "the client saw the failed restore"
kill -KILL $spid
wait $spid 2>/dev/null

"$CRIU_LIKE" restore -D "$tmp/img" -d --tcp-established -v4 -o restore.log \
	--pidfile "$tmp/rpid" >"$tmp/restore2.out" 2>&1 || fail "the second restore"
[ "$(cat "$tmp/rpid")" = "$pid" ] || fail "restored as pid $(cat "$tmp/rpid"), not $pid"
count_past $((before + 20)) || fail "the client stopped after the restore (at $before lines)"
touch "$tmp/stop"
wait $cpid
set -- $(cat "$tmp/client.result")
[ "$4" = none ] || fail "the client saw an error: $(cat "$tmp/client.result")"
echo "refused while the port was taken: $(grep -m1 "127.0.0.1:$port" "$tmp/restore1.out")"
echo "then restored: $2 lines echoed over one connection, $before before the dump"
echo "PASS"
