#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Dump a multi-threaded program with -R and compare every field of the
# decoded images that /proc shows with what /proc showed just before the
# dump (dump-proc.py does the comparing). Then the program must still run.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/dump-victim
[ "$(id -u)" = 0 ] || { echo "dump-proc: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "dump-proc: build first"; exit 1; }
command -v python3 >/dev/null || { echo "dump-proc: no python3"; exit 77; }

tmp=$(mktemp -d)
vp=
trap 'kill -KILL $vp 2>/dev/null; rm -rf "$tmp"' EXIT
setsid "$V" state >"$tmp/out" 2>&1 </dev/null &
vp=$!
n=0
until grep -q '^ready' "$tmp/out"; do
	n=$((n + 1))
	[ $n -le 1000 ] || { echo "FAIL: the victim did not start"; exit 1; }
	sleep 0.01
done
# The threads block their signals right after ready: give them a moment.
sleep 0.2
mkdir "$tmp/proc"
for f in stat status maps auxv limits personality timers oom_score_adj loginuid timerslack_ns; do
	cat /proc/$vp/$f >"$tmp/proc/$f"
done
ls /proc/$vp/task >"$tmp/proc/tasks"
for t in $(cat "$tmp/proc/tasks"); do
	cat /proc/$vp/task/$t/status >"$tmp/proc/status.$t"
	cat /proc/$vp/task/$t/stat >"$tmp/proc/stat.$t"
done
ls /proc/$vp/fd >"$tmp/proc/fds"
for fd in $(cat "$tmp/proc/fds"); do
	cat /proc/$vp/fdinfo/$fd >"$tmp/proc/fdinfo.$fd"
	readlink /proc/$vp/fd/$fd >"$tmp/proc/fdlink.$fd"
done
readlink /proc/$vp/cwd >"$tmp/proc/cwd"
readlink /proc/$vp/root >"$tmp/proc/root"
readlink /proc/$vp/exe >"$tmp/proc/exe"

"$CRIU_LIKE" dump -t "$vp" -D "$tmp/img" -R -v4 -o dump.log || {
	echo "FAIL: dump"
	grep -i error "$tmp/img/dump.log" | head
	exit 1
}
for f in "$tmp"/img/*.img; do
	case "$f" in
	*/pages-*.img | */ghost-*.img) continue ;;
	esac
	"$CRIU_LIKE" decode "$f" >"${f%.img}.json" || { echo "FAIL: decode $f"; exit 1; }
done
python3 "$(dirname "$0")/dump-proc.py" "$vp" "$tmp/proc" "$tmp/img" || exit 1
kill -0 "$vp" && grep -q '^State:.*[SR]' /proc/$vp/status || {
	echo "FAIL: the victim does not run after dump -R"
	exit 1
}
exit 0
