#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A container with a pid namespace of its own: `unshare --fork --pid` runs
# an init (setsid sh, pid 1 inside) that forks two loops, one of them in a
# session of its own; each loop writes its round count and $$ / $PPID as it
# sees them. Dumped from the init and restored with -d --pidfile, twice (the
# second time from the restored tree): the init comes back as pid 1 of a new
# pid namespace (not the host's), the pidfile names its host pid, every task
# has the same pids, process group and session inside (NSpid, NSpgid, NSsid
# of /proc/PID/status read through the host's /proc), and the loops go on
# from where they were. Then the same with `--pid --uts` and a hostname set
# inside: it comes back with it, the host's untouched. Restores killed at
# their N-th step leave no task of the container behind.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ns-pid: needs root"; exit 77; }
command -v unshare >/dev/null || { echo "ns-pid: unshare (util-linux) is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "ns-pid: build first ($CRIU_LIKE)"; exit 1; }

tmp=$(mktemp -d)
trap 'pkill -KILL -f "loop.sh $tmp/" 2>/dev/null; rm -rf "$tmp"' EXIT
host=$(hostname)

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.log "$tmp"/*.err; do
		[ -s "$f" ] && { echo "---- $f"; grep -E "Error|rror:" "$f" | tail -8; }
	done
	exit 1
}

# One loop: "ROUND $$ $PPID HOSTNAME" every 20 ms (renamed into place).
cat >"$tmp/loop.sh" <<'LOOP'
n=0
while :; do
	n=$((n + 1))
	echo "$n $$ $PPID $(cat /proc/sys/kernel/hostname)" >"$1.new"
	mv "$1.new" "$1"
	sleep 0.02
done
LOOP
# The init: a loop in its session, another in a session of its own, and itself a loop.
cat >"$tmp/init.sh" <<'INIT'
[ -n "$2" ] && hostname "$2"
loop=$(dirname "$0")/loop.sh
sh "$loop" "$1.child" &
setsid sh "$loop" "$1.sess" &
exec sh "$loop" "$1"
INIT

wait_count() { # FILE: until it exists
	i=0
	while ! [ -s "$1" ]; do
		i=$((i + 1)); [ $i -gt 250 ] && fail "$1 never appeared"; sleep 0.02
	done
}

# ids HOSTPID: its pids, group and session inside (the last field of NSpid, NSpgid, NSsid).
ids() {
	awk '/^NSpid:|^NSpgid:|^NSsid:/ { printf "%s%s ", $1, $NF }' "/proc/$1/status"
}

# the container's tasks (host pids), init first, then by inner pid; not the
# short-lived forks of a loop ($(cat ...)), which have its command line too
tasks() {
	echo "$1"
	for p in $(pgrep -f "loop.sh $tmp/$2"); do
		[ "$p" = "$1" ] && continue
		pp=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null) || continue
		[ -n "$pp" ] || continue
		[ "$(tr '\0' ' ' <"/proc/$pp/cmdline" 2>/dev/null)" = \
			"$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" ] && continue
		echo "$p"
	done
}

snapshot() { # INIT NAME: every task's ids inside, sorted
	for p in $(tasks "$1" "$2"); do ids "$p"; echo; done | sort
}

run() { # NAME UNSHARE-OPTIONS HOSTNAME
	name=$1 opts=$2 hn=$3
	c="$tmp/$name"
	setsid unshare --fork $opts setsid sh "$tmp/init.sh" "$c" "$hn" >/dev/null 2>&1 &
	wait_count "$c"
	wait_count "$c.child"
	wait_count "$c.sess"
	init=$(pgrep -f "loop.sh $c\$")
	[ -n "$init" ] || fail "$name: no init"
	grep -q "^NSpid:.*	1$" /proc/$init/status || fail "$name: $init is not pid 1 of its namespace"
	for round in 1 2; do
		before=$(snapshot "$init" "$name")
		seen="$(cut -d' ' -f2- "$c") | $(cut -d' ' -f2- "$c.child") | $(cut -d' ' -f2- "$c.sess")"
		n0=$(cut -d' ' -f1 "$c") n1=$(cut -d' ' -f1 "$c.child") n2=$(cut -d' ' -f1 "$c.sess")
		rm -rf "$tmp/img" "$tmp/pidfile"
		"$CRIU_LIKE" dump -t "$init" -D "$tmp/img" -v4 -o "$tmp/dump.log" 2>"$tmp/dump.err" ||
			fail "$name round $round: dump of $init"
		# gone, or a zombie until its reaper (the host's init after a -d restore) gets to it
		case "$(awk '/^State:/ { print $2 }' /proc/$init/status 2>/dev/null)" in
		"" | Z) ;;
		*) fail "$name round $round: $init runs after the dump" ;;
		esac
		"$CRIU_LIKE" restore -D "$tmp/img" -d --pidfile "$tmp/pidfile" -v4 \
			-o "$tmp/restore.log" 2>"$tmp/restore.err" || fail "$name round $round: restore"
		init=$(cat "$tmp/pidfile")
		kill -0 "$init" || fail "$name round $round: the pidfile's $init does not run"
		[ "$(readlink /proc/$init/ns/pid)" != "$(readlink /proc/self/ns/pid)" ] ||
			fail "$name round $round: restored into the host's pid namespace"
		grep -q "^NSpid:.*	1$" /proc/$init/status ||
			fail "$name round $round: the pidfile's $init is not pid 1 of its namespace"
		i=0
		while [ "$(cut -d' ' -f1 "$c")" -le $((n0 + 2)) ] ||
			[ "$(cut -d' ' -f1 "$c.child")" -le $((n1 + 2)) ] ||
			[ "$(cut -d' ' -f1 "$c.sess")" -le $((n2 + 2)) ]; do
			i=$((i + 1)); [ $i -gt 250 ] && fail "$name round $round: a loop stopped"; sleep 0.02
		done
		after=$(snapshot "$init" "$name")
		[ "$before" = "$after" ] ||
			fail "$name round $round: ids inside changed: '$before' -> '$after'"
		now="$(cut -d' ' -f2- "$c") | $(cut -d' ' -f2- "$c.child") | $(cut -d' ' -f2- "$c.sess")"
		[ "$seen" = "$now" ] || fail "$name round $round: the loops see '$now', saw '$seen'"
		[ "$(hostname)" = "$host" ] || fail "$name round $round: the host's hostname changed"
		echo "ok: $name round $round: init back as host pid $init, inside:" $after "| $now"
	done
	[ "$name" = pid ] && killed_restores "$init" "$c"
	kill -KILL "$init"
}

# killed_restores INIT C: dumped once more, restores killed at their N-th step
# (CRIU_LIKE_FAULT_STEP, as restore-kill.sh) leave no task of the container;
# the first that is not killed restores it.
killed_restores() {
	rm -rf "$tmp/img"
	"$CRIU_LIKE" dump -t "$1" -D "$tmp/img" -v4 -o "$tmp/dump.log" 2>"$tmp/dump.err" ||
		fail "killed restores: dump of $1"
	i=0
	for n in 1 2 3 5 8 13 21 34 55 89 144 233 377 610 987; do
		CRIU_LIKE_FAULT_STEP=$n "$CRIU_LIKE" restore -D "$tmp/img" -d --pidfile "$tmp/pidfile" \
			-v4 -o "$tmp/restore.log" >/dev/null 2>&1 && break
		i=0
		while pgrep -f "loop.sh $2" >/dev/null; do
			i=$((i + 1)); [ $i -gt 250 ] && fail "killed at step $n: the container's tasks live on"
			sleep 0.02
		done
	done
	init=$(cat "$tmp/pidfile")
	kill -0 "$init" || fail "killed restores: the last restore did not run"
	echo "ok: restores killed at steps 1..$n before the last left no task of the container"
}

run pid "--pid" ""
run pid-uts "--pid --uts" in-container
echo "ns-pid: pid namespaces restored twice with the same pids, groups and sessions inside"
