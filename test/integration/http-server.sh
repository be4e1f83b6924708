#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# python3 -m http.server (HTTP/1.1, keep-alive), dumped and restored with
# --tcp-established while a client keeps one connection open and requests
# files over it all the time (http.client.HTTPConnection): a small text file
# and 1 MiB of random bytes, each answer checked against the file. After the
# restore, from the same pid, the same connection goes on: the client never
# connected a second time, its socket kept its local port, no request failed,
# and the server logged every request it answered.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "http-server: needs root"; exit 77; }
PY=$(command -v python3 2>/dev/null) && "$PY" -c 'pass' 2>/dev/null ||
	{ echo "http-server: python3 is not installed"; exit 77; }
"$PY" -m http.server --help 2>/dev/null | grep -q -- --protocol ||
	{ echo "http-server: this python3's http.server has no --protocol (needs 3.11)"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "http-server: build first ($CRIU_LIKE)"; exit 1; }
PY=$("$PY" -c 'import sys; print(sys.executable)')

tmp=$(mktemp -d)
pid=
cpid=
trap '[ -n "$cpid" ] && kill -KILL $cpid 2>/dev/null; [ -n "$pid" ] && kill -KILL $pid 2>/dev/null
	rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp/dump.out" "$tmp/restore.out" "$tmp/result" "$tmp/client.out" \
		"$tmp/server.log"; do
		[ -s "$f" ] && { echo "---- $f"; tail -12 "$f"; }
	done
	for f in "$tmp/img/dump.log" "$tmp/img/restore.log"; do
		[ -s "$f" ] && { echo "---- $f"; grep -E 'Error|error|warn' "$f" | tail -10; }
	done
	exit 1
}

# The client: requests until DIR/stop, progress in DIR/progress, DIR/result at the end.
cat >"$tmp/client.py" <<'PYTHON'
import hashlib, http.client, os, sys, time

port, d = int(sys.argv[1]), sys.argv[2]
files = {name: open(os.path.join(d, "www", name), "rb").read() for name in ("small.txt", "big.bin")}
connects = 0

class Conn(http.client.HTTPConnection):
    def connect(self):  # http.client reconnects silently: count every connect
        global connects
        connects += 1
        super().connect()

c = Conn("127.0.0.1", port, timeout=120)
c.connect()
port_start, n, err = c.sock.getsockname()[1], 0, ""
try:
    while not os.path.exists(os.path.join(d, "stop")):
        name = "big.bin" if n % 4 == 3 else "small.txt"
        c.request("GET", "/" + name)
        r = c.getresponse()
        body = r.read()
        if r.status != 200 or body != files[name]:
            raise RuntimeError("GET /%s: status %d, %d bytes" % (name, r.status, len(body)))
        if r.will_close:
            raise RuntimeError("the server closes the connection: no keep-alive")
        n += 1
        with open(os.path.join(d, "progress.tmp"), "w") as f:
            f.write("%d\n" % n)
        os.rename(os.path.join(d, "progress.tmp"), os.path.join(d, "progress"))
        time.sleep(0.005)
    port_end = c.sock.getsockname()[1]
except Exception as e:
    err, port_end = repr(e), 0
with open(os.path.join(d, "result"), "w") as f:
    f.write("requests %d connects %d port_start %d port_end %d error %s\n"
            % (n, connects, port_start, port_end, err or "none"))
sys.exit(1 if err else 0)
PYTHON

progress_past() {
	i=0
	while [ "$(cat "$tmp/progress" 2>/dev/null || echo 0)" -le "$1" ]; do
		[ -s "$tmp/result" ] && return 1 # the client failed: the run ended
		i=$((i + 1))
		[ $i -le 300 ] || return 1
		sleep 0.1
	done
}

mkdir "$tmp/www"
echo "hello from http.server across a checkpoint" >"$tmp/www/small.txt"
head -c 1048576 /dev/urandom >"$tmp/www/big.bin"
# A free port: the kernel picks one for a socket bound to port 0.
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
setsid "$PY" -m http.server --protocol HTTP/1.1 --bind 127.0.0.1 --directory "$tmp/www" "$port" \
	</dev/null >"$tmp/server.log" 2>&1 &
pid=$!
i=0
until "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2>/dev/null; do
	i=$((i + 1))
	[ $i -le 200 ] || fail "http.server did not start"
	sleep 0.05
done

"$PY" "$tmp/client.py" "$port" "$tmp" >"$tmp/client.out" 2>&1 &
cpid=$!
progress_past 40 || fail "the client gets no answers"

"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" --tcp-established -v4 -o dump.log \
	>"$tmp/dump.out" 2>&1 || fail "dump of http.server (pid $pid)"
wait "$pid" 2>/dev/null
before=$(cat "$tmp/progress")
"$CRIU_LIKE" restore -D "$tmp/img" -d --tcp-established -v4 -o restore.log \
	--pidfile "$tmp/rpid" >"$tmp/restore.out" 2>&1 || fail "restore of http.server"
[ "$(cat "$tmp/rpid")" = "$pid" ] || fail "restored as pid $(cat "$tmp/rpid"), not $pid"
progress_past $((before + 40)) || fail "the client stopped after the restore (at $before)"
touch "$tmp/stop"
wait $cpid
rc=$?
cpid=
set -- $(cat "$tmp/result")
[ $rc = 0 ] && [ "$4" = 1 ] && [ "$6" = "$8" ] ||
	fail "the client failed, reconnected or moved: $(cat "$tmp/result")"
# The server answered (and logged) every request, those before the dump included.
logged=$(sed -n 's/^127\.0\.0\.1 - - .*"GET .*/x/p' "$tmp/server.log" | wc -l)
[ "$logged" -ge "$2" ] || fail "the server logged $logged requests, the client made $2"
echo "requests over one connection: $before before the dump, $2 in all; $(cat "$tmp/result")"
echo "PASS"
