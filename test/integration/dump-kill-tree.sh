#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The dumper SIGKILLed at every step of the dump of a tree (each step taken in
# every task at once: the infection, the commands, the cure; infect.md, "The
# infection of a tree", "The cure of a tree") must leave every task running
# exactly as before: alive, not traced, not stopped, no signal pending, its
# blocked mask as it was, its memory intact (each checks a pattern in 1 MiB
# every 10 ms) and ticking on. A tree of FOREST (default 6) processes;
# CRIU_LIKE_FAULT_STEP from START up to the dump's last step, every STEP-th
# (default 6, from a START of 1 to STEP picked at random and printed: `make
# test` covers a sixth of them in 2 minutes, each run another; STEP=1
# for every one, about 10 minutes on a PVM guest); then TRIALS (default 10) kills after a
# random delay; then the dump made to fail at each failure point
# (CRIU_LIKE_FAULT, the same way). A dump that completes (-R) must have left
# the tree the same way.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/dump-victim
[ "$(id -u)" = 0 ] || { echo "dump-kill-tree: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "dump-kill-tree: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
N=${FOREST:-6}
STEP=${STEP:-6}
START=${START:-$(($(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % STEP + 1))}
TRIALS=${TRIALS:-10}
echo "dump-kill-tree: steps and failure points $START, $((START + STEP)), ... (STEP=$STEP START=$START)"

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL -"$vp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

setsid "$V" forest "$N" >"$tmp/victim" 2>&1 </dev/null &
vp=$!
n=0
until grep -q "^ready $vp" "$tmp/victim" 2>/dev/null && [ "$(pgrep -c -g "$vp")" = "$N" ]; do
	n=$((n + 1))
	[ $n -le 1000 ] || { echo "FAIL: the victim did not start"; exit 1; }
	sleep 0.01
done
pids=$(pgrep -g "$vp" | sort -n | tr '\n' ' ')

masks() {
	for p in $pids; do
		for th in /proc/$p/task/*; do
			echo "$p $(basename "$th") $(sed -n 's/^SigBlk:\t//p' "$th/status")"
		done
	done
}
masks >"$tmp/masks0"

# the last tick and error count of process I
last() {
	grep "^p$1 tick" "$tmp/victim" | tail -1 | cut -d' ' -f3,5
}

# check WHAT: every task runs on as before.
check() {
	# Time for the orphaned parasites to notice and go home.
	sleep 0.2
	for p in $pids; do
		st=$(awk '/^(State|TracerPid|SigPnd|ShdPnd):/ { print $2 }' /proc/$p/status 2>/dev/null |
		     tr '\n' ' ')
		# D: a moment in the kernel (its tick's write, a fault); it must tick on below
		case "$st" in
		[SRD]" 0 0000000000000000 0000000000000000 ") ;;
		*) echo "FAIL: $1: task $p is not running free as before (state tracer sigpnd shdpnd: $st)"
		   fail=1
		   return ;;
		esac
	done
	masks >"$tmp/masks1"
	if ! cmp -s "$tmp/masks0" "$tmp/masks1"; then
		echo "FAIL: $1: blocked masks changed:"
		diff "$tmp/masks0" "$tmp/masks1"
		fail=1
		return
	fi
	i=0
	while [ $i -lt "$N" ]; do
		a=$(last $i)
		sleep 0.05
		b=$(last $i)
		if [ -z "$a" ] || [ "${a% *}" = "${b% *}" ] || [ "${b#* }" != 0 ]; then
			echo "FAIL: $1: process p$i does not tick on intact ($a -> $b)"
			fail=1
			return
		fi
		i=$((i + 1))
	done
}

# dump ARGS...: a -R dump of the tree, killed as the environment says; 0 if it completed
dump() {
	rm -rf "$tmp/img"
	mkdir "$tmp/img"
	"$CRIU_LIKE" dump -R -t "$vp" -D "$tmp/img" -o dump.log "$@" >"$tmp/dump.out" 2>&1
}

step=$START
kills=0
while [ $fail = 0 ]; do
	if CRIU_LIKE_FAULT_STEP=$step dump; then
		check "dump past its last step ($step)"
		break
	fi
	kills=$((kills + 1))
	check "killed at step $step"
	step=$((step + STEP))
done
[ $fail = 0 ] && echo "ok: killed at $kills steps (every $STEP-th of $step), the tree intact after each"
t=0
while [ $fail = 0 ] && [ $t -lt "$TRIALS" ]; do
	t=$((t + 1))
	r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
	dump &
	dp=$!
	sleep "0.0$((r % 90 + 10))"
	kill -KILL $dp 2>/dev/null
	wait $dp 2>/dev/null
	check "random kill $t (after 0.0$((r % 90 + 10)) s)"
done
# every failure point (fault-injection.md): each failed dump cures every task
points=$(CRIU_LIKE_FAULT=list dump 2>&1; sed -n 's/.*fault injection: \([0-9]*\) points passed.*/\1/p' \
	 "$tmp/dump.out")
[ $fail = 0 ] && [ -z "$points" ] && { echo "FAIL: no count of failure points"; fail=1; }
f=$START
while [ $fail = 0 ] && [ "$f" -le "${points:-0}" ]; do
	# a few points are best effort (the stats after a complete dump): -R either way
	CRIU_LIKE_FAULT=$f dump
	check "failure point $f of $points"
	f=$((f + STEP))
done
[ $fail = 0 ] && echo "ok: failed at $(((points - START + STEP) / STEP)) of $points failure points, the tree intact after each"
[ $fail = 0 ] && echo "dump-kill-tree: a tree of $N processes intact after every kill and failure"
exit $fail
