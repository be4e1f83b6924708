#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dump --snapshot armed before its freeze (Documentation/memory.md, "Armed
# before the freeze"): the victim (prearm-victim.c) sweeps 96 MiB and changes
# its memory map. First a snapshot of it quiet (no change but the sweep): the
# smaps read before the freeze is taken as it is. Then one with a pause
# between the arming and the freeze (CRIU_LIKE_TEST_PREARM_PAUSE_MS) during
# which the victim maps, moves, empties, re-protects and re-flags its slots:
# the freeze must protect again what was written or refaulted since, register
# what is new, read smaps again, and the image must be one point in time.
# Then a snapshot while it keeps changing flags and protections (safe during
# the copy). Each directory is restored, the original killed first, and the
# restored victim checks its whole memory against its own table (SIGUSR1:
# "check ok").
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/prearm-victim
[ "$(id -u)" = 0 ] || { echo "snapshot-prearm: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "snapshot-prearm: build first"; exit 1; }
C=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	pkill -KILL -f "$tmp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

start() {
	: >"$tmp/out"
	setsid "$V" "$tmp" >"$tmp/out" 2>&1 </dev/null &
	vp=$!
	n=0
	until grep -q ready "$tmp/out" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 1000 ] || { echo "FAIL: the victim never got ready"; exit 1; }
		sleep 0.01
	done
}

# the victim (pid $1) checks itself: "check ok" expected, within 10 s
check() {
	before=$(grep -c '^check' "$tmp/out")
	kill -USR1 "$1"
	n=0
	while [ "$(grep -c '^check' "$tmp/out")" = "$before" ]; do
		n=$((n + 1))
		[ $n -le 1000 ] || { echo "FAIL: $2: pid $1 never checked itself"; cat "$tmp/out"; return 1; }
		sleep 0.01
	done
	last=$(grep '^check' "$tmp/out" | tail -1)
	case "$last" in
	"check ok"*) echo "$2: $last" ;;
	*) echo "FAIL: $2: $last"; return 1 ;;
	esac
}

# restore directory $1 after the original is killed, check, kill the copy
restore_check() {
	kill -KILL "$vp"
	wait "$vp" 2>/dev/null
	vp=
	"$C" restore -D "$tmp/$1" -d -v4 -o restore.log --pidfile "$tmp/$1.pid" \
		>"$tmp/$1.rst" 2>&1 ||
		{ echo "FAIL: restore of $1"; tail -5 "$tmp/$1/restore.log"; return 1; }
	vp=$(cat "$tmp/$1.pid")
	check "$vp" "$1 restored" || return 1
}

snapshot() {
	mkdir -p "$tmp/$1"
	"$C" dump -t "$vp" -D "$tmp/$1" -R --snapshot -v4 -o dump.log >"$tmp/$1.err" 2>&1
}

# 1. quiet: smaps as read before the freeze
start
touch "$tmp/quiet"
if ! snapshot d-quiet; then
	echo "FAIL: snapshot of the quiet victim"; tail -5 "$tmp/d-quiet/dump.log"; fail=1
else
	grep -q "tasks registered before the freeze" "$tmp/d-quiet/dump.log" ||
		{ echo "FAIL: quiet: not armed before the freeze"; fail=1; }
	grep -q "smaps as read before the freeze, unchanged" "$tmp/d-quiet/dump.log" ||
		{ echo "FAIL: quiet: smaps not taken from before the freeze"; fail=1; }
	# the first freeze injects through the vDSO, not over the task's own code
	! grep -q "has no vDSO" "$tmp/d-quiet/dump.log" ||
		{ echo "FAIL: quiet: the arming injected over the task's own code"; fail=1; }
	grep -o "frozen [0-9]* us (and [0-9]* us before[^,]*" "$tmp/d-quiet.err"
	restore_check d-quiet || fail=1
fi

# 2. the map changes between the arming and the freeze
start
rm -f "$tmp/quiet"
mkdir -p "$tmp/d-churn"
CRIU_LIKE_TEST_PREARM_PAUSE_MS=2000 "$C" dump -t "$vp" -D "$tmp/d-churn" -R --snapshot -v4 \
	-o dump.log >"$tmp/d-churn.err" 2>&1 &
dp=$!
n=0
until grep -q "pausing .* before the freeze" "$tmp/d-churn/dump.log" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 1000 ] || { echo "FAIL: the snapshot never paused before its freeze"; break; }
	sleep 0.01
done
touch "$tmp/churn"
sleep 0.6
rm -f "$tmp/churn"
touch "$tmp/quiet"
if ! wait $dp; then
	echo "FAIL: snapshot of the changing victim"; tail -5 "$tmp/d-churn/dump.log"; fail=1
else
	l=$(grep "written since the arming protected again" "$tmp/d-churn/dump.log")
	echo "churn: ${l#*: }"
	echo "$l" | grep -q ": 0 runs" &&
		{ echo "FAIL: churn: nothing written since the arming to protect again"; fail=1; }
	grep -q "smaps as read before the freeze, unchanged" "$tmp/d-churn/dump.log" &&
		{ echo "FAIL: churn: smaps from before the freeze taken though the map changed"; fail=1; }
	restore_check d-churn || fail=1
fi

# 3. flags and protections change during the arming and the copy
start
rm -f "$tmp/quiet"
if ! snapshot d-flags; then
	echo "FAIL: snapshot of the re-flagging victim"; tail -5 "$tmp/d-flags/dump.log"; fail=1
else
	restore_check d-flags || fail=1
fi

[ $fail = 0 ] && echo PASS
exit $fail
