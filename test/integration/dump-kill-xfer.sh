#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The dumper SIGKILLed while the pages of its victim are moving (the parasite
# vmsplices them into the dumper's pipes) must leave the victim running
# exactly as before: alive, not traced, not stopped, no signal pending that
# it did not have (a SIGPIPE from the parasite's vmsplice into a pipe whose
# reader died killed it), its memory intact (it checks a pattern in 256 MiB
# every 10 ms), and the image directory not marked complete (restore refuses
# it). With -R and in kill mode, TRIALS kills each landing mid-transfer: the
# kill is sent when the pages image has grown past 8 MiB, and a trial counts
# only when the image then holds less than the victim's memory.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/dump-victim
[ "$(id -u)" = 0 ] || { echo "dump-kill-xfer: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "dump-kill-xfer: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
MIB=256
TRIALS=${TRIALS:-4}

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

start() {
	# A fresh file: the last victim's "ready" must not be taken for this one's.
	rm -f "$tmp/victim"
	setsid "$V" mem $MIB >"$tmp/victim" 2>&1 </dev/null &
	vp=$!
	n=0
	until grep -q "^ready $vp" "$tmp/victim" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 1000 ] || { echo "FAIL: the victim did not start"; exit 1; }
		sleep 0.01
	done
}

pages_size() {
	s=0
	for f in "$1"/pages-*.img; do
		[ -e "$f" ] && s=$((s + $(stat -c %s "$f")))
	done
	echo $s
}

# check WHAT: the victim runs on as before.
check() {
	# Time for the orphaned parasite to notice and go home.
	sleep 0.2
	if [ "$(awk '/^State:/ { print $2 }' /proc/$vp/status 2>/dev/null)" = Z ] ||
	   [ ! -e /proc/$vp/status ]; then
		wait "$vp"
		r=$?
		[ $r -gt 128 ] && r="killed by signal $((r - 128)) ($(kill -l $((r - 128))))"
		echo "FAIL: $1: the victim $vp died: $r"
		vp=
		fail=1
		return
	fi
	st=$(awk '/^(State|TracerPid|SigPnd|ShdPnd):/ { print $2 }' /proc/$vp/status | tr '\n' ' ')
	case "$st" in
	"S 0 0000000000000000 0000000000000000 " | "R 0 0000000000000000 0000000000000000 ") ;;
	*) echo "FAIL: $1: victim $vp is not running free as before (state tracer sigpnd shdpnd: $st)"
	   fail=1
	   return ;;
	esac
	a=$(grep '^tick' "$tmp/victim" | tail -1 | cut -d' ' -f2)
	sleep 0.2
	b=$(grep '^tick' "$tmp/victim" | tail -1 | cut -d' ' -f2)
	e=$(grep '^tick' "$tmp/victim" | tail -1 | awk '{ print $NF }')
	if [ -z "$a" ] || [ "$a" = "$b" ] || [ "$e" != 0 ]; then
		echo "FAIL: $1: victim $vp does not tick on intact (ticks $a -> $b, errors $e)"
		fail=1
	fi
}

# trial MODE-ARGS: one dump killed mid-transfer; 0 if it landed there, 1 if not.
trial() {
	d=$tmp/img
	rm -rf "$d"
	mkdir "$d"
	"$CRIU_LIKE" dump -t "$vp" -D "$d" "$@" >"$tmp/dump.out" 2>&1 &
	dp=$!
	n=0
	while [ "$(pages_size "$d")" -lt 8388608 ] && [ $n -lt 3000 ] && kill -0 $dp 2>/dev/null; do
		n=$((n + 1))
		sleep 0.002
	done
	kill -KILL $dp 2>/dev/null
	wait $dp 2>/dev/null
	size=$(pages_size "$d")
	[ "$size" -ge 8388608 ] && [ "$size" -lt $((MIB << 20)) ] || return 1
	return 0
}

for mode in "-R" "kill"; do
	start
	args=
	[ "$mode" = -R ] && args=-R
	caught=0 tries=0
	while [ $caught -lt "$TRIALS" ] && [ $tries -lt $((TRIALS * 4)) ]; do
		tries=$((tries + 1))
		# shellcheck disable=SC2086
		trial $args && caught=$((caught + 1))
		check "$mode trial $tries (pages image $size bytes)"
		if [ -e /proc/$vp ] && [ -e "$d/inventory.img" ] &&
		   "$CRIU_LIKE" decode "$d/inventory.img" | grep -q '"completed": *true'; then
			echo "FAIL: $mode trial $tries: the images are marked complete"
			fail=1
		fi
		if "$CRIU_LIKE" restore -D "$d" >"$tmp/restore.out" 2>&1; then
			echo "FAIL: $mode trial $tries: restore accepted the images of a killed dump"
			fail=1
		elif ! grep -q "not marked complete" "$tmp/restore.out"; then
			echo "FAIL: $mode trial $tries: restore refused, but not as incomplete:"
			cat "$tmp/restore.out"
			fail=1
		fi
		[ $fail = 0 ] || break
	done
	kill -KILL "$vp" 2>/dev/null
	wait "$vp" 2>/dev/null
	vp=
	[ $fail = 0 ] || break
	if [ $caught -lt "$TRIALS" ]; then
		echo "FAIL: $mode: only $caught of $tries kills landed during the page transfer"
		fail=1
		break
	fi
	echo "ok: $mode: $caught kills during the page transfer ($tries tries), victim intact after each"
done
[ $fail = 0 ] && echo "dump-kill-xfer: the dumper killed mid-transfer leaves the victim as it was"
exit $fail
