#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A tree with a UTS namespace of its own (unshare --uts, a hostname and a
# domain name set inside): dumped and restored, its root comes back in a new
# UTS namespace, not the host's, with the same names, and its loop goes on
# from where it was; the host's names never change. Then the same tree with
# its names changed is dumped again from the restored one (a second cycle).
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ns-uts: needs root"; exit 77; }
command -v unshare >/dev/null || { echo "ns-uts: unshare (util-linux) is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "ns-uts: build first ($CRIU_LIKE)"; exit 1; }

tmp=$(mktemp -d)
trap 'pkill -KILL -f "loop.sh $tmp/" 2>/dev/null; rm -rf "$tmp"' EXIT
host=$(hostname)
hostdom=$(domainname)

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.log "$tmp"/*.err; do
		[ -s "$f" ] && { echo "---- $f"; tail -8 "$f"; }
	done
	exit 1
}

# The loop: its round count and the names it sees, every 20 ms.
cat >"$tmp/loop.sh" <<'LOOP'
n=0
while :; do
	n=$((n + 1))
	echo "$n $(cat /proc/sys/kernel/hostname) $(cat /proc/sys/kernel/domainname)" >"$1.new"
	mv "$1.new" "$1"
	sleep 0.02
done
LOOP

count() { cut -d' ' -f1 "$tmp/count"; }
names() { cut -d' ' -f2- "$tmp/count"; }

setsid unshare --uts sh -c 'hostname in-uts-1; domainname dom-1; exec sh "$0" "$1"' \
	"$tmp/loop.sh" "$tmp/count" >/dev/null 2>&1 &
pid=$!
i=0
while [ "$(names 2>/dev/null)" != "in-uts-1 dom-1" ]; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "the loop never ran"; sleep 0.02
done

for round in 1 2; do
	before=$(count)
	rm -rf "$tmp/img"
	"$CRIU_LIKE" dump -t $pid -D "$tmp/img" -v4 -o "$tmp/dump-$round.log" 2>"$tmp/dump.err" ||
		fail "round $round: dump of $pid"
	# killed: a zombie until the subreaper (its parent after a -d restore) reaps it
	i=0
	while kill -0 $pid 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 250 ] && fail "round $round: $pid still runs after the dump"
		sleep 0.02
	done
	[ -s "$tmp/img/utsns-1.img" ] || fail "round $round: no utsns-1.img"
	cp "$tmp/dump-$round.log" "$tmp/dump-$round.keep"
	"$CRIU_LIKE" restore -D "$tmp/img" -d -v4 -o "$tmp/restore-$round.log" \
		2>"$tmp/restore.err" || fail "round $round: restore"
	kill -0 $pid || fail "round $round: $pid is not running after the restore"
	[ "$(readlink /proc/$pid/ns/uts)" != "$(readlink /proc/self/ns/uts)" ] ||
		fail "round $round: $pid was restored into the host's UTS namespace"
	i=0
	while [ "$(count)" -le $((before + 2)) ]; do
		i=$((i + 1)); [ $i -gt 250 ] && fail "round $round: the loop did not go on"; sleep 0.02
	done
	want="in-uts-$round dom-$round"
	[ "$(names)" = "$want" ] || fail "round $round: names '$(names)', want '$want'"
	[ "$(hostname)" = "$host" ] && [ "$(domainname)" = "$hostdom" ] ||
		fail "round $round: the host's names changed"
	echo "ok: round $round: $pid back in $(readlink /proc/$pid/ns/uts) as '$want', count $before -> $(count)"
	nsenter -t $pid -u sh -c 'hostname in-uts-2; domainname dom-2' || fail "nsenter"
	i=0
	while [ "$(names)" != "in-uts-2 dom-2" ]; do
		i=$((i + 1)); [ $i -gt 250 ] && fail "the names did not change"; sleep 0.02
	done
done
kill -KILL $pid
echo "ns-uts: a UTS namespace restored twice with its names, the host's untouched"
