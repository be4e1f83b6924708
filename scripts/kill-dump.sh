#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The long run of test/integration/dump-kill-xfer.sh (not in make test):
# N dumps (default 1000), alternately with -R and in kill mode, each
# SIGKILLed after a random delay between 0 and 1.2 times the time a whole
# dump takes (measured first), so the kills fall on the seize, the infection,
# the page transfer, the cure and the end. After each killed dump the victim
# (dump-victim mem MIB: a pattern in MIB MiB checked every 10 ms) must run on
# as before: alive, not traced, not stopped, no pending signal, ticking with
# no error (in kill mode, a kill that came once the images were marked
# complete may find the tree already killed, as asked). Prints the counts;
# exit 1 if the victim died or was damaged once.
#
#   sudo B=build scripts/kill-dump.sh [N] [MIB]
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
N=${1:-1000}
MIB=${2:-128}
V=$B/test/integration/dump-victim
[ "$(id -u)" = 0 ] || { echo "kill-dump: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "kill-dump: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

start() {
	# A fresh file: the last victim's "ready" must not be taken for this one's.
	rm -f "$tmp/victim"
	setsid "$V" mem "$MIB" >"$tmp/victim" 2>&1 </dev/null &
	vp=$!
	until grep -q "^ready $vp" "$tmp/victim" 2>/dev/null; do sleep 0.01; done
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

pages_size() {
	s=0
	for f in "$1"/pages-*.img; do
		[ -e "$f" ] && s=$((s + $(stat -c %s "$f")))
	done
	echo $s
}

# Time of a whole dump -R, in ms.
start
rm -rf "$tmp/img" && mkdir "$tmp/img"
t0=$(now_ms)
"$CRIU_LIKE" dump -t "$vp" -D "$tmp/img" -R >"$tmp/dump.out" 2>&1 ||
	{ echo "kill-dump: the reference dump failed:"; cat "$tmp/dump.out"; exit 1; }
full=$(($(now_ms) - t0))
echo "kill-dump: a whole dump of $MIB MiB takes $full ms; $N kills in 0..$((full * 12 / 10)) ms"

kills=0 early=0 xfer=0 finished=0 died=0 damaged=0 complete=0
i=0
while [ $i -lt "$N" ]; do
	i=$((i + 1))
	[ -n "$vp" ] || start
	mode=-R
	[ $((i % 2)) = 0 ] && mode=kill
	d=$tmp/img
	rm -rf "$d" && mkdir "$d"
	delay=$(($(od -An -N4 -tu4 /dev/urandom) % (full * 12 / 10 + 1)))
	if [ $mode = -R ]; then
		"$CRIU_LIKE" dump -t "$vp" -D "$d" -R >"$tmp/dump.out" 2>&1 &
	else
		"$CRIU_LIKE" dump -t "$vp" -D "$d" >"$tmp/dump.out" 2>&1 &
	fi
	dp=$!
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	if kill -KILL $dp 2>/dev/null; then
		wait $dp
		rc=$?
	else
		wait $dp
		rc=0
	fi
	kills=$((kills + 1))
	if [ $rc = 0 ]; then
		# The dump ended before the kill: in kill mode the victim is gone, as asked.
		finished=$((finished + 1))
		if [ $mode = kill ]; then
			wait "$vp" 2>/dev/null
			vp=
		fi
		continue
	fi
	size=$(pages_size "$d")
	if [ "$size" -gt 0 ] && [ "$size" -lt $((MIB << 20)) ]; then
		xfer=$((xfer + 1))
	else
		early=$((early + 1))
	fi
	sleep 0.2
	if [ -e "$d/inventory.img" ] &&
	   "$CRIU_LIKE" decode "$d/inventory.img" | grep -q '"completed": *true'; then
		# Killed after the checkpoint was complete: in kill mode the tree may be gone.
		complete=$((complete + 1))
		if [ $mode = kill ] && ! grep -q '^State:.*[SR]' /proc/$vp/status 2>/dev/null; then
			wait "$vp" 2>/dev/null
			vp=
			continue
		fi
	fi
	st=$(awk '/^(State|TracerPid|SigPnd|ShdPnd):/ { print $2 }' /proc/$vp/status 2>/dev/null |
	     tr '\n' ' ')
	case "$st" in
	"S 0 0000000000000000 0000000000000000 " | "R 0 0000000000000000 0000000000000000 ") ;;
	"Z "* | "")
		wait "$vp"
		r=$?
		echo "kill $i ($mode, ${delay} ms, pages $size): victim $vp died (status $r)"
		died=$((died + 1))
		vp=
		continue ;;
	*)
		echo "kill $i ($mode, ${delay} ms, pages $size): victim $vp not as before: $st"
		damaged=$((damaged + 1))
		kill -KILL "$vp"
		wait "$vp" 2>/dev/null
		vp=
		continue ;;
	esac
	a=$(grep '^tick' "$tmp/victim" | tail -1 | cut -d' ' -f2)
	sleep 0.05
	b=$(grep '^tick' "$tmp/victim" | tail -1 | cut -d' ' -f2)
	e=$(grep '^tick' "$tmp/victim" | tail -1 | awk '{ print $NF }')
	if [ "$a" = "$b" ] || [ "$e" != 0 ]; then
		echo "kill $i ($mode, ${delay} ms): victim $vp stuck or damaged (ticks $a -> $b, errors $e)"
		damaged=$((damaged + 1))
		kill -KILL "$vp"
		wait "$vp" 2>/dev/null
		vp=
	fi
done
echo "kill-dump: $kills kills: $xfer during the page transfer, $early before or after it" \
	"($complete of them once the images were complete), $finished after the dump ended;" \
	"victim died $died, damaged $damaged"
[ $((died + damaged)) = 0 ]
