#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A network namespace that is the caller's, as runc's for podman's
# containers: a tree in a network namespace of its own (unshare --net) with
# a TCP connection over lo, dumped with --external net[INO]:KEY (not dumped),
# restored into another namespace held by the test:
#   - --inherit-fd fd[N]:KEY, N open on that namespace (runc's way);
#   - --join-ns net:PID, then --join-ns net:PATH.
# Each time the root is in that namespace, its loop goes on from where it was
# and its connection still carries data. Refused: --external net[] naming
# another namespace, a restore without the namespace, a key the images do not
# have, --join-ns of another kind.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ns-net-external: needs root"; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
for t in unshare setsid python3 ip; do
	command -v $t >/dev/null || { echo "ns-net-external: $t is not installed"; exit 77; }
done
[ -x "$CRIU_LIKE" ] || { echo "ns-net-external: build first ($CRIU_LIKE)"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
holders=
root=
cleanup() {
	[ -n "$root" ] && kill -KILL "$root" 2>/dev/null
	for h in $holders; do kill -KILL "$h" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.log "$tmp"/*.err; do
		[ -s "$f" ] && { echo "---- $f"; grep -a -m5 Error "$f"; tail -5 "$f"; }
	done
	exit 1
}

# the tree: a server and a client connected over lo, the client counting
# its round trips into $tmp/count
cat >"$tmp/tree.py" <<'EOF'
import os, socket, sys, time
srv = socket.socket()
srv.bind(('127.0.0.1', 0))
srv.listen(1)
c = socket.create_connection(srv.getsockname())
s, _ = srv.accept()
n = 0
while True:
    n += 1
    c.sendall(b'%d\n' % n)
    got = s.recv(64)
    s.sendall(got)
    back = c.recv(64)
    assert back == got, (back, got)
    with open(sys.argv[1] + '.new', 'w') as f:
        f.write('%d\n' % n)
    os.rename(sys.argv[1] + '.new', sys.argv[1])
    time.sleep(0.02)
EOF
count() { cat "$tmp/count" 2>/dev/null || echo 0; }
wait_past() {
	i=0
	while [ "$(count)" -le "$1" ]; do
		i=$((i + 1)); [ $i -gt 250 ] && fail "$2: the tree does not count"; sleep 0.02
	done
}
ino() { stat -L -c %i "$1"; }
# a namespace the test holds, configured by it (lo up): a sleeping process in it
holder() {
	unshare --net sh -c 'ip link set lo up && exec sleep 1000' &
	h=$!
	holders="$holders $h"
	i=0
	while [ "$(cat /proc/$h/comm)" != sleep ]; do
		i=$((i + 1)); [ $i -gt 100 ] && fail "the holder does not unshare"; sleep 0.02
	done
}

setsid unshare --net sh -c 'ip link set lo up && exec python3 "$0" "$1"' \
	"$tmp/tree.py" "$tmp/count" </dev/null >"$tmp/tree.err" 2>&1 &
root=$!
wait_past 3 "start"
tree_ns=$(ino /proc/$root/ns/net)
[ "$tree_ns" != "$(ino /proc/self/ns/net)" ] || fail "the tree has no network namespace of its own"

# --external naming another namespace is refused, the tree goes on
"$CRIU_LIKE" dump -t "$root" -D "$tmp" --tcp-established --external net[1]:extRootNetNS \
	-o "$tmp/refused.log" -v4 2>/dev/null && fail "--external net[1] naming no namespace of the tree was taken"
grep -q "the tree's network namespace is net:\[$tree_ns\]" "$tmp/refused.log" ||
	fail "the refusal does not name the tree's namespace"
n=$(count)
wait_past "$n" "after the refused dump"

round=0
for how in inherit-fd join-pid join-path; do
	round=$((round + 1))
	img=$tmp/img$round
	mkdir "$img"
	"$CRIU_LIKE" dump -t "$root" -D "$img" --tcp-established -v4 -o dump.log \
		--external "net[$(ino /proc/$root/ns/net)]:extRootNetNS" || fail "$how: dump"
	old=$(count)
	kill -0 "$root" 2>/dev/null && fail "$how: the tree is still there after the dump"
	root=
	if [ $round = 1 ]; then
		# without the namespace, with a key the images do not have: refused
		"$CRIU_LIKE" restore -D "$img" -d -o "$tmp/nons.log" -v4 2>/dev/null &&
			fail "a restore without the external namespace was taken"
		grep -q "external (extRootNetNS)" "$tmp/nons.log" || fail "the refusal does not name the key"
		"$CRIU_LIKE" restore -D "$img" -d --inherit-fd 'fd[0]:otherKey' -o "$tmp/key.log" \
			-v4 2>/dev/null && fail "an unknown key was taken"
		grep -q "key 'otherKey'" "$tmp/key.log" || fail "the refusal does not name the key"
		"$CRIU_LIKE" restore -D "$img" -d --join-ns uts:/proc/1/ns/uts -o "$tmp/uts.log" \
			-v4 2>/dev/null && fail "--join-ns uts was taken"
	fi
	holder
	want=$(ino /proc/$h/ns/net)
	case $how in
	inherit-fd) "$CRIU_LIKE" restore -D "$img" -d --pidfile "$tmp/pid" -v4 \
		-o "$img/restore.log" --inherit-fd 'fd[5]:extRootNetNS' 5<"/proc/$h/ns/net" ;;
	join-pid) "$CRIU_LIKE" restore -D "$img" -d --pidfile "$tmp/pid" -v4 \
		-o "$img/restore.log" --join-ns "net:$h" ;;
	join-path) "$CRIU_LIKE" restore -D "$img" -d --pidfile "$tmp/pid" -v4 \
		-o "$img/restore.log" -J "net:/proc/$h/ns/net" ;;
	esac
	[ $? = 0 ] || { cp "$img/restore.log" "$tmp/restore.log"; fail "$how: restore"; }
	root=$(cat "$tmp/pid")
	[ "$(ino /proc/$root/ns/net)" = "$want" ] ||
		fail "$how: the restored tree is in net:[$(ino /proc/$root/ns/net)], not the given net:[$want]"
	wait_past "$old" "$how: after the restore"
	echo "$how: $old at the dump, $(count) after, in the given namespace net:[$want]"
done
echo "ns-net-external: --external net[INO]:KEY, restored with --inherit-fd and --join-ns"
