#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Keep-alive clients of a redis server, for redis.sh, scripts/bench/tcp-pause
and scripts/bench/migrate.

  redis-clients.py PORT NCLIENTS DIR [INTERVAL_MS [HOST [VALUE_BYTES [KEYS]]]]

Opens NCLIENTS connections to HOST:PORT (default 127.0.0.1), once: there is no reconnect
code, so any error ends that client and is reported. Each client works in
database 1 on its own keys, round after round: INCR c:I:n (must give its own
round count: the server kept every earlier increment), SET c:I:kR (R the round
modulo KEYS, default 100; the value VALUE_BYTES long, default a few bytes),
GET of the key set the round before (must hold what was set: a write lost
or applied twice shows in the INCR or the GET). Every answer's time is
recorded; the longest gap between two answers of a client is its pause.

DIR/progress holds the smallest round count of the clients, rewritten every
50 ms. Creating DIR/stop ends the run: DIR/result then holds one line per
client "client I rounds R errors E port_start P port_end Q max_gap_ms G
gap_end_ms T" (T: when that gap ended, in ms since the epoch) and
a last line "connections C"; the exit status is 0 when no client failed.
"""
import os
import socket
import sys
import threading
import time


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def reply(f):
    line = f.readline()
    if not line.endswith(b"\r\n"):
        raise ConnectionError("connection closed by the server")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)
        if len(data) != n + 2:
            raise ConnectionError("short bulk reply")
        return data[:-2]
    if kind == b"-":
        raise RuntimeError("redis error: " + rest.decode())
    raise RuntimeError("unexpected reply %r" % line)


class Client(threading.Thread):
    connections = 0

    def __init__(self, idx, port, interval, host="127.0.0.1", size=0, keys=100):
        super().__init__(daemon=True)
        self.idx, self.interval, self.size, self.keys = idx, interval, size, keys
        self.rounds, self.errors, self.error = 0, 0, ""
        self.max_gap, self.last, self.gap_end = 0.0, None, 0.0
        self.sock = socket.create_connection((host, port), timeout=120)
        Client.connections += 1
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.port_start = self.sock.getsockname()[1]
        self.port_end = 0
        self.f = self.sock.makefile("rb")
        self.stop = False
        self.call("SELECT", 1)
        self.call("DEL", "c:%d:n" % idx)

    def call(self, *args):
        self.sock.sendall(encode(*args))
        r = reply(self.f)
        now = time.monotonic()
        if self.last is not None and now - self.last > self.max_gap:
            self.max_gap = now - self.last
            self.gap_end = time.time()  # wall clock: comparable with the shell's `date`
        self.last = now
        return r

    def value(self, n):
        v = b"v%d-%d" % (self.idx, n)
        return v + b"." * (self.size - len(v)) if self.size > len(v) else v

    def one_round(self):
        n, i = self.rounds + 1, self.idx
        got = self.call("INCR", "c:%d:n" % i)
        if got != n:
            raise RuntimeError("INCR gave %r, expected %d" % (got, n))
        self.call("SET", "c:%d:k%d" % (i, n % self.keys), self.value(n))
        if n > 1:
            want = self.value(n - 1)
            got = self.call("GET", "c:%d:k%d" % (i, (n - 1) % self.keys))
            if got != want:
                raise RuntimeError("GET gave %r, expected %r" % (got[:40] if got else got,
                                                                 want[:40]))
        self.rounds = n

    def run(self):
        try:
            while not self.stop:
                self.one_round()
                if self.interval:
                    time.sleep(self.interval)
            self.port_end = self.sock.getsockname()[1]
        except Exception as e:  # any failure ends this client: no reconnect
            self.errors += 1
            self.error = repr(e)


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def main():
    port, n, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    interval = float(sys.argv[4]) / 1000 if len(sys.argv) > 4 else 0.002
    host = sys.argv[5] if len(sys.argv) > 5 else "127.0.0.1"
    size = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    keys = int(sys.argv[7]) if len(sys.argv) > 7 else 100
    clients = [Client(i, port, interval, host, size, keys) for i in range(n)]
    for c in clients:
        c.start()
    while not os.path.exists(os.path.join(d, "stop")):
        write(os.path.join(d, "progress"), "%d\n" % min(c.rounds for c in clients))
        if any(c.errors for c in clients):
            break
        time.sleep(0.05)
    for c in clients:
        c.stop = True
    for c in clients:
        c.join(150)
    lines = []
    for c in clients:
        lines.append("client %d rounds %d errors %d port_start %d port_end %d max_gap_ms %d "
                     "gap_end_ms %d %s" % (c.idx, c.rounds, c.errors, c.port_start, c.port_end,
                                           c.max_gap * 1000, c.gap_end * 1000, c.error))
    lines.append("connections %d" % Client.connections)
    write(os.path.join(d, "result"), "\n".join(lines) + "\n")
    return 0 if not any(c.errors for c in clients) else 1


if __name__ == "__main__":
    sys.exit(main())
