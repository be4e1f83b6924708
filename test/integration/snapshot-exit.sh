#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A live snapshot (dump -R --snapshot) copies the memory once the tree runs
# again: a task alive at the freeze may exit before its pages are copied.
# Its leader stays traced until the copy ends and is held at its exit
# (Documentation/memory.md, "Live snapshot"). The victim's child (16 MiB of
# its own) exits the moment it runs with its memory write-protected, while
# the parent's 128 MiB are copied: the snapshot must succeed and say it held
# the child, the child must be gone afterwards (its exit went on), the
# victim must run untraced; restored, the tree has the child again, alive,
# with its memory as it was (its own checksum of it).
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/snapshot-victim
[ "$(id -u)" = 0 ] || { echo "snapshot-exit: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "snapshot-exit: build first"; exit 1; }
C=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	pkill -KILL -f "snapshot-victim 128 $tmp/" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	[ -s "$tmp/img/d.log" ] && grep -E "Error|held" "$tmp/img/d.log" | head -5
	exit 1
}

# wait_for PATTERN: until the victim's output has a line matching it (10 s)
wait_for() {
	n=0
	until grep -Eq "$1" "$tmp/out" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 1000 ] || fail "no \"$1\" from the victim"
		sleep 0.01
	done
}

# runs PID: the count it writes goes on, and it is traced by nobody
runs() {
	a=$(od -An -tu8 -N8 "$tmp/count" | tr -d ' ')
	sleep 0.2
	b=$(od -An -tu8 -N8 "$tmp/count" | tr -d ' ')
	[ "$b" -gt "$a" ] && [ "$(awk '/^TracerPid:/ { print $2 }' /proc/$1/status)" = 0 ]
}

setsid "$V" 128 "$tmp/count" quit >"$tmp/out" 2>&1 </dev/null &
vp=$!
wait_for '^ready'
wait_for '^kid '
set -- $(grep '^kid ' "$tmp/out")
kid=$2 sum=$3
sleep 0.1

mkdir "$tmp/img"
"$C" dump -t $vp -D "$tmp/img" -R --snapshot -v4 -o d.log ||
	fail "the snapshot failed although the task that exited was held"
grep -q "pid $kid exits during the copy: held there" "$tmp/img/d.log" ||
	fail "the child $kid did not exit during the copy (the case was not reached)"
n=0
while [ "$(awk '/^State:/ { print $2 }' /proc/$kid/status 2>/dev/null)" != Z ] &&
	[ -e /proc/$kid ]; do
	n=$((n + 1))
	[ $n -le 300 ] || fail "the child $kid never finished its exit after the snapshot"
	sleep 0.01
done
runs $vp || fail "the victim does not run untraced after the snapshot"
echo "ok: the snapshot held $kid at its exit until its pages were copied, then let it go"

kill -KILL $vp
while [ -e /proc/$vp ]; do sleep 0.01; done
vp=
"$C" restore -D "$tmp/img" -d --pidfile "$tmp/pid" -v4 -o r.log ||
	fail "the restore of the snapshot failed"
vp=$(cat "$tmp/pid")
st=$(awk '/^State:/ { print $2 }' /proc/$kid/status 2>/dev/null)
case "$st" in
S | R | D) ;;
*) fail "the child $kid is not back alive (state ${st:-gone}); $(tail -3 "$tmp/out")" ;;
esac
kill -USR1 $kid
wait_for "^kid-check $kid "
got=$(grep "^kid-check $kid " "$tmp/out" | awk '{ print $3 }')
[ "$got" = "$sum" ] || fail "the child's memory came back with checksum $got, not $sum"
runs $vp || fail "the restored victim does not run"
echo "ok: restored, $kid is alive with its memory as at the freeze"
echo "snapshot-exit: a task that exited during the copy was held and saved whole"
