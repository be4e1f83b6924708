#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Fault injection (Documentation/fault-injection.md): fail each failure point
# of a dump and of a restore in turn (CRIU_LIKE_FAULT=N) and check the promise
# every time:
#   dump (-R and kill mode): exits non-zero, the tree runs on as before (same
#     pids, not traced, not stopped, its memory check still passing and its
#     ticks advancing), the directory is not marked complete;
#   restore: exits non-zero, no task of the tree is left (its pids free within
#     a second), the images byte-identical; then a clean restore works.
# Builds nothing. Usage: B=BUILD_DIR scripts/fault-inject.sh [STEP]
# (STEP > 1 tries every STEP-th point only). Needs root. Ends with a summary.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
STEP=${1:-1}
V=$B/test/integration/dump-victim
[ "$(id -u)" = 0 ] || { echo "fault-inject: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "fault-inject: build first ($V, $CRIU_LIKE)"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
. "$(dirname "$0")/../test/integration/fault.inc"

tmp=$(mktemp -d)
pids=
cleanup() {
	[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
tried=0 kept=0 broken=

bad() {
	echo "BROKEN: $*"
	broken="$broken
  $*"
}

# start NAME: a 2-process victim (4 MiB checked by the child), sets $vp $vc.
start() {
	setsid "$V" mem 4 tree >"$tmp/$1" 2>&1 </dev/null &
	vp=$!
	_w=0 # not n: the callers' loops count with it
	until grep -q '^child tick' "$tmp/$1" 2>/dev/null; do
		_w=$((_w + 1))
		[ $_w -le 1000 ] || { echo "fault-inject: victim did not start"; exit 1; }
		sleep 0.01
	done
	vc=$(sed -n 's/^ready [0-9]* child \([0-9]*\)/\1/p' "$tmp/$1")
	pids="$pids $vp $vc"
}

free_pid() { [ ! -e "/proc/$1" ]; }

# intact NAME: both pids run free, ticks advance, no memory error.
intact() {
	for p in $vp $vc; do
		st=$(awk '/^State:/ { s = $2 } /^TracerPid:/ { t = $2 } END { print s, t }' \
			/proc/$p/status 2>/dev/null)
		case "$st" in
		"S 0" | "R 0" | "D 0") ;; # D: a moment in the kernel (its tick's write), not stopped
		*) echo "pid $p: state/tracer '$st'"; return 1 ;;
		esac
	done
	a=$(grep '^child tick' "$tmp/$1" | tail -1)
	sleep 0.05
	_w=0
	while [ "$(grep '^child tick' "$tmp/$1" | tail -1)" = "$a" ]; do
		_w=$((_w + 1))
		[ $_w -le 100 ] || { echo "child $vc stopped ticking"; return 1; }
		sleep 0.01
	done
	e=$(mem_errors "$tmp/$1")
	[ -z "$e" ] || { echo "memory check failed: $e"; return 1; }
	return 0
}

# ---- a good image directory (kill mode), the counts -------------------------------------
start v1
p1=$vp c1=$vc
CRIU_LIKE_FAULT=list "$CRIU_LIKE" dump -t "$vp" -D "$tmp/good" >"$tmp/count-kill" 2>&1 ||
	{ echo "fault-inject: clean dump failed"; cat "$tmp/count-kill"; exit 1; }
nkill=$(count "$tmp/count-kill")
(cd "$tmp/good" && sha256sum *) >"$tmp/good.sum"
# the victim's stdout is a file of the tree: each restore gets it as it was at the dump
cp "$tmp/v1" "$tmp/v1.dumped"
CRIU_LIKE_FAULT=list "$CRIU_LIKE" restore -d -D "$tmp/good" >"$tmp/count-rst" 2>&1 ||
	{ echo "fault-inject: clean restore failed"; cat "$tmp/count-rst"; exit 1; }
nrst=$(count "$tmp/count-rst")
kill -KILL $p1 $c1
start v2
CRIU_LIKE_FAULT=list "$CRIU_LIKE" dump -R -t "$vp" -D "$tmp/count" >"$tmp/count-R" 2>&1 ||
	{ echo "fault-inject: clean dump -R failed"; cat "$tmp/count-R"; exit 1; }
nR=$(count "$tmp/count-R")
echo "fault-inject: $nR points in a dump -R, $nkill in a dump, $nrst in a restore (step $STEP)"
while ! free_pid $p1 || ! free_pid $c1; do sleep 0.01; done

# ---- dumps ---------------------------------------------------------------------------------
# dump_fault MODE N COUNT: MODE "-R" or "kill"; 1 once N is past the last point of a run.
dump_fault() {
	tried=$((tried + 1))
	rm -rf "$tmp/d"
	opt=
	[ "$1" = -R ] && opt=-R
	if CRIU_LIKE_FAULT=$2 "$CRIU_LIKE" dump $opt -t "$vp" -D "$tmp/d" >"$tmp/out" 2>&1; then
		# past the last point of this run (the victims of the counts and of the loop may
		# differ by a few: a record more or less in an image), so nothing was injected
		if [ "$2" -gt "$(($3 - 3))" ] && ! grep -q "failing point $2 " "$tmp/out"; then
			tried=$((tried - 1))
			[ "$1" = kill ] && start v2
			return 1
		fi
		# statistics are best effort, as CRIU's: a warning, the dump complete
		if grep -q "failing point $2 (stats-dump" "$tmp/out" && complete "$tmp/d"; then
			kept=$((kept + 1))
		else
			bad "dump $1 point $2: the dump succeeded ($(grep -m1 -o 'failing point .*' \
				"$tmp/out" || echo "no failing point: $(head -c 300 "$tmp/out")"))"
		fi
		if [ "$1" = kill ]; then start v2; fi
		return 0
	fi
	if ! grep -q "failing point $2 " "$tmp/out"; then
		bad "dump $1 point $2: no such point passed: $(grep Error "$tmp/out" | head -1)"
		return 0
	fi
	where=$(sed -n "s/.*failing point $2 (\(.*\)) in pid.*/\1/p" "$tmp/out")
	if complete "$tmp/d"; then
		bad "dump $1 point $2 ($where): the directory is marked complete"
	elif ! why=$(intact v2); then
		bad "dump $1 point $2 ($where): the tree is not intact: $why"
		kill -KILL $vp $vc 2>/dev/null
		start v2
	else
		kept=$((kept + 1))
	fi
	return 0
}

for mode in -R kill; do
	last=$nR
	[ $mode = kill ] && last=$nkill
	n=1
	while [ $n -le $((last + 20)) ] && dump_fault $mode $n "$last"; do
		n=$((n + STEP))
	done
done

# ---- restores ------------------------------------------------------------------------------
kill -KILL $vp $vc
while ! free_pid $vp || ! free_pid $vc; do sleep 0.01; done
n=1
while [ $n -le "$nrst" ]; do
	tried=$((tried + 1))
	cp "$tmp/v1.dumped" "$tmp/v1"
	if CRIU_LIKE_FAULT=$n "$CRIU_LIKE" restore -d -D "$tmp/good" >"$tmp/out" 2>&1; then
		kill -KILL $p1 $c1 2>/dev/null
		# statistics are best effort, as CRIU's: a warning, the tree restored
		if grep -q "failing point $n (stats-restore" "$tmp/out"; then
			kept=$((kept + 1))
			while ! free_pid $p1 || ! free_pid $c1; do sleep 0.01; done
			n=$((n + STEP))
			continue
		fi
		bad "restore point $n ($(sed -n "s/.*failing point $n (\(.*\)) in pid.*/\1/p" \
			"$tmp/out" | head -1)): the restore succeeded"
		while ! free_pid $p1 || ! free_pid $c1; do sleep 0.01; done
		n=$((n + STEP))
		continue
	fi
	where=$(sed -n "s/.*failing point $n (\(.*\)) in pid.*/\1/p" "$tmp/out" | head -1)
	i=0
	while { ! free_pid $p1 || ! free_pid $c1; } && [ $i -lt 100 ]; do
		i=$((i + 1))
		sleep 0.01
	done
	if ! free_pid $p1 || ! free_pid $c1; then
		bad "restore point $n ($where): a task is left after a second"
		kill -KILL $p1 $c1 2>/dev/null
	elif ! (cd "$tmp/good" && sha256sum --quiet -c "$tmp/good.sum") >/dev/null 2>&1; then
		bad "restore point $n ($where): the images changed"
	elif [ -z "$where" ]; then
		bad "restore point $n: no such point passed: $(grep Error "$tmp/out" | head -1)"
	else
		kept=$((kept + 1))
	fi
	n=$((n + STEP))
done
# and the images still restore
cp "$tmp/v1.dumped" "$tmp/v1"
if "$CRIU_LIKE" restore -d -D "$tmp/good" >"$tmp/out" 2>&1; then
	pids="$pids $p1 $c1"
else
	bad "a clean restore after the faults failed: $(grep Error "$tmp/out" | head -1)"
fi

nb=$((tried - kept))
echo "fault-inject: $tried points tried, $kept promises kept, $nb broken${broken:+:$broken}"
[ $nb = 0 ]
