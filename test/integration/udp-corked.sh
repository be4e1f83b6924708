#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A UDP socket holding corked bytes (UDP_CORK then a send; or a send with
# MSG_MORE alone, IPv4 and IPv6) cannot be dumped faithfully: nothing reads
# those bytes back. The dump must refuse it by pid and fd, and leave the
# program running with its bytes still corked: once it uncorks, the
# receiver gets them.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "udp-corked: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "udp-corked: build first"; exit 1; }
command -v python3 >/dev/null || { echo "udp-corked: no python3"; exit 77; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
trap 'kill -KILL $vp 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0

cat >"$tmp/victim.py" <<'PY'
import socket, sys, signal, select
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
UDP_CORK = 1  # linux/udp.h (not in the socket module)
fam = socket.AF_INET6 if sys.argv[2] == "6" else socket.AF_INET
lo = "::1" if fam == socket.AF_INET6 else "127.0.0.1"
r = socket.socket(fam, socket.SOCK_DGRAM)
r.bind((lo, 0))
s = socket.socket(fam, socket.SOCK_DGRAM)
s.connect(r.getsockname())
if sys.argv[1] == "cork":
    s.setsockopt(socket.SOL_UDP, UDP_CORK, 1)
    s.send(b"corked")
else:
    s.send(b"corked", socket.MSG_MORE)
print("ready fd", s.fileno(), flush=True)
signal.sigwait([signal.SIGUSR1])
if sys.argv[1] == "cork":
    s.setsockopt(socket.SOL_UDP, UDP_CORK, 0)
else:
    s.send(b"!")
if select.select([r], [], [], 10)[0] and r.recv(64).startswith(b"corked"):
    print("uncorked", flush=True)
PY

for how in cork more; do
	for fam in 4 6; do
		name=$how$fam
		setsid python3 "$tmp/victim.py" $how $fam >"$tmp/$name.out" 2>&1 </dev/null &
		vp=$!
		n=0
		until grep -q '^ready' "$tmp/$name.out" 2>/dev/null; do
			n=$((n + 1))
			[ $n -le 500 ] || { echo "FAIL: $name: the victim did not start"; exit 1; }
			sleep 0.01
		done
		fd=$(awk '/^ready/ { print $3 }' "$tmp/$name.out")
		if "$CRIU_LIKE" dump -t "$vp" -D "$tmp/img-$name" -v4 -o dump.log >/dev/null 2>&1; then
			echo "FAIL: $name: a socket with corked bytes was dumped"
			fail=1
		elif ! grep -q "pid $vp fd $fd: .*corked" "$tmp/img-$name/dump.log"; then
			echo "FAIL: $name: the refusal does not name pid $vp fd $fd and the corked bytes:"
			grep -i error "$tmp/img-$name/dump.log" | head -5
			fail=1
		fi
		kill -USR1 "$vp" 2>/dev/null
		wait "$vp"
		grep -q '^uncorked' "$tmp/$name.out" || {
			echo "FAIL: $name: after the refused dump the corked bytes did not arrive"
			cat "$tmp/$name.out"
			fail=1
		}
		vp=
	done
done
exit $fail
