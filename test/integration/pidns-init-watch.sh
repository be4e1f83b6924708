#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The init of a restored pid namespace dies with criu-like when criu-like is
# SIGKILLed in the window where the init's parent-death signal is cleared
# (Documentation/restore.md, "When criu-like dies"): a change of credentials
# clears it, and the init's getppid() is 0 whoever its parent is, so only its
# watch of criu-like's pidfd at the barrier can tell. Two containers, each
# `unshare --pid --fork` with an init of uid 1000 (so its restore changes
# credentials): `sleep` alone, and share-victim files-child, whose child
# shares the init's fd table (CLONE_FILES: the pidfd must stay open in the
# shared table for the init). Each is dumped, then restored with
# CRIU_LIKE_TEST_CREDS_PAUSE_MS (the restorer sleeps right after the creds);
# criu-like is SIGKILLed once the init sleeps there with uid 1000: every task
# of the container must be gone within 3 s (without the watch it waits at its
# barrier for ever). Then a plain restore of the same images runs.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/share-victim
[ "$(id -u)" = 0 ] || { echo "pidns-init-watch: needs root"; exit 77; }
for c in unshare setpriv setsid; do
	command -v $c >/dev/null || { echo "pidns-init-watch: $c is not installed"; exit 77; }
done
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "pidns-init-watch: build first"; exit 1; }

tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'pkill -KILL -f "$tmp/mark" 2>/dev/null; sleep 0.1; rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.log "$tmp"/img*/*.log; do
		[ -s "$f" ] && { echo "---- $f"; grep -E "Error|Warn" "$f" | tail -8; tail -3 "$f"; }
	done
	exit 1
}

# inits: host pids of the tasks whose command line names this case's mark
tasks() {
	pgrep -f "$tmp/mark-$1" || true
}

# sleeping_init CTL: the host pid of CTL's child that is pid 1 of its namespace, has uid 1000
# and is in nanosleep (35) or clock_nanosleep (230); empty while there is none
sleeping_init() {
	for p in $(pgrep -P "$1"); do
		awk '/^NSpid:/ { if ($NF != 1) bad = 1 } /^Uid:/ { if ($2 != 1000) bad = 1 }
			END { exit bad }' "/proc/$p/status" 2>/dev/null || continue
		case $(cut -d' ' -f1 "/proc/$p/syscall" 2>/dev/null) in
		35 | 230) echo "$p" ;;
		esac
	done
}

gone_within_3s() { # CASE
	i=0
	while [ -n "$(tasks "$1")" ]; do
		i=$((i + 1))
		[ $i -gt 150 ] && return 1
		sleep 0.02
	done
	return 0
}

for case in alone files-child; do
	img=$tmp/img-$case
	mkdir -p "$img"
	# the mark in argv names the case's tasks (a symlink to the victim)
	if [ $case = alone ]; then
		ln -s "$(command -v sleep)" "$tmp/mark-$case"
		set -- "$tmp/mark-$case" 1000
	else
		ln -s "$(realpath "$V")" "$tmp/mark-$case"
		set -- "$tmp/mark-$case" files-child
	fi
	unshare --pid --fork setsid setpriv --reuid 1000 --regid 1000 --clear-groups "$@" \
		</dev/null >/dev/null 2>&1 &
	i=0
	until [ "$(tasks $case | wc -l)" -ge $([ $case = alone ] && echo 1 || echo 2) ]; do
		i=$((i + 1)); [ $i -gt 250 ] && fail "$case: the container did not start"; sleep 0.02
	done
	init=
	for p in $(tasks $case); do
		awk '/^NSpid:/ { exit $NF != 1 }' "/proc/$p/status" && init=$p
	done
	[ -n "$init" ] || fail "$case: no init among $(tasks $case)"
	"$CRIU_LIKE" dump -t "$init" -D "$img" -v4 -o dump.log || fail "$case: dump"
	gone_within_3s $case || fail "$case: the dumped tree still runs"
	sum=$(cd "$img" && cat $(ls | grep -v '\.log$') | sha256sum)

	CRIU_LIKE_TEST_CREDS_PAUSE_MS=1500 setsid "$CRIU_LIKE" restore -D "$img" -d \
		-v4 -o restore-paused.log >/dev/null 2>&1 &
	ctl=$!
	i=0
	while [ -z "$(sleeping_init $ctl)" ]; do
		i=$((i + 1))
		[ $i -gt 250 ] && fail "$case: the restored init never slept after its creds"
		sleep 0.02
	done
	kill -KILL $ctl
	wait $ctl 2>/dev/null
	gone_within_3s $case ||
		fail "$case: criu-like killed while the init's parent-death signal was cleared:" \
			"tasks left: $(tasks $case)"
	echo "ok: $case: criu-like killed in the init's creds window: the container died with it"
	[ "$(cd "$img" && cat $(ls | grep -v '\.log$') | sha256sum)" = "$sum" ] ||
		fail "$case: the images changed"

	"$CRIU_LIKE" restore -D "$img" -d --pidfile "$img/pid" -v4 -o restore.log ||
		fail "$case: plain restore"
	pid=$(cat "$img/pid")
	awk '/^NSpid:/ { if ($NF != 1) bad = 1 } /^Uid:/ { if ($2 != 1000) bad = 1 }
		END { exit bad }' "/proc/$pid/status" || fail "$case: restored init $pid: not pid 1 uid 1000"
	[ "$(tasks $case | wc -l)" = "$([ $case = alone ] && echo 1 || echo 2)" ] ||
		fail "$case: restored tasks: $(tasks $case)"
	if [ $case = files-child ]; then
		c=$(pgrep -P "$pid")
		[ -n "$c" ] || fail "$case: the init's child is missing"
		# one fd table: kcmp(KCMP_FILES) of the two is 0
		python3 -c 'import ctypes, sys
sys.exit(ctypes.CDLL(None).syscall(312, int(sys.argv[1]), int(sys.argv[2]), 2, 0, 0) != 0)' \
			"$pid" "$c" || fail "$case: the init and its child have two fd tables"
	fi
	echo "ok: $case: restored as pid 1 of uid 1000"
	kill -KILL "$pid"
	gone_within_3s $case || fail "$case: the restored tree did not die"
done
echo "pidns-init-watch: 2 containers: ok"
