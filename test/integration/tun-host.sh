#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /dev/net/tun fds of a process that shares criu-like's network namespace (no
# container): tun-h0 (IFF_TUN | IFF_NO_PI, group 4343, not persistent: it
# goes with the killed process) and tap-h0 (IFF_TAP, persistent, owner 4242: it stays).
# Dumped (killed), restored: tun-h0 is made again by its fd, both fds are
# queues of their devices again (fdinfo iff:), tun-h0 still not persistent
# (it goes when the process is killed at the end) with its group, tap-h0 still persistent
# with its owner. Everything runs in a network namespace of the test's own.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "tun-host: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "tun-host: build first"; exit 1; }
PATH=$PATH:/usr/sbin:/sbin
for t in python3 unshare ip; do
	command -v $t >/dev/null || { echo "tun-host: $t is not installed"; exit 77; }
done
[ -c /dev/net/tun ] || { echo "tun-host: no /dev/net/tun"; exit 77; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
[ -n "${TUN_HOST_INNER:-}" ] || exec env TUN_HOST_INNER=1 CRIU_LIKE="$CRIU_LIKE" unshare --net sh "$0"

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
		[ -f "$f" ] && { echo "---- $f"; grep -i "error\|tun" "$f" | tail -n 10; }
	done
	exit 1
}
iffs() {
	for f in /proc/"$1"/fdinfo/*; do sed -n 's/^iff:[[:space:]]*//p' "$f"; done | sort | tr '\n' ' '
}
persist() {
	ip -d -o link show "$1" 2>/dev/null | grep -o "persist o[nf]*"
}

cat >"$tmp/tun.py" <<'PYEOF'
import fcntl, os, struct, sys, time
def attach(name, flags):
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", name, flags))
    return fd
tun = attach(b"tun-h0", 0x0001 | 0x1000)
fcntl.ioctl(tun, 0x400454ce, 4343)  # TUNSETGROUP
tap = attach(b"tap-h0", 0x0002 | 0x1000)
fcntl.ioctl(tap, 0x400454cc, 4242)  # TUNSETOWNER
fcntl.ioctl(tap, 0x400454cb, 1)  # TUNSETPERSIST
n = 0
while True:
    n += 1
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(n))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(0.01)
PYEOF
ip link set lo up
setsid python3 "$tmp/tun.py" "$tmp/count" </dev/null >/dev/null 2>"$tmp/py.err" &
pid=$!
i=0
while ! [ -s "$tmp/count" ]; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "the process never started: $(cat "$tmp/py.err")"; sleep 0.02
done
before=$(iffs "$pid")
[ "$before" = "tap-h0 tun-h0 " ] || fail "the fds are not queues of tap-h0 and tun-h0: $before"
[ "$(persist tun-h0)" = "persist off" ] && [ "$(persist tap-h0)" = "persist on" ] ||
	fail "tun-h0 or tap-h0 not as made"

"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -v4 -o "$tmp/dump.log" 2>"$tmp/dump.err" || fail "dump"
old=$pid
pid=
i=0
while kill -0 "$old" 2>/dev/null || ip link show tun-h0 >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "tun-h0 or the process is still there after the dump"; sleep 0.02
done
[ "$(persist tap-h0)" = "persist on" ] || fail "the persistent tap-h0 went with the process"

"$CRIU_LIKE" restore -D "$tmp/img" -d -v4 -o "$tmp/restore.log" 2>"$tmp/restore.err" || fail "restore"
pid=$old
after=$(iffs "$pid")
[ "$after" = "$before" ] || fail "after the restore the fds are queues of: $after"
[ "$(persist tun-h0)" = "persist off" ] || fail "tun-h0 is not back, or persistent: $(persist tun-h0)"
[ "$(persist tap-h0)" = "persist on" ] || fail "tap-h0 is not persistent any more"
ip -d -o link show tap-h0 | grep -q " user 4242" || fail "tap-h0 lost its owner"
ip -d -o link show tun-h0 | grep -q " group 4343" || fail "tun-h0 came back without its group"
c=$(cat "$tmp/count")
i=0
while [ "$(cat "$tmp/count")" -le $((c + 3)) ]; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "the restored process does not run"; sleep 0.02
done
echo "ok: restored, its fds queues of $after"
kill -KILL "$pid"
pid=
i=0
while ip link show tun-h0 >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "tun-h0 stays after its only fd is gone"; sleep 0.02
done
echo "tun-host: a tun and a persistent tap of criu-like's namespace, restored with their fds"
