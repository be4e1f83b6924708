#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The page server (Documentation/page-server.md): a pre-dump then a dump,
# each through its own page server (the second with --prev-images-dir);
# the other images copied there, the restore on the server side must give
# back the memory page by page. A server killed in the middle of a transfer:
# the dump fails naming it, the tree runs on, no image is complete on either
# side. Garbage and a client that dies half-way: refused, nothing kept.
# TLS: a dump with certificates of one CA; a client certificate of another
# CA refused by the server, a server of another CA refused by the client.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/predump-victim
[ "$(id -u)" = 0 ] || { echo "page-server: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "page-server: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
C=$CRIU_LIKE

tmp=$(mktemp -d)
vp=
psp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	[ -n "$psp" ] && kill -KILL "$psp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
fail=0

wait_line() { # FILE PATTERN
	n=0
	until grep -q "$2" "$1" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 1000 ] || { echo "FAIL: no '$2' in $1"; cat "$1"; exit 1; }
		sleep 0.01
	done
}

start_victim() { # NAME
	setsid "$V" 16 "$tmp/$1" >"$tmp/$1.out" 2>&1 </dev/null &
	vp=$!
	wait_line "$tmp/$1.out" "^ready"
}

# start_server LOG ARGS...: a page server on an ephemeral port of 127.0.0.1;
# sets psp and port once it accepts connections (--status-fd).
start_server() {
	log=$1
	shift
	rm -f "$tmp/status"
	"$C" page-server --address 127.0.0.1 -v4 -o "$log" --status-fd 7 "$@" 7>"$tmp/status" &
	psp=$!
	n=0
	until [ -s "$tmp/status" ]; do
		n=$((n + 1))
		[ $n -le 1000 ] || { echo "FAIL: the page server is not ready"; cat "$log"; exit 1; }
		sleep 0.01
	done
	port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$log")
	[ -n "$port" ] || { echo "FAIL: no port in the page server's log"; exit 1; }
}

untraced() {
	[ "$(awk '/^TracerPid:/ { print $2 }' /proc/$vp/status)" = 0 ]
}

# ---- 1. pre-dump, then dump, each through a page server; restore on the server side ----
start_victim mem
mkdir -p "$tmp/srv" "$tmp/cli"
start_server "$tmp/ps1.log" -D "$tmp/srv/i1"
"$C" pre-dump -t $vp -D "$tmp/cli/i1" --page-server --address 127.0.0.1 --port "$port" \
	-o "$tmp/pd1.log" -v4 || { echo "FAIL: pre-dump through the page server"; tail -5 "$tmp/pd1.log"; exit 1; }
wait $psp || { echo "FAIL: the first page server did not exit 0"; fail=1; }
psp=
sleep 0.2
kill -USR2 $vp
wait_line "$tmp/mem.out" "^quiet"
# --daemon: the server goes to the background, its pid in the pid file
rm -f "$tmp/status"
"$C" page-server --address 127.0.0.1 -D "$tmp/srv/i2" --prev-images-dir ../i1 --daemon \
	--pidfile "$tmp/ps2.pid" -v4 -o "$tmp/ps2.log" --status-fd 7 7>"$tmp/status" ||
	{ echo "FAIL: page-server --daemon"; exit 1; }
psp=$(cat "$tmp/ps2.pid")
wait_line "$tmp/ps2.log" "listening on"
port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$tmp/ps2.log")
"$C" dump -t $vp -D "$tmp/cli/i2" --prev-images-dir ../i1 --page-server --address 127.0.0.1 \
	--port "$port" -o "$tmp/d2.log" -v4 || { echo "FAIL: dump through the page server"; tail -5 "$tmp/d2.log"; exit 1; }
vp=
n=0
while kill -0 "$psp" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 500 ] || { echo "FAIL: the daemon did not exit after the dump"; fail=1; break; }
	sleep 0.01
done
psp=
grep -q "session complete" "$tmp/ps2.log" || { echo "FAIL: the daemon's session"; fail=1; }
[ -z "$(ls "$tmp"/cli/i2/pages-* "$tmp"/cli/i2/pagemap-* 2>/dev/null)" ] ||
	{ echo "FAIL: pages were written on the dumping side"; fail=1; }
[ "$(readlink "$tmp/srv/i2/parent")" = ../i1 ] || { echo "FAIL: no parent link on the server"; fail=1; }
"$C" decode "$tmp"/srv/i2/pagemap-*.img | grep -q '"flags": 2' ||
	{ echo "FAIL: the dump through the page server has no PE_PARENT entries"; fail=1; }
# a restore on the dumping side is refused: its pages are elsewhere
if "$C" restore -D "$tmp/cli/i2" -d -o "$tmp/r-cli.log" 2>/dev/null; then
	echo "FAIL: restore without the pages succeeded"
	fail=1
