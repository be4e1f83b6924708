#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A dump that fails while its workers dump several tasks at once
# (dump/dump-par.c) leaves every task as before. The victim is a forest of 6
# processes (dump-victim forest 6: a root and 5 children, 1 MiB each, every
# one checking its memory and ticking); each failure point of a `dump -R` and
# of a kill-mode dump is failed in turn (CRIU_LIKE_FAULT=N, fault-injection.md)
# and then: the dump exits non-zero, the directory is not marked complete,
# and all 6 pids run untraced, not stopped, still ticking, their memory
# checks passing. The workers pass the points in an order of their own, so
# the point N of one run may be another in the next (fault-injection.md);
# every point is tried all the same.
# Usage: B=BUILD_DIR [START=N] sh test/integration/dump-fail-par.sh [STEP] (every STEP-th
# point from START, picked at random and printed; STEP 6 by
# default, as make test runs it: about a minute; 1 for every point, about 6 minutes on a
# PVM guest)
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
STEP=${1:-6}
# from a START of 1 to STEP picked at random: each run tries another share
START=${START:-$(($(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % STEP + 1))}
V=$B/test/integration/dump-victim
[ "$(id -u)" = 0 ] || { echo "dump-fail-par: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "dump-fail-par: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
. "$(dirname "$0")/fault.inc"
N=6

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL -"$vp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0 tried=0

# start: the forest in its own session (its pgid is the root's pid), $vp its root.
start() {
	[ -n "$vp" ] && kill -KILL -"$vp" 2>/dev/null
	setsid "$V" forest $N >"$tmp/v" 2>&1 </dev/null &
	vp=$!
	i=0
	until [ "$(grep -c 'tick 1 ' "$tmp/v" 2>/dev/null)" -ge $N ]; do
		i=$((i + 1))
		[ $i -le 1000 ] || { echo "FAIL: the victim did not start"; exit 1; }
		sleep 0.01
	done
}

# intact: every process of the forest free and ticking, no memory error.
intact() {
	got=0
	for p in $(pgrep -g "$vp"); do
		st=$(awk '/^State:/ { s = $2 } /^TracerPid:/ { t = $2 } END { print s, t }' \
			/proc/$p/status 2>/dev/null)
		case "$st" in
		"S 0" | "R 0" | "D 0") got=$((got + 1)) ;;
		*) echo "pid $p: state/tracer '$st'"; return 1 ;;
		esac
	done
	[ $got -eq $N ] || { echo "$got of $N processes left"; return 1; }
	before=$(wc -l <"$tmp/v")
	sleep 0.2
	for i in $(seq 0 $((N - 1))); do
		tail -n +"$before" "$tmp/v" | grep -q "^p$i tick" ||
			{ echo "p$i stopped ticking"; return 1; }
	done
	e=$(mem_errors "$tmp/v")
	[ -z "$e" ] || { echo "memory check failed: $e"; return 1; }
	return 0
}

start
CRIU_LIKE_FAULT=list "$CRIU_LIKE" dump -R -t "$vp" -D "$tmp/count" -v4 -o "$tmp/list.log" \
	>"$tmp/count-R" 2>&1 || { echo "FAIL: clean dump -R"; cat "$tmp/count-R"; exit 1; }
grep -q 'tasks done by [2-9] workers' "$tmp/count/list.log" 2>/dev/null ||
	grep -q 'tasks done by [2-9] workers' "$tmp/list.log" 2>/dev/null ||
	{ echo "FAIL: the dump ran no workers"; exit 1; }
last=$(count "$tmp/count-R")
echo "dump-fail-par: $last points in a dump -R of $N processes (STEP=$STEP START=$START)"

for mode in -R kill; do
	n=$START
	while [ $n -le "$last" ]; do
		opt=
		[ $mode = -R ] && opt=-R
		rm -rf "$tmp/d"
		tried=$((tried + 1))
		if CRIU_LIKE_FAULT=$n "$CRIU_LIKE" dump $opt -t "$vp" -D "$tmp/d" >"$tmp/out" 2>&1; then
			# statistics are best effort; past the end of a shorter run nothing fails
			if ! grep -q "failing point $n " "$tmp/out" ||
				grep -q "failing point $n (stats-dump" "$tmp/out"; then
				[ $mode = kill ] && start
				n=$((n + STEP))
				continue
			fi
			echo "FAIL: dump $mode point $n: the dump succeeded: $(head -c 300 "$tmp/out")"
			fail=1
			start
		elif complete "$tmp/d"; then
			echo "FAIL: dump $mode point $n: the directory is marked complete"
			fail=1
		elif ! why=$(intact); then
			echo "FAIL: dump $mode point $n ($(sed -n "s/.*failing point $n (\(.*\)) in pid.*/\1/p" \
				"$tmp/out")): $why"
			fail=1
			start
		fi
		n=$((n + STEP))
	done
done
echo "dump-fail-par: $tried points tried"
[ $fail = 0 ] && echo "dump-fail-par: PASS" || echo "dump-fail-par: FAIL"
exit $fail
