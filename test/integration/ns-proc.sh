#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The proc and mqueue of a container: zdtm's counter in the container of the
# zdtm ns modes (ZDTM_NS_INIT: an init of new pid, mount, UTS and IPC
# namespaces, pivot_root'ed into a root with its own /proc and /dev/mqueue).
# Dumped and restored, the container's /proc is again the one of its own pid
# namespace (its pids 1 and 2 only, not the host's tasks) and its
# /dev/mqueue the one of its IPC namespace; the test passes. A mount on that
# proc (made again by the restored root, with the proc) is dumped; a bind
# mount of it elsewhere is refused at dump by name and the tree runs on.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ns-proc: needs root"; exit 77; }
command -v nsenter >/dev/null || { echo "ns-proc: nsenter (util-linux) is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "ns-proc: build first ($CRIU_LIKE)"; exit 1; }
counter=$B/test/zdtm/static/counter
[ -x "$counter" ] || { echo "ns-proc: build first ($counter)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.log "$tmp"/*.err "$tmp"/out; do
		[ -s "$f" ] && { echo "---- $f"; tail -8 "$f"; }
	done
	exit 1
}

# The pids seen in the container's /proc (of the mount namespace of host pid $1).
pids_inside() {
	nsenter -t "$1" -m sh -c 'cd /proc && echo [0-9]*'
}

(cd "$tmp" && ZDTM_NS_INIT=1 "$counter" --pidfile="$tmp/pid" --outfile="$tmp/out") ||
	fail "the counter did not start in its container"
daemon=$(cat "$tmp/pid")
init=$(awk '{ print $4 }' "/proc/$daemon/stat")
[ "$(pids_inside "$init")" = "1 2" ] || fail "the container's /proc before the dump: $(pids_inside "$init")"
# The host's mqueue (the builder's, in criu-like's IPC namespace), when mounted.
hostmq=$(stat -c %d /dev/mqueue 2>/dev/null || echo none)

# Dumped: a mount on the container's proc. Refused: a bind mount of the proc elsewhere.
nsenter -t "$init" -m mount -t tmpfs over "/proc/sys/fs/binfmt_misc" || fail "cannot mount on the proc"
"$CRIU_LIKE" dump -t "$init" -D "$tmp/img0" -R 2>"$tmp/on.err" || fail "a mount on the proc was refused"
nsenter -t "$init" -m umount /proc/sys/fs/binfmt_misc
rm -rf "$tmp/img0"
nsenter -t "$init" -m mount --bind /proc/sys /mnt || fail "cannot bind the proc"
"$CRIU_LIKE" dump -t "$init" -D "$tmp/img0" -R 2>"$tmp/bind.err" && fail "a bind of the proc was dumped"
grep -q "pid $init: mount /mnt: a bind mount of the proc at /proc" "$tmp/bind.err" ||
	fail "no refusal naming the bind of the proc"
nsenter -t "$init" -m umount /mnt
kill -0 "$daemon" || fail "the test died after the refusals"
echo "ok: a mount on the container's proc dumped, a bind of it elsewhere refused at dump"

# Dumped and restored twice: the container's own proc and mqueue come back.
for round in 1 2; do
	"$CRIU_LIKE" dump -t "$init" -D "$tmp/img$round" -v4 -o "$tmp/dump$round.log" 2>"$tmp/dump$round.err" ||
		fail "dump $round failed"
	"$CRIU_LIKE" restore -D "$tmp/img$round" -d --pidfile "$tmp/root$round" -v4 \
		-o "$tmp/restore$round.log" 2>"$tmp/restore$round.err" || fail "restore $round failed"
	init=$(cat "$tmp/root$round")
	got=$(pids_inside "$init")
	[ "$got" = "1 2" ] || fail "round $round: the container's /proc shows pids $got, not its own 1 2"
	[ "$(nsenter -t "$init" -m stat -c %d /dev/mqueue)" != "$hostmq" ] ||
		fail "round $round: /dev/mqueue is the builder's (host's) mqueue"
	echo "ok: round $round: the container's /proc shows $got, its /dev/mqueue its own"
done
daemon=$(awk '{ print $1 }' "/proc/$init/task/$init/children")
kill -TERM "$daemon" || fail "the counter is gone"
for _ in $(seq 100); do
	grep -q '^PASS$\|^FAIL' "$tmp/out" && break
	sleep 0.1
done
grep -q '^PASS$' "$tmp/out" || fail "the counter did not pass after the restores"
echo "ok: the counter passed"