fi
# the migration: the other images next to the pages, restore there
cp -a "$tmp/cli/i1/." "$tmp/srv/i1/"
for f in "$tmp"/cli/i2/*; do
	[ "$(basename "$f")" = parent ] || cp -a "$f" "$tmp/srv/i2/"
done
"$C" restore -D "$tmp/srv/i2" -d --pidfile "$tmp/rpid" -o "$tmp/r.log" ||
	{ echo "FAIL: restore on the server side"; tail -5 "$tmp/r.log"; exit 1; }
vp=$(cat "$tmp/rpid")
kill -USR1 $vp
wait_line "$tmp/mem.out" "^saved"
cmp "$tmp/mem.A" "$tmp/mem.B" >/dev/null || { echo "FAIL: the restored memory differs"; fail=1; }
kill -KILL $vp
vp=

# ---- 2. the page server dies at its 3rd message of pages ----
start_victim mem2
CRIU_LIKE_FAULT_STEP=3 start_server "$tmp/ps3.log" -D "$tmp/srv/k"
if "$C" dump -t $vp -D "$tmp/cli/k" -R --page-server --address 127.0.0.1 --port "$port" \
	-o "$tmp/d3.log" 2>/dev/null; then
	echo "FAIL: a dump into a dying page server succeeded"
	fail=1
fi
wait $psp 2>/dev/null
psp=
grep -q "page server 127.0.0.1:$port.*connection lost" "$tmp/d3.log" ||
	{ echo "FAIL: the dump does not name the lost page server:"; tail -5 "$tmp/d3.log"; fail=1; }
grep -q "dump of $vp failed; the tree continues" "$tmp/d3.log" ||
	{ echo "FAIL: the failed dump does not say so"; fail=1; }
kill -0 $vp && untraced || { echo "FAIL: the victim is not running untraced"; fail=1; }
[ -z "$(ls "$tmp"/srv/k/pages-* "$tmp"/srv/k/pagemap-* 2>/dev/null)" ] ||
	{ echo "FAIL: an image named complete on the dead server"; ls "$tmp/srv/k"; fail=1; }
if "$C" restore -D "$tmp/cli/k" -d -o "$tmp/r-k.log" 2>/dev/null; then
	echo "FAIL: the failed dump restores"
	fail=1
fi
kill -USR2 $vp
wait_line "$tmp/mem2.out" "^quiet"

# ---- 3. garbage, out-of-range sizes, a client that dies half-way ----
client() { # PYTHON-STATEMENTS: s is the connected socket, h(cmd, id, len, arg) a header
	python3 -c "
import socket, struct, sys
s = socket.create_connection(('127.0.0.1', $port))
def h(cmd, i, l, a): return struct.pack('<IHHIIQ', 0x53504c43, cmd, 0, i, l, a)
$1
s.settimeout(20)
r = b''
try:
    while True:
        d = s.recv(4096)
        if not d:
            break
        r += d
except OSError:
    pass
sys.stdout.write(repr(r))
s.close()
"
}
i=0
for case in "s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n' + b'x' * 64)" \
	"s.sendall(h(1, 0, 0, 1)); s.recv(24); s.sendall(h(2, 1, 4, 1 << 50) + b'\\x01\\0\\0\\0')" \
	"s.sendall(h(1, 0, 0, 1)); s.recv(24); s.sendall(h(2, 1, 4, 8192) + b'\\x01\\0\\0\\0')" \
	"s.sendall(h(1, 0, 0, 1)); s.recv(24); s.sendall(h(5, 9, 9 + 4, 4) + b'../passwdxxxx')" \
	"s.sendall(h(1, 0, 0, 1)); s.recv(24); s.sendall(h(2, 1, 8, 8192) + b'\\x01\\0\\0\\0\\x01\\0\\0\\0' + h(3, 0, 4096, 0) + b'y' * 4096); s.shutdown(socket.SHUT_WR)"; do
	i=$((i + 1))
	start_server "$tmp/g$i.log" -D "$tmp/srv/g$i"
	out=$(client "$case" 2>&1)
	if wait $psp; then
		echo "FAIL: garbage case $i: the page server exited 0"
		fail=1
	fi
	psp=
	grep -q "Error.*page-server: .*\(refused\|ended before\)" "$tmp/g$i.log" ||
		{ echo "FAIL: garbage case $i: no refusal in the log"; tail -3 "$tmp/g$i.log"; fail=1; }
	[ -z "$(ls -A "$tmp/srv/g$i")" ] ||
		{ echo "FAIL: garbage case $i left files:" $(ls -A "$tmp/srv/g$i"); fail=1; }
	case $i in
	1) expect="bad magic" ;;
	2) expect="too large" ;;
	3) expect="runs of 1 pages in all for 8192 bytes" ;;
	4) expect="is not a pagemap image" ;;
	5) expect="" ;;
	esac
	[ -z "$expect" ] || echo "$out" | grep -q "$expect" ||
		{ echo "FAIL: garbage case $i: the client was not told '$expect': $out"; fail=1; }
done
grep -q "ended before the dump completed it" "$tmp/g5.log" ||
	{ echo "FAIL: a client gone half-way is not named"; fail=1; }

# ---- 4. TLS: one CA for both ends; a stranger's certificate is refused ----
if ! command -v openssl >/dev/null; then
	echo "page-server: no openssl, TLS not tested"
else
	(
		cd "$tmp" || exit 1
		for ca in ca evil; do
			openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=test $ca" \
				-keyout $ca.key -out $ca.pem 2>/dev/null || exit 1
		done
		for who in server client stranger; do
			signer=ca
			[ $who = stranger ] && signer=evil
			openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout $who.key \
				-out $who.csr 2>/dev/null || exit 1
			printf 'subjectAltName=IP:127.0.0.1\n' >$who.ext
			openssl x509 -req -in $who.csr -CA $signer.pem -CAkey $signer.key \
				-CAcreateserial -days 2 -extfile $who.ext -out $who.pem 2>/dev/null ||
				exit 1
		done
	) || { echo "FAIL: cannot make the test certificates"; exit 1; }
	tls() { # WHO CA
		echo --tls --tls-cacert "$tmp/$2.pem" --tls-cert "$tmp/$1.pem" --tls-key "$tmp/$1.key"
	}
	# shellcheck disable=SC2046
	start_server "$tmp/t1.log" -D "$tmp/srv/t1" $(tls server ca)
	# shellcheck disable=SC2046
	"$C" dump -t $vp -D "$tmp/cli/t1" -R --page-server --address 127.0.0.1 --port "$port" \
		$(tls client ca) -o "$tmp/dt1.log" -v4 ||
		{ echo "FAIL: dump through TLS"; tail -5 "$tmp/dt1.log"; fail=1; }
	wait $psp || { echo "FAIL: the TLS page server failed"; tail -5 "$tmp/t1.log"; fail=1; }
	psp=
	grep -q "TLS established" "$tmp/dt1.log" || { echo "FAIL: no TLS on the dump"; fail=1; }
	"$C" decode "$tmp"/srv/t1/pagemap-*.img >/dev/null && [ -n "$(ls "$tmp"/srv/t1/pages-*)" ] ||
		{ echo "FAIL: no images through TLS"; fail=1; }
	# a client certificate of another CA: the server refuses it
	# shellcheck disable=SC2046
	start_server "$tmp/t2.log" -D "$tmp/srv/t2" $(tls server ca)
	# shellcheck disable=SC2046
	if "$C" dump -t $vp -D "$tmp/cli/t2" -R --page-server --address 127.0.0.1 --port "$port" \
		$(tls stranger ca) -o "$tmp/dt2.log" 2>/dev/null; then
		echo "FAIL: a stranger's certificate was accepted"
		fail=1
	fi
	grep -q "page server 127.0.0.1:$port.*refused this end's certificate" "$tmp/dt2.log" ||
		{ echo "FAIL: the dump does not say its certificate was refused"; fail=1; }
	if wait $psp; then
		echo "FAIL: the server accepted a stranger"
		fail=1
	fi
	psp=
	grep -q "client 127.0.0.1:.*\(certificate is refused\|handshake failed\)" "$tmp/t2.log" ||
		{ echo "FAIL: the server does not name the refused client:"; tail -3 "$tmp/t2.log"; fail=1; }
	# the client trusts another CA: it refuses the server
	# shellcheck disable=SC2046
	start_server "$tmp/t3.log" -D "$tmp/srv/t3" $(tls server ca)
	# shellcheck disable=SC2046
	if "$C" dump -t $vp -D "$tmp/cli/t3" -R --page-server --address 127.0.0.1 --port "$port" \
		$(tls client evil) -o "$tmp/dt3.log" 2>/dev/null; then
		echo "FAIL: a server of another CA was trusted"
		fail=1
	fi
	wait $psp 2>/dev/null
	psp=
	grep -q "page server 127.0.0.1:$port.*\(refused\|handshake failed\)" "$tmp/dt3.log" ||
		{ echo "FAIL: the dump does not name the refused server:"; tail -3 "$tmp/dt3.log"; fail=1; }
	kill -0 $vp && untraced || { echo "FAIL: the victim is not running after TLS failures"; fail=1; }
	for d in t2 t3; do
		[ -z "$(ls "$tmp"/srv/$d/pages-* 2>/dev/null)" ] ||
			{ echo "FAIL: images kept after a failed TLS session ($d)"; fail=1; }
	done
fi

[ $fail = 0 ] && echo "page-server: ok"
exit $fail
